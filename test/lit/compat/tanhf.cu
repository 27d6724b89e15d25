// __tanhf, nvcc's fast hyperbolic tangent (crt/device_functions.h), which
// clang does not declare for the device: tanh.approx.f32 on sm_75 and newer.
// REQUIRES: cuda, nvcc
// RUN: %nvcc -arch=sm_90 -c %s -o %t.o
// RUN: not %cuda-syntax-check %s 2>&1 | FileCheck %s --check-prefix=CLANG
// RUN: %clang-astra compile --no-cache %s | FileCheck %s
// RUN: %clang-astra compile --no-cache --cuda-gpu-arch=sm_70 %s | FileCheck %s --check-prefix=OLD

// CLANG: error: no matching function for call to '__tanhf'
// CHECK: tanh.approx.f32
// OLD-NOT: tanh.approx.f32

__global__ void fast_tanh(float *x) { x[threadIdx.x] = __tanhf(x[threadIdx.x]); }
