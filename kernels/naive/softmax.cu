// softmax over rows, first version: one thread per row, three passes over
// the row (max, sum of exponentials, write), scalar loads. fp32. The caller
// picks the block size.
#include <cuda_runtime.h>

__global__ void softmax(const float *x, float *y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float m = -INFINITY;
    for (int j = 0; j < cols; j++)
      m = fmaxf(m, x[r * cols + j]);
    float sum = 0.0f;
    for (int j = 0; j < cols; j++)
      sum += expf(x[r * cols + j] - m);
    for (int j = 0; j < cols; j++)
      y[r * cols + j] = expf(x[r * cols + j] - m) / sum;
  }
}

void launch_softmax(const float *x, float *y, int rows, int cols, int block) {
  softmax<<<(rows + block - 1) / block, block>>>(x, y, rows, cols);
}
