// conv1d: direct 1-D convolution (KernelBench level 1, nn.Conv1d with
// stride 1, no padding, dilation 1, groups 1, bias):
//   x [B, C_in, L], weight [C_out, C_in, K], bias [C_out]
//   out[b, o, l] = bias[o] + sum_{c, k} weight[o, c, k] x[b, c, l + k],
//   out [B, C_out, L - K + 1], fp32. One thread per output element.
#include <cstdint>
#include <cuda_runtime.h>

__global__ void conv1d(const float *x, const float *weight, const float *bias,
                       float *out, int batch, int in_channels,
                       int out_channels, int length, int kernel_size) {
  const int out_len = length - kernel_size + 1;
  const int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const int64_t total = (int64_t)batch * out_channels * out_len;
  if (idx >= total)
    return;
  const int l = idx % out_len;
  const int o = (idx / out_len) % out_channels;
  const int64_t b = idx / ((int64_t)out_len * out_channels);
  float acc = bias[o];
  for (int c = 0; c < in_channels; ++c) {
    const float *xr = x + (b * in_channels + c) * length + l;
    const float *w = weight + ((int64_t)o * in_channels + c) * kernel_size;
    for (int k = 0; k < kernel_size; ++k)
      acc += w[k] * xr[k];
  }
  out[idx] = acc;
}

void launch_conv1d(const float *x, const float *weight, const float *bias,
                   float *out, int batch, int in_channels, int out_channels,
                   int length, int kernel_size, cudaStream_t stream) {
  const int threads = 256;
  const int64_t total = (int64_t)batch * out_channels * (length - kernel_size + 1);
  const int64_t blocks = (total + threads - 1) / threads;
  conv1d<<<blocks, threads, 0, stream>>>(x, weight, bias, out, batch, in_channels,
                                         out_channels, length, kernel_size);
}
