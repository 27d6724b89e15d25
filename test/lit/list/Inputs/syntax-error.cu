__global__ void broken(float *p) {
  p[threadIdx.x] = 1.0f
}
