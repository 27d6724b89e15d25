// launch-bounds: __launch_bounds__(largest block of any launch), from the
// constant launch sites in the file or from the spec's launch.block.
// RUN: rm -rf %t.dir && mkdir -p %t.dir/Inputs
// RUN: cp %s %t.dir/lb.cu && cp %S/Inputs/launch-bounds.cuh %t.dir/Inputs/
// RUN: %clang-astra rewrite --passes=launch-bounds -i %t.dir/lb.cu -- -std=c++17
// RUN: FileCheck %s < %t.dir/lb.cu
// RUN: FileCheck %s --check-prefix=HEADER < %t.dir/Inputs/launch-bounds.cuh
// RUN: %nvptx-compile %t.dir/lb.cu | FileCheck %s --check-prefix=PTX
// RUN: %clang-astra rewrite --passes=launch-bounds --explain %s -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=EXPLAIN
// RUN: %clang-astra rewrite --passes=launch-bounds --spec %S/Inputs/launch-bounds.astra.json %s -- -std=c++17 > %t.spec.cu
// RUN: FileCheck %s --check-prefix=SPEC < %t.spec.cu
// RUN: %nvptx-compile -I %S %t.spec.cu | FileCheck %s --check-prefix=PTX
// RUN: %clang-astra rewrite --passes=launch-bounds --spec %S/Inputs/launch-bounds.astra.json --explain %s -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=SPEC-EXPLAIN
// RUN: %clang-astra rewrite --passes=launch-bounds --pass-opt=launch-bounds.min-blocks=2 %s -- -std=c++17 | FileCheck %s --check-prefix=MIN
// RUN: not %clang-astra rewrite --passes=launch-bounds --pass-opt=launch-bounds.min-blocks=0 %s -- -std=c++17 2>&1 | FileCheck %s --check-prefix=BADOPT
// PTX: .visible .entry
// PTX: .maxntid 256{{$| }}
// BADOPT: error: --pass-opt=launch-bounds.min-blocks=0: launch-bounds.min-blocks must be an integer from 1 to 32, not '0'

#include <cuda_bf16.h>

#include "Inputs/launch-bounds.cuh"
// HEADER: {{^}}__global__ void __launch_bounds__(512) relu_inplace(float *x, int n) {

// Two launches with literal blocks: the larger wins.
// CHECK: {{^}}__global__ void __launch_bounds__(256) axpy(
// MIN: {{^}}__global__ void __launch_bounds__(256, 2) axpy(
__global__ void axpy(float *y, const float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}
// EXPLAIN: launch-bounds.cu:[[@LINE-5]]:17: launch-bounds: fired: __launch_bounds__(256): the largest block of any launch: the launch at {{.*}}launch-bounds.cu:[[@LINE+25]]:3 uses 256 threads

// A dim3 local and a dim3 temporary.
// CHECK: {{^}}__global__ void __launch_bounds__(256) transpose(
__global__ void transpose(float *out, const float *in, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h)
    out[x * h + y] = in[y * w + x];
}

// A template kernel launched with its template argument as block size, from
// a template host function.
// CHECK: {{^}}__global__ void __launch_bounds__(128) fill(
template <int Block, typename T>
__global__ void fill(T *p, T v, int n) {
  int i = blockIdx.x * Block + threadIdx.x;
  if (i < n)
    p[i] = v;
}
template <int Block> void fill_all(float *p, int n) {
  fill<Block, float><<<(n + Block - 1) / Block, Block>>>(p, 0.f, n);
}

void launch(float *y, const float *x, int n, cudaStream_t s) {
  axpy<<<(n + 255) / 256, 256, 0, s>>>(y, x, 2.f, n);
  axpy<<<(n + 127) / 128, 128>>>(y, x, 2.f, n);
  dim3 block(16, 16);
  dim3 grid((n + 15) / 16, (n + 15) / 16);
  transpose<<<grid, block>>>(y, x, n, n);
  transpose<<<grid, dim3(32, 4)>>>(y, x, n, n);
  fill_all<128>(y, n);
  fill_all<64>(y, n);
  constexpr int Threads = 512;
  ops::relu_inplace<<<(n + Threads - 1) / Threads, Threads>>>(y, n);
}

// A block computed at run time: unknown without a spec; the spec's shape
// sets give 128 and 384.
// CHECK: {{^}}__global__ void scale_runtime(
// SPEC: {{^}}__global__ void __launch_bounds__(384) scale_runtime(
__global__ void scale_runtime(float *y, const float *x, int n, int threads) {
  int i = blockIdx.x * threads + threadIdx.x;
  if (i < n)
    y[i] = 2.f * x[i];
}
// EXPLAIN: launch-bounds.cu:[[@LINE-5]]:17: launch-bounds: not applied: block sizes are unknown: the launch at {{.*}}launch-bounds.cu:[[@LINE+6]]:3 passes a block size that is not a compile-time constant; no spec gives launch.block (--spec)
// SPEC-EXPLAIN: launch-bounds.cu:[[@LINE-6]]:17: launch-bounds: fired: __launch_bounds__(384): the largest block in the spec's shape sets (the spec {{.*}}launch-bounds.astra.json (kernel 'scale_runtime', shape set 'large'): 384 threads); the file alone does not show it: the launch at {{.*}}launch-bounds.cu:[[@LINE+5]]:3 passes a block size that is not a compile-time constant

void launch_runtime(float *y, const float *x, int n, int threads) {
  int b = threads;
  b += 32;
  scale_runtime<<<(n + b - 1) / b, b>>>(y, x, n, b);
}

// No launch site: only the spec knows (block [32, 8]).
// CHECK: {{^}}__global__ void no_launch(
// SPEC: {{^}}__global__ void __launch_bounds__(256) no_launch(
__global__ void no_launch(__nv_bfloat16 *out, const __nv_bfloat16 *in, int d) {
  for (int j = threadIdx.y * 32 + threadIdx.x; j < d; j += 256)
    out[blockIdx.x * d + j] = in[blockIdx.x * 2 * d + j];
}
// EXPLAIN: launch-bounds.cu:[[@LINE-4]]:17: launch-bounds: not applied: block sizes are unknown: no launch site in this file; no spec gives launch.block (--spec)

// Kernels the pass leaves alone.
// CHECK: {{^}}__global__ void __launch_bounds__(128) has_bounds(
__global__ void __launch_bounds__(128) has_bounds(float *p) { p[threadIdx.x] = 0.f; }
// EXPLAIN: launch-bounds.cu:[[@LINE-1]]:40: launch-bounds: not applied: the kernel already has __launch_bounds__(128)
// CHECK: {{^}}__global__ void too_big(
__global__ void too_big(float *p) { p[threadIdx.x] = 0.f; }
// EXPLAIN: launch-bounds.cu:[[@LINE-1]]:17: launch-bounds: not applied: the launch at {{.*}}launch-bounds.cu:[[@LINE+10]]:3 uses 2048 threads per block, more than the 1024 a block may have (the launch fails already)
// CHECK: {{^}}__global__ void by_pointer(
__global__ void by_pointer(float *p) { p[threadIdx.x] = 0.f; }
// EXPLAIN: launch-bounds.cu:[[@LINE-1]]:17: launch-bounds: not applied: block sizes are unknown: the kernel's address is taken at {{.*}}launch-bounds.cu:[[@LINE+10]]:34, so some launches are not visible
__global__ void declared_twice(float *p);
// CHECK: {{^}}__global__ void declared_twice(float *p) {
__global__ void declared_twice(float *p) { p[threadIdx.x] = 0.f; }
// EXPLAIN: launch-bounds.cu:[[@LINE-1]]:17: launch-bounds: not applied: the kernel is declared again at {{.*}}launch-bounds.cu:[[@LINE-3]]:17

void launch_more(float *p, cudaStream_t s) {
  too_big<<<1, dim3(64, 32)>>>(p);
  by_pointer<<<1, 64>>>(p);
  void *args[] = {&p};
  cudaLaunchKernel((const void *)by_pointer, dim3(1), dim3(2048), args, 0, s);
  declared_twice<<<1, 32>>>(p);
  has_bounds<<<1, 128>>>(p);
}
