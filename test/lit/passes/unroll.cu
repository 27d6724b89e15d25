// unroll: #pragma unroll on loops with small compile-time trip counts, and
// #pragma unroll N on other loops with unroll.factor=N.
// RUN: rm -rf %t.dir && mkdir -p %t.dir/Inputs
// RUN: cp %s %t.dir/unroll.cu && cp %S/Inputs/unroll.cuh %t.dir/Inputs/
// RUN: %clang-astra rewrite --passes=unroll -i %t.dir/unroll.cu -- -std=c++17
// RUN: FileCheck --strict-whitespace %s < %t.dir/unroll.cu
// RUN: FileCheck --strict-whitespace %s --check-prefix=HEADER < %t.dir/Inputs/unroll.cuh
// RUN: %nvptx-compile %t.dir/unroll.cu | FileCheck %s --check-prefix=PTX
// RUN: %clang-astra rewrite --passes=unroll --explain %s -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=EXPLAIN
// RUN: %clang-astra rewrite --passes=unroll --pass-opt=unroll.factor=4 %s -- -std=c++17 > %t.factor.cu
// RUN: FileCheck --strict-whitespace %s --check-prefix=FACTOR < %t.factor.cu
// RUN: %nvptx-compile -I %S %t.factor.cu | FileCheck %s --check-prefix=PTX
// RUN: not %clang-astra rewrite --passes=unroll --pass-opt=unroll.factor=x4 %s -- -std=c++17 2>&1 | FileCheck %s --check-prefix=BADOPT
// A second run changes nothing more.
// RUN: %clang-astra rewrite --passes=unroll %t.dir/unroll.cu -- -std=c++17 > %t.again.cu
// RUN: diff %t.dir/unroll.cu %t.again.cu
// PTX: .visible .entry
// BADOPT: error: --pass-opt=unroll.factor=x4: unroll.factor must be an integer from 2 to 1024, not 'x4'

#include <cuda_fp16.h>

#include "Inputs/unroll.cuh"
// HEADER:      {{^}}  #pragma unroll{{$}}
// HEADER-NEXT: {{^}}  for (int k = 0; k < 8; ++k)

// CHECK-LABEL: {{^}}__global__ void row_sum(
__global__ void row_sum(float *out, const __half *in, int n) {
  float acc = 0.f;
  // A grid-stride loop: unknown trip count.
  // CHECK:        {{^}}  for (int i = threadIdx.x; i < n; i += blockDim.x)
  // FACTOR:       {{^}}  #pragma unroll 4
  // FACTOR-NEXT:  {{^}}  for (int i = threadIdx.x; i < n; i += blockDim.x)
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    acc += __half2float(in[blockIdx.x * n + i]);
  // EXPLAIN: unroll.cu:[[@LINE-2]]:3: unroll: not applied: the trip count is not a compile-time constant (the start 'i' = ... is not a compile-time constant); full unrolling needs one, and --pass-opt=unroll.factor=N unrolls it by N
  // A warp reduction: 16, 8, 4, 2, 1.
  // CHECK:      {{^}}  #pragma unroll{{$}}
  // CHECK-NEXT: {{^}}  for (int offset = 16; offset > 0; offset >>= 1)
  for (int offset = 16; offset > 0; offset >>= 1)
    acc += __shfl_xor_sync(0xffffffffu, acc, offset);
  // EXPLAIN: unroll.cu:[[@LINE-2]]:3: unroll: fired: trip count 5: fully unrolled
  if (threadIdx.x % 32 == 0)
    atomicAdd(&out[blockIdx.x], acc);
}

// Tiles through shared memory: the barriers are reached by every thread, so
// the tile loop unrolls; nested constant loops multiply.
constexpr int Tile = 4;
// CHECK-LABEL: {{^}}__global__ void tiled(
__global__ void tiled(float *c, const float *a, const float *b) {
  __shared__ float sa[Tile][32], sb[Tile][32];
  float acc[Tile] = {};
  // CHECK:      {{^}}  #pragma unroll{{$}}
  // CHECK-NEXT: {{^}}  for (int t = 0; t < Tile; ++t) {
  for (int t = 0; t < Tile; ++t) {
    sa[t][threadIdx.x] = a[t * 32 + threadIdx.x];
    sb[t][threadIdx.x] = b[t * 32 + threadIdx.x];
    __syncthreads();
    // CHECK:      {{^}}    #pragma unroll{{$}}
    // CHECK-NEXT: {{^}}    for (int k = 0; k < 8; k++)
    for (int k = 0; k < 8; k++)
      // 4 x 8 x 2 = 64 copies: the innermost loop stays.
      // CHECK: {{^}}      for (unsigned j = 0; j < 2; ++j)
      for (unsigned j = 0; j < 2; ++j)
        acc[t] += sa[t][(k + j) % 32] * sb[t][k];
    // EXPLAIN: unroll.cu:[[@LINE-2]]:7: unroll: not applied: trip count 2 (64 copies with the enclosing unrolled loops) exceeds unroll.max-trip=32; --pass-opt=unroll.factor=N unrolls it by N
    __syncthreads();
  }
  // A bound through min(): at most 4 iterations.
  // CHECK:      {{^}}  #pragma unroll{{$}}
  // CHECK-NEXT: {{^}}  for (int t = 0; t < min(blockDim.x, 4u); ++t)
  for (int t = 0; t < min(blockDim.x, 4u); ++t)
    c[t * 32 + threadIdx.x] = acc[t];
  // EXPLAIN: unroll.cu:[[@LINE-2]]:3: unroll: fired: trip count at most 4: fully unrolled
}

// Loops the pass leaves alone.
__device__ float block_sum(float v) {
  __shared__ float s[32];
  s[threadIdx.x % 32] = v;
  __syncthreads();
  return s[0];
}
#define REPEAT4(stmt) for (int r = 0; r < 4; ++r) stmt
// CHECK-LABEL: {{^}}__global__ void left_alone(
__global__ void left_alone(float *out, const float *in, int n) {
  float acc = 0.f;
  // A barrier (inside a helper) under a thread-dependent condition.
  // CHECK: {{^}}  for (int t = 0; t < 4; ++t) {
  for (int t = 0; t < 4; ++t) {
    if (threadIdx.x < 16)
      acc += block_sum(in[t]);
  }
  // EXPLAIN: unroll.cu:[[@LINE-4]]:3: unroll: not applied: the loop holds a barrier ('block_sum(in[t])' at {{.*}}unroll.cu:[[@LINE-2]]:14) and control flow that depends on the thread ('threadIdx.x < 16' reads 'threadIdx.x')
  // Already has a pragma.
  // CHECK:      {{^}}  #pragma unroll 2
  // CHECK-NEXT: {{^}}  for (int t = 0; t < 4; ++t)
  #pragma unroll 2
  for (int t = 0; t < 4; ++t)
    acc += in[t];
  // EXPLAIN: unroll.cu:[[@LINE-2]]:3: unroll: not applied: the loop already carries a loop pragma
  // Too many iterations for a full unroll.
  // CHECK:      {{^}}  for (int t = 0; t < 4096; ++t)
  // FACTOR:     {{^}}  #pragma unroll 4
  // FACTOR-NEXT: {{^}}  for (int t = 0; t < 4096; ++t)
  for (int t = 0; t < 4096; ++t)
    acc += in[t];
  // EXPLAIN: unroll.cu:[[@LINE-2]]:3: unroll: not applied: trip count 4096 exceeds unroll.max-trip=32
  // Wraps around and never ends.
  // CHECK: {{^}}  for (unsigned t = 3; t >= 0; --t)
  for (unsigned t = 3; t >= 0; --t)
    if (in[t] > 0) break;
  // EXPLAIN: unroll.cu:[[@LINE-2]]:3: unroll: not applied: the trip count is not a compile-time constant (the counter would overflow its type)
  // Runs once; a while loop; a loop that shares its line; a macro.
  for (int t = 0; t < 1; ++t)
    acc += in[t];
  // EXPLAIN: unroll.cu:[[@LINE-2]]:3: unroll: not applied: the loop runs at most once
  int k = 0;
  while (k < 4)
    acc += in[k++];
  // EXPLAIN: unroll.cu:[[@LINE-2]]:3: unroll: not applied: the trip count is not a compile-time constant (a while or do loop has no counted header)
  if (n > 2) for (int t = 0; t < 2; ++t) acc += in[t];
  // EXPLAIN: unroll.cu:[[@LINE-1]]:14: unroll: not applied: the loop does not begin its line
  REPEAT4(acc += in[r]);
  // EXPLAIN: unroll.cu:[[@LINE-1]]:3: unroll: not applied: the loop comes from a macro expansion
  out[threadIdx.x] = acc;
}

// Templates: the trip count comes from each instantiation.
// CHECK-LABEL: {{^}}__global__ void vec_scale(
template <int N, typename T>
__global__ void vec_scale(T *x, float s) {
  // CHECK:      {{^}}  #pragma unroll{{$}}
  // CHECK-NEXT: {{^}}  for (int i = 0; i < N; ++i)
  for (int i = 0; i < N; ++i)
    x[threadIdx.x * N + i] = T(float(x[threadIdx.x * N + i]) * s);
}
template __global__ void vec_scale<4, float>(float *, float);
template __global__ void vec_scale<8, __half>(__half *, float);

// CHECK-LABEL: {{^}}__global__ void vec_sum(
template <int N>
__global__ void vec_sum(float *x) {
  // CHECK: {{^}}  for (int i = 1; i < N; ++i)
  for (int i = 1; i < N; ++i)
    x[0] += x[i];
  // EXPLAIN: unroll.cu:[[@LINE-2]]:3: unroll: not applied: in vec_sum<1000>: trip count 999 exceeds unroll.max-trip=32
}
template __global__ void vec_sum<4>(float *);
template __global__ void vec_sum<1000>(float *);

// Helpers the kernel calls: their loops get the pragma too (in place: only
// dot4_k calls dot4).
// CHECK-LABEL: {{^}}__device__ float dot4(const float *a, const float *b) {
// CHECK-NEXT:  {{^}}  float s = 0.f;
// CHECK-NEXT:  {{^}}  #pragma unroll{{$}}
// CHECK-NEXT:  {{^}}  for (int k = 0; k < 4; ++k)
__device__ float dot4(const float *a, const float *b) {
  float s = 0.f;
  for (int k = 0; k < 4; ++k)
    s += a[k] * b[k];
  return s;
}
// EXPLAIN: unroll.cu:[[@LINE-4]]:3: unroll: fired: in helper 'dot4' (called from the kernel at {{.*}}unroll.cu:[[@LINE+3]]:20): trip count 4: fully unrolled
// CHECK: {{^}}  y[threadIdx.x] = dot4(a + 4 * threadIdx.x, b + 4 * threadIdx.x);
__global__ void dot4_k(float *y, const float *a, const float *b) {
  y[threadIdx.x] = dot4(a + 4 * threadIdx.x, b + 4 * threadIdx.x);
}

// A helper's parameters may differ between threads: a barrier in a loop
// whose control flow reads one is left alone.
// CHECK-LABEL: {{^}}__device__ void staged(float *s, int steps) {
// CHECK-NEXT:  {{^}}  for (int k = 0; k < 4; ++k) {
__device__ void staged(float *s, int steps) {
  for (int k = 0; k < 4; ++k) {
    if (k < steps)
      s[threadIdx.x] += 1.0f;
    __syncthreads();
  }
}
// EXPLAIN: unroll.cu:[[@LINE-6]]:3: unroll: not applied: in helper 'staged' (called from the kernel at {{.*}}): the loop holds a barrier ('__syncthreads()' at {{.*}}unroll.cu:[[@LINE-3]]:5) and control flow that depends on the thread ('k < steps' reads 'steps')
__global__ void staged_k(float *y) {
  __shared__ float s[256];
  s[threadIdx.x] = y[threadIdx.x];
  staged(s, threadIdx.x % 4);
  y[threadIdx.x] = s[threadIdx.x];
}
