// Fault for racecheck: each thread rewrites its shared slot (first with a
// wrong value) while the thread 32 lanes away reads it, with no barrier in
// between. The result is usually right, so the differential test may pass;
// compute-sanitizer racecheck reports the hazard.
#include <cuda_runtime.h>

__global__ void mul_add(const float *x, const float *y, float *out, int n) {
  __shared__ float s[256];
  int t = threadIdx.x;
  int i = blockIdx.x * blockDim.x + t;
  float v = i < n ? x[i] * y[i] : 0.0f;
  s[t] = v;
  __syncthreads();
  volatile float *vs = s;
  vs[t] = v + 1000.0f;
  vs[t] = v;
  float other = vs[t ^ 32];
  int oi = blockIdx.x * blockDim.x + (t ^ 32);
  float want = oi < n ? x[oi] * y[oi] : 0.0f;
  if (i < n)
    out[i] = v + x[i] + (other - want);
}
