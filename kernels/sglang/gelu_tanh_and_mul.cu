// gelu_tanh_and_mul (GeGLU activation, tanh approximation of GELU):
//   input [T, 2d] = [gate | up];  out[t, j] = gelu_tanh(gate[t, j]) * up[t, j],
//   gelu_tanh(z) = 0.5 z (1 + tanh(sqrt(2/pi) (z + 0.044715 z^3))).
// fp32 math, bf16/fp16 storage. One block per token; the block's threads
// stride over the d columns.
#include <algorithm>
#include <cstdint>
#include <cuda_runtime.h>

#include "../common/dtype.cuh"

__device__ inline float gelu_tanh(float z) {
  const float kSqrt2OverPi = 0.7978845608028654f;
  const float inner = kSqrt2OverPi * (z + 0.044715f * z * z * z);
  return 0.5f * z * (1.0f + tanhf(inner));
}

template <typename T>
__global__ void gelu_tanh_and_mul(T *out, const T *input, int d) {
  const int64_t token = blockIdx.x;
  const T *gate = input + token * 2 * d;
  const T *up = gate + d;
  T *o = out + token * d;
  for (int j = threadIdx.x; j < d; j += blockDim.x)
    o[j] = from_float<T>(gelu_tanh(to_float(gate[j])) * to_float(up[j]));
}

template __global__ void gelu_tanh_and_mul<__nv_bfloat16>(__nv_bfloat16 *, const __nv_bfloat16 *, int);
template __global__ void gelu_tanh_and_mul<__half>(__half *, const __half *, int);

template <typename T>
void launch_gelu_tanh_and_mul(T *out, const T *input, int num_tokens, int d,
                              cudaStream_t stream) {
  const dim3 grid(num_tokens);
  const dim3 block(std::min(d, 1024));
  gelu_tanh_and_mul<T><<<grid, block, 0, stream>>>(out, input, d);
}

template void launch_gelu_tanh_and_mul<__nv_bfloat16>(__nv_bfloat16 *, const __nv_bfloat16 *, int, int, cudaStream_t);
template void launch_gelu_tanh_and_mul<__half>(__half *, const __half *, int, int, cudaStream_t);
