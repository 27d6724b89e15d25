// rotary_embedding (NeoX style), in place on query and key:
//   positions [T] int64; query [T, Hq * head_size]; key [T, Hkv * head_size]
//   cos_sin_cache [max_position, rot_dim] = [cos | sin], rot_dim / 2 each.
// For every head and i < rot_dim / 2, with c = cos[pos][i], s = sin[pos][i]:
//   x1 = h[i], x2 = h[i + rot_dim / 2]
//   h[i] = x1 c - x2 s;  h[i + rot_dim / 2] = x2 c + x1 s
// Elements at rot_dim and beyond (partial rotary) are left unchanged.
// fp32 math, bf16/fp16 storage. One block per token; threads stride over the
// (head, i) pairs of the query heads, then of the key heads.
#include <algorithm>
#include <cstdint>
#include <cuda_runtime.h>

#include "../common/dtype.cuh"

template <typename T>
__device__ void rotate_heads(T *heads, const T *cos_cache, const T *sin_cache,
                             int num_heads, int head_size, int rot_dim) {
  const int half = rot_dim / 2;
  for (int p = threadIdx.x; p < num_heads * half; p += blockDim.x) {
    const int head = p / half;
    const int i = p % half;
    T *h = heads + head * head_size;
    const float c = to_float(cos_cache[i]);
    const float s = to_float(sin_cache[i]);
    const float x1 = to_float(h[i]);
    const float x2 = to_float(h[i + half]);
    h[i] = from_float<T>(x1 * c - x2 * s);
    h[i + half] = from_float<T>(x2 * c + x1 * s);
  }
}

template <typename T>
__global__ void rotary_embedding(const int64_t *positions, T *query, T *key,
                                 const T *cos_sin_cache, int rot_dim,
                                 int num_heads, int num_kv_heads,
                                 int head_size) {
  const int64_t token = blockIdx.x;
  const T *cos_cache = cos_sin_cache + positions[token] * rot_dim;
  const T *sin_cache = cos_cache + rot_dim / 2;
  rotate_heads(query + token * num_heads * head_size, cos_cache, sin_cache,
               num_heads, head_size, rot_dim);
  rotate_heads(key + token * num_kv_heads * head_size, cos_cache, sin_cache,
               num_kv_heads, head_size, rot_dim);
}

template __global__ void rotary_embedding<__nv_bfloat16>(const int64_t *, __nv_bfloat16 *, __nv_bfloat16 *, const __nv_bfloat16 *, int, int, int, int);
template __global__ void rotary_embedding<__half>(const int64_t *, __half *, __half *, const __half *, int, int, int, int);

template <typename T>
void launch_rotary_embedding(const int64_t *positions, T *query, T *key,
                             const T *cos_sin_cache, int num_tokens,
                             int rot_dim, int num_heads, int num_kv_heads,
                             int head_size, cudaStream_t stream) {
  const dim3 grid(num_tokens);
  const dim3 block(std::min(num_heads * rot_dim / 2, 512));
  rotary_embedding<T><<<grid, block, 0, stream>>>(positions, query, key, cos_sin_cache, rot_dim,
                                                  num_heads, num_kv_heads, head_size);
}

template void launch_rotary_embedding<__nv_bfloat16>(const int64_t *, __nv_bfloat16 *, __nv_bfloat16 *, const __nv_bfloat16 *, int, int, int, int, int, cudaStream_t);
template void launch_rotary_embedding<__half>(const int64_t *, __half *, __half *, const __half *, int, int, int, int, int, cudaStream_t);
