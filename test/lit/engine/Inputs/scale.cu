// y = a * x + b, one thread per element: the smallest kernel the engine's
// command-line tests can compile.
#include <cuda_runtime.h>

__global__ void scale(const float *x, float *y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + b;
}
