// Fault: caches each row's scale between calls and reuses it while cols
// is the same, whatever the inputs: right on the first inputs it sees,
// stale on the next seed's.
#include "rmsnorm.cuh"

__device__ float cached_rstd[4096];
__device__ int cached_cols[4096];

__global__ void rmsnorm(const __nv_bfloat16 *x, const __nv_bfloat16 *w,
                        __nv_bfloat16 *out, int cols, float eps) {
  const int t = threadIdx.x, n = blockDim.x;
  const __nv_bfloat16 *xr = x + (size_t)blockIdx.x * cols;
  __nv_bfloat16 *outr = out + (size_t)blockIdx.x * cols;
  __shared__ float row_rstd;
  const bool cached = cached_cols[blockIdx.x] == cols;
  const float fresh =
      cached ? 0.0f : 1.0f / sqrtf(block_sum_squares(xr, cols) / cols + eps);
  if (t == 0) {
    row_rstd = cached ? cached_rstd[blockIdx.x] : fresh;
    cached_rstd[blockIdx.x] = row_rstd;
  }
  __syncthreads();
  if (t == 0)
    cached_cols[blockIdx.x] = cols;
  const float rstd = row_rstd;
  for (int c = t; c < cols; c += n)
    outr[c] = __float2bfloat16(__bfloat162float(xr[c]) * rstd *
                               __bfloat162float(w[c]));
}

void launch_rmsnorm(const __nv_bfloat16 *x, const __nv_bfloat16 *w,
                    __nv_bfloat16 *out, int rows, int cols, float eps,
                    int block_size, cudaStream_t stream) {
  rmsnorm<<<rows, block_size, 0, stream>>>(x, w, out, cols, eps);
}
