__global__ void good(float *p) { p[threadIdx.x] = 1.0f; }
