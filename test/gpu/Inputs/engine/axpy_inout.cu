// In-place baseline: y = a * x + y (y is read and written: role inout).
#include <cuda_runtime.h>

__global__ void axpy_inout(float *y, const float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}
