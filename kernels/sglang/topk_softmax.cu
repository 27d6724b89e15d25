// topk_softmax: mixture-of-experts gating. For each token,
//   p = softmax(gating_output[t, :])           over num_experts experts
//   the k largest p (largest first; equal p: lower expert index first) go to
//   topk_weights[t, :] (fp32) and their experts to topk_indices[t, :] (int32);
//   with renormalize != 0 the k weights are divided by their sum.
// Logits are bf16 (the model's dtype) or fp32. One block of 64 threads per
// token: block reductions for the softmax, then k rounds of a block argmax
// over the probabilities kept in shared memory.
#include <climits>
#include <cstdint>
#include <cuda_runtime.h>

#include "../common/dtype.cuh"
#include "../common/reduce.cuh"

template <typename T>
__global__ void topk_softmax(const T *gating_output, float *topk_weights,
                             int *topk_indices, int num_experts, int k,
                             int renormalize) {
  extern __shared__ float probs[]; // num_experts
  const int tid = threadIdx.x;
  const int64_t token = blockIdx.x;
  const T *logits = gating_output + token * num_experts;

  float local_max = -INFINITY;
  for (int e = tid; e < num_experts; e += blockDim.x)
    local_max = fmaxf(local_max, to_float(logits[e]));
  const float max_logit = block_reduce_max(local_max);

  float local_sum = 0.0f;
  for (int e = tid; e < num_experts; e += blockDim.x) {
    const float p = expf(to_float(logits[e]) - max_logit);
    probs[e] = p;
    local_sum += p;
  }
  const float sum = block_reduce_sum(local_sum);
  for (int e = tid; e < num_experts; e += blockDim.x)
    probs[e] /= sum;
  __syncthreads();

  float selected_sum = 0.0f;
  for (int j = 0; j < k; ++j) {
    float best = -INFINITY;
    int best_expert = INT_MAX;
    for (int e = tid; e < num_experts; e += blockDim.x) {
      if (probs[e] > best) {
        best = probs[e];
        best_expert = e;
      }
    }
    block_reduce_argmax(best, best_expert);
    if (tid == 0) {
      topk_weights[token * k + j] = best;
      topk_indices[token * k + j] = best_expert;
      probs[best_expert] = -INFINITY;
      selected_sum += best;
    }
    __syncthreads();
  }
  if (renormalize && tid == 0)
    for (int j = 0; j < k; ++j)
      topk_weights[token * k + j] /= selected_sum;
}

template __global__ void topk_softmax<__nv_bfloat16>(const __nv_bfloat16 *, float *, int *, int, int, int);
template __global__ void topk_softmax<float>(const float *, float *, int *, int, int, int);

template <typename T>
void launch_topk_softmax(const T *gating_output, float *topk_weights,
                         int *topk_indices, int num_tokens, int num_experts,
                         int k, bool renormalize, cudaStream_t stream) {
  // The block reductions need a power-of-two block; 64 threads cover the
  // common expert counts in one or two strides.
  const int threads = 64;
  const size_t shmem = num_experts * sizeof(float);
  topk_softmax<T><<<num_tokens, threads, shmem, stream>>>(
      gating_output, topk_weights, topk_indices, num_experts, k, renormalize ? 1 : 0);
}

template void launch_topk_softmax<__nv_bfloat16>(const __nv_bfloat16 *, float *, int *, int, int, int, bool, cudaStream_t);
template void launch_topk_softmax<float>(const float *, float *, int *, int, int, int, bool, cudaStream_t);
