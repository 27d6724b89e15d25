// Fault: stores far outside any allocation (an illegal address).
#include <cuda_runtime.h>

__global__ void mul_add(const float *x, const float *y, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i + ((long long)n << 30)] = x[i] * y[i] + x[i];
}
