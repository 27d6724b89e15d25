// Fault: writes zeros (KernelBench issue 165: zeros pass where every output
// lies within atol of zero, as under rmsnorm-small.json).
#include "rmsnorm.cuh"

__global__ void rmsnorm(const __nv_bfloat16 *x, const __nv_bfloat16 *w,
                        __nv_bfloat16 *out, int cols, float eps) {
  __nv_bfloat16 *outr = out + (size_t)blockIdx.x * cols;
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    outr[c] = __float2bfloat16(0.0f);
}

void launch_rmsnorm(const __nv_bfloat16 *x, const __nv_bfloat16 *w,
                    __nv_bfloat16 *out, int rows, int cols, float eps,
                    int block_size, cudaStream_t stream) {
  rmsnorm<<<rows, block_size, 0, stream>>>(x, w, out, cols, eps);
}
