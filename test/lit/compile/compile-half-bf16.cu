// Half and bfloat16 kernels: the CUDA fp16/bf16 headers through the gate,
// fp32 math inside, 16-bit loads and stores outside.
// REQUIRES: ptxas
// RUN: %clang-astra compile --no-cache %s -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin

#include <cuda_bf16.h>
#include <cuda_fp16.h>

// CHECK-LABEL: .visible .entry _Z12silu_and_mulP6__halfPKS_i(
// CHECK: ld.global{{.*}}.b16
// CHECK: cvt.f32.f16
// CHECK: ex2.approx
// CHECK: cvt.rn.f16.f32
// CHECK: st.global{{.*}}.b16
__global__ void silu_and_mul(__half *out, const __half *in, int d) {
  int t = blockIdx.x;
  for (int j = threadIdx.x; j < d; j += blockDim.x) {
    float g = __half2float(in[t * 2 * d + j]);
    float u = __half2float(in[t * 2 * d + d + j]);
    out[t * d + j] = __float2half(g / (1.0f + __expf(-g)) * u);
  }
}

// CHECK-LABEL: .visible .entry _Z8bf16_addP13__nv_bfloat16PKS_S2_i(
// CHECK: cvt.rn.bf16.f32
__global__ void bf16_add(__nv_bfloat16 *out, const __nv_bfloat16 *a,
                         const __nv_bfloat16 *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = __float2bfloat16(__bfloat162float(a[i]) + __bfloat162float(b[i]));
}

// CHECK-LABEL: .visible .entry _Z5hmul2P7__half2PKS_(
// CHECK: mul{{.*}}f16x2
__global__ void hmul2(__half2 *y, const __half2 *x) {
  y[threadIdx.x] = __hmul2(x[threadIdx.x], x[threadIdx.x]);
}
