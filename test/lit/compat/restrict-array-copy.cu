// A struct with an array of restrict pointers, copied (SGLang's
// allreduce/custom_all_reduce.cuh: `struct RankData { const void
// *__restrict__ ptrs[8]; };`). nvcc copies it; clang's implicit copy
// assignment memcpys the array through a `void *` parameter that will not
// take its address, and stops at the struct's name. clang gives restrict no
// meaning on a member, so clang-astra drops that `__restrict__` in memory.
// REQUIRES: cuda, nvcc
// RUN: %nvcc -arch=sm_90 -c %s -o %t.o
// RUN: not %cuda-syntax-check %s 2>&1 | FileCheck %s --check-prefix=CLANG
// RUN: %clang-astra list --verbose %s 2>&1 | FileCheck %s
// RUN: %clang-astra compile --no-cache --kernel publish %s | FileCheck %s --check-prefix=PTX
// Another failed initialization is not repaired.
// RUN: not %clang-astra list %s -- -DOTHER 2>&1 | FileCheck %s --check-prefix=OTHER

// CLANG: restrict-array-copy.cu:[[@LINE+9]]:{{[0-9]+}}: error: cannot initialize a parameter of type 'void *' with an rvalue of type 'const void *__restrict (*)[8]'
// CHECK: note: repaired in memory: {{.*}}restrict-array-copy.cu:[[@LINE+9]]:{{[0-9]+}}: removed '__restrict__' from an array member
// CHECK: kernel publish
// PTX: .entry _Z7publishP8RankDataS_(
// OTHER: error: cannot initialize a variable of type 'void *' with an rvalue of type 'const int *'
// OTHER-NOT: repaired in memory

#include <cstdint>

struct __align__(16) RankData {
  const void *__restrict__ ptrs[8];
  uint32_t rank;
};

__global__ void publish(RankData *out, RankData in) {
  out[blockIdx.x] = in;
#ifdef OTHER
  void *p = (const int *)nullptr;
#endif
}
