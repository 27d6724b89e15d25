// sgemm: C = A B (KernelBench level 1, torch.matmul), row-major fp32,
//   A [M, K], B [K, N], C [M, N], fp32 accumulation (no TF32).
// The classic shared-memory tiled kernel: 32 x 32 threads per block, one
// output element per thread; the block stages 32 x 32 tiles of A and B in
// shared memory and walks K one tile at a time.
#include <cstdint>
#include <cuda_runtime.h>

constexpr int kTile = 32;

__global__ void sgemm(const float *A, const float *B, float *C, int M, int N,
                      int K) {
  __shared__ float As[kTile][kTile];
  __shared__ float Bs[kTile][kTile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * kTile + ty;
  const int col = blockIdx.x * kTile + tx;
  float acc = 0.0f;
  for (int t = 0; t < K; t += kTile) {
    As[ty][tx] = (row < M && t + tx < K) ? A[(int64_t)row * K + t + tx] : 0.0f;
    Bs[ty][tx] = (t + ty < K && col < N) ? B[(int64_t)(t + ty) * N + col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < kTile; ++k)
      acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  if (row < M && col < N)
    C[(int64_t)row * N + col] = acc;
}

void launch_sgemm(const float *A, const float *B, float *C, int M, int N,
                  int K, cudaStream_t stream) {
  const dim3 block(kTile, kTile);
  const dim3 grid((N + kTile - 1) / kTile, (M + kTile - 1) / kTile);
  sgemm<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
