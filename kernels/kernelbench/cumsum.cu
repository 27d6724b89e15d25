// cumsum: inclusive prefix sum over the last dimension (KernelBench level 1,
// torch.cumsum(x, dim=1)): y[r, j] = sum_{i <= j} x[r, i], x, y [rows, cols]
// fp32. One block of 1024 threads per row walks the row in chunks of
// blockDim.x elements: a Hillis-Steele scan of the chunk in shared memory,
// plus the running total of the chunks before it.
#include <cstdint>
#include <cuda_runtime.h>

__global__ void cumsum(const float *x, float *y, int cols) {
  __shared__ float buf[1024];
  const int tid = threadIdx.x;
  const int threads = blockDim.x;
  const int64_t row = blockIdx.x;
  const float *xr = x + row * cols;
  float *yr = y + row * cols;
  float carry = 0.0f;
  for (int base = 0; base < cols; base += threads) {
    const int j = base + tid;
    buf[tid] = j < cols ? xr[j] : 0.0f;
    __syncthreads();
    for (int offset = 1; offset < threads; offset <<= 1) {
      const float v = tid >= offset ? buf[tid - offset] : 0.0f;
      __syncthreads();
      buf[tid] += v;
      __syncthreads();
    }
    if (j < cols)
      yr[j] = carry + buf[tid];
    carry += buf[threads - 1];
    __syncthreads();
  }
}

void launch_cumsum(const float *x, float *y, int rows, int cols,
                   cudaStream_t stream) {
  cumsum<<<rows, 1024, 0, stream>>>(x, y, cols);
}
