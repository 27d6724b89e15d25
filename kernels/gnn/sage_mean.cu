// sage_mean: GraphSAGE mean aggregation over a sampled CSR block (SpMM with
// mean reduction):
//   rowptr [num_rows + 1], col [nnz] (int64) into [0, num_src)
//   x [num_src, num_features] fp32
//   out[r, f] = mean over e in [rowptr[r], rowptr[r + 1]) of x[col[e], f],
//   0 for a row without neighbours;  out [num_rows, num_features] fp32.
// One thread per output element; the threads of a row read the neighbour's
// feature row together.
#include <cstdint>
#include <cuda_runtime.h>

__global__ void sage_mean(const int64_t *rowptr, const int64_t *col,
                          const float *x, float *out, int num_rows,
                          int num_features) {
  const int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= (int64_t)num_rows * num_features)
    return;
  const int64_t r = idx / num_features;
  const int f = idx % num_features;
  const int64_t begin = rowptr[r];
  const int64_t end = rowptr[r + 1];
  float sum = 0.0f;
  for (int64_t e = begin; e < end; ++e)
    sum += x[col[e] * num_features + f];
  out[idx] = end > begin ? sum / (float)(end - begin) : 0.0f;
}

void launch_sage_mean(const int64_t *rowptr, const int64_t *col,
                      const float *x, float *out, int num_rows,
                      int num_features, cudaStream_t stream) {
  const int threads = 256;
  const int64_t blocks = ((int64_t)num_rows * num_features + threads - 1) / threads;
  sage_mean<<<blocks, threads, 0, stream>>>(rowptr, col, x, out, num_rows, num_features);
}
