// Fault: writes each row in vectors of four elements with no scalar
// remainder: right when cols is a multiple of 4 (every spec shape set), the
// last cols % 4 elements of each row are never written otherwise.
#include "rmsnorm.cuh"

__global__ void rmsnorm(const __nv_bfloat16 *x, const __nv_bfloat16 *w,
                        __nv_bfloat16 *out, int cols, float eps) {
  const int t = threadIdx.x, n = blockDim.x;
  const __nv_bfloat16 *xr = x + (size_t)blockIdx.x * cols;
  __nv_bfloat16 *outr = out + (size_t)blockIdx.x * cols;
  const float rstd = 1.0f / sqrtf(block_sum_squares(xr, cols) / cols + eps);
  for (int c = 4 * t; c + 3 < cols; c += 4 * n) {
#pragma unroll
    for (int k = 0; k < 4; ++k)
      outr[c + k] = __float2bfloat16(__bfloat162float(xr[c + k]) * rstd *
                                     __bfloat162float(w[c + k]));
  }
}

void launch_rmsnorm(const __nv_bfloat16 *x, const __nv_bfloat16 *w,
                    __nv_bfloat16 *out, int rows, int cols, float eps,
                    int block_size, cudaStream_t stream) {
  rmsnorm<<<rows, block_size, 0, stream>>>(x, w, out, cols, eps);
}
