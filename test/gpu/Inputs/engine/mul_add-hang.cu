// Fault: one thread never finishes.
#include <cuda_runtime.h>

__global__ void mul_add(const float *x, const float *y, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0) {
    volatile int spin = 1;
    while (spin) {
    }
  }
  if (i < n)
    out[i] = x[i] * y[i] + x[i];
}
