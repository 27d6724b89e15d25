// The copy with 4-byte accesses, four per thread: a slower candidate.
#include <cuda_runtime.h>

__global__ void copy4(const float4 *__restrict__ x, float4 *__restrict__ y,
                      long long n4) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) {
    const float *xs = reinterpret_cast<const float *>(x);
    float *ys = reinterpret_cast<float *>(y);
    for (int k = 0; k < 4; ++k)
      ys[4 * i + k] = xs[4 * i + k];
  }
}
