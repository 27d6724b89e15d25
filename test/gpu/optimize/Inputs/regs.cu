// Many values live at once: nvcc's ptxas gives this kernel well over 32
// registers unless -maxrregcount says otherwise.
__global__ void mix(float *out, const float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float acc[24];
#pragma unroll
  for (int k = 0; k < 24; ++k)
    acc[k] = in[(i + k * 97) % n];
  float s = 0.0f;
#pragma unroll
  for (int r = 0; r < 8; ++r)
#pragma unroll
    for (int k = 0; k < 24; ++k)
      s += acc[k] * acc[(k + r) % 24] / (1.0f + acc[(k + 3 * r) % 24] * acc[(k + 3 * r) % 24]);
  out[i] = s;
}

void launch_mix(float *out, const float *in, int n) {
  mix<<<(n + 255) / 256, 256>>>(out, in, n);
}
