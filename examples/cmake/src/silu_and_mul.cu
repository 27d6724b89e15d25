// silu_and_mul (SwiGLU activation of a LLaMA MLP):
//   input [T, 2d] = [gate | up];  out[t, j] = silu(gate[t, j]) * up[t, j],
//   silu(z) = z / (1 + e^-z). fp32 math, bf16/fp16 storage.
// One block per token; the block's threads stride over the d columns.
#include <algorithm>
#include <cstdint>
#include <cuda_runtime.h>

#include "../common/dtype.cuh"

template <typename T>
__global__ void silu_and_mul(T *out, const T *input, int d) {
  const int64_t token = blockIdx.x;
  const T *gate = input + token * 2 * d;
  const T *up = gate + d;
  T *o = out + token * d;
  for (int j = threadIdx.x; j < d; j += blockDim.x) {
    const float g = to_float(gate[j]);
    const float u = to_float(up[j]);
    o[j] = from_float<T>(g / (1.0f + expf(-g)) * u);
  }
}

template __global__ void silu_and_mul<__nv_bfloat16>(__nv_bfloat16 *, const __nv_bfloat16 *, int);
template __global__ void silu_and_mul<__half>(__half *, const __half *, int);

template <typename T>
void launch_silu_and_mul(T *out, const T *input, int num_tokens, int d,
                         cudaStream_t stream) {
  const dim3 grid(num_tokens);
  const dim3 block(std::min(d, 1024));
  silu_and_mul<T><<<grid, block, 0, stream>>>(out, input, d);
}

template void launch_silu_and_mul<__nv_bfloat16>(__nv_bfloat16 *, const __nv_bfloat16 *, int, int, cudaStream_t);
template void launch_silu_and_mul<__half>(__half *, const __half *, int, int, cudaStream_t);
