// Fault: the in-out buffer is not updated past the first half; those
// elements keep their input values, which are not poison, so only the
// comparison of the in-out buffer with the baseline's result catches it.
#include <cuda_runtime.h>

__global__ void axpy_inout(float *y, const float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n / 2)
    y[i] = a * x[i] + y[i];
}
