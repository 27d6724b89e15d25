// launch-bounds: __launch_bounds__(largest block of any launch), where the
// code bounds every launch of the kernel; a spec never licenses a bound.
// RUN: rm -rf %t.dir && mkdir -p %t.dir/Inputs
// RUN: cp %s %t.dir/lb.cu && cp %S/Inputs/launch-bounds.cuh %t.dir/Inputs/
// RUN: %clang-astra rewrite --passes=launch-bounds -i %t.dir/lb.cu -- -std=c++17
// RUN: FileCheck %s < %t.dir/lb.cu
// RUN: FileCheck %s --check-prefix=HEADER < %t.dir/Inputs/launch-bounds.cuh
// RUN: %nvptx-compile %t.dir/lb.cu | FileCheck %s --check-prefix=PTX
// RUN: %clang-astra rewrite --passes=launch-bounds --explain %s -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=EXPLAIN
// The spec describes workloads; it changes nothing here.
// RUN: %clang-astra rewrite --passes=launch-bounds --spec %S/Inputs/launch-bounds.astra.json %s -- -std=c++17 > %t.spec.cu
// RUN: %clang-astra rewrite --passes=launch-bounds %s -- -std=c++17 | diff - %t.spec.cu
// RUN: %clang-astra rewrite --passes=launch-bounds --pass-opt=launch-bounds.min-blocks=2 %s -- -std=c++17 | FileCheck %s --check-prefix=MIN
// RUN: not %clang-astra rewrite --passes=launch-bounds --pass-opt=launch-bounds.min-blocks=0 %s -- -std=c++17 2>&1 | FileCheck %s --check-prefix=BADOPT
// PTX: .visible .entry
// PTX: .maxntid 256{{$| }}
// BADOPT: error: --pass-opt=launch-bounds.min-blocks=0: launch-bounds.min-blocks must be an integer from 1 to 32, not '0'

#include <algorithm>
#include <cuda_bf16.h>

#include "Inputs/launch-bounds.cuh"
// A kernel defined in a header: any file that includes it may launch it.
// HEADER: {{^}}__global__ void relu_inplace(float *x, int n) {
// EXPLAIN: launch-bounds.cuh:5:17: launch-bounds: not applied: the code does not bound every launch's block size: the kernel is declared in {{.*}}launch-bounds.cuh:5:17, a file other translation units can include and launch it from

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

// A block computed at run time: no bound in the code, so no bound at all,
// whatever the spec's shape sets say (128 and 384).
// CHECK: {{^}}__global__ void scale_runtime(
__global__ void scale_runtime(float *y, const float *x, int n, int threads) {
  int i = blockIdx.x * threads + threadIdx.x;
  if (i < n)
    y[i] = 2.f * x[i];
}
// EXPLAIN: launch-bounds.cu:[[@LINE-5]]:17: launch-bounds: not applied: the code does not bound every launch's block size: the launch at {{.*}}launch-bounds.cu:[[@LINE+5]]:3 passes a block size known only at run time ('b', changed after its initialization) with no bound in the code

void launch_runtime(float *y, const float *x, int n, int threads) {
  int b = threads;
  b += 32;
  scale_runtime<<<(n + b - 1) / b, b>>>(y, x, n, b);
}

// A block from a caller's variable, bounded by a min: the bound is enough.
// CHECK: {{^}}__global__ void __launch_bounds__(512) row_bounded(
__global__ void row_bounded(float *y, int d) {
  for (int j = threadIdx.x; j < d; j += blockDim.x)
    y[blockIdx.x * d + j] = 0.f;
}
// EXPLAIN: launch-bounds.cu:[[@LINE-4]]:17: launch-bounds: fired: __launch_bounds__(512): the largest block of any launch: the launch at {{.*}}launch-bounds.cu:[[@LINE+4]]:3 uses at most 512 threads

void launch_bounded(float *y, int rows, int d) {
  const int threads = std::min(d, 512);
  row_bounded<<<rows, threads>>>(y, d);
}

// No launch site: the spec's [32, 8] is a workload, not a launch.
// CHECK: {{^}}__global__ void no_launch(
__global__ void no_launch(__nv_bfloat16 *out, const __nv_bfloat16 *in, int d) {
  for (int j = threadIdx.y * 32 + threadIdx.x; j < d; j += 256)
    out[blockIdx.x * d + j] = in[blockIdx.x * 2 * d + j];
}
// EXPLAIN: launch-bounds.cu:[[@LINE-4]]:17: launch-bounds: not applied: the code does not bound every launch's block size: no launch of the kernel in this file

// Launch APIs: cudaLaunchKernel's block is read like a <<<>>>'s;
// cudaLaunchKernelEx keeps it in a struct.
// CHECK: {{^}}__global__ void __launch_bounds__(128) by_api(
__global__ void by_api(float *p) { p[threadIdx.x] = 0.f; }
// EXPLAIN: launch-bounds.cu:[[@LINE-1]]:17: launch-bounds: fired: __launch_bounds__(128): the largest block of any launch: the launch at {{.*}}launch-bounds.cu:[[@LINE+39]]:3 (cudaLaunchKernel) uses 128 threads
// CHECK: {{^}}__global__ void by_ex(
__global__ void by_ex(float *p) { p[threadIdx.x] = 0.f; }
// EXPLAIN: launch-bounds.cu:[[@LINE-1]]:17: launch-bounds: not applied: the code does not bound every launch's block size: the launch at {{.*}}launch-bounds.cu:[[@LINE+40]]:3 (cudaLaunchKernelEx) keeps its block in a configuration struct this analysis does not read

// Kernels the pass leaves alone.
// CHECK: {{^}}__global__ void __launch_bounds__(128) has_bounds(
__global__ void __launch_bounds__(128) has_bounds(float *p) { p[threadIdx.x] = 0.f; }
// EXPLAIN: launch-bounds.cu:[[@LINE-1]]:40: launch-bounds: not applied: the kernel already has __launch_bounds__(128)
// CHECK: {{^}}__global__ void too_big(
__global__ void too_big(float *p) { p[threadIdx.x] = 0.f; }
// EXPLAIN: launch-bounds.cu:[[@LINE-1]]:17: launch-bounds: not applied: the launch at {{.*}}launch-bounds.cu:[[@LINE+20]]:3 uses 2048 threads per block, more than the 1024 a block may have (the launch fails already)
// CHECK: {{^}}__global__ void by_pointer(
__global__ void by_pointer(float *p) { p[threadIdx.x] = 0.f; }
// EXPLAIN: launch-bounds.cu:[[@LINE-1]]:17: launch-bounds: not applied: the code does not bound every launch's block size: the kernel is named at {{.*}}launch-bounds.cu:[[@LINE+19]]:25 other than in a launch (a function pointer: launches through it are not visible)
__global__ void declared_twice(float *p);
// CHECK: {{^}}__global__ void declared_twice(float *p) {
__global__ void declared_twice(float *p) { p[threadIdx.x] = 0.f; }
// EXPLAIN: launch-bounds.cu:[[@LINE-1]]:17: launch-bounds: not applied: the kernel is declared again at {{.*}}launch-bounds.cu:[[@LINE-3]]:17
// CHECK: {{^}}extern "C" __global__ void by_name(
extern "C" __global__ void by_name(float *p) { p[threadIdx.x] = 0.f; }
// EXPLAIN: launch-bounds.cu:[[@LINE-1]]:28: launch-bounds: not applied: the code does not bound every launch's block size: the kernel has C linkage (extern "C"): programs launch such kernels by name through the driver API (cuModuleGetFunction), which this file does not show
// A template kernel named (not launched) in a template never instantiated
// here, through a macro, as dispatch macros do for cudaLaunchKernelEx.
// CHECK: {{^}}template <typename T> __global__ void dispatched(
template <typename T> __global__ void dispatched(T *p) { p[threadIdx.x] = T(); }
// EXPLAIN: launch-bounds.cu:[[@LINE-1]]:39: launch-bounds: not applied: the code does not bound every launch's block size: the kernel is named at {{.*}}launch-bounds.cu:[[@LINE+2]]:57 in a template never instantiated here
#define PICK_KERNEL(K, T) auto kernel = K<T>; (void)kernel
template <typename T> void dispatch(T *p) { PICK_KERNEL(dispatched, T); }

void launch_more(float *p, cudaStream_t s) {
  too_big<<<1, dim3(64, 32)>>>(p);
  by_pointer<<<1, 64>>>(p);
  void (*fp)(float *) = by_pointer;
  (void)fp;
  declared_twice<<<1, 32>>>(p);
  has_bounds<<<1, 128>>>(p);
  by_name<<<1, 32>>>(p);
  void *args[] = {&p};
  cudaLaunchKernel((const void *)by_api, dim3(1), dim3(128), args, 0, s);
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(1);
  cfg.blockDim = dim3(64);
  cudaLaunchKernelEx(&cfg, by_ex, p);
}
