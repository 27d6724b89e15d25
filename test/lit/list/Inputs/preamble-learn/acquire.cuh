#pragma once
__device__ inline unsigned int acquire_flag(const unsigned char *flag) {
  unsigned short v;
  asm volatile("ld.acquire.sys.global.u8 %0, [%1];" : "=h"(v) : "l"(flag) "r"(0) : "memory");
  return v;
}
