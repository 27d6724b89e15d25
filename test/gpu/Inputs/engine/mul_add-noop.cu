// Fault: does nothing, hoping the output memory still holds the baseline's
// result from an earlier run.
#include <cuda_runtime.h>

__global__ void mul_add(const float *x, const float *y, float *out, int n) {}
