#include "release.cuh"
#include "acquire.cuh"

__global__ void handoff(unsigned char *flags, unsigned int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = acquire_flag(flags + i);
    release_flag(flags + i, 1u);
  }
}
