// Fault: a shared-memory exchange without __syncthreads(). The upper half
// of each block writes its partial products late (after a long dependent
// chain), so the lower half reads slots that are not written yet.
#include <cuda_runtime.h>

__global__ void mul_add(const float *x, const float *y, float *out, int n) {
  __shared__ float s[256];
  int t = threadIdx.x;
  int i = blockIdx.x * blockDim.x + t;
  s[t] = 0.0f;
  __syncthreads();
  float p = i < n ? x[i] * y[i] : 0.0f;
  if (t >= 128) {
    float d = p;
#pragma unroll 1
    for (int k = 0; k < 4000; ++k)
      d = d * 0.999999f + 1e-7f;
    p += (d - d) * 0.0f + (d > 1e30f ? 1.0f : 0.0f);
  }
  s[t] = p;
  // Missing: __syncthreads();
  int partner = t ^ 128;
  int pi = blockIdx.x * blockDim.x + partner;
  float want = pi < n ? x[pi] * y[pi] : 0.0f;
  if (i < n)
    out[i] = s[t] + x[i] + (s[partner] - want);
}
