// A bandwidth probe: y = x with 16-byte loads and stores, one float4 per
// thread. It should run within a few percent of a device-to-device copy.
#include <cuda_runtime.h>

__global__ void copy4(const float4 *__restrict__ x, float4 *__restrict__ y,
                      long long n4) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4)
    y[i] = x[i];
}
