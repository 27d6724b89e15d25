// Two kernels call block_sum; one of them has a 2-D block. The helper is
// shared, so neither kernel's rewrite may change it.
#include "warp-reduce-helper.cuh"

__global__ void rows_1d(const float *x, float *y, int cols) {
  float v = 0.f;
  for (int j = threadIdx.x; j < cols; j += blockDim.x)
    v += x[(long)blockIdx.x * cols + j];
  v = block_sum(v);
  if (threadIdx.x == 0)
    y[blockIdx.x] = v;
}

__global__ void rows_2d(const float *x, float *y, int cols) {
  float v = x[(long)(blockIdx.x * blockDim.y + threadIdx.y) * cols + threadIdx.x];
  v = block_sum(v);
  if (threadIdx.x == 0)
    y[blockIdx.x * blockDim.y + threadIdx.y] = v;
}
