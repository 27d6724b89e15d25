// C = A B, first version: one thread per element of C, the flat thread
// index split into row and column, the obvious k loop with scalar loads.
// fp32, A [M, K], B [K, N], C [M, N], row-major. The caller picks the block
// size.
#include <cuda_runtime.h>

__global__ void gemm(const float *A, const float *B, float *C, int M, int N,
                     int K) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx < M * N) {
    int i = idx / N;
    int j = idx % N;
    float acc = 0.0f;
    for (int k = 0; k < K; k++)
      acc += A[i * K + k] * B[k * N + j];
    C[i * N + j] = acc;
  }
}

void launch_gemm(const float *A, const float *B, float *C, int M, int N, int K,
                 int block) {
  gemm<<<(M * N + block - 1) / block, block>>>(A, B, C, M, N, K);
}
