__global__ void k(float *x) {
  x[0] = undeclared_value;
}
