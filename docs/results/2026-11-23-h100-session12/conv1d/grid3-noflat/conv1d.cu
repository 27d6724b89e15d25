// conv1d: direct 1-D convolution (KernelBench level 1, nn.Conv1d with
// stride 1, no padding, dilation 1, groups 1, bias):
//   x [B, C_in, L], weight [C_out, C_in, K], bias [C_out]
//   out[b, o, l] = bias[o] + sum_{c, k} weight[o, c, k] x[b, c, l + k],
//   out [B, C_out, L - K + 1], fp32. One thread per output element.
// Session 12 experiment: delinearize's output for conv1d with its flat branch
// cut to a trap, to see what the second branch costs on the 5.5 us set.
#include <cstdint>
#include <cuda_runtime.h>

__global__ void conv1d(const float *__restrict__ x, const float *__restrict__ weight, const float *__restrict__ bias,
                       float *__restrict__ out, int batch, int in_channels,
                       int out_channels, int length, int kernel_size) {
  const int out_len = length - kernel_size + 1;
  const int64_t total = (int64_t)batch * out_channels * out_len;
  if (((long long)((((length - kernel_size) + 1)))) > 0 && ((long long)(out_channels)) > 0 && ((long long)(batch)) > 0 && ((long long)(batch)) <= 65535 && (((long long)(out_channels)) + 7) / 8 <= 65535 && (((long long)((((length - kernel_size) + 1)))) + 127) / 128 <= 2147483647) {
    const long long astra_x = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long astra_y = (long long)blockIdx.y * blockDim.y + threadIdx.y;
    const bool astra_valid = astra_x < ((long long)((((length - kernel_size) + 1)))) && astra_y < ((long long)(out_channels));
    const int64_t idx = (int64_t)(((long long)blockIdx.z * ((long long)(out_channels)) + (astra_y < ((long long)(out_channels)) ? astra_y : ((long long)(out_channels)) - 1)) * ((long long)((((length - kernel_size) + 1)))) + (astra_x < ((long long)((((length - kernel_size) + 1)))) ? astra_x : ((long long)((((length - kernel_size) + 1)))) - 1));
    const int l = ((int64_t)(astra_x < ((long long)((((length - kernel_size) + 1)))) ? astra_x : ((long long)((((length - kernel_size) + 1)))) - 1));
  const int o = ((int64_t)(astra_y < ((long long)(out_channels)) ? astra_y : ((long long)(out_channels)) - 1));
  const int64_t b = ((int64_t)blockIdx.z);
  float acc = bias[o];
  for (int c = 0; c < in_channels; ++c) {
    const float *xr = x + (b * in_channels + c) * length + l;
    const float *w = weight + ((int64_t)o * in_channels + c) * kernel_size;
    for (int k = 0; k < kernel_size; ++k)
      acc += w[k] * xr[k];
  }
  if (astra_valid) { out[idx] = acc; }
  } else {
    __trap(); // session 12 experiment: the flat branch removed (never taken on these shapes)
  }
}

void launch_conv1d(const float *x, const float *weight, const float *bias,
                   float *out, int batch, int in_channels, int out_channels,
                   int length, int kernel_size, cudaStream_t stream) {
  const int threads = 256;
  const int64_t total = (int64_t)batch * out_channels * (length - kernel_size + 1);
  const int64_t blocks = (total + threads - 1) / threads;
  conv1d<<<((((long long)((((((int)(length)) - ((int)(kernel_size))) + 1)))) > 0 && ((long long)(((int)(out_channels)))) > 0 && ((long long)(((int)(batch)))) > 0 && ((long long)(((int)(batch)))) <= 65535 && (((long long)(((int)(out_channels)))) + 7) / 8 <= 65535 && (((long long)((((((int)(length)) - ((int)(kernel_size))) + 1)))) + 127) / 128 <= 2147483647) ? dim3((((long long)((((((int)(length)) - ((int)(kernel_size))) + 1)))) + 127) / 128, (((long long)(((int)(out_channels)))) + 7) / 8, ((long long)(((int)(batch))))) : dim3(((long long)(blocks) * 256 + 1023) / 1024)), dim3(128, 8), 0, stream>>>(x, weight, bias, out, batch, in_channels,
                                         out_channels, length, kernel_size);
}
