// A kernel in a header, rewritten there (unroll.cu checks the result).
#pragma once

__global__ void dot8(float *out, const float *a, const float *b) {
  const float *pa = a + 8 * threadIdx.x, *pb = b + 8 * threadIdx.x;
  float acc = 0.f;
  for (int k = 0; k < 8; ++k)
    acc += pa[k] * pb[k];
  out[threadIdx.x] = acc;
}
