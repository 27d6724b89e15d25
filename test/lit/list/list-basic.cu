// Several kernels in one file, with device helpers and launch sites.
// RUN: %clang-astra list %s | FileCheck %s
// RUN: %clang-astra list %s -- -DUSE_FAST=1 | FileCheck %s --check-prefix=FLAGS

#include <cuda_runtime.h>

__device__ float square(float x) { return x * x; }
__device__ float sumsq(float a, float b) { return square(a) + square(b); }
__device__ int unused_helper(int x) { return x + 1; }

// CHECK: list-basic.cu:[[@LINE+2]]:17: kernel add
// CHECK-NEXT:  mangled: _Z3addPfPKfS1_i
__global__ void add(float *out, const float *a, const float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = a[i] + b[i];
}
// CHECK-NEXT:  parameters:
// CHECK-NEXT:    0 out: float *  [pointee float, written]
// CHECK-NEXT:    1 a: const float *  [pointee const float, const, read-only]
// CHECK-NEXT:    2 b: const float *  [pointee const float, const, read-only]
// CHECK-NEXT:    3 n: int
// CHECK-NEXT:  calls: none
// CHECK-NEXT:  launch sites:
// CHECK-NEXT:    {{.*}}list-basic.cu:[[@LINE+28]]:3 in launch_all(): add<<<(n + 255) / 256, 256>>>(out, a, b, n)
// CHECK-NEXT:    {{.*}}list-basic.cu:[[@LINE+28]]:3 in launch_all(): add<<<grid, block, 0, stream>>>(out, b, a, n)

// CHECK: list-basic.cu:[[@LINE+2]]:40: kernel norms
// CHECK-NEXT:  mangled: _Z5normsPfS_PKfi
__global__ void __launch_bounds__(256) norms(float *__restrict__ out, float *scratch,
                                             const float *__restrict__ in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    scratch[i] = in[i];
    out[i] = sumsq(in[i], scratch[i]);
  }
}
// CHECK-NEXT:  launch bounds: 256
// CHECK-NEXT:  parameters:
// CHECK-NEXT:    0 out: float *__restrict  [pointee float, restrict, written]
// CHECK-NEXT:    1 scratch: float *  [pointee float, written]
// CHECK-NEXT:    2 in: const float *__restrict  [pointee const float, const, restrict, read-only]
// CHECK-NEXT:    3 n: int
// CHECK-NEXT:  calls:
// CHECK-NEXT:    sumsq  {{.*}}list-basic.cu:8:18
// CHECK-NEXT:    square  {{.*}}list-basic.cu:7:18
// CHECK-NEXT:  launch sites: none in this file
// CHECK-NOT: unused_helper

void launch_all(float *out, const float *a, const float *b, int n,
                cudaStream_t stream) {
  dim3 grid((n + 255) / 256), block(256);
  add<<<(n + 255) / 256, 256>>>(out, a, b, n);
  add<<<grid, block, 0, stream>>>(out, b, a, n);
}

#ifdef USE_FAST
// FLAGS: list-basic.cu:[[@LINE+1]]:17: kernel only_with_flag
__global__ void only_with_flag(int *x) { x[threadIdx.x] = 1; }
#endif
// FLAGS-NOT: error
