// A dependent member template called without `template`: EDG (nvcc) takes
// it, clang rejects it with a fix-it. clang-astra applies the fix-it to an
// in-memory copy of the header for parsing and compiling, says so with
// --verbose, and leaves the header on disk as it was.
// REQUIRES: cuda, nvcc
// RUN: rm -rf %t && mkdir -p %t && cp %S/Inputs/caster.cuh %t/caster.cuh
// RUN: cp %t/caster.cuh %t/caster.orig
// RUN: %nvcc -arch=sm_90 -c %s -I%t -o %t/k.o
// RUN: not %cuda-syntax-check -I%t %s 2>&1 | FileCheck %s --check-prefix=CLANG
// RUN: not %clang-astra list --no-nvcc-compat %s -- -I%t 2>&1 | FileCheck %s --check-prefix=CLANG
// RUN: %clang-astra list --verbose %s -- -I%t 2>&1 | FileCheck %s
// RUN: %clang-astra compile --no-cache --verbose --kernel scaled %s -- -I%t 2>&1 | FileCheck %s --check-prefix=PTX
// RUN: cmp %t/caster.cuh %t/caster.orig

// CLANG: caster.cuh:7:{{[0-9]+}}: error: {{.*}}'template' keyword
// CHECK: note: repaired in memory: {{.*}}caster.cuh:7:{{[0-9]+}}: added 'template' (nvcc accepts the code without it)
// CHECK: kernel scaled
// PTX: note: repaired in memory: {{.*}}caster.cuh:7:{{[0-9]+}}: added 'template'
// PTX: .entry _Z6scaledPf(

#include "caster.cuh"

__global__ void scaled(float *x) { x[threadIdx.x] = scale4(x[threadIdx.x]); }
