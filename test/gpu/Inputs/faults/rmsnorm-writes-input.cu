// Fault: scribbles on its input, using x as scratch for the normalized
// row before scaling it by w.
#include "rmsnorm.cuh"

__global__ void rmsnorm(const __nv_bfloat16 *x, const __nv_bfloat16 *w,
                        __nv_bfloat16 *out, int cols, float eps) {
  const int t = threadIdx.x, n = blockDim.x;
  const __nv_bfloat16 *xr = x + (size_t)blockIdx.x * cols;
  __nv_bfloat16 *outr = out + (size_t)blockIdx.x * cols;
  const float rstd = 1.0f / sqrtf(block_sum_squares(xr, cols) / cols + eps);
  __nv_bfloat16 *scratch = const_cast<__nv_bfloat16 *>(xr);
  for (int c = t; c < cols; c += n) {
    scratch[c] = __float2bfloat16(__bfloat162float(xr[c]) * rstd);
    outr[c] =
        __float2bfloat16(__bfloat162float(scratch[c]) * __bfloat162float(w[c]));
  }
}

void launch_rmsnorm(const __nv_bfloat16 *x, const __nv_bfloat16 *w,
                    __nv_bfloat16 *out, int rows, int cols, float eps,
                    int block_size, cudaStream_t stream) {
  rmsnorm<<<rows, block_size, 0, stream>>>(x, w, out, cols, eps);
}
