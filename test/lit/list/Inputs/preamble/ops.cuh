#pragma once
// A header the preamble PCH holds: its kernel is listed from the PCH.
namespace ops {
__global__ void scale_kernel(float *y, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = 2.0f * x[i];
}
} // namespace ops
