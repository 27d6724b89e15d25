// Equivalent: an explicit fused multiply-add, restrict pointers.
#include <cuda_runtime.h>

__global__ void mul_add(const float *__restrict__ x, const float *__restrict__ y,
                        float *__restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    out[i] = __fmaf_rn(v, y[i], v);
  }
}
