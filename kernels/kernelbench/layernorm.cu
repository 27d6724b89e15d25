// layernorm over the last dimension with elementwise affine (KernelBench
// level 1, nn.LayerNorm(cols)):
//   mean = sum(x[r, :]) / cols;  var = sum((x[r, :] - mean)^2) / cols
//   y[r, :] = (x[r, :] - mean) / sqrt(var + eps) * weight + bias
// x, y [rows, cols]; weight, bias [cols]; fp32. One block of 1024 threads per
// row; the variance is a second pass over the row (two-pass, stable).
#include <cstdint>
#include <cuda_runtime.h>

#include "../common/reduce.cuh"

__global__ void layernorm(const float *x, const float *weight,
                          const float *bias, float *y, int cols, float eps) {
  const int64_t row = blockIdx.x;
  const float *xr = x + row * cols;
  float *yr = y + row * cols;

  float local_sum = 0.0f;
  for (int j = threadIdx.x; j < cols; j += blockDim.x)
    local_sum += xr[j];
  const float mean = block_reduce_sum(local_sum) / cols;

  float local_sq = 0.0f;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
    const float d = xr[j] - mean;
    local_sq += d * d;
  }
  const float var = block_reduce_sum(local_sq) / cols;
  const float rstd = rsqrtf(var + eps);

  for (int j = threadIdx.x; j < cols; j += blockDim.x)
    yr[j] = (xr[j] - mean) * rstd * weight[j] + bias[j];
}

void launch_layernorm(const float *x, const float *weight, const float *bias,
                      float *y, int rows, int cols, float eps,
                      cudaStream_t stream) {
  // The block reductions need a power-of-two block.
  layernorm<<<rows, 1024, 0, stream>>>(x, weight, bias, y, cols, eps);
}
