//===- __astra_nvcc_compat.h - What nvcc provides and clang does not ------===//
//
// clang-astra force-includes this header (after clang's CUDA runtime wrapper)
// in every CUDA parse and compile, unless --no-nvcc-compat. Code written for
// nvcc uses declarations that nvcc's implicit includes and headers provide and
// clang's CUDA headers do not; each entry below is one of them, with the nvcc
// header it mirrors, and has a lit test (test/lit/compat/) with a file nvcc
// accepts and clang alone rejects. Nothing here changes what code that clang
// already accepts means: every declaration is one clang lacks.
//
// Part of clang-astra. It is not meant to be included by hand.
//
//===----------------------------------------------------------------------===//
#ifndef __ASTRA_NVCC_COMPAT_H
#define __ASTRA_NVCC_COMPAT_H

#if defined(__CUDA__) && defined(__cplusplus)

// nvcc's cuda_runtime.h pulls these in through crt/common_functions.h and
// crt/math_functions.h; clang's runtime wrapper includes <cmath>, <cstdlib>,
// <stdlib.h> and <string.h>, not these. Host code calls clock, time and
// ::isfinite without including their headers.
#include <math.h>
#include <time.h>

// Cache-hinted loads and stores (sm_32_intrinsics.h): nvcc declares __ldg,
// __ldcg, __ldca, __ldcs, __ldlu, __ldcv, __stwb, __stcg, __stcs and __stwt
// for every scalar and vector type below. Clang's __clang_cuda_intrinsics.h
// has __ldg, __ldcg, __ldcv, __ldcs and __stwt, but neither __ldcg, __ldcv
// and __ldcs for unsigned long nor __stwt for long and unsigned long.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 320

#pragma push_macro("__ASTRA_LD")
#pragma push_macro("__ASTRA_LD2")
#pragma push_macro("__ASTRA_LD4")
#pragma push_macro("__ASTRA_ST")
#pragma push_macro("__ASTRA_ST2")
#pragma push_macro("__ASTRA_ST4")
#pragma push_macro("__ASTRA_LOADS")
#pragma push_macro("__ASTRA_STORES")
#pragma push_macro("__ASTRA_LONG_LD")
#pragma push_macro("__ASTRA_LONG_ST")
#pragma push_macro("__ASTRA_ULONG_LD")

#define __ASTRA_LD(__Fn, __Op, __T, __Tmp, __C)                                \
  static __device__ __inline__ __T __Fn(const __T *__p) {                      \
    __Tmp __r;                                                                 \
    asm volatile("ld.global." __Op " %0, [%1];" : __C(__r) : "l"(__p));        \
    return (__T)__r;                                                           \
  }
#define __ASTRA_LD2(__Fn, __Op, __T, __Tmp, __C)                               \
  static __device__ __inline__ __T __Fn(const __T *__p) {                      \
    __Tmp __r;                                                                 \
    asm volatile("ld.global." __Op " {%0,%1}, [%2];"                           \
                 : __C(__r.x), __C(__r.y)                                      \
                 : "l"(__p));                                                  \
    __T __v;                                                                   \
    __v.x = (decltype(__v.x))__r.x;                                            \
    __v.y = (decltype(__v.y))__r.y;                                            \
    return __v;                                                                \
  }
#define __ASTRA_LD4(__Fn, __Op, __T, __Tmp, __C)                               \
  static __device__ __inline__ __T __Fn(const __T *__p) {                      \
    __Tmp __r;                                                                 \
    asm volatile("ld.global." __Op " {%0,%1,%2,%3}, [%4];"                     \
                 : __C(__r.x), __C(__r.y), __C(__r.z), __C(__r.w)              \
                 : "l"(__p));                                                  \
    __T __v;                                                                   \
    __v.x = (decltype(__v.x))__r.x;                                            \
    __v.y = (decltype(__v.y))__r.y;                                            \
    __v.z = (decltype(__v.z))__r.z;                                            \
    __v.w = (decltype(__v.w))__r.w;                                            \
    return __v;                                                                \
  }
#define __ASTRA_ST(__Fn, __Op, __T, __Tmp, __C)                                \
  static __device__ __inline__ void __Fn(__T *__p, __T __v) {                  \
    __Tmp __t = (__Tmp)__v;                                                    \
    asm volatile("st.global." __Op " [%0], %1;" ::"l"(__p), __C(__t)           \
                 : "memory");                                                  \
  }
#define __ASTRA_ST2(__Fn, __Op, __T, __Tmp, __C)                               \
  static __device__ __inline__ void __Fn(__T *__p, __T __v) {                  \
    __Tmp __t;                                                                 \
    __t.x = (decltype(__t.x))__v.x;                                            \
    __t.y = (decltype(__t.y))__v.y;                                            \
    asm volatile("st.global." __Op " [%0], {%1,%2};" ::"l"(__p),               \
                 __C(__t.x), __C(__t.y)                                        \
                 : "memory");                                                  \
  }
#define __ASTRA_ST4(__Fn, __Op, __T, __Tmp, __C)                               \
  static __device__ __inline__ void __Fn(__T *__p, __T __v) {                  \
    __Tmp __t;                                                                 \
    __t.x = (decltype(__t.x))__v.x;                                            \
    __t.y = (decltype(__t.y))__v.y;                                            \
    __t.z = (decltype(__t.z))__v.z;                                            \
    __t.w = (decltype(__t.w))__v.w;                                            \
    asm volatile("st.global." __Op " [%0], {%1,%2,%3,%4};" ::"l"(__p),         \
                 __C(__t.x), __C(__t.y), __C(__t.z), __C(__t.w)                \
                 : "memory");                                                  \
  }

// Every type sm_32_intrinsics.h has, with its PTX type, the register type the
// value travels in and its constraint. `long` is 64-bit on the hosts CUDA
// supports besides Windows, where it is 32-bit (LLP64).
#if defined(_WIN32)
#define __ASTRA_ULONG_LD(__Fn, __Q)                                            \
  __ASTRA_LD(__Fn, __Q ".u32", unsigned long, unsigned int, "=r")
#define __ASTRA_LONG_LD(__Fn, __Q)                                             \
  __ASTRA_LD(__Fn, __Q ".s32", long, int, "=r") __ASTRA_ULONG_LD(__Fn, __Q)
#define __ASTRA_LONG_ST(__Fn, __Q)                                             \
  __ASTRA_ST(__Fn, __Q ".s32", long, int, "r")                                 \
  __ASTRA_ST(__Fn, __Q ".u32", unsigned long, unsigned int, "r")
#else
#define __ASTRA_ULONG_LD(__Fn, __Q)                                            \
  __ASTRA_LD(__Fn, __Q ".u64", unsigned long, unsigned long long, "=l")
#define __ASTRA_LONG_LD(__Fn, __Q)                                             \
  __ASTRA_LD(__Fn, __Q ".s64", long, long long, "=l")                          \
  __ASTRA_ULONG_LD(__Fn, __Q)
#define __ASTRA_LONG_ST(__Fn, __Q)                                             \
  __ASTRA_ST(__Fn, __Q ".s64", long, long long, "l")                           \
  __ASTRA_ST(__Fn, __Q ".u64", unsigned long, unsigned long long, "l")
#endif

#define __ASTRA_LOADS(__Fn, __Q)                                               \
  __ASTRA_LONG_LD(__Fn, __Q)                                                   \
  __ASTRA_LD(__Fn, __Q ".s8", char, int, "=r")                                 \
  __ASTRA_LD(__Fn, __Q ".s8", signed char, int, "=r")                          \
  __ASTRA_LD(__Fn, __Q ".s16", short, short, "=h")                             \
  __ASTRA_LD(__Fn, __Q ".s32", int, int, "=r")                                 \
  __ASTRA_LD(__Fn, __Q ".s64", long long, long long, "=l")                     \
  __ASTRA_LD2(__Fn, __Q ".v2.s8", char2, int2, "=r")                           \
  __ASTRA_LD4(__Fn, __Q ".v4.s8", char4, int4, "=r")                           \
  __ASTRA_LD2(__Fn, __Q ".v2.s16", short2, short2, "=h")                       \
  __ASTRA_LD4(__Fn, __Q ".v4.s16", short4, short4, "=h")                       \
  __ASTRA_LD2(__Fn, __Q ".v2.s32", int2, int2, "=r")                           \
  __ASTRA_LD4(__Fn, __Q ".v4.s32", int4, int4, "=r")                           \
  __ASTRA_LD2(__Fn, __Q ".v2.s64", longlong2, longlong2, "=l")                 \
  __ASTRA_LD(__Fn, __Q ".u8", unsigned char, unsigned int, "=r")               \
  __ASTRA_LD(__Fn, __Q ".u16", unsigned short, unsigned short, "=h")           \
  __ASTRA_LD(__Fn, __Q ".u32", unsigned int, unsigned int, "=r")               \
  __ASTRA_LD(__Fn, __Q ".u64", unsigned long long, unsigned long long, "=l")   \
  __ASTRA_LD2(__Fn, __Q ".v2.u8", uchar2, uint2, "=r")                         \
  __ASTRA_LD4(__Fn, __Q ".v4.u8", uchar4, uint4, "=r")                         \
  __ASTRA_LD2(__Fn, __Q ".v2.u16", ushort2, ushort2, "=h")                     \
  __ASTRA_LD4(__Fn, __Q ".v4.u16", ushort4, ushort4, "=h")                     \
  __ASTRA_LD2(__Fn, __Q ".v2.u32", uint2, uint2, "=r")                         \
  __ASTRA_LD4(__Fn, __Q ".v4.u32", uint4, uint4, "=r")                         \
  __ASTRA_LD2(__Fn, __Q ".v2.u64", ulonglong2, ulonglong2, "=l")               \
  __ASTRA_LD(__Fn, __Q ".f32", float, float, "=f")                             \
  __ASTRA_LD(__Fn, __Q ".f64", double, double, "=d")                           \
  __ASTRA_LD2(__Fn, __Q ".v2.f32", float2, float2, "=f")                       \
  __ASTRA_LD4(__Fn, __Q ".v4.f32", float4, float4, "=f")                       \
  __ASTRA_LD2(__Fn, __Q ".v2.f64", double2, double2, "=d")

#define __ASTRA_STORES(__Fn, __Q)                                              \
  __ASTRA_LONG_ST(__Fn, __Q)                                                   \
  __ASTRA_ST(__Fn, __Q ".s8", char, int, "r")                                  \
  __ASTRA_ST(__Fn, __Q ".s8", signed char, int, "r")                           \
  __ASTRA_ST(__Fn, __Q ".s16", short, short, "h")                              \
  __ASTRA_ST(__Fn, __Q ".s32", int, int, "r")                                  \
  __ASTRA_ST(__Fn, __Q ".s64", long long, long long, "l")                      \
  __ASTRA_ST2(__Fn, __Q ".v2.s8", char2, int2, "r")                            \
  __ASTRA_ST4(__Fn, __Q ".v4.s8", char4, int4, "r")                            \
  __ASTRA_ST2(__Fn, __Q ".v2.s16", short2, short2, "h")                        \
  __ASTRA_ST4(__Fn, __Q ".v4.s16", short4, short4, "h")                        \
  __ASTRA_ST2(__Fn, __Q ".v2.s32", int2, int2, "r")                            \
  __ASTRA_ST4(__Fn, __Q ".v4.s32", int4, int4, "r")                            \
  __ASTRA_ST2(__Fn, __Q ".v2.s64", longlong2, longlong2, "l")                  \
  __ASTRA_ST(__Fn, __Q ".u8", unsigned char, unsigned int, "r")                \
  __ASTRA_ST(__Fn, __Q ".u16", unsigned short, unsigned short, "h")            \
  __ASTRA_ST(__Fn, __Q ".u32", unsigned int, unsigned int, "r")                \
  __ASTRA_ST(__Fn, __Q ".u64", unsigned long long, unsigned long long, "l")    \
  __ASTRA_ST2(__Fn, __Q ".v2.u8", uchar2, uint2, "r")                          \
  __ASTRA_ST4(__Fn, __Q ".v4.u8", uchar4, uint4, "r")                          \
  __ASTRA_ST2(__Fn, __Q ".v2.u16", ushort2, ushort2, "h")                      \
  __ASTRA_ST4(__Fn, __Q ".v4.u16", ushort4, ushort4, "h")                      \
  __ASTRA_ST2(__Fn, __Q ".v2.u32", uint2, uint2, "r")                          \
  __ASTRA_ST4(__Fn, __Q ".v4.u32", uint4, uint4, "r")                          \
  __ASTRA_ST2(__Fn, __Q ".v2.u64", ulonglong2, ulonglong2, "l")                \
  __ASTRA_ST(__Fn, __Q ".f32", float, float, "f")                              \
  __ASTRA_ST(__Fn, __Q ".f64", double, double, "d")                            \
  __ASTRA_ST2(__Fn, __Q ".v2.f32", float2, float2, "f")                        \
  __ASTRA_ST4(__Fn, __Q ".v4.f32", float4, float4, "f")                        \
  __ASTRA_ST2(__Fn, __Q ".v2.f64", double2, double2, "d")

__ASTRA_LOADS(__ldca, "ca")
__ASTRA_LOADS(__ldlu, "lu")
__ASTRA_STORES(__stwb, "wb")
__ASTRA_STORES(__stcg, "cg")
__ASTRA_STORES(__stcs, "cs")
__ASTRA_LONG_ST(__stwt, "wt")
__ASTRA_ULONG_LD(__ldcg, "cg")
__ASTRA_ULONG_LD(__ldcv, "cv")
__ASTRA_ULONG_LD(__ldcs, "cs")

#pragma pop_macro("__ASTRA_LD")
#pragma pop_macro("__ASTRA_LD2")
#pragma pop_macro("__ASTRA_LD4")
#pragma pop_macro("__ASTRA_ST")
#pragma pop_macro("__ASTRA_ST2")
#pragma pop_macro("__ASTRA_ST4")
#pragma pop_macro("__ASTRA_LOADS")
#pragma pop_macro("__ASTRA_STORES")
#pragma pop_macro("__ASTRA_LONG_LD")
#pragma pop_macro("__ASTRA_LONG_ST")
#pragma pop_macro("__ASTRA_ULONG_LD")

#endif // !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 320

// __tanhf (crt/device_functions.h): the fast hyperbolic tangent, which nvcc
// compiles to tanh.approx.f32 on sm_75 and newer. Clang declares none.
static __device__ __inline__ float __tanhf(float __x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
  float __r;
  asm("tanh.approx.f32 %0, %1;" : "=f"(__r) : "f"(__x));
  return __r;
#else
  return tanhf(__x);
#endif
}

// Host min and max (crt/math_functions.hpp): nvcc defines int, unsigned,
// long long and unsigned long long versions for host code, the ones clang's
// headers declare for the device only. Host code of a device compile is
// parsed with __CUDA_ARCH__ set, which hides nvcc's own host versions.
#if defined(__CUDA_ARCH__)
static __host__ __inline__ int min(const int __a, const int __b) {
  return __a < __b ? __a : __b;
}
static __host__ __inline__ int max(const int __a, const int __b) {
  return __a > __b ? __a : __b;
}
static __host__ __inline__ unsigned int umin(const unsigned int __a,
                                             const unsigned int __b) {
  return __a < __b ? __a : __b;
}
static __host__ __inline__ unsigned int umax(const unsigned int __a,
                                             const unsigned int __b) {
  return __a > __b ? __a : __b;
}
static __host__ __inline__ long long llmin(const long long __a,
                                           const long long __b) {
  return __a < __b ? __a : __b;
}
static __host__ __inline__ long long llmax(const long long __a,
                                           const long long __b) {
  return __a > __b ? __a : __b;
}
static __host__ __inline__ unsigned long long
ullmin(const unsigned long long __a, const unsigned long long __b) {
  return __a < __b ? __a : __b;
}
static __host__ __inline__ unsigned long long
ullmax(const unsigned long long __a, const unsigned long long __b) {
  return __a > __b ? __a : __b;
}
#endif // defined(__CUDA_ARCH__)

#endif // defined(__CUDA__) && defined(__cplusplus)
#endif // __ASTRA_NVCC_COMPAT_H
