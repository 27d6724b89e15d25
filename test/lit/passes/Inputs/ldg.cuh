// A kernel in a header, rewritten there (ldg.cu checks the result).
#pragma once

__global__ void embed_gather(float *out, const float *__restrict__ table,
                             const long *__restrict__ ids, int dim) {
  long id = ids[blockIdx.x];
  for (int j = threadIdx.x; j < dim; j += blockDim.x)
    out[blockIdx.x * dim + j] = table[id * dim + j];
}
