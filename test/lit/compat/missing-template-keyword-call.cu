// `VecCast<D, S>::cast<N>(d, s);` in a template: EDG (nvcc) takes it as a
// call of a member template; clang reads `cast < N > (d, s)` as
// comparisons and fails at instantiation ("reference to overloaded function
// could not be resolved", no fix-it naming the keyword). clang-astra adds
// `template` before the last component of the qualified name in an
// in-memory copy of the header, says so with --verbose, and leaves the
// header on disk as it was.
// REQUIRES: cuda, nvcc
// RUN: rm -rf %t && mkdir -p %t && cp %S/Inputs/vec_cast.cuh %t/vec_cast.cuh
// RUN: cp %t/vec_cast.cuh %t/vec_cast.orig
// RUN: %nvcc -arch=sm_90 -c %s -I%t -o %t/k.o
// RUN: not %cuda-syntax-check -I%t %s 2>&1 | FileCheck %s --check-prefix=CLANG
// RUN: not %clang-astra list --no-nvcc-compat %s -- -I%t 2>&1 | FileCheck %s --check-prefix=CLANG
// RUN: %clang-astra list --verbose %s -- -I%t 2>&1 | FileCheck %s
// RUN: %clang-astra compile --no-cache --verbose --kernel widen %s -- -I%t 2>&1 | FileCheck %s --check-prefix=PTX
// RUN: cmp %t/vec_cast.cuh %t/vec_cast.orig

// CLANG: vec_cast.cuh:17:3: error: reference to overloaded function could not be resolved
// CLANG: vec_cast.cuh:23:3: error: reference to overloaded function could not be resolved
// CHECK: note: repaired in memory: {{.*}}vec_cast.cuh:17:18: added 'template' (nvcc accepts the code without it)
// CHECK: note: repaired in memory: {{.*}}vec_cast.cuh:23:11: added 'template'
// CHECK: kernel widen
// CHECK: kernel widen_with
// PTX: note: repaired in memory: {{.*}}vec_cast.cuh:17:18: added 'template'
// PTX: .entry _Z5widenPdPKf(

#include "vec_cast.cuh"

__global__ void widen(double *out, const float *in) {
  castFrom<float, double, 4>(out + 4 * threadIdx.x, in + 4 * threadIdx.x);
}

__global__ void widen_with(double *out, const float *in) {
  castWith<VecCast<double, float>, 4>(out + 4 * threadIdx.x, in + 4 * threadIdx.x);
}
