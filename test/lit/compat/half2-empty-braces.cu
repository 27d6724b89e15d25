// `h = {};` zeroes a half2 under nvcc (SGLang's gemm/gptq/gptq_kernel.cu:
// `res2 = {};`). clang finds cuda_fp16.hpp's copy, move and __half2_raw
// assignments equally good for `{}` and stops. clang-astra names the type
// in an in-memory copy (`res2 = __half2{};`): every candidate assigns zero.
// REQUIRES: cuda, nvcc
// RUN: %nvcc -arch=sm_90 -c %s -o %t.o
// RUN: not %cuda-syntax-check %s 2>&1 | FileCheck %s --check-prefix=CLANG
// RUN: %clang-astra list --verbose %s 2>&1 | FileCheck %s
// RUN: %clang-astra compile --no-cache --kernel zero_pairs %s | FileCheck %s --check-prefix=PTX
// A class of the user's own is not repaired: which assignment `{}` means is
// a choice clang-astra cannot make for it.
// RUN: not %clang-astra list %s -- -DOWN_CLASS 2>&1 | FileCheck %s --check-prefix=OWN

// CLANG: half2-empty-braces.cu:[[@LINE+11]]:{{[0-9]+}}: error: use of overloaded operator '=' is ambiguous
// CHECK: note: repaired in memory: {{.*}}half2-empty-braces.cu:[[@LINE+10]]:{{[0-9]+}}: named the type of '= {}' (__half2{}
// CHECK: kernel zero_pairs
// PTX: .entry _Z10zero_pairsP7__half2i(
// OWN: error: use of overloaded operator '=' is ambiguous
// OWN-NOT: repaired in memory

#include <cuda_fp16.h>

__global__ void zero_pairs(half2 *out, int n) {
  half2 acc;
  acc = {};
  if (threadIdx.x < n)
    out[threadIdx.x] = acc;
}

#ifdef OWN_CLASS
struct Pair {
  int a, b;
  __device__ Pair &operator=(int v) { a = b = v; return *this; }
  __device__ Pair &operator=(const int *v) { a = v[0]; b = v[1]; return *this; }
};
__global__ void own(Pair *p) { p[0] = {}; }
#endif
