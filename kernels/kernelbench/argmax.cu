// argmax over the last dimension (KernelBench level 1, torch.argmax(x, -1)):
//   out[r] = the lowest j with x[r, j] == max(x[r, :]),  x [rows, cols] fp32,
//   out int64. One block of 1024 threads per row: each thread keeps its first
//   maximum, a block reduction keeps the lowest index among equal values.
#include <climits>
#include <cstdint>
#include <cuda_runtime.h>

#include "../common/reduce.cuh"

__global__ void argmax(const float *x, int64_t *out, int cols) {
  const int64_t row = blockIdx.x;
  const float *xr = x + row * cols;
  float best = -INFINITY;
  int best_index = INT_MAX;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
    if (xr[j] > best) {
      best = xr[j];
      best_index = j;
    }
  }
  block_reduce_argmax(best, best_index);
  if (threadIdx.x == 0)
    out[row] = best_index;
}

void launch_argmax(const float *x, int64_t *out, int rows, int cols,
                   cudaStream_t stream) {
  // The block reduction needs a power-of-two block.
  argmax<<<rows, 1024, 0, stream>>>(x, out, cols);
}
