// Matrix-vector product y = A x, first version: one thread per row of A
// walking its row, so at each step the 32 threads of a warp read 32 rows'
// elements K apart (a column of A): uncoalesced. fp32, A [M, K]. The caller
// picks the block size.
#include <cuda_runtime.h>

__global__ void matvec(const float *A, const float *x, float *y, int M, int K) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < M) {
    float sum = 0.0f;
    for (int k = 0; k < K; k++)
      sum += A[i * K + k] * x[k];
    y[i] = sum;
  }
}

void launch_matvec(const float *A, const float *x, float *y, int M, int K,
                   int block) {
  matvec<<<(M + block - 1) / block, block>>>(A, x, y, M, K);
}
