// Hand-written variant grid3d of kernels/kernelbench/conv1d.cu (session 12 experiment).
#include <cstdint>
#include <cuda_runtime.h>

__global__ void __launch_bounds__(256) conv1d(const float *__restrict__ x, const float *__restrict__ weight,
                       const float *__restrict__ bias, float *__restrict__ out, int batch,
                       int in_channels, int out_channels, int length, int kernel_size) {
  const int out_len = length - kernel_size + 1;
  const int l = blockIdx.x * blockDim.x + threadIdx.x;
  const int o = blockIdx.y * blockDim.y + threadIdx.y;
  const int b = blockIdx.z;
  if (l >= out_len || o >= out_channels)
    return;
  float acc = bias[o];
  for (int c = 0; c < in_channels; ++c) {
    const float *xr = x + (b * in_channels + c) * length + l;
    const float *w = weight + (o * in_channels + c) * kernel_size;
    for (int k = 0; k < kernel_size; ++k)
      acc += w[k] * xr[k];
  }
  out[(b * out_channels + o) * out_len + l] = acc;
}
