// rmsnorm: out[t, :] = x[t, :] / sqrt(mean(x[t, :]^2) + eps) * weight,
// x [T, hidden], weight [hidden]; fp32 math, bf16/fp16 storage.
// One block of 1024 threads per token: a strided pass accumulates the sum of
// squares, a block reduction gives the row's scale, a second pass writes.
#include <cstdint>
#include <cuda_runtime.h>

#include "../common/dtype.cuh"
#include "../common/reduce.cuh"

template <typename T>
__global__ void rmsnorm(T *out, const T *input, const T *weight, int hidden,
                        float eps) {
  const int64_t token = blockIdx.x;
  const T *x = input + token * hidden;
  T *o = out + token * hidden;
  float sum_sq = 0.0f;
  for (int j = threadIdx.x; j < hidden; j += blockDim.x) {
    const float v = to_float(x[j]);
    sum_sq += v * v;
  }
  const float total = block_reduce_sum(sum_sq);
  const float inv_rms = rsqrtf(total / hidden + eps);
  for (int j = threadIdx.x; j < hidden; j += blockDim.x)
    o[j] = from_float<T>(to_float(x[j]) * inv_rms * to_float(weight[j]));
}

template __global__ void rmsnorm<__nv_bfloat16>(__nv_bfloat16 *, const __nv_bfloat16 *, const __nv_bfloat16 *, int, float);
template __global__ void rmsnorm<__half>(__half *, const __half *, const __half *, int, float);

template <typename T>
void launch_rmsnorm(T *out, const T *input, const T *weight, int num_tokens,
                    int hidden, float eps, cudaStream_t stream) {
  // The block reduction needs a power-of-two block.
  const int threads = 1024;
  rmsnorm<T><<<num_tokens, threads, 0, stream>>>(out, input, weight, hidden, eps);
}

template void launch_rmsnorm<__nv_bfloat16>(__nv_bfloat16 *, const __nv_bfloat16 *, const __nv_bfloat16 *, int, int, float, cudaStream_t);
template void launch_rmsnorm<__half>(__half *, const __half *, const __half *, int, int, float, cudaStream_t);
