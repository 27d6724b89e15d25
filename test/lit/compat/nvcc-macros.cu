// nvcc's own macros, for the CUDA toolkit found: libraries choose code paths
// by __NVCC__ and __CUDACC_VER_MAJOR__/MINOR/BUILD (CUTLASS's SM90
// builders, MSCCL++'s device API). clang alone defines neither.
// REQUIRES: cuda, nvcc
// RUN: %nvcc -arch=sm_90 -c %s -o %t.o
// RUN: not %cuda-syntax-check %s 2>&1 | FileCheck %s --check-prefix=CLANG
// RUN: %clang-astra list --verbose %s 2>&1 | FileCheck %s

// CLANG: error: "built without nvcc's macros"
// CHECK: note: nvcc compatibility on: CUDA {{1[2-9]\.[0-9]+\.[0-9]+}} (from
// CHECK: -D__NVCC__=1 -D__CUDACC_VER_MAJOR__={{[0-9]+}} -D__CUDACC_VER_MINOR__={{[0-9]+}} -D__CUDACC_VER_BUILD__={{[0-9]+}} -include {{.*}}__astra_nvcc_compat.h
// CHECK: kernel versioned

#if !defined(__NVCC__) || !defined(__CUDACC_VER_MAJOR__) ||                   \
    !defined(__CUDACC_VER_MINOR__) || !defined(__CUDACC_VER_BUILD__)
#error "built without nvcc's macros"
#endif

__global__ void versioned(int *v) {
  v[0] = __CUDACC_VER_MAJOR__ * 1000 + __CUDACC_VER_MINOR__ * 10;
}
