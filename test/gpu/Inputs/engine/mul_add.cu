// Baseline of the engine's GPU tests: out = x * y + x, one thread per
// element. Each mul_add-*.cu file next to it is a candidate rewrite with
// one planted fault (or none: mul_add-fma.cu).
#include <cuda_runtime.h>

__global__ void mul_add(const float *x, const float *y, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = x[i] * y[i] + x[i];
}
