// Kernels that come from macro expansions are listed at the expansion site
// and name the macro, since a rewrite cannot edit a macro's expansion.
// RUN: %clang-astra list %s | FileCheck %s

#define DEFINE_UNARY_KERNEL(NAME, EXPR)                                        \
  __global__ void NAME(float *y, const float *x, int n) {                      \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                             \
    if (i < n) {                                                               \
      float v = x[i];                                                          \
      y[i] = (EXPR);                                                           \
    }                                                                          \
  }

// CHECK: list-macro.cu:[[@LINE+3]]:21: kernel negate
// CHECK-NEXT:  mangled: _Z6negatePfPKfi
// CHECK-NEXT:  from macro: DEFINE_UNARY_KERNEL
DEFINE_UNARY_KERNEL(negate, -v)
// CHECK: list-macro.cu:[[@LINE+2]]:21: kernel square
// CHECK-NEXT:  mangled: _Z6squarePfPKfi
DEFINE_UNARY_KERNEL(square, v * v)
// CHECK:         0 y: float *  [pointee float, written]

#define KERNEL __global__ void
// A kernel whose qualifiers come from a macro is still ordinary source.
// CHECK: list-macro.cu:[[@LINE+2]]:8: kernel plain
// CHECK-NOT:   from macro
KERNEL plain(int *p) { p[threadIdx.x] = 0; }
