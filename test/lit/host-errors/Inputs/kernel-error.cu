// An error in a kernel (line 5) and one in main.
#include <cuda_runtime.h>

__global__ void broken(float *x) {
  x[0] = undeclared_in_kernel;
}

int main() {
  cudaThreadSynchronize();
  return 0;
}
