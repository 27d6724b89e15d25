// Fault: eight elements per thread with no tail loop, so it only works when
// n is a multiple of 8 (every shape set of the spec is).
#include <cuda_runtime.h>

__global__ void mul_add(const float *x, const float *y, float *out, int n) {
  int i = (blockIdx.x * blockDim.x + threadIdx.x) * 8;
  if (i + 8 <= n) {
#pragma unroll
    for (int k = 0; k < 8; ++k)
      out[i + k] = x[i + k] * y[i + k] + x[i + k];
  }
}
