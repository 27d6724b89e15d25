// Cache-hinted loads and stores (sm_32_intrinsics.h) for every type nvcc has
// them for: nvcc accepts the file, clang alone rejects it (no __ldca, __ldlu,
// __stwb, __stcg, __stcs; no unsigned long __ldcg/__ldcv/__ldcs; no long
// __stwt), and clang-astra compiles it with the compat header, emitting each
// cache operator.
// REQUIRES: cuda, nvcc
// RUN: %nvcc -arch=sm_90 -c %s -o %t.o
// RUN: not %cuda-syntax-check %s 2>&1 | FileCheck %s --check-prefix=CLANG
// RUN: not %clang-astra compile --no-cache --no-nvcc-compat %s > /dev/null 2>&1
// RUN: %clang-astra compile --no-cache %s -o %t.ptx
// RUN: FileCheck %s --check-prefix=CA < %t.ptx
// RUN: FileCheck %s --check-prefix=LU < %t.ptx
// RUN: FileCheck %s --check-prefix=WB < %t.ptx
// RUN: FileCheck %s --check-prefix=CG < %t.ptx
// RUN: FileCheck %s --check-prefix=CS < %t.ptx

// CLANG: error: use of undeclared identifier '__ldca'

// Thirty types, each loaded and stored once per operator.
// CA-COUNT-30: ld.global.ca.
// CA-NOT: ld.global.ca.
// LU-COUNT-30: ld.global.lu.
// LU-NOT: ld.global.lu.
// WB-COUNT-30: st.global.wb.
// WB-NOT: st.global.wb.
// CG-COUNT-30: st.global.cg.
// CG-NOT: st.global.cg.
// CS-COUNT-30: st.global.cs.
// CS-NOT: st.global.cs.

#define TYPES(X)                                                               \
  X(long) X(unsigned long) X(char) X(signed char) X(short) X(int)              \
  X(long long) X(char2) X(char4) X(short2) X(short4) X(int2) X(int4)          \
  X(longlong2) X(unsigned char) X(unsigned short) X(unsigned int)              \
  X(unsigned long long) X(uchar2) X(uchar4) X(ushort2) X(ushort4) X(uint2)     \
  X(uint4) X(ulonglong2) X(float) X(double) X(float2) X(float4) X(double2)

#define LOADS(T)                                                               \
  {                                                                            \
    T *p = (T *)out;                                                           \
    const T *q = (const T *)in;                                                \
    T a = __ldca(q);                                                           \
    __stwb(p, a);                                                              \
  }
#define LOADS_LU(T)                                                            \
  {                                                                            \
    T *p = (T *)out + 1;                                                       \
    const T *q = (const T *)in + 1;                                            \
    T a = __ldlu(q);                                                           \
    __stcg(p, a);                                                              \
  }
#define OTHERS(T)                                                              \
  {                                                                            \
    T *p = (T *)out + 2;                                                       \
    const T *q = (const T *)in + 2;                                            \
    T a = __ldg(q);                                                            \
    a = __ldcg(q);                                                             \
    a = __ldcs(q);                                                             \
    a = __ldcv(q);                                                             \
    __stcs(p, a);                                                              \
    __stwt(p, a);                                                              \
  }

__global__ void every_type(const void *in, void *out) {
  TYPES(LOADS)
  TYPES(LOADS_LU)
  TYPES(OTHERS)
}
