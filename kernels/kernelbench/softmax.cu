// softmax over the last dimension (KernelBench level 1, torch.softmax(x, 1)):
//   y[r, :] = exp(x[r, :] - max) / sum(exp(x[r, :] - max)),  x, y [rows, cols] fp32.
// One block of 1024 threads per row, three strided passes: row max, sum of
// exponentials, normalized write.
#include <cstdint>
#include <cuda_runtime.h>

#include "../common/reduce.cuh"

__global__ void softmax(const float *x, float *y, int cols) {
  const int64_t row = blockIdx.x;
  const float *xr = x + row * cols;
  float *yr = y + row * cols;

  float local_max = -INFINITY;
  for (int j = threadIdx.x; j < cols; j += blockDim.x)
    local_max = fmaxf(local_max, xr[j]);
  const float row_max = block_reduce_max(local_max);

  float local_sum = 0.0f;
  for (int j = threadIdx.x; j < cols; j += blockDim.x)
    local_sum += expf(xr[j] - row_max);
  const float row_sum = block_reduce_sum(local_sum);

  for (int j = threadIdx.x; j < cols; j += blockDim.x)
    yr[j] = expf(xr[j] - row_max) / row_sum;
}

void launch_softmax(const float *x, float *y, int rows, int cols,
                    cudaStream_t stream) {
  // The block reductions need a power-of-two block.
  softmax<<<rows, 1024, 0, stream>>>(x, y, cols);
}
