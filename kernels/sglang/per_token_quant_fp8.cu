// per_token_quant_fp8: dynamic per-token quantization to fp8 e4m3 (the
// activation side of an fp8 GEMM). For each token row x of input [T, hidden]:
//   scale = max(max|x| / 448, 1e-10)             (448: largest finite e4m3)
//   output[t, j] = e4m3(clamp(x[j] / scale, -448, 448))   round to nearest even
//   scales[t] = scale (fp32), so that x ~ output * scale.
// bf16/fp16 input. One block of 1024 threads per token: a block max of |x|,
// then a strided pass that quantizes.
#include <cstdint>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include "../common/dtype.cuh"
#include "../common/reduce.cuh"

template <typename T>
__global__ void per_token_quant_fp8(const T *input, __nv_fp8_e4m3 *output,
                                    float *scales, int hidden) {
  const float kFp8Max = 448.0f;
  const int64_t token = blockIdx.x;
  const T *x = input + token * hidden;
  __nv_fp8_e4m3 *q = output + token * hidden;

  float local_max = 0.0f;
  for (int j = threadIdx.x; j < hidden; j += blockDim.x)
    local_max = fmaxf(local_max, fabsf(to_float(x[j])));
  const float absmax = block_reduce_max(local_max);
  const float scale = fmaxf(absmax / kFp8Max, 1e-10f);
  if (threadIdx.x == 0)
    scales[token] = scale;

  for (int j = threadIdx.x; j < hidden; j += blockDim.x) {
    const float v = fminf(fmaxf(to_float(x[j]) / scale, -kFp8Max), kFp8Max);
    q[j] = __nv_fp8_e4m3(v);
  }
}

template __global__ void per_token_quant_fp8<__nv_bfloat16>(const __nv_bfloat16 *, __nv_fp8_e4m3 *, float *, int);
template __global__ void per_token_quant_fp8<__half>(const __half *, __nv_fp8_e4m3 *, float *, int);

template <typename T>
void launch_per_token_quant_fp8(const T *input, __nv_fp8_e4m3 *output,
                                float *scales, int num_tokens, int hidden,
                                cudaStream_t stream) {
  // The block reduction needs a power-of-two block.
  const int threads = 1024;
  per_token_quant_fp8<T><<<num_tokens, threads, 0, stream>>>(input, output, scales, hidden);
}

template void launch_per_token_quant_fp8<__nv_bfloat16>(const __nv_bfloat16 *, __nv_fp8_e4m3 *, float *, int, int, cudaStream_t);
template void launch_per_token_quant_fp8<__half>(const __half *, __nv_fp8_e4m3 *, float *, int, int, cudaStream_t);
