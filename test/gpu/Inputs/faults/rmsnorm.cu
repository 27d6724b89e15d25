// Baseline of the planted-fault suite (test/gpu/faults): RMSNorm over the
// rows of a bf16 matrix, float32 inside, one block per row:
//   out[r, c] = bf16(x[r, c] * (1 / sqrt(mean(x[r, :]^2) + eps)) * w[c])
// Correct for any block size up to 1024, as its launcher takes the block
// size from its caller. Each rmsnorm-*.cu next to it is a candidate with one
// planted fault; rmsnorm-ok-*.cu are equivalent rewrites.
#include "rmsnorm.cuh"

__global__ void rmsnorm(const __nv_bfloat16 *x, const __nv_bfloat16 *w,
                        __nv_bfloat16 *out, int cols, float eps) {
  const int t = threadIdx.x, n = blockDim.x;
  const __nv_bfloat16 *xr = x + (size_t)blockIdx.x * cols;
  __nv_bfloat16 *outr = out + (size_t)blockIdx.x * cols;
  const float rstd = 1.0f / sqrtf(block_sum_squares(xr, cols) / cols + eps);
  for (int c = t; c < cols; c += n)
    outr[c] = __float2bfloat16(__bfloat162float(xr[c]) * rstd *
                               __bfloat162float(w[c]));
}

// The caller picks the block size (its own tuning loop, a config file).
void launch_rmsnorm(const __nv_bfloat16 *x, const __nv_bfloat16 *w,
                    __nv_bfloat16 *out, int rows, int cols, float eps,
                    int block_size, cudaStream_t stream) {
  rmsnorm<<<rows, block_size, 0, stream>>>(x, w, out, cols, eps);
}
