// A block-reduction helper with a functor, as shared headers write it: the
// rewrite edits the helper, judged on every instantiation.
#pragma once

struct AddOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
// Not associative: a helper instantiated with it keeps its tree.
struct SubOp {
  __device__ float operator()(float a, float b) const { return a - b; }
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

__device__ inline float block_sum(float v) { return block_reduce(v, AddOp()); }
__device__ inline float block_max(float v) { return block_reduce(v, MaxOp()); }

template <typename Op> __device__ inline float block_fold(float v, Op op) {
  __shared__ float fbuf[1024];
  const int tid = threadIdx.x;
  fbuf[tid] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s)
      fbuf[tid] = op(fbuf[tid], fbuf[tid + s]);
    __syncthreads();
  }
  const float result = fbuf[0];
  __syncthreads();
  return result;
}
