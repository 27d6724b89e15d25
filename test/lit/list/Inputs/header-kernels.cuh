#pragma once
// Kernels defined in a header that a .cu file includes.
namespace ops {
__device__ inline float relu(float x) { return x > 0.f ? x : 0.f; }

__global__ void relu_kernel(float *y, const float *x, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * blockDim.x)
    y[i] = relu(x[i]);
}
} // namespace ops
