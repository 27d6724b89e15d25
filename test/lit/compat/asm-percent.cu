// A PTX special register in inline asm with operands: nvcc passes
// `%globaltimer` through as it is, clang wants `%%globaltimer`. The repair
// doubles the `%` in memory; the PTX reads the register.
// REQUIRES: cuda, nvcc
// RUN: cp %s %t.cu
// RUN: %nvcc -arch=sm_90 -c %t.cu -o %t.o
// RUN: not %cuda-syntax-check %t.cu 2>&1 | FileCheck %s --check-prefix=CLANG
// RUN: %clang-astra compile --no-cache --verbose %t.cu 2>&1 | FileCheck %s
// RUN: cmp %s %t.cu

// CLANG: error: invalid % escape in inline assembly string
// CHECK: note: repaired in memory: {{.*}}.cu:[[@LINE+5]]:{{[0-9]+}}: wrote '%globaltimer' as '%%globaltimer' in inline asm
// CHECK: mov.u64 {{.*}}%globaltimer;

__global__ void stamp(unsigned long long *t) {
  unsigned long long now;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(now));
  t[threadIdx.x] = now;
}
