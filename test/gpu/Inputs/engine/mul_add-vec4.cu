// Fault: float4 loads and stores that assume 16-byte aligned pointers. The
// tail is handled, so odd sizes pass; a misaligned buffer faults.
#include <cuda_runtime.h>

__global__ void mul_add(const float *x, const float *y, float *out, int n) {
  int i = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
  if (i + 4 <= n) {
    float4 a = *reinterpret_cast<const float4 *>(x + i);
    float4 b = *reinterpret_cast<const float4 *>(y + i);
    float4 r = make_float4(a.x * b.x + a.x, a.y * b.y + a.y, a.z * b.z + a.z,
                           a.w * b.w + a.w);
    *reinterpret_cast<float4 *>(out + i) = r;
  } else {
    for (; i < n; ++i)
      out[i] = x[i] * y[i] + x[i];
  }
}
