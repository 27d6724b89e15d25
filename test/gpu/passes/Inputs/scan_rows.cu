// Row-wise inclusive prefix sums with the textbook Hillis-Steele scan in
// shared memory (the input of the warp-scan pass), launched with block sizes
// that are not multiples of a warp (the last warp is partial), smaller than
// a warp, and the largest there is.
#include <cuda_runtime.h>

__global__ void scan_rows(const int *x, int *y, int cols) {
  __shared__ int s[1024];
  const int tid = threadIdx.x;
  int carry = 0;
  for (int base = 0; base < cols; base += blockDim.x) {
    const int j = base + tid;
    s[tid] = j < cols ? x[(size_t)blockIdx.x * cols + j] : 0;
    __syncthreads();
    for (int off = 1; off < blockDim.x; off *= 2) {
      const int v = tid >= off ? s[tid - off] : 0;
      __syncthreads();
      s[tid] += v;
      __syncthreads();
    }
    if (j < cols)
      y[(size_t)blockIdx.x * cols + j] = carry + s[tid];
    carry += s[blockDim.x - 1];
    __syncthreads();
  }
}

void launch_scan_rows(const int *x, int *y, int rows, int cols, int threads) {
  scan_rows<<<rows, threads>>>(x, y, cols);
}
