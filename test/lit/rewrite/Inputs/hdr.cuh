// A kernel in a header the main file includes: fast-math rewrites it there.
#pragma once
__global__ void in_header(float *y, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = expf(x[i]);
}
