// What the planted-fault suite's RMSNorm (rmsnorm.cu) and the candidates
// that keep its reduction share: the block's sum of squares of a row.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

/// The sum of xr[c]^2 over c in [0, cols), over the whole block, every
/// thread strided by blockDim.x; every thread gets it. A shared-memory tree
/// for any block size: the threads above the largest power of two p <=
/// blockDim.x are folded onto the first ones first.
static __device__ float block_sum_squares(const __nv_bfloat16 *xr, int cols) {
  __shared__ float part[1024];
  const int t = threadIdx.x, n = blockDim.x;
  float sum = 0.0f;
  for (int c = t; c < cols; c += n) {
    const float v = __bfloat162float(xr[c]);
    sum += v * v;
  }
  part[t] = sum;
  __syncthreads();
  int p = 1;
  while (p * 2 <= n)
    p *= 2;
  if (t + p < n)
    part[t] += part[t + p];
  __syncthreads();
  for (int s = p / 2; s > 0; s /= 2) {
    if (t < s)
      part[t] += part[t + s];
    __syncthreads();
  }
  const float total = part[0];
  // The next call reuses part: nobody may write it before all have read.
  __syncthreads();
  return total;
}
