// A kernel that launches a kernel (dynamic parallelism) needs relocatable
// device code: nvcc builds of it pass -rdc=true, which the flags given here
// do not. clang alone rejects it; clang-astra adds -fgpu-rdc (said with
// --verbose).
// REQUIRES: cuda, nvcc
// RUN: %nvcc -arch=sm_90 -rdc=true -c %s -o %t.o
// RUN: not %cuda-syntax-check %s 2>&1 | FileCheck %s --check-prefix=CLANG
// RUN: %clang-astra list --verbose %s 2>&1 | FileCheck %s
// RUN: %clang-astra compile --no-cache %s | FileCheck %s --check-prefix=PTX

// CLANG: error: kernel launch from __device__ or __global__ function requires relocatable device code
// CHECK: note: repaired in memory: {{.*}}dynamic-parallelism.cu:[[@LINE+6]]:{{[0-9]+}}: added -fgpu-rdc
// CHECK: kernel parent
// PTX: .entry _Z6parentPi(
// PTX: call.uni (retval0), __cudaCDP2LaunchDevice,

__global__ void child(int *p) { p[threadIdx.x] += 1; }
__global__ void parent(int *p) { child<<<1, 32>>>(p); }
