// Per-row L2 normalization (embedding normalization before a cosine
// similarity), first version: one thread per row, scalar loads. fp32,
// y = x / max(||x||, eps). The caller picks the block size.
#include <cuda_runtime.h>

__global__ void l2norm(const float *x, float *y, int rows, int cols,
                       float eps) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows)
    return;
  float ss = 0.0f;
  for (int j = 0; j < cols; j++) {
    float v = x[r * cols + j];
    ss += v * v;
  }
  float inv = 1.0f / fmaxf(sqrtf(ss), eps);
  for (int j = 0; j < cols; j++)
    y[r * cols + j] = x[r * cols + j] * inv;
}

void launch_l2norm(const float *x, float *y, int rows, int cols, float eps,
                   int block) {
  l2norm<<<(rows + block - 1) / block, block>>>(x, y, rows, cols, eps);
}
