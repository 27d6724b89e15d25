// Fault: hard-codes the spec's block size, 256, in its strides and its
// reduction. Right under the spec's launch; wrong at the block sizes the
// launcher's caller may pass (launch_rmsnorm takes block_size at run time):
// at 128 it sums and writes half of each row, at 512 it counts some
// elements twice.
#include "rmsnorm.cuh"

__global__ void rmsnorm(const __nv_bfloat16 *x, const __nv_bfloat16 *w,
                        __nv_bfloat16 *out, int cols, float eps) {
  const int t = threadIdx.x, n = blockDim.x;
  const __nv_bfloat16 *xr = x + (size_t)blockIdx.x * cols;
  __nv_bfloat16 *outr = out + (size_t)blockIdx.x * cols;
  __shared__ float part[256];
  float sum = 0.0f;
  for (int c = t; c < cols; c += 256) {
    const float v = __bfloat162float(xr[c]);
    sum += v * v;
  }
  if (t < 256)
    part[t] = sum;
  __syncthreads();
  for (int s = 128; s > 0; s /= 2) {
    if (t < s)
      part[t] += part[t + s];
    __syncthreads();
  }
  const float rstd = 1.0f / sqrtf(part[0] / cols + eps);
  for (int c = t; c < cols; c += 256)
    outr[c] = __float2bfloat16(__bfloat162float(xr[c]) * rstd *
                               __bfloat162float(w[c]));
}

void launch_rmsnorm(const __nv_bfloat16 *x, const __nv_bfloat16 *w,
                    __nv_bfloat16 *out, int rows, int cols, float eps,
                    int block_size, cudaStream_t stream) {
  rmsnorm<<<rows, block_size, 0, stream>>>(x, w, out, cols, eps);
}
