// An error at file scope.
UndeclaredType global_value;
__global__ void fine(float *x) { x[0] = 1.0f; }
