// index32: 64-bit index variables and casts narrowed to int where the spec's
// shape sets, under every launch the code can make, prove every value
// involved stays in [0, 2^30).
// RUN: rm -rf %t.dir && mkdir -p %t.dir/Inputs
// RUN: cp %s %t.dir/idx.cu && cp %S/Inputs/index32.cuh %t.dir/Inputs/
// RUN: %clang-astra rewrite --passes=index32 --spec %S/Inputs/index32.astra.json -i %t.dir/idx.cu -- -std=c++17
// RUN: FileCheck %s < %t.dir/idx.cu
// RUN: FileCheck %s --check-prefix=HEADER < %t.dir/Inputs/index32.cuh
// RUN: %nvptx-compile %t.dir/idx.cu | FileCheck %s --check-prefix=PTX
// RUN: %clang-astra rewrite --passes=index32 --spec %S/Inputs/index32.astra.json --explain %s -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=EXPLAIN
// Without a spec the pass refuses and says why.
// RUN: %clang-astra rewrite --passes=index32 --explain %s -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=NOSPEC
// RUN: %clang-astra rewrite --passes=index32 %s -- -std=c++17 | diff %s -
// PTX: .visible .entry
// NOSPEC: index32.cu:{{[0-9]+}}:17: index32: not applied: index32 needs a workload spec to bound index values (--spec FILE, or {{.*}}index32.cu.astra.json); none describes 'silu_and_mul'

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cstdint>

#include <algorithm>

#include "Inputs/index32.cuh"
// A kernel in a header: other files may launch it with any grid and block,
// so what depends on blockIdx stays; the column loop is bounded by h and the
// largest block CUDA allows.
// HEADER: {{^}}  int64_t row = blockIdx.x;
// HEADER: {{^}}  for (int c = threadIdx.x; c < h; c += blockDim.x)
// EXPLAIN: index32.cuh:6:11: index32: not applied: 'int64_t row' stays 64-bit: its values reach [0, 2147483646], outside [0, 2^30) where int is safe with margin
// EXPLAIN: index32.cuh:7:16: index32: fired: 'int64_t c' -> 'int c': every value it takes and feeds stays in [0, 2^30) in the spec's shape set under all 2 launches the code can make there (its own: [0, 6143])

// The token and the column: t < 4096, j < d - 1 + 1024 for d = 14336. The
// products with the 64-bit d stay 64-bit; t * 2 becomes 32-bit.
// CHECK-LABEL: {{^}}__global__ void silu_and_mul(
__global__ void silu_and_mul(__nv_bfloat16 *out, const __nv_bfloat16 *in,
                             int64_t d) {
  // CHECK: {{^}}  const int t = blockIdx.x;
  const int64_t t = blockIdx.x;
  // EXPLAIN: index32.cu:[[@LINE-1]]:17: index32: fired: 'int64_t t' -> 'int t': every value it takes and feeds stays in [0, 2^30) in all 2 shape sets under all 14 launches the code can make there (its own: [0, 4095])
  // CHECK: {{^}}  for (int j = threadIdx.x; j < d; j += blockDim.x) {
  for (int64_t j = threadIdx.x; j < d; j += blockDim.x) {
    // EXPLAIN: index32.cu:[[@LINE-1]]:16: index32: fired: 'int64_t j' -> 'int j': {{.*}}(its own: [0, 15359])
    float x = __bfloat162float(in[t * 2 * d + j]);
    float y = __bfloat162float(in[t * 2 * d + d + j]);
    out[t * d + j] = __float2bfloat16(x / (1.0f + __expf(-x)) * y);
  }
}

// A grid-stride loop over n <= 2^24 with 64-bit casts of launch dimensions.
// CHECK-LABEL: {{^}}__global__ void scale(
__global__ void scale(float *y, const float *x, float a, int n) {
  // CHECK: {{^}}  int stride = (int)blockDim.x * gridDim.x;
  size_t stride = (size_t)blockDim.x * gridDim.x;
  // CHECK: {{^}}  for (int i = blockIdx.x * (int)blockDim.x + threadIdx.x; i < n; i += stride)
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = a * x[i];
}

// Offsets past 2^31 (65536 rows of 32768): nothing narrows.
// CHECK-LABEL: {{^}}__global__ void big_offsets(
__global__ void big_offsets(unsigned char *out, int cols) {
  // CHECK: {{^}}  int64_t base = (int64_t)blockIdx.x * cols;
  int64_t base = (int64_t)blockIdx.x * cols;
  // EXPLAIN: index32.cu:[[@LINE-1]]:11: index32: not applied: 'int64_t base' stays 64-bit: its values reach [0, 2147450880], outside [0, 2^30) where int is safe with margin
  // EXPLAIN: index32.cu:[[@LINE-2]]:18: index32: not applied: '(int64_t)blockIdx.x' stays 64-bit: '(int64_t)blockIdx.x * cols' would be computed in 32 bits and reaches [0, 2147450880]
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    out[base + c] = 1;
}

// Values the spec does not bound, a negative value, auto, and a type from
// a macro.
#define INDEX int64_t
// CHECK-LABEL: {{^}}__global__ void refusals(
__global__ void refusals(float *out, const int64_t *rowptr, int n) {
  // CHECK: {{^}}  int64_t start = rowptr[blockIdx.x];
  int64_t start = rowptr[blockIdx.x];
  // EXPLAIN: index32.cu:[[@LINE-1]]:11: index32: not applied: 'int64_t start' stays 64-bit: its values are not bounded by the spec: in shape set 'one': 'rowptr[blockIdx.x]' is not computed from values the spec fixes
  // CHECK: {{^}}  int64_t prev = (int64_t)threadIdx.x - 1;
  int64_t prev = (int64_t)threadIdx.x - 1;
  // EXPLAIN: index32.cu:[[@LINE-1]]:11: index32: not applied: 'int64_t prev' stays 64-bit: its values reach [-1, 254]
  // EXPLAIN: index32.cu:[[@LINE-2]]:18: index32: not applied: '(int64_t)threadIdx.x' stays 64-bit: '(int64_t)threadIdx.x - 1' would be computed in 32 bits and reaches [-1, 254]
  // CHECK: {{^}}  auto k = (int64_t)threadIdx.x;
  auto k = (int64_t)threadIdx.x;
  // EXPLAIN: index32.cu:[[@LINE-1]]:8: index32: not applied: 'k' is declared auto
  // EXPLAIN: index32.cu:[[@LINE-2]]:12: index32: not applied: '(int64_t)threadIdx.x' stays 64-bit: it initializes the auto variable 'k', whose type would change
  // CHECK: {{^}}  INDEX m = blockIdx.x;
  INDEX m = blockIdx.x;
  // EXPLAIN: index32.cu:[[@LINE-1]]:9: index32: not applied: 'm''s type is spelled inside a macro expansion
  if (prev >= 0 && start + k < n)
    out[start + k + m] = 1.f;
}

// A template: each instantiation is checked against its own spec entry.
// CHECK-LABEL: {{^}}__global__ void copy_rows(
template <typename T>
__global__ void copy_rows(T *dst, const T *src, int cols) {
  // CHECK: {{^}}  int r = blockIdx.x;
  size_t r = blockIdx.x;
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    dst[r * cols + c] = src[r * cols + c];
}
template __global__ void copy_rows<float>(float *, const float *, int);
template __global__ void copy_rows<__half>(__half *, const __half *, int);

// The launches: the grids are the workloads' sizes (the spec gives them),
// the blocks are the code's.
void launch_all(__nv_bfloat16 *o, const __nv_bfloat16 *in, float *y,
                const float *x, unsigned char *u, const int64_t *rowptr,
                __half *h, const __half *hin, int64_t d, int tokens, int n,
                int rows, int cols) {
  silu_and_mul<<<tokens, std::min<int64_t>(1024, d)>>>(o, in, d);
  scale<<<std::min((n + 255) / 256, 1024), 256>>>(y, x, 2.f, n);
  big_offsets<<<rows, 1024>>>(u, cols);
  refusals<<<(n + 255) / 256, 256>>>(y, rowptr, n);
  copy_rows<float><<<rows, 1024>>>(y, x, cols);
  copy_rows<__half><<<rows, 1024>>>(h, hin, cols);
  add_bias<<<rows, 256>>>(y, x, rows, cols);
}
