//===- CompareCore.h - Element rules of the comparison, host and device -*- C++ -*-===//
//
// The per-element rules of Compare.h (tolerance, NaN and infinity, poison)
// and the two scans of ScaleRules.h, written once for both sides: the host
// runs them in compareOnHost-style mirrors (DeviceCompare.h) and the NVPTX
// backend compiles them into the verifier's device kernels
// (lib/Engine/device/). Everything a verdict depends on is an exact
// operation (decoding an element to double is exact for every dtype; the
// difference, the tolerance and the thresholds are single IEEE operations in
// a fixed order, never contracted), so the device counts the same failures,
// the same first index and the same maximum errors as the host.
//
// Only the scale rules' sums (the reference's RMS, the error's norm) are
// accumulated in another order on the device (per thread, then a fixed tree
// per block, then the blocks in order on the host): they may differ from the
// host's in the last bits, which changes a verdict only for an output whose
// statistics lie within rounding of a threshold.
//
// Needs nothing but <stdint.h> (the device build is freestanding).
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_ENGINE_COMPARECORE_H
#define ASTRA_ENGINE_COMPARECORE_H

#include "astra/Engine/CounterRng.h"

namespace astra {
namespace ccore {

using crng::bitsOf;
using crng::fromBits;

/// The element's raw bits (zero-extended) at index \p I of a buffer of
/// dtype \p T.
inline uint64_t loadBits(const uint8_t *P, uint32_t T, uint64_t I) {
  switch (crng::sizeOf(T)) {
  case 8: {
    uint64_t V;
    __builtin_memcpy(&V, P + 8 * I, 8);
    return V;
  }
  case 4: {
    uint32_t V;
    __builtin_memcpy(&V, P + 4 * I, 4);
    return V;
  }
  case 2: {
    uint16_t V;
    __builtin_memcpy(&V, P + 2 * I, 2);
    return V;
  }
  default:
    return P[I];
  }
}

/// A small float's bits as a double (exact).
inline double decodeMini(uint32_t ExpBits, uint32_t ManBits, bool FiniteOnly,
                         uint32_t B) {
  int Bias = (1 << (ExpBits - 1)) - 1;
  uint32_t ExpMask = (1u << ExpBits) - 1;
  bool Neg = (B >> (ExpBits + ManBits)) & 1;
  uint32_t ExpField = (B >> ManBits) & ExpMask;
  uint32_t Man = B & ((1u << ManBits) - 1);
  double V;
  if (FiniteOnly && ExpField == ExpMask && Man == (1u << ManBits) - 1)
    V = fromBits(0x7ff8000000000000ull);
  else if (!FiniteOnly && ExpField == ExpMask)
    V = Man ? fromBits(0x7ff8000000000000ull) : fromBits(0x7ff0000000000000ull);
  else if (ExpField == 0) // Man * 2^(1 - Bias - ManBits): exact.
    V = double(Man) *
        fromBits(uint64_t(1023 + 1 - Bias - int(ManBits)) << 52);
  else
    V = fromBits(uint64_t(int(ExpField) - Bias + 1023) << 52 |
                 uint64_t(Man) << (52 - ManBits));
  return Neg ? -V : V;
}

/// Element bits \p B of dtype \p T as a double (HostBuffer::get).
inline double toDouble(uint32_t T, uint64_t B) {
  switch (T) {
  case crng::F32: {
    float F;
    uint32_t U = uint32_t(B);
    __builtin_memcpy(&F, &U, 4);
    return F;
  }
  case crng::F64:
    return fromBits(B);
  case crng::F16:
    return decodeMini(5, 10, false, uint32_t(B));
  case crng::BF16:
    return decodeMini(8, 7, false, uint32_t(B));
  case crng::FP8E4M3:
    return decodeMini(4, 3, true, uint32_t(B));
  case crng::FP8E5M2:
    return decodeMini(5, 2, false, uint32_t(B));
  case crng::I8:
    return double(int8_t(B));
  case crng::I16:
    return double(int16_t(B));
  case crng::I32:
    return double(int32_t(B));
  case crng::I64:
    return double(int64_t(B));
  case crng::U64:
    return double(B);
  default: // U8, U16, U32
    return double(int64_t(B));
  }
}

inline bool isNan(double V) { return V != V; }
inline bool isInf(double V) {
  return (bitsOf(V) & 0x7fffffffffffffffull) == 0x7ff0000000000000ull;
}
inline bool isFinite(double V) { return !isNan(V) && !isInf(V); }
inline double fabs(double V) {
  return fromBits(bitsOf(V) & 0x7fffffffffffffffull);
}

/// The element-wise comparison of one buffer pair.
struct CmpParams {
  uint64_t Count = 0;
  uint32_t Type = crng::F32;
  uint32_t Bitwise = 0;   ///< Any bit difference fails (compareBitwise).
  uint32_t HasPoison = 0; ///< The actual buffer was poisoned with PoisonBits.
  uint32_t Reserved = 0;
  uint64_t PoisonBits = 0;
  double Atol = 0, Rtol = 0;
};

/// Why element I failed (0: it did not); the host turns the first one into
/// Compare.cpp's message by comparing that element again.
enum CmpReason : uint32_t {
  CmpPass = 0,
  CmpIntegers,
  CmpBits,
  CmpBaselineNan,
  CmpBaselineInf,
  CmpNan,
  CmpInf,
  CmpTolerance,
};

/// The reduction's result. MaxAbs and MaxRel are the bits of non-negative
/// doubles, whose order as integers is their order as numbers (the device
/// takes their maximum with an integer atomic).
struct CmpResult {
  uint64_t Failures = 0, Unwritten = 0;
  uint64_t First = ~0ull; ///< Index of the first failure; ~0 when none.
  uint64_t MaxAbs = 0, MaxRel = 0;
};

/// Compares element \p I (expected bits \p EB, actual \p AB); updates the
/// thread's maxima \p MaxAbs and \p MaxRel as compareRange does.
inline uint32_t compareElement(const CmpParams &P, uint64_t EB, uint64_t AB,
                               double &MaxAbs, double &MaxRel) {
  if (P.Bitwise) {
    if (EB == AB)
      return CmpPass;
    if (crng::isFloatCode(P.Type)) {
      double D = fabs(toDouble(P.Type, AB) - toDouble(P.Type, EB));
      if (isFinite(D) && D > MaxAbs)
        MaxAbs = D;
    }
    return CmpBits;
  }
  if (!crng::isFloatCode(P.Type)) {
    if (EB == AB)
      return CmpPass;
    double D = fabs(toDouble(P.Type, AB) - toDouble(P.Type, EB));
    if (D > MaxAbs)
      MaxAbs = D;
    return CmpIntegers;
  }
  double E = toDouble(P.Type, EB), A = toDouble(P.Type, AB);
  if (isNan(E))
    return isNan(A) ? CmpPass : CmpBaselineNan;
  if (isInf(E))
    return A != E ? CmpBaselineInf : CmpPass;
  if (isNan(A))
    return CmpNan;
  if (isInf(A))
    return CmpInf;
  double Diff = fabs(A - E);
  if (Diff > MaxAbs)
    MaxAbs = Diff;
  if (E != 0) {
    double Rel = Diff / fabs(E);
    if (Rel > MaxRel)
      MaxRel = Rel;
  }
  double Bound = P.Rtol * fabs(E);
  Bound = P.Atol + Bound;
  return Diff > Bound ? CmpTolerance : CmpPass;
}

/// Whether a failing element still holds the poison (not written).
inline bool unwritten(const CmpParams &P, uint64_t AB) {
  return P.HasPoison && AB == P.PoisonBits;
}

/// The first scan of the scale rules over finite pairs (ScaleRules.cpp's
/// Moments, in double: the device path is not taken for f64 outputs, whose
/// squares can overflow a double).
struct MomentsPart {
  uint64_t Finite = 0;
  uint32_t Constant = 1, Reserved = 0;
  double Value = 0;
  double SumE2 = 0, SumA2 = 0, SumD2 = 0;
  double MinE = fromBits(0x7ff0000000000000ull);
  double MaxE = fromBits(0xfff0000000000000ull);
};

inline void momentsAdd(MomentsPart &M, uint32_t T, double Tiny, uint64_t EB,
                       uint64_t AB) {
  double E = toDouble(T, EB), A = toDouble(T, AB);
  if (!isFinite(E) || !isFinite(A))
    return;
  if (!M.Finite)
    M.Value = A;
  M.Constant = M.Constant && A == M.Value;
  ++M.Finite;
  M.SumE2 += E * E;
  M.SumA2 += A * A;
  if (fabs(E) >= Tiny || fabs(A) >= Tiny) {
    double D = A - E;
    M.SumD2 += D * D;
  }
  if (E < M.MinE)
    M.MinE = E;
  if (E > M.MaxE)
    M.MaxE = E;
}

inline void momentsMerge(MomentsPart &M, const MomentsPart &O) {
  if (!O.Finite)
    return;
  M.Constant = M.Finite ? (M.Constant && O.Constant && O.Value == M.Value)
                        : O.Constant;
  if (!M.Finite)
    M.Value = O.Value;
  M.Finite += O.Finite;
  M.SumE2 += O.SumE2;
  M.SumA2 += O.SumA2;
  M.SumD2 += O.SumD2;
  if (O.MinE < M.MinE)
    M.MinE = O.MinE;
  if (O.MaxE > M.MaxE)
    M.MaxE = O.MaxE;
}

/// The second scan's thresholds (ScaleRules.cpp: ZeroFloor, MeaningFloor,
/// the rtol R, ZeroedShrink).
struct CountsParams {
  uint64_t Count = 0;
  uint32_t Type = crng::F32, Reserved = 0;
  double ZeroFloor = 0, MeaningFloor = 0, R = 0, Shrink = 0;
};

struct CountsResult {
  uint64_t ZeroedBase = 0, Zeroed = 0, ExactZeros = 0;
  uint64_t Meaningful = 0, Outside = 0, WrongSign = 0;
  uint64_t FirstZeroed = ~0ull, FirstOutside = ~0ull;
};

/// Element \p I's part of the second scan; bit 0 of the result: a zeroed
/// element, bit 1: one outside rtol (for the first indices).
inline uint32_t countsAdd(CountsResult &C, const CountsParams &P, uint64_t EB,
                          uint64_t AB) {
  double E = toDouble(P.Type, EB), A = toDouble(P.Type, AB);
  if (!isFinite(E) || !isFinite(A))
    return 0;
  uint32_t Hit = 0;
  double AbsE = fabs(E);
  if (AbsE >= P.ZeroFloor) {
    ++C.ZeroedBase;
    if (fabs(A) * P.Shrink <= AbsE) {
      ++C.Zeroed;
      C.ExactZeros += A == 0;
      Hit |= 1;
    }
  }
  if (AbsE >= P.MeaningFloor) {
    ++C.Meaningful;
    if (fabs(A - E) > P.R * AbsE) {
      ++C.Outside;
      C.WrongSign += (A < 0) != (E < 0) && A != 0;
      Hit |= 2;
    }
  }
  return Hit;
}

} // namespace ccore
} // namespace astra

#endif
