// A block-sum kernel in a header: the rewrite edits the header.
#pragma once

__global__ void header_sum(const float *in, float *out, int n) {
  extern __shared__ float partial[];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  partial[tid] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned int stride = blockDim.x >> 1; stride > 0; stride >>= 1) {
    if (tid < stride)
      partial[tid] += partial[tid + stride];
    __syncthreads();
  }
  if (tid == 0)
    out[blockIdx.x] = partial[0];
}
