// A kernel in a header, rewritten there (fast-math.cu checks the result).
#pragma once

namespace ops {
__global__ void gelu_tanh(float *y, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    float u = 0.7978845608f * (v + 0.044715f * v * v * v);
    y[i] = 0.5f * v * (1.0f + tanhf(u)) * expf(-v * v / 8.0f);
  }
}
} // namespace ops

// A helper in the header: the header's kernel gets its own copy (other files
// may include the header); kernels of the including file leave it alone.
namespace ops {
__device__ inline float decay(float v) { return expf(-v); }

__global__ void decay_all(float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = decay(y[i]);
}
} // namespace ops
