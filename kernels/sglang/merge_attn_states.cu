// merge_attn_states: combines two partial attention results over disjoint key
// sets (e.g. the prefix cache and the new tokens) using their log-sum-exps
// (natural log):
//   v_a, v_b [T, H, D]; s_a, s_b [T, H] fp32
//   m = max(s_a, s_b); w_a = e^(s_a - m); w_b = e^(s_b - m)
//   v = (w_a v_a + w_b v_b) / (w_a + w_b);  s = m + ln(w_a + w_b)
// fp32 math, bf16/fp16 values. One block per (token, head), one thread per
// element of the head.
#include <cstdint>
#include <cuda_runtime.h>

#include "../common/dtype.cuh"

template <typename T>
__global__ void merge_attn_states(T *v_merged, float *s_merged, const T *v_a,
                                  const float *s_a, const T *v_b,
                                  const float *s_b, int head_dim) {
  const int64_t row = blockIdx.x; // token * num_heads + head
  const float sa = s_a[row];
  const float sb = s_b[row];
  const float m = fmaxf(sa, sb);
  const float wa = expf(sa - m);
  const float wb = expf(sb - m);
  const float w = wa + wb;
  for (int j = threadIdx.x; j < head_dim; j += blockDim.x) {
    const int64_t i = row * head_dim + j;
    v_merged[i] = from_float<T>((wa * to_float(v_a[i]) + wb * to_float(v_b[i])) / w);
  }
  if (threadIdx.x == 0)
    s_merged[row] = m + logf(w);
}

template __global__ void merge_attn_states<__nv_bfloat16>(__nv_bfloat16 *, float *, const __nv_bfloat16 *, const float *, const __nv_bfloat16 *, const float *, int);
template __global__ void merge_attn_states<__half>(__half *, float *, const __half *, const float *, const __half *, const float *, int);

template <typename T>
void launch_merge_attn_states(T *v_merged, float *s_merged, const T *v_a,
                              const float *s_a, const T *v_b, const float *s_b,
                              int num_tokens, int num_heads, int head_dim,
                              cudaStream_t stream) {
  merge_attn_states<T><<<num_tokens * num_heads, head_dim, 0, stream>>>(
      v_merged, s_merged, v_a, s_a, v_b, s_b, head_dim);
}

template void launch_merge_attn_states<__nv_bfloat16>(__nv_bfloat16 *, float *, const __nv_bfloat16 *, const float *, const __nv_bfloat16 *, const float *, int, int, int, cudaStream_t);
template void launch_merge_attn_states<__half>(__half *, float *, const __half *, const float *, const __half *, const float *, int, int, int, cudaStream_t);
