// Kernels in a header included by the .cu file are listed with the header's
// location; launch sites in the .cu file are attached to them.
// RUN: %clang-astra list %s | FileCheck %s

#include "Inputs/header-kernels.cuh"

// CHECK-LABEL: Inputs/header-kernels.cuh:6:17: kernel ops::relu_kernel
// CHECK-NEXT:  mangled: _ZN3ops11relu_kernelEPfPKfi
// CHECK:       calls:
// CHECK-NEXT:    ops::relu  {{.*}}Inputs/header-kernels.cuh:4:25
// CHECK-NEXT:  launch sites:
// CHECK-NEXT:    {{.*}}list-header.cu:[[@LINE+6]]:3 in apply(): ops::relu_kernel<<<132 * 4, 256, 0, s>>>(y, x, n)

// CHECK: list-header.cu:[[@LINE+1]]:17: kernel local_kernel
__global__ void local_kernel(int *p) { p[0] = 1; }

void apply(float *y, const float *x, int n, cudaStream_t s) {
  ops::relu_kernel<<<132 * 4, 256, 0, s>>>(y, x, n);
}
