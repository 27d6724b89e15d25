// Per-token symmetric int8 quantization (the activation side of a W8A8
// GEMM), first version: one thread per token row, two passes (absolute max,
// quantize), scalar loads. For each row x of input [rows, cols]:
//   scale = max(max|x| / 127, 1e-10)
//   q[r, j] = clamp(rint(x[j] / scale), -127, 127),  scales[r] = scale.
// The caller picks the block size.
#include <cstdint>
#include <cuda_runtime.h>

__global__ void quant_int8(const float *x, int8_t *q, float *scales, int rows,
                           int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float amax = 0.0f;
    for (int j = 0; j < cols; j++)
      amax = fmaxf(amax, fabsf(x[r * cols + j]));
    float scale = fmaxf(amax / 127.0f, 1e-10f);
    scales[r] = scale;
    for (int j = 0; j < cols; j++) {
      float v = rintf(x[r * cols + j] / scale);
      v = fminf(fmaxf(v, -127.0f), 127.0f);
      q[r * cols + j] = (int8_t)v;
    }
  }
}

void launch_quant_int8(const float *x, int8_t *q, float *scales, int rows,
                       int cols, int block) {
  quant_int8<<<(rows + block - 1) / block, block>>>(x, q, scales, rows, cols);
}
