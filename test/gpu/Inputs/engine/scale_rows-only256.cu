// Planted fault: correct only for the spec's block size. The row index
// assumes 256 threads per block; the program launches other sizes too.
#include <cuda_runtime.h>

__global__ void scale_rows(float *out, const float *in, int rows, int cols) {
  int r = blockIdx.x * 256 + threadIdx.x;
  if (r < rows)
    for (int j = 0; j < cols; ++j)
      out[r * cols + j] = 2.f * in[r * cols + j];
}
