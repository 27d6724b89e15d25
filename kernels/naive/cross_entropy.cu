// Cross-entropy forward over logits, first version: one thread per row
// (token), scalar loads, two passes over the row (max, sum of exponentials):
//   loss[r] = log(sum_j exp(x[r, j] - m)) + m - x[r, labels[r]],  m = max_j x[r, j].
// fp32 logits, int32 labels. The caller picks the block size.
#include <cuda_runtime.h>

__global__ void cross_entropy(const float *logits, const int *labels,
                              float *loss, int rows, int vocab) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float m = -INFINITY;
    for (int j = 0; j < vocab; j++)
      m = fmaxf(m, logits[r * vocab + j]);
    float sum = 0.0f;
    for (int j = 0; j < vocab; j++)
      sum += expf(logits[r * vocab + j] - m);
    loss[r] = logf(sum) + m - logits[r * vocab + labels[r]];
  }
}

void launch_cross_entropy(const float *logits, const int *labels, float *loss,
                          int rows, int vocab, int block) {
  cross_entropy<<<(rows + block - 1) / block, block>>>(logits, labels, loss,
                                                       rows, vocab);
}
