// fused_add_rmsnorm, in place on both buffers (the pre-norm residual step of
// a LLaMA decoder layer):
//   r <- x + r;  x <- r / sqrt(mean(r^2) + eps) * weight
// x (input) and r (residual) are [T, hidden], weight [hidden]; fp32 math,
// bf16/fp16 storage. The normalized row is computed from r as stored (rounded
// to T), so that the next layer's residual and this layer's output agree.
// One block of 1024 threads per token.
#include <cstdint>
#include <cuda_runtime.h>

#include "../common/dtype.cuh"
#include "../common/reduce.cuh"

template <typename T>
__global__ void fused_add_rmsnorm(T *input, T *residual, const T *weight,
                                  int hidden, float eps) {
  const int64_t token = blockIdx.x;
  T *x = input + token * hidden;
  T *r = residual + token * hidden;
  float sum_sq = 0.0f;
  for (int j = threadIdx.x; j < hidden; j += blockDim.x) {
    const float v = to_float(x[j]) + to_float(r[j]);
    r[j] = from_float<T>(v);
    sum_sq += v * v;
  }
  const float total = block_reduce_sum(sum_sq);
  const float inv_rms = rsqrtf(total / hidden + eps);
  for (int j = threadIdx.x; j < hidden; j += blockDim.x)
    x[j] = from_float<T>(to_float(r[j]) * inv_rms * to_float(weight[j]));
}

template __global__ void fused_add_rmsnorm<__nv_bfloat16>(__nv_bfloat16 *, __nv_bfloat16 *, const __nv_bfloat16 *, int, float);
template __global__ void fused_add_rmsnorm<__half>(__half *, __half *, const __half *, int, float);

template <typename T>
void launch_fused_add_rmsnorm(T *input, T *residual, const T *weight,
                              int num_tokens, int hidden, float eps,
                              cudaStream_t stream) {
  // The block reduction needs a power-of-two block.
  const int threads = 1024;
  fused_add_rmsnorm<T><<<num_tokens, threads, 0, stream>>>(input, residual, weight, hidden, eps);
}

template void launch_fused_add_rmsnorm<__nv_bfloat16>(__nv_bfloat16 *, __nv_bfloat16 *, const __nv_bfloat16 *, int, int, float, cudaStream_t);
template void launch_fused_add_rmsnorm<__half>(__half *, __half *, const __half *, int, int, float, cudaStream_t);
