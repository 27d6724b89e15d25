// ldg: __ldg(&p[i]) for loads from buffers the kernel never writes and that
// cannot alias a buffer it writes.
// RUN: rm -rf %t.dir && mkdir -p %t.dir/Inputs
// RUN: cp %s %t.dir/ldg.cu && cp %S/Inputs/ldg.cuh %t.dir/Inputs/
// RUN: %clang-astra rewrite --passes=ldg -i %t.dir/ldg.cu -- -std=c++17
// RUN: FileCheck %s < %t.dir/ldg.cu
// RUN: FileCheck %s --check-prefix=HEADER < %t.dir/Inputs/ldg.cuh
// RUN: %nvptx-compile %t.dir/ldg.cu | FileCheck %s --check-prefix=PTX
// RUN: %clang-astra rewrite --passes=ldg --explain %s -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=EXPLAIN
// RUN: %clang-astra rewrite --passes=ldg --pass-opt=ldg.assume-noalias=1 %s -- -std=c++17 > %t.noalias.cu
// RUN: FileCheck %s --check-prefix=NOALIAS < %t.noalias.cu
// RUN: %nvptx-compile -I %S %t.noalias.cu | FileCheck %s --check-prefix=PTX
// A second run changes nothing more.
// RUN: %clang-astra rewrite --passes=ldg %t.dir/ldg.cu -- -std=c++17 > %t.again.cu
// RUN: diff %t.dir/ldg.cu %t.again.cu
// PTX: .visible .entry
// PTX: ld.global.nc

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "Inputs/ldg.cuh"
// HEADER: {{^}}  long id = __ldg(&ids[blockIdx.x]);
// HEADER: {{^}}    out[blockIdx.x * dim + j] = __ldg(&table[id * dim + j]);
// EXPLAIN: ldg.cuh:4:{{[0-9]+}}: ldg: not applied: 'out' is written

// __restrict__ inputs; the written output is left alone.
// CHECK-LABEL: {{^}}__global__ void axpy(
__global__ void axpy(float *__restrict__ y, const float *__restrict__ x,
                     float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    // CHECK: {{^}}    y[i] = a * __ldg(&x[i]) + y[i];
    y[i] = a * x[i] + y[i];
  // EXPLAIN: ldg.cu:[[@LINE-1]]:16: ldg: fired: 'x[i]' -> '__ldg(&x[i])' ('x' is never written by the kernel and __restrict__)
}

// bf16 loads passed by value; a pointer read through a local alias.
// CHECK-LABEL: {{^}}__global__ void silu_and_mul(
__global__ void silu_and_mul(__nv_bfloat16 *__restrict__ out,
                             const __nv_bfloat16 *__restrict__ in, int d) {
  const __nv_bfloat16 *row = in + blockIdx.x * 2 * d;
  for (int j = threadIdx.x; j < d; j += blockDim.x) {
    // CHECK: {{^}}    float x = __bfloat162float(__ldg(&row[j]));
    float x = __bfloat162float(row[j]);
    // CHECK: {{^}}    float y = __bfloat162float(__ldg(&row[d + j]));
    float y = __bfloat162float(row[d + j]);
    out[blockIdx.x * d + j] = __float2bfloat16(x / (1.0f + expf(-x)) * y);
  }
}

// __half converted by its operator, a scale read through `*`, and a gather
// whose index is itself a read-only load.
// CHECK-LABEL: {{^}}__global__ void gather_scale(
__global__ void gather_scale(float *__restrict__ dst,
                             const __half *__restrict__ src,
                             const int *__restrict__ idx,
                             const float *__restrict__ scale, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  // CHECK: {{^}}  float v = __ldg(&src[__ldg(&idx[i])]);
  float v = src[idx[i]];
  // CHECK: {{^}}  dst[i] = v * __ldg(scale);
  dst[i] = v * *scale;
}

// No __restrict__: the launch sites decide. scale_copy's launch passes
// distinct buffers; add_inplace's launch passes x twice.
// CHECK-LABEL: {{^}}__global__ void scale_copy(
__global__ void scale_copy(float *out, const float *in, float k, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    // CHECK: {{^}}    out[i] = k * __ldg(&in[i]);
    out[i] = k * in[i];
  // EXPLAIN: ldg.cu:[[@LINE-1]]:18: ldg: fired: 'in[i]' -> '__ldg(&in[i])' ('in' is never written by the kernel and no launch passes it a buffer the kernel writes)
}
// CHECK-LABEL: {{^}}__global__ void add_inplace(
__global__ void add_inplace(float *x, const float *y, int n) {
  // EXPLAIN: ldg.cu:[[@LINE-1]]:52: ldg: not applied: 'y' is never written, but it is not __restrict__ and the launch at {{.*}}ldg.cu:[[@LINE+10]]:3 may pass 'y' and the written 'x' into one buffer
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    // CHECK: {{^}}    x[i] += y[i];
    // NOALIAS: {{^}}    x[i] += __ldg(&y[i]);
    x[i] += y[i];
}

void launch(float *a, float *b, int n) {
  scale_copy<<<(n + 255) / 256, 256>>>(a, b, 2.f, n);
  add_inplace<<<(n + 255) / 256, 256>>>(a, a, n);
}

// Loads that stay plain: an address taken, one member of a struct element,
// a type __ldg does not take, a load spelled by a macro, a buffer in shared
// memory, and a parameter without __restrict__ and without launch sites.
struct Pair {
  float a, b;
};
#define LOAD(p, i) p[i]
// CHECK-LABEL: {{^}}__global__ void stays_plain(
__global__ void stays_plain(float *out, const float *__restrict__ x,
                            const Pair *__restrict__ pairs,
                            const bool *__restrict__ mask,
                            const float *w) {
  // EXPLAIN: ldg.cu:[[@LINE-1]]:42: ldg: not applied: 'w' is never written, but it is not __restrict__ and the file may not show what every launch passes it (no launch of the kernel in this file) (--pass-opt=ldg.assume-noalias=1 asserts that it aliases no written buffer)
  __shared__ float tile[32];
  int i = threadIdx.x;
  tile[i] = LOAD(x, i);
  // EXPLAIN: ldg.cu:[[@LINE-1]]:{{[0-9]+}}: ldg: not applied: the load is spelled inside a macro expansion
  __syncthreads();
  const float *p = &x[i];
  // EXPLAIN: ldg.cu:[[@LINE-1]]:21: ldg: not applied: 'x[i]' is not a plain load: its address is taken
  float s = pairs[i].a;
  // EXPLAIN: ldg.cu:[[@LINE-1]]:13: ldg: not applied: 'pairs[i]' is not a plain load: only a member of the element is accessed
  if (mask[i])
    // EXPLAIN: ldg.cu:[[@LINE-1]]:7: ldg: not applied: 'mask[i]' loads 'bool', which no __ldg overload takes
    s += tile[31 - i];
  // CHECK: {{^}}  out[i] = s + __ldg(p) + w[i];
  // NOALIAS: {{^}}  out[i] = s + __ldg(p) + __ldg(&w[i]);
  out[i] = s + *p + w[i];
}

// Templates: every instantiation (float and __half) accepts the load.
// CHECK-LABEL: {{^}}__global__ void copy_t(
template <typename T>
__global__ void copy_t(T *__restrict__ dst, const T *__restrict__ src, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += blockDim.x * gridDim.x)
    // CHECK: {{^}}    dst[i] = __ldg(&src[i]);
    dst[i] = src[i];
}
template __global__ void copy_t<float>(float *, const float *, int);
template __global__ void copy_t<__half>(__half *, const __half *, int);

// A template instantiated with a type __ldg does not take: refused for all.
// CHECK-LABEL: {{^}}__global__ void copy_pairs(
template <typename T>
__global__ void copy_pairs(T *__restrict__ dst, const T *__restrict__ src) {
  // CHECK: {{^}}  dst[threadIdx.x] = src[threadIdx.x];
  dst[threadIdx.x] = src[threadIdx.x];
  // EXPLAIN: ldg.cu:[[@LINE-1]]:22: ldg: not applied: in copy_pairs<Pair>: 'src[threadIdx.x]' loads 'Pair', which no __ldg overload takes
}
template __global__ void copy_pairs<float>(float *, const float *);
template __global__ void copy_pairs<Pair>(Pair *, const Pair *);
