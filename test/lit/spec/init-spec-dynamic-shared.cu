// A kernel that uses extern __shared__ (itself or through a device function
// it calls) needs the launch's dynamic shared memory size: init-spec drafts
// "shmem": "TODO" where the launch passes none (or there is no launch),
// never a silent 0. A kernel with only static shared memory keeps 0.
// RUN: %clang-astra init-spec %s --kernel reduce -o - | FileCheck %s --check-prefix=REDUCE
// RUN: %clang-astra init-spec %s --kernel viaCallee -o - | FileCheck %s --check-prefix=CALLEE
// RUN: %clang-astra init-spec %s --kernel fixed -o - | FileCheck %s --check-prefix=FIXED

#include <cuda_runtime.h>

__global__ void reduce(float *out, const float *in, int n) {
  extern __shared__ float buf[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  buf[threadIdx.x] = i < n ? in[i] : 0.f;
  __syncthreads();
  if (threadIdx.x == 0)
    out[blockIdx.x] = buf[0];
}

__device__ float stage(float v) {
  extern __shared__ float tmp[];
  tmp[threadIdx.x] = v;
  __syncthreads();
  return tmp[blockDim.x - 1 - threadIdx.x];
}

__global__ void viaCallee(float *out, const float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = stage(i < n ? in[i] : 0.f);
  if (i < n)
    out[i] = v;
}

__global__ void fixed(float *out, const float *in, int n) {
  __shared__ float buf[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  buf[threadIdx.x] = i < n ? in[i] : 0.f;
  __syncthreads();
  if (i < n)
    out[i] = buf[255 - threadIdx.x];
}

void run(float *out, const float *in, int n) {
  // REDUCE: "launch": {"grid": "(n + 255) / 256", "block": "256", "shmem": "TODO"}, // from the launch at {{.*}}; TODO: shmem: the kernel uses extern __shared__ 'buf' (dynamic shared memory); its size in bytes
  reduce<<<(n + 255) / 256, 256>>>(out, in, n);
  // FIXED: "launch": {"grid": "(n + 255) / 256", "block": "256", "shmem": "0"}, // from the launch at
  fixed<<<(n + 255) / 256, 256>>>(out, in, n);
}
// No launch of viaCallee in the file.
// CALLEE: "launch": {"grid": "TODO", "block": "TODO", "shmem": "TODO"}, // TODO: no launch in this file; grid and block as expressions over the shape variables; shmem: the kernel uses extern __shared__ 'tmp' (dynamic shared memory); its size in bytes
