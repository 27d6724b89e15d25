// gelu, exact (erf) form (KernelBench level 1, torch.nn.functional.gelu):
//   y = 0.5 x (1 + erf(x / sqrt(2))),  x, y [n] fp32.
// One thread per element.
#include <cstdint>
#include <cuda_runtime.h>

__global__ void gelu(const float *__restrict__ x, float *__restrict__ y, int64_t n) {
  const int64_t i = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * 4;
  if (i + 3 < n) {
    float4 v = *(const float4 *)(x + i), o;
    o.x = 0.5f * v.x * (1.0f + erff(v.x * 0.7071067811865475f));
    o.y = 0.5f * v.y * (1.0f + erff(v.y * 0.7071067811865475f));
    o.z = 0.5f * v.z * (1.0f + erff(v.z * 0.7071067811865475f));
    o.w = 0.5f * v.w * (1.0f + erff(v.w * 0.7071067811865475f));
    *(float4 *)(y + i) = o;
  } else {
    for (int64_t j = i; j < n; ++j) { const float v = x[j]; y[j] = 0.5f * v * (1.0f + erff(v * 0.7071067811865475f)); }
  }
}
