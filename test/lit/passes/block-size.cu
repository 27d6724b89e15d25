// block-size: another block size at every launch site of a kernel whose spec
// marks the launch as its own; the grid follows where the spec's grid uses
// the block size. Checked per kernel: the rewrite, the refusals with their
// reasons, the PTX of the result, and the spec's launch retuned the same way.
// RUN: rm -rf %t.dir && mkdir -p %t.dir
// RUN: cp %s %t.dir/bs.cu && cp %S/Inputs/block-size.astra.json %t.dir/bs.cu.astra.json
// RUN: %clang-astra rewrite --passes=block-size -i %t.dir/bs.cu -- -std=c++17
// RUN: FileCheck %s < %t.dir/bs.cu
// RUN: FileCheck %s --check-prefix=SPEC < %t.dir/bs.cu.astra.json
// RUN: %nvptx-compile %t.dir/bs.cu | FileCheck %s --check-prefix=PTX
// RUN: %clang-astra rewrite --passes=block-size --explain %t.dir/bs.cu -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=AGAIN
// RUN: cp %s %t.dir/bs.cu && cp %S/Inputs/block-size.astra.json %t.dir/bs.cu.astra.json
// RUN: %clang-astra rewrite --passes=block-size --explain %t.dir/bs.cu -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=EXPLAIN
// RUN: %clang-astra rewrite --passes=block-size --pass-opt=block-size.threads=512 %t.dir/bs.cu -- -std=c++17 | FileCheck %s --check-prefix=T512
// RUN: %clang-astra rewrite --passes=block-size --pass-opt=block-size.threads=512 --explain %t.dir/bs.cu -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=T512-EXPLAIN
// RUN: not %clang-astra rewrite --passes=block-size --pass-opt=block-size.threads=100 %t.dir/bs.cu -- -std=c++17 2>&1 | FileCheck %s --check-prefix=BADOPT
// RUN: cp %s %t.dir/nospec.cu
// RUN: %clang-astra rewrite --passes=block-size --explain %t.dir/nospec.cu -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=NOSPEC
// PTX: .visible .entry
// BADOPT: error: --pass-opt=block-size.threads=100: block-size.threads must be a multiple of 32 from 32 to 1024, not '100'
// NOSPEC: nospec.cu:[[@LINE+16]]:17: block-size: not applied: no workload spec: the block size to change is the spec's launch.block (--spec)
// -i changes the spec's launch with the code, so a second run finds the new
// size in both and changes it again.
// AGAIN: bs.cu:{{[0-9]+}}:17: block-size: fired: block size 128 -> 256 at 1 launch site
// SPEC: "launch": {"grid": "(n + 127) / 128", "block": 128},
// SPEC: "launch": {"grid": "T", "block": "min(256, d)"},
// SPEC: "launch": {"grid": "T", "block": "min(256, d)"},
// Printing the result (no -i, no --diff) leaves the spec as it is and says so.
// RUN: %clang-astra rewrite --passes=block-size %t.dir/bs.cu -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=STALE
// STALE: warning: {{.*}}bs.cu: the launch changed (block-size); {{.*}}bs.cu.astra.json still describes the old launch (-i or --diff update it too)

#include <algorithm>
#include <cuda_runtime.h>

// Block 256 and a grid that rounds up with it: default 256 -> 128, and the
// grid's 255 and 256 follow.
__global__ void axpy(float *y, const float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}
// EXPLAIN: bs.cu:[[@LINE-5]]:17: block-size: fired: block size 256 -> 128 at 1 launch site ({{.*}}bs.cu:[[@LINE+6]]:3)
// T512-EXPLAIN: bs.cu:[[@LINE-6]]:17: block-size: fired: block size 256 -> 512 at 1 launch site
void launch_axpy(float *y, const float *x, int n, cudaStream_t s) {
  dim3 block(256);
  // CHECK: {{^}}  dim3 block(128);
  // T512: {{^}}  dim3 block(512);
  axpy<<<(n + 255) / 256, block, 0, s>>>(y, x, 2.f, n);
  // CHECK: {{^}}  axpy<<<(n + 127) / 128, block, 0, s>>>(y, x, 2.f, n);
  // T512: {{^}}  axpy<<<(n + 511) / 512, block, 0, s>>>(y, x, 2.f, n);
}

// A template kernel launched from a template host function instantiated
// twice: the one literal is edited once; the grid does not use it.
template <typename T>
__global__ void scale(T *out, const T *in, int d) {
  const T *row = in + blockIdx.x * d;
  for (int j = threadIdx.x; j < d; j += blockDim.x)
    out[blockIdx.x * d + j] = row[j] * T(2);
}
// EXPLAIN: bs.cu:[[@LINE-5]]:17: block-size: fired: block size 1024 -> 256 at 1 launch site
template <typename T> void launch_scale(T *out, const T *in, int rows, int d) {
  const dim3 block(std::min(d, 1024));
  // CHECK: {{^}}  const dim3 block(std::min(d, 256));
  // T512: {{^}}  const dim3 block(std::min(d, 512));
  scale<T><<<rows, block>>>(out, in, d);
}
template void launch_scale<float>(float *, const float *, int, int);
template void launch_scale<double>(double *, const double *, int, int);

// Written for its block size: a shared array of 256.
__global__ void block_sum(float *out, const float *in) {
  __shared__ float s[256];
  s[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0;
    for (int i = 0; i < blockDim.x; ++i)
      t += s[i];
    out[blockIdx.x] = t;
  }
}
// EXPLAIN: bs.cu:[[@LINE-10]]:22: block-size: not applied: the kernel's body uses the literal 256, the block size it is launched with: it may be written for that block size (a shared array, a thread bound)
void launch_block_sum(float *out, const float *in, int n) {
  block_sum<<<n / 256, 256>>>(out, in);
  // CHECK: {{^}}  block_sum<<<n / 256, 256>>>(out, in);
}

// The spec does not say the launch is the kernel's.
__global__ void caller_decides(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    p[i] = i;
}
// EXPLAIN: bs.cu:[[@LINE-5]]:17: block-size: not applied: {{.*}}bs.cu.astra.json:{{[0-9]+}}:7: kernel 'caller_decides': launch: the spec does not mark the launch as the kernel's own ("launch_tunable": true)
void launch_caller_decides(float *p, int n) {
  caller_decides<<<(n + 127) / 128, 128>>>(p, n);
}

// Launched through cudaLaunchKernel as well: a launch the pass cannot edit.
__global__ void by_pointer(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    p[i] = 0;
}
void launch_by_pointer(float *p, int n) {
  by_pointer<<<(n + 127) / 128, 128>>>(p, n);
  // CHECK: {{^}}  by_pointer<<<(n + 127) / 128, 128>>>(p, n);
  void *args[] = {&p, &n};
  cudaLaunchKernel((const void *)by_pointer, dim3(n / 128), dim3(128), args, 0, 0);
  // EXPLAIN: bs.cu:[[@LINE-1]]:3: block-size: not applied: the launch at {{.*}}bs.cu:[[@LINE-1]]:3 (cudaLaunchKernel) goes through a launch API, which this pass does not edit
}

// The block size comes from a macro: the edit would change every use of it.
#define THREADS 512
__global__ void macro_block(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    p[i] = 1;
}
void launch_macro_block(float *p, int n) {
  macro_block<<<(n + THREADS - 1) / THREADS, THREADS>>>(p, n);
  // EXPLAIN: bs.cu:[[@LINE-1]]:22: block-size: not applied: the block size is spelled inside a macro
}

// __launch_bounds__(256): 128 fits, 512 does not.
__global__ void __launch_bounds__(256) bounded(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    p[i] = 2;
}
// EXPLAIN: bs.cu:[[@LINE-5]]:40: block-size: fired: block size 256 -> 128 at 1 launch site
// T512-EXPLAIN: bs.cu:[[@LINE-6]]:40: block-size: not applied: the kernel's __launch_bounds__ do not allow 512 threads
void launch_bounded(float *p, int n) {
  bounded<<<(n + 255) / 256, 256>>>(p, n);
  // CHECK: {{^}}  bounded<<<(n + 127) / 128, 128>>>(p, n);
}

// No launch in this file: the launch is someone else's.
__global__ void unlaunched(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    p[i] = 3;
}
// EXPLAIN: bs.cu:[[@LINE-5]]:17: block-size: not applied: the launch is not this file's to change: no launch of the kernel in this file

// Two kernels launched with one `threads`: changing it for one would change
// the other's launch too, so neither is changed.
__global__ void twin_a(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    p[i] = 4;
}
__global__ void twin_b(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    p[i] = 5;
}
void launch_twins(float *p, float *q, int n) {
  const int threads = 256;
  // CHECK: {{^}}  const int threads = 256;
  const int blocks = (n + threads - 1) / threads;
  twin_a<<<blocks, threads>>>(p, n);
  twin_b<<<blocks, threads>>>(q, n);
  // EXPLAIN: bs.cu:[[@LINE-1]]:{{[0-9]+}}: block-size: not applied: the launch's grid reads '{{blocks|threads}}', which is read here too (not by a launch of this kernel): changing it would change this too
  // EXPLAIN: bs.cu:[[@LINE-3]]:{{[0-9]+}}: block-size: not applied: the launch's grid reads '{{blocks|threads}}', which is read here too (not by a launch of this kernel): changing it would change this too
}
