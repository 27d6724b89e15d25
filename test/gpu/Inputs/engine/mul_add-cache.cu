// Fault: caches its results between calls and replays them when n is the
// same, whatever the inputs.
#include <cuda_runtime.h>

__device__ float cache[1 << 20];
__device__ int cached_n;

__global__ void mul_add(const float *x, const float *y, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  if (cached_n == n) {
    out[i] = cache[i];
    return;
  }
  float v = x[i] * y[i] + x[i];
  cache[i] = v;
  out[i] = v;
  __threadfence();
  if (i == n - 1)
    cached_n = n;
}
