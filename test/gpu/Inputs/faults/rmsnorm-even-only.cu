// Fault: writes only the even columns (a pairwise rewrite that stores
// the first element of each pair).
#include "rmsnorm.cuh"

__global__ void rmsnorm(const __nv_bfloat16 *x, const __nv_bfloat16 *w,
                        __nv_bfloat16 *out, int cols, float eps) {
  const int t = threadIdx.x, n = blockDim.x;
  const __nv_bfloat16 *xr = x + (size_t)blockIdx.x * cols;
  __nv_bfloat16 *outr = out + (size_t)blockIdx.x * cols;
  const float rstd = 1.0f / sqrtf(block_sum_squares(xr, cols) / cols + eps);
  for (int c = 2 * t; c < cols; c += 2 * n)
    outr[c] = __float2bfloat16(__bfloat162float(xr[c]) * rstd *
                               __bfloat162float(w[c]));
}

void launch_rmsnorm(const __nv_bfloat16 *x, const __nv_bfloat16 *w,
                    __nv_bfloat16 *out, int rows, int cols, float eps,
                    int block_size, cudaStream_t stream) {
  rmsnorm<<<rows, block_size, 0, stream>>>(x, w, out, cols, eps);
}
