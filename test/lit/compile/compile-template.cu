// Template kernels: an explicit instantiation and one made by a launch in
// host code are both in the PTX; --kernel accepts the name with or without
// template arguments.
// REQUIRES: ptxas
// RUN: %clang-astra compile --no-cache %s -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// RUN: %clang-astra compile --no-cache --kernel 'ops::scale<float>' %s | FileCheck %s
// RUN: %clang-astra compile --no-cache --emit=resources --kernel ops::scale %s | FileCheck %s --check-prefix=BOTH
// RUN: %clang-astra compile --no-cache --emit=resources --kernel 'ops::scale<double>' %s | FileCheck %s --check-prefix=ONE

// CHECK-DAG: .entry _ZN3ops5scaleIdEEvPT_S1_i(
// CHECK-DAG: .entry _ZN3ops5scaleIfEEvPT_S1_i(

// BOTH: kernel
// BOTH-DAG: void ops::scale<double>(double*, double, int)
// BOTH-DAG: void ops::scale<float>(float*, float, int)
// ONE: kernel
// ONE-NEXT: void ops::scale<double>(double*, double, int)
// ONE-NEXT: (sm_90;

namespace ops {
template <typename T> __global__ void scale(T *x, T f, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= f;
}
template __global__ void scale<double>(double *, double, int);
} // namespace ops

void launch(float *x, int n) { ops::scale<<<(n + 255) / 256, 256>>>(x, 2.0f, n); }
