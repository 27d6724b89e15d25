#include "scale_config.cuh"

#ifndef HOST_FLAG
#error "HOST_FLAG is not defined: the -Xcompiler -D flag did not arrive"
#endif

__global__ void scale(float *out, float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[i] * cfg::factor();
}

void launchScale(float *out, float *in, int n) {
  scale<<<(n + 255) / 256, 256>>>(out, in, n);
}
