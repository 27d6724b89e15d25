// mean_dim: mean over the middle dimension (KernelBench level 1 mean
// reduction, torch.mean(x, dim=1)):
//   x [outer, reduce, inner] fp32;  out[o, i] = sum_r x[o, r, i] / reduce.
// One thread per output element; neighbouring threads take neighbouring i,
// so every load of the loop over r is coalesced.
#include <cstdint>
#include <cuda_runtime.h>

__global__ void mean_dim(const float *x, float *out, int reduce, int inner) {
  const int64_t o = blockIdx.y;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= inner)
    return;
  const float *p = x + o * reduce * inner + i;
  float sum = 0.0f;
  for (int r = 0; r < reduce; ++r)
    sum += p[(int64_t)r * inner];
  out[o * inner + i] = sum / reduce;
}

void launch_mean_dim(const float *x, float *out, int outer, int reduce,
                     int inner, cudaStream_t stream) {
  const int threads = 256;
  const dim3 grid((inner + threads - 1) / threads, outer);
  mean_dim<<<grid, threads, 0, stream>>>(x, out, reduce, inner);
}
