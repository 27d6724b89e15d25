// Inline asm operands without the comma between them (EDG takes it, clang
// does not): repaired in memory, in a header of the file's preamble.
#pragma once
__device__ inline void release_flag(unsigned char *flag, unsigned int v) {
  asm volatile("st.release.sys.global.u8 [%1], %0;" ::"r"(v) "l"(flag) : "memory");
}
