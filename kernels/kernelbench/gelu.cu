// gelu, exact (erf) form (KernelBench level 1, torch.nn.functional.gelu):
//   y = 0.5 x (1 + erf(x / sqrt(2))),  x, y [n] fp32.
// One thread per element.
#include <cstdint>
#include <cuda_runtime.h>

__global__ void gelu(const float *x, float *y, int64_t n) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.0f + erff(v * 0.7071067811865475f));
  }
}

void launch_gelu(const float *x, float *y, int64_t n, cudaStream_t stream) {
  const int threads = 256;
  const int64_t blocks = (n + threads - 1) / threads;
  gelu<<<blocks, threads, 0, stream>>>(x, y, n);
}
