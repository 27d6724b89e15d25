// restrict-const: const on pointers never written through, __restrict__ where
// every launch site passes distinct buffers.
// RUN: %clang-astra rewrite --passes=restrict-const %s -- -std=c++17 > %t.cu
// RUN: FileCheck %s < %t.cu
// RUN: %nvptx-compile %t.cu | FileCheck %s --check-prefix=PTX
// RUN: %clang-astra rewrite --passes=restrict-const --explain %s 2>&1 >/dev/null | FileCheck %s --check-prefix=EXPLAIN
// PTX: .visible .entry

#include <cuda_bf16.h>
#include <cuda_fp16.h>

// A float kernel with one launch site: both fire.
// CHECK-LABEL: {{^}}__global__ void axpy(
// CHECK-SAME: float *__restrict__ y, const float *__restrict__ x, float a, int n)
__global__ void axpy(float *y, float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}

// half I/O, written through an alias and read through a helper.
__device__ float load_h(const __half *p, int i) { return __half2float(p[i]); }
// CHECK-LABEL: {{^}}__global__ void scale_half(
// CHECK-SAME: __half *__restrict__ out, const __half *__restrict__ in, int n)
__global__ void scale_half(__half *out, __half *in, int n) {
  __half *dst = out + blockIdx.x * 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    dst[i] = __float2half(2.f * load_h(in, i));
}

// The launch passes x twice (in place): no __restrict__; x is written so it
// stays non-const, and y (only read) becomes const without restrict.
// CHECK-LABEL: {{^}}__global__ void inplace(
// CHECK-SAME: float *x, const float *y, int n)
__global__ void inplace(float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] += y[i];
}
// EXPLAIN: restrict-const.cu:[[@LINE-5]]:32: restrict-const: not applied: no __restrict__: the launch at {{.*}}restrict-const.cu:[[@LINE+15]]:3 may pass 'x' and 'y' into the same buffer

// An atomic target is written; a kernel without launch sites gets no restrict.
// CHECK-LABEL: {{^}}__global__ void hist(
// CHECK-SAME: int *bins, const unsigned char *data, int n)
__global__ void hist(int *bins, unsigned char *data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(&bins[data[i]], 1);
}
// EXPLAIN: restrict-const.cu:[[@LINE-5]]:27: restrict-const: not applied: 'bins' is written (written by 'atomicAdd'{{.*}}); it stays non-const

void launch(float *y, float *x, __half *ho, __half *hi, int n) {
  axpy<<<(n + 255) / 256, 256>>>(y, x, 2.f, n);
  scale_half<<<1, 256>>>(ho, hi, n);
  inplace<<<(n + 255) / 256, 256>>>(x, x + 0, n);
}

// Templates: the pattern is edited; bf16 through T.
// CHECK-LABEL: {{^}}__global__ void copy_t(
// CHECK-SAME: T *__restrict__ dst, const T *__restrict__ src, int n)
template <typename T>
__global__ void copy_t(T *dst, T *src, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    dst[i] = src[i];
}
void launch_t(__nv_bfloat16 *a, __nv_bfloat16 *b, int n) { copy_t<<<8, 128>>>(a, b, n); }

// A second declaration freezes the type: const is refused, restrict is fine.
__global__ void declared_twice(float *out, float *in);
// CHECK-LABEL: {{^}}__global__ void declared_twice(float *__restrict__ out, float *__restrict__ in) {
__global__ void declared_twice(float *out, float *in) { out[threadIdx.x] = in[threadIdx.x]; }
void launch2(float *a, float *b) { declared_twice<<<1, 32>>>(a, b); }
// EXPLAIN: restrict-const.cu:[[@LINE-2]]:51: restrict-const: not applied: 'in' could be const, but the kernel is declared again at {{.*}}restrict-const.cu:[[@LINE-4]]:17

// Already const and restrict: nothing to do.
// CHECK-LABEL: {{^}}__global__ void done(const float *__restrict__ a, float *__restrict__ b) {
__global__ void done(const float *__restrict__ a, float *__restrict__ b) { b[0] = a[0]; }

// Launched through cudaLaunchKernel as well: its arguments go through a
// void ** the pass does not follow, so no __restrict__; the type may change
// (the launch passes the kernel as a const void *).
// CHECK-LABEL: {{^}}__global__ void by_pointer(float *out, const float *in) {
__global__ void by_pointer(float *out, float *in) { out[threadIdx.x] = in[threadIdx.x] * 2.f; }
// EXPLAIN: restrict-const.cu:[[@LINE-1]]:35: restrict-const: not applied: no __restrict__: the launch at {{.*}}restrict-const.cu:[[@LINE+4]]:3 (cudaLaunchKernel) passes the arguments through a launch API, where this pass does not follow them
void launch3(float *buf) {
  void *args[] = {&buf, &buf};
  by_pointer<<<1, 32>>>(buf + 64, buf);
  cudaLaunchKernel((const void *)by_pointer, dim3(1), dim3(32), args, 0, 0);
}

// A dispatch macro names the kernel in a template never instantiated here, to
// launch it through cudaLaunchKernelEx (as FlashInfer's norm kernels are): the
// kernel's type must not change, and its launches are not visible.
// CHECK-LABEL: {{^}}template <typename T> __global__ void dispatched(T *out, T *in) {
template <typename T> __global__ void dispatched(T *out, T *in) { out[threadIdx.x] = in[threadIdx.x]; }
// EXPLAIN: restrict-const.cu:[[@LINE-1]]:{{[0-9]+}}: restrict-const: not applied: 'in' could be const, but the kernel is named at {{.*}}restrict-const.cu:[[@LINE+5]]:{{[0-9]+}} in a template never instantiated here
#define DISPATCH_KERNEL(K, T, ...)                                             \
  auto kernel = K<T>;                                                          \
  cudaLaunchConfig_t cfg = {};                                                 \
  cudaLaunchKernelEx(&cfg, kernel, __VA_ARGS__)
template <typename T> void launch_dispatched(T *out, T *in) { DISPATCH_KERNEL(dispatched, T, out, in); }

// In a table of function pointers: the kernel's type must not change, and
// launches through the table are not visible.
// CHECK-LABEL: {{^}}__global__ void in_table(float *out, float *in) {
__global__ void in_table(float *out, float *in) { out[threadIdx.x] = in[threadIdx.x]; }
// EXPLAIN: restrict-const.cu:[[@LINE-1]]:45: restrict-const: not applied: 'in' could be const, but the kernel is named at {{.*}}restrict-const.cu:[[@LINE+2]]:{{[0-9]+}} other than in a launch (a function pointer: launches through it are not visible)
// EXPLAIN: restrict-const.cu:[[@LINE-2]]:45: restrict-const: not applied: no __restrict__: the kernel is named at {{.*}} other than in a launch
void (*table[])(float *, float *) = {in_table};
