// Equivalent: a warp-shuffle reduction (each warp with __shfl_down_sync,
// then warp 0 over the warps' sums), for any block size: a lane adds only
// the lanes that exist.
#include "rmsnorm.cuh"

/// The sum of v over the lanes of the calling warp that exist (lanes
/// 0..k-1 of a partial last warp); lane 0 gets it.
__device__ float warp_sum(float v) {
  const unsigned mask = __activemask();
  const int lane = threadIdx.x & 31, width = __popc(mask);
  for (int o = 16; o > 0; o /= 2) {
    const float other = __shfl_down_sync(mask, v, o);
    if (lane + o < width)
      v += other;
  }
  return v;
}

__global__ void rmsnorm(const __nv_bfloat16 *x, const __nv_bfloat16 *w,
                        __nv_bfloat16 *out, int cols, float eps) {
  const int t = threadIdx.x, n = blockDim.x;
  const __nv_bfloat16 *xr = x + (size_t)blockIdx.x * cols;
  __nv_bfloat16 *outr = out + (size_t)blockIdx.x * cols;
  __shared__ float part[32];
  float sum = 0.0f;
  for (int c = t; c < cols; c += n) {
    const float v = __bfloat162float(xr[c]);
    sum += v * v;
  }
  const int lane = t & 31, warp = t >> 5, warps = (n + 31) / 32;
  sum = warp_sum(sum);
  if (lane == 0)
    part[warp] = sum;
  __syncthreads();
  if (warp == 0) {
    const float total = warp_sum(lane < warps ? part[lane] : 0.0f);
    if (lane == 0)
      part[0] = total;
  }
  __syncthreads();
  const float rstd = 1.0f / sqrtf(part[0] / cols + eps);
  for (int c = t; c < cols; c += n)
    outr[c] = __float2bfloat16(__bfloat162float(xr[c]) * rstd *
                               __bfloat162float(w[c]));
}

void launch_rmsnorm(const __nv_bfloat16 *x, const __nv_bfloat16 *w,
                    __nv_bfloat16 *out, int rows, int cols, float eps,
                    int block_size, cudaStream_t stream) {
  rmsnorm<<<rows, block_size, 0, stream>>>(x, w, out, cols, eps);
}
