// Fault: writes each row in vectors of four elements with no scalar
// remainder: right when cols is a multiple of 4 (every spec shape set), the
// last cols % 4 elements of each row are never written otherwise.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

__global__ void rmsnorm(const __nv_bfloat16 *x, const __nv_bfloat16 *w,
                        __nv_bfloat16 *out, int cols, float eps) {
  __shared__ float part[1024];
  const int t = threadIdx.x, n = blockDim.x;
  const __nv_bfloat16 *xr = x + (size_t)blockIdx.x * cols;
  __nv_bfloat16 *outr = out + (size_t)blockIdx.x * cols;
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
  const float rstd = 1.0f / sqrtf(part[0] / cols + eps);
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
