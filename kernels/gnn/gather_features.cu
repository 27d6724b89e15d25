// gather_features: the feature gather x[n_id] of a sampled mini-batch:
//   x [num_rows, num_cols] fp16, index [num_index] int64 into [0, num_rows),
//   out[i, c] = x[index[i], c],  out [num_index, num_cols] fp16.
// One thread per output element.
#include <cstdint>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

__global__ void gather_features(const __half *x, const int64_t *index,
                                __half *out, int64_t num_index, int num_cols) {
  const int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= num_index * num_cols)
    return;
  const int64_t i = idx / num_cols;
  const int c = idx % num_cols;
  out[idx] = x[index[i] * num_cols + c];
}

void launch_gather_features(const __half *x, const int64_t *index, __half *out,
                            int64_t num_index, int num_cols,
                            cudaStream_t stream) {
  const int threads = 256;
  const int64_t blocks = (num_index * num_cols + threads - 1) / threads;
  gather_features<<<blocks, threads, 0, stream>>>(x, index, out, num_index, num_cols);
}
