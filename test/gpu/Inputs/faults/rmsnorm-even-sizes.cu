// Fault: handles each row as two halves of cols / 2 columns, element c
// with element c + cols / 2: right only for even cols; for odd cols the
// last column is neither summed nor written.
#include "rmsnorm.cuh"

__global__ void rmsnorm(const __nv_bfloat16 *x, const __nv_bfloat16 *w,
                        __nv_bfloat16 *out, int cols, float eps) {
  const int t = threadIdx.x, n = blockDim.x;
  const __nv_bfloat16 *xr = x + (size_t)blockIdx.x * cols;
  __nv_bfloat16 *outr = out + (size_t)blockIdx.x * cols;
  const int half = cols / 2;
  const float sq =
      block_sum_squares(xr, half) + block_sum_squares(xr + half, half);
  const float rstd = 1.0f / sqrtf(sq / cols + eps);
  for (int c = t; c < half; c += n) {
    outr[c] = __float2bfloat16(__bfloat162float(xr[c]) * rstd *
                               __bfloat162float(w[c]));
    outr[c + half] = __float2bfloat16(__bfloat162float(xr[c + half]) * rstd *
                                      __bfloat162float(w[c + half]));
  }
}

void launch_rmsnorm(const __nv_bfloat16 *x, const __nv_bfloat16 *w,
                    __nv_bfloat16 *out, int rows, int cols, float eps,
                    int block_size, cudaStream_t stream) {
  rmsnorm<<<rows, block_size, 0, stream>>>(x, w, out, cols, eps);
}
