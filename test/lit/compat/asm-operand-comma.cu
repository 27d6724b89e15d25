// Inline asm operands without the comma between them, as cuda-samples'
// conjugateGradientMultiDeviceCG writes `::"r"(reg_val) "l"(arrived)`:
// EDG (nvcc) takes it, clang stops with "expected ')'". clang-astra adds the
// comma in an in-memory copy for parsing and compiling.
// REQUIRES: cuda, nvcc
// RUN: %nvcc -arch=sm_90 -c %s -o %t.o
// RUN: not %cuda-syntax-check %s 2>&1 | FileCheck %s --check-prefix=CLANG
// RUN: %clang-astra list --verbose %s 2>&1 | FileCheck %s
// RUN: %clang-astra compile --no-cache %s | FileCheck %s --check-prefix=PTX
// A `)` expected elsewhere is not an asm operand list: no repair.
// RUN: not %clang-astra list %s -- -DNOT_ASM 2>&1 | FileCheck %s --check-prefix=OTHER

// CLANG: asm-operand-comma.cu:[[@LINE+9]]:{{[0-9]+}}: error: expected ')'
// CHECK: note: repaired in memory: {{.*}}asm-operand-comma.cu:[[@LINE+8]]:{{[0-9]+}}: added ',' between asm operands
// CHECK: kernel release_flag
// PTX: st.release.sys.global.u8 [%rd{{[0-9]+}}], %r{{[0-9]+}};
// OTHER: error: expected ')'
// OTHER-NOT: repaired in memory

__global__ void release_flag(unsigned char *arrived, unsigned int value) {
  // The ':' and ';' inside the string are PTX, not C++.
  asm volatile("st.release.sys.global.u8 [%1], %0;" ::"r"(value) "l"(arrived) : "memory");
#ifdef NOT_ASM
  int x = (value "text");
#endif
}
