// Fault: a block reduction without the barriers between writing the
// partial sums and the tree's first step. Warps 1 and up reach their write
// late (after a long dependent chain), so warp 0 adds slots that still hold
// zero.
#include "rmsnorm.cuh"

__global__ void rmsnorm(const __nv_bfloat16 *x, const __nv_bfloat16 *w,
                        __nv_bfloat16 *out, int cols, float eps) {
  const int t = threadIdx.x, n = blockDim.x;
  const __nv_bfloat16 *xr = x + (size_t)blockIdx.x * cols;
  __nv_bfloat16 *outr = out + (size_t)blockIdx.x * cols;
  __shared__ float part[1024];
  float sum = 0.0f;
  for (int c = t; c < cols; c += n) {
    const float v = __bfloat162float(xr[c]);
    sum += v * v;
  }
  part[t] = 0.0f;
  __syncthreads();
  if (t >= 32) {
    float d = sum;
#pragma unroll 1
    for (int k = 0; k < 4000; ++k)
      d = d * 0.999999f + 1e-7f;
    sum += (d - d) * 0.0f + (d > 1e30f ? 1.0f : 0.0f);
  }
  part[t] = sum;
  // Missing: __syncthreads();
  int p = 1;
  while (p * 2 <= n)
    p *= 2;
  if (t + p < n)
    part[t] += part[t + p];
  // Missing: __syncthreads();
  for (int s = p / 2; s > 0; s /= 2) {
    if (t < s)
      part[t] += part[t + s];
    __syncthreads();
  }
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
