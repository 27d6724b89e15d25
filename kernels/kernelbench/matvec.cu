// matvec: matrix-vector product (KernelBench level 1, torch.matmul(A, x)):
//   y[m] = sum_k A[m, k] x[k],  A [M, K], x [K], y [M], fp32.
// One block of 256 threads per row: strided partial dot products, block
// reduction.
#include <cstdint>
#include <cuda_runtime.h>

#include "../common/reduce.cuh"

__global__ void matvec(const float *A, const float *x, float *y, int K) {
  const int64_t row = blockIdx.x;
  const float *a = A + row * K;
  float local_sum = 0.0f;
  for (int k = threadIdx.x; k < K; k += blockDim.x)
    local_sum += a[k] * x[k];
  const float total = block_reduce_sum(local_sum);
  if (threadIdx.x == 0)
    y[row] = total;
}

void launch_matvec(const float *A, const float *x, float *y, int M, int K,
                   cudaStream_t stream) {
  // The block reduction needs a power-of-two block.
  matvec<<<M, 256, 0, stream>>>(A, x, y, K);
}
