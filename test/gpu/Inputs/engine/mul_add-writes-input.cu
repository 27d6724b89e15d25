// Fault: right output, but it scribbles over an input.
#include <cuda_runtime.h>

__global__ void mul_add(const float *x, const float *y, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    out[i] = v * y[i] + v;
    const_cast<float *>(x)[i] = 0.0f;
  }
}
