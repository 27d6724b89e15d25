// Fault: the last element is never written.
#include <cuda_runtime.h>

__global__ void mul_add(const float *x, const float *y, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n - 1)
    out[i] = x[i] * y[i] + x[i];
}
