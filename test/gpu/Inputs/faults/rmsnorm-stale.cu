// Fault: computes on its first launch only; later launches return at once
// and leave whatever the output held (right only if nobody else wrote it).
// A block skips when a whole grid has already finished: in the first launch
// the count reaches the grid's size only after every block has started.
#include "rmsnorm.cuh"

__device__ unsigned finished_blocks;

__global__ void rmsnorm(const __nv_bfloat16 *x, const __nv_bfloat16 *w,
                        __nv_bfloat16 *out, int cols, float eps) {
  if (finished_blocks >= gridDim.x)
    return;
  const int t = threadIdx.x, n = blockDim.x;
  const __nv_bfloat16 *xr = x + (size_t)blockIdx.x * cols;
  __nv_bfloat16 *outr = out + (size_t)blockIdx.x * cols;
  const float rstd = 1.0f / sqrtf(block_sum_squares(xr, cols) / cols + eps);
  for (int c = t; c < cols; c += n)
    outr[c] = __float2bfloat16(__bfloat162float(xr[c]) * rstd *
                               __bfloat162float(w[c]));
  __syncthreads();
  if (t == 0) {
    __threadfence();
    atomicAdd(&finished_blocks, 1u);
  }
}

void launch_rmsnorm(const __nv_bfloat16 *x, const __nv_bfloat16 *w,
                    __nv_bfloat16 *out, int rows, int cols, float eps,
                    int block_size, cudaStream_t stream) {
  rmsnorm<<<rows, block_size, 0, stream>>>(x, w, out, cols, eps);
}
