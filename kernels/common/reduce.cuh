// Block-wide reductions for the kernels that give one row to one thread
// block. Shared-memory tree reductions: blockDim.x must be a power of two no
// larger than 1024, every thread of the block must call them, and every
// thread gets the result. Each call ends with a barrier, so calls may follow
// one another.
#pragma once

#include <climits>

struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

template <typename Op> __device__ inline float block_reduce(float v, Op op) {
  __shared__ float buf[1024];
  const int tid = threadIdx.x;
  buf[tid] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s)
      buf[tid] = op(buf[tid], buf[tid + s]);
    __syncthreads();
  }
  const float result = buf[0];
  __syncthreads();
  return result;
}

__device__ inline float block_reduce_sum(float v) { return block_reduce(v, SumOp()); }
__device__ inline float block_reduce_max(float v) { return block_reduce(v, MaxOp()); }

// Largest value and its index; on equal values the lowest index wins. A
// thread with nothing to offer passes (-INFINITY, INT_MAX).
__device__ inline void block_reduce_argmax(float &value, int &index) {
  __shared__ float vals[1024];
  __shared__ int idxs[1024];
  const int tid = threadIdx.x;
  vals[tid] = value;
  idxs[tid] = index;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) {
      const float v = vals[tid + s];
      const int i = idxs[tid + s];
      if (v > vals[tid] || (v == vals[tid] && i < idxs[tid])) {
        vals[tid] = v;
        idxs[tid] = i;
      }
    }
    __syncthreads();
  }
  value = vals[0];
  index = idxs[0];
  __syncthreads();
}
