// The #include block below (with the #ifdef block among it) is the
// preamble: parsed once into a PCH, blanked in the parses that load it.
#ifdef _WIN32
#define NOMINMAX
#endif
#include <cuda_runtime.h>
#include "ops.cuh"

__global__ void local_kernel(float *p, float *q, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    p[i] = expf(q[i]) + 1.0f;
}

void apply(float *y, const float *x, int n) {
  ops::scale_kernel<<<(n + 255) / 256, 256>>>(y, x, n);
  local_kernel<<<(n + 255) / 256, 256>>>(y, (float *)x, n);
}
