// Row sums with the classic shared-memory tree reduction (the input of the
// warp-reduce pass) and a loop-invariant scale (hoist).
#include <cuda_runtime.h>

__global__ void block_sum(const float *x, float *out, float scale, int n) {
  __shared__ float s[256];
  const int tid = threadIdx.x;
  float acc = 0.f;
  for (int j = tid; j < n; j += blockDim.x)
    acc += x[(size_t)blockIdx.x * n + j] * (scale / (float)n);
  s[tid] = acc;
  __syncthreads();
  for (int off = blockDim.x / 2; off > 0; off >>= 1) {
    if (tid < off)
      s[tid] += s[tid + off];
    __syncthreads();
  }
  if (tid == 0)
    out[blockIdx.x] = s[0];
}

void launch_block_sum(const float *x, float *out, float scale, int rows, int n) {
  block_sum<<<rows, 256>>>(x, out, scale, n);
}
