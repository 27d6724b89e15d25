// Hand-written variant o4l2 of kernels/kernelbench/conv1d.cu (session 12 experiment).
#include <cstdint>
#include <cuda_runtime.h>

__global__ void __launch_bounds__(128) conv1d(const float *__restrict__ x, const float *__restrict__ weight,
                       const float *__restrict__ bias, float *__restrict__ out, int batch,
                       int in_channels, int out_channels, int length, int kernel_size) {
  const int out_len = length - kernel_size + 1;
  constexpr int RO = 4, RL = 2;
  const int l0 = blockIdx.x * (blockDim.x * RL) + threadIdx.x;
  const int o0 = blockIdx.y * RO;
  const int b = blockIdx.z;
  float acc[RO][RL];
#pragma unroll
  for (int r = 0; r < RO; ++r)
#pragma unroll
    for (int s = 0; s < RL; ++s)
      acc[r][s] = o0 + r < out_channels ? bias[o0 + r] : 0.0f;
  for (int c = 0; c < in_channels; ++c) {
    const float *xr = x + (b * in_channels + c) * length + l0;
    const float *w = weight + (o0 * in_channels + c) * kernel_size;
    for (int k = 0; k < kernel_size; ++k) {
      float xv[RL];
#pragma unroll
      for (int s = 0; s < RL; ++s)
        xv[s] = l0 + s * (int)blockDim.x < out_len ? xr[k + s * blockDim.x] : 0.0f;
#pragma unroll
      for (int r = 0; r < RO; ++r) {
        const float wv = o0 + r < out_channels ? w[r * in_channels * kernel_size + k] : 0.0f;
#pragma unroll
        for (int s = 0; s < RL; ++s)
          acc[r][s] += wv * xv[s];
      }
    }
  }
#pragma unroll
  for (int r = 0; r < RO; ++r)
#pragma unroll
    for (int s = 0; s < RL; ++s)
      if (o0 + r < out_channels && l0 + s * (int)blockDim.x < out_len)
        out[(b * out_channels + o0 + r) * out_len + l0 + s * blockDim.x] = acc[r][s];
}
