// sum_rows: sum over the last dimension (KernelBench level 1 sum reduction,
// torch.sum(x, dim=-1)): out[r] = sum_j x[r, j], x [rows, cols] fp32.
// One block of 1024 threads per row: strided partial sums, block reduction.
#include <cstdint>
#include <cuda_runtime.h>

#include "../common/reduce.cuh"

__global__ void sum_rows(const float *x, float *out, int cols) {
  const int64_t row = blockIdx.x;
  const float *xr = x + row * cols;
  float local_sum = 0.0f;
  for (int j = threadIdx.x; j < cols; j += blockDim.x)
    local_sum += xr[j];
  const float total = block_reduce_sum(local_sum);
  if (threadIdx.x == 0)
    out[row] = total;
}

void launch_sum_rows(const float *x, float *out, int rows, int cols,
                     cudaStream_t stream) {
  // The block reduction needs a power-of-two block.
  sum_rows<<<rows, 1024, 0, stream>>>(x, out, cols);
}
