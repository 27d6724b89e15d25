// Kernels that check-spec tests check specs against.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

__global__ void add(float *out, const float *a, const float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = a[i] + b[i];
}

// In place: residual is read and written, input only written.
__global__ void add_residual(__nv_bfloat16 *input, __nv_bfloat16 *residual,
                             float eps, long long d) {
  for (long long i = threadIdx.x; i < d; i += blockDim.x) {
    float r = __bfloat162float(residual[i]) + eps;
    residual[i] = __float2bfloat16(r);
    input[i] = __float2bfloat16(r * 2.f);
  }
}

__global__ void copy4(float4 *out, const float4 *in, int n4) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4)
    out[i] = in[i];
}

template <typename T, int N>
__global__ void scale(T *out, const T *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[i] * (T)N;
}
template __global__ void scale<float, 2>(float *, const float *, int);
template __global__ void scale<__half, 4>(__half *, const __half *, int);

// src is not const but only read.
__global__ void relu_copy(float *dst, float *src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    dst[i] = fmaxf(src[i], 0.f);
}

struct Params {
  int n;
};
__global__ void by_struct(float *out, Params p) { out[threadIdx.x] = p.n; }
