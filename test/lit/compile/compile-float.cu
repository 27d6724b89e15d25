// A float kernel through the compile gate: PTX for the default arch that
// ptxas accepts.
// REQUIRES: ptxas
// RUN: %clang-astra compile --no-cache %s -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// The kernel can be named by its source name or its mangled name.
// RUN: %clang-astra compile --no-cache --kernel saxpy %s | FileCheck %s
// RUN: %clang-astra compile --no-cache --kernel _Z5saxpyfPKfPfi %s | FileCheck %s

// CHECK: .target sm_90
// CHECK: .visible .entry _Z5saxpyfPKfPfi(
// CHECK: fma.rn.f32
// CHECK: .visible .entry _Z4rsqrPfPKfi(
// CHECK: rsqrt.approx

__global__ void saxpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}

// libdevice's fast reciprocal square root, linked in and inlined.
__global__ void rsqr(float *y, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = __frsqrt_rn(x[i]) + rsqrtf(x[i]);
}
