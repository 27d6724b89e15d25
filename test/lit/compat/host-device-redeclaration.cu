// An extern "C" host function redeclared __host__ __device__, as CCCL's
// <cuda/std/__cccl/assert.h> does for __assert_fail under NDEBUG when it
// believes the compiler is nvcc (PyTorch's Macros.h or glibc declared it
// __host__ first). nvcc merges the two into one __host__ __device__
// function; clang rejects the second as an overload. clang's CUDA headers
// define __assert_fail for the device, so the redeclaration's target is
// removed in memory and assert() still works in the kernel.
// REQUIRES: cuda, nvcc
// RUN: %nvcc -arch=sm_90 -c %s -o %t.o
// RUN: not %cuda-syntax-check %s 2>&1 | FileCheck %s --check-prefix=CLANG
// RUN: not %clang-astra list --no-nvcc-compat %s 2>&1 | FileCheck %s --check-prefix=CLANG
// RUN: %clang-astra list --verbose %s 2>&1 | FileCheck %s
// RUN: %clang-astra compile --no-cache %s | FileCheck %s --check-prefix=PTX
//
// Nothing declared the host function first (SGLang's speculative/packbit.cu
// reaches CCCL before glibc's <assert.h>): the earlier declaration is
// clang's own __device__ twin, and the redeclaration becomes the host one.
// RUN: %nvcc -arch=sm_90 -c %s -o %t.first.o -DDEVICE_FIRST
// RUN: not %cuda-syntax-check %s -DDEVICE_FIRST 2>&1 | FileCheck %s --check-prefix=CLANG-FIRST
// RUN: %clang-astra list --verbose %s -- -DDEVICE_FIRST 2>&1 | FileCheck %s --check-prefix=FIRST
// RUN: %clang-astra compile --no-cache %s -- -DDEVICE_FIRST | FileCheck %s --check-prefix=PTX
//
// A function clang has no device twin of is not repaired: nvcc would make
// it __host__ __device__, and dropping the attributes would lose the device
// side.
// RUN: not %clang-astra list %s -- -DNO_TWIN 2>&1 | FileCheck %s --check-prefix=NOTWIN

// CLANG: error: __host__ __device__ function '__assert_fail' cannot overload __host__ function '__assert_fail'
// CHECK: note: repaired in memory: {{.*}}host-device-redeclaration.cu:[[@LINE+13]]:1: removed '__host__ __device__' from a redeclaration of '__assert_fail'
// CHECK: kernel checked
// CLANG-FIRST: error: __host__ __device__ function '__assert_fail' cannot overload __device__ function '__assert_fail'
// FIRST: note: repaired in memory: {{.*}}host-device-redeclaration.cu:[[@LINE+10]]:1: removed '__host__ __device__' from a redeclaration of '__assert_fail'
// FIRST: kernel checked
// PTX: call.uni __assertfail
// NOTWIN: error: __host__ __device__ function 'astra_hook' cannot overload __host__ function 'astra_hook'
// NOTWIN-NOT: repaired in memory

#ifndef DEVICE_FIRST
#include <assert.h>
#endif
extern "C" {
__host__ __device__
void __assert_fail(const char *assertion, const char *file, unsigned int line,
                   const char *function) noexcept __attribute__((__noreturn__));
}
#ifdef DEVICE_FIRST
#include <assert.h>
#endif

#ifdef NO_TWIN
extern "C" void astra_hook(const char *what);
extern "C" __host__ __device__ void astra_hook(const char *what);
#endif

__global__ void checked(float *x, int n) {
  assert(n > 0);
  x[threadIdx.x] = 1.0f;
}
