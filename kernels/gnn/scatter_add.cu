// scatter_add: out[index[e], f] += src[e, f] (torch.Tensor.scatter_add_ /
// torch_geometric.utils.scatter(..., reduce="sum") of edge messages onto
// their destination nodes):
//   src [num_src, num_features] fp32, index [num_src] int64 into
//   [0, num_out), out [num_out, num_features] fp32, accumulated in place.
// One thread per source element, atomicAdd into out.
#include <cstdint>
#include <cuda_runtime.h>

__global__ void scatter_add(const float *src, const int64_t *index, float *out,
                            int64_t num_src, int num_features) {
  const int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= num_src * num_features)
    return;
  const int64_t e = idx / num_features;
  const int f = idx % num_features;
  atomicAdd(&out[index[e] * num_features + f], src[idx]);
}

void launch_scatter_add(const float *src, const int64_t *index, float *out,
                        int64_t num_src, int num_features,
                        cudaStream_t stream) {
  const int threads = 256;
  const int64_t blocks = (num_src * num_features + threads - 1) / threads;
  scatter_add<<<blocks, threads, 0, stream>>>(src, index, out, num_src, num_features);
}
