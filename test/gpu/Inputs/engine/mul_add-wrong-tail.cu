// Fault: the last element is off by one.
#include <cuda_runtime.h>

__global__ void mul_add(const float *x, const float *y, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = x[i] * y[i] + x[i] + (i == n - 1 ? 1.0f : 0.0f);
}
