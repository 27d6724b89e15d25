// An error in a device function a kernel calls.
__device__ float helper(float v) {
  return undeclared_in_callee * v;
}
__global__ void uses(float *x) { x[0] = helper(x[1]); }
int main() { return 0; }
