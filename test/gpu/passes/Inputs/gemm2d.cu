// A first-version 2-D gemm with run-time sizes: C = alpha A B + beta C, a
// thread per element of C, the k loop accumulating into C on global memory
// (PolyBench-ACC's form). smem-tile's GPU test runs it on sizes that are
// not multiples of its tiles: partial chunks of k, rows and columns of a
// block past the matrix.
#include <cuda_runtime.h>

__global__ void gemm2d(int m, int n, int k_, float alpha, float beta,
                       const float *a, const float *b, float *c) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < m && j < n) {
    c[i * n + j] *= beta;
    for (int k = 0; k < k_; k++)
      c[i * n + j] += alpha * a[i * k_ + k] * b[k * n + j];
  }
}

void launch_gemm2d(int m, int n, int k, float alpha, float beta,
                   const float *a, const float *b, float *c) {
  dim3 block(32, 8);
  dim3 grid((n + 31) / 32, (m + 7) / 8);
  gemm2d<<<grid, block>>>(m, n, k, alpha, beta, a, b, c);
}
