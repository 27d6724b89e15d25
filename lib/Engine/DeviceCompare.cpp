//===- DeviceCompare.cpp - The comparison made on the device --------------===//
#include "astra/Engine/DeviceCompare.h"
#include "astra/Support/Parallel.h"

#include <vector>

using namespace llvm;

namespace astra {

// InputSet::host and the dumps read a code back as a DType.
static_assert(int(DType::F32) == crng::F32 && int(DType::FP8E5M2) ==
                  crng::FP8E5M2 && int(DType::I8) == crng::I8 &&
                  int(DType::U64) == crng::U64,
              "CounterRng.h's dtype codes follow astra::DType");

crng::DTypeCode dtypeCode(DType T) {
  switch (T) {
  case DType::F32:
    return crng::F32;
  case DType::F64:
    return crng::F64;
  case DType::F16:
    return crng::F16;
  case DType::BF16:
    return crng::BF16;
  case DType::FP8E4M3:
    return crng::FP8E4M3;
  case DType::FP8E5M2:
    return crng::FP8E5M2;
  case DType::I8:
    return crng::I8;
  case DType::U8:
    return crng::U8;
  case DType::I16:
    return crng::I16;
  case DType::U16:
    return crng::U16;
  case DType::I32:
    return crng::I32;
  case DType::U32:
    return crng::U32;
  case DType::I64:
    return crng::I64;
  case DType::U64:
    return crng::U64;
  }
  return crng::F32;
}

ccore::CmpParams cmpParams(DType T, uint64_t Count, Tolerance Tol,
                           int PoisonVariant, bool Bitwise) {
  ccore::CmpParams P;
  P.Count = Count;
  P.Type = dtypeCode(T);
  P.Bitwise = Bitwise;
  P.HasPoison = !Bitwise && PoisonVariant >= 0;
  P.PoisonBits = P.HasPoison ? poisonBits(T, unsigned(PoisonVariant)) : 0;
  P.Atol = Tol.Atol;
  P.Rtol = Tol.Rtol;
  return P;
}

ccore::CmpResult compareMirror(const ccore::CmpParams &P,
                               const HostBuffer &Expected,
                               const HostBuffer &Actual) {
  constexpr uint64_t Chunk = uint64_t(1) << 20;
  std::vector<ccore::CmpResult> Parts((P.Count + Chunk - 1) / Chunk);
  parallelChunks(P.Count, Chunk, [&](uint64_t K, uint64_t Lo, uint64_t Hi) {
    ccore::CmpResult R;
    double MaxAbs = 0, MaxRel = 0;
    for (uint64_t I = Lo; I < Hi; ++I) {
      uint64_t EB = Expected.bits(I), AB = Actual.bits(I);
      if (ccore::compareElement(P, EB, AB, MaxAbs, MaxRel) == ccore::CmpPass)
        continue;
      ++R.Failures;
      R.Unwritten += ccore::unwritten(P, AB);
      R.First = std::min(R.First, I);
    }
    R.MaxAbs = crng::bitsOf(MaxAbs);
    R.MaxRel = crng::bitsOf(MaxRel);
    Parts[K] = R;
  });
  ccore::CmpResult All;
  for (const ccore::CmpResult &R : Parts) {
    All.Failures += R.Failures;
    All.Unwritten += R.Unwritten;
    All.First = std::min(All.First, R.First);
    All.MaxAbs = std::max(All.MaxAbs, R.MaxAbs);
    All.MaxRel = std::max(All.MaxRel, R.MaxRel);
  }
  return All;
}

Comparison comparisonFrom(StringRef Name, const ccore::CmpParams &P,
                          const ccore::CmpResult &R,
                          const HostBuffer &Expected1,
                          const HostBuffer &Actual1, Tolerance Tol,
                          int PoisonVariant) {
  Comparison C;
  C.Count = P.Count;
  C.Failures = R.Failures;
  C.Unwritten = R.Unwritten;
  C.MaxAbsErr = crng::fromBits(R.MaxAbs);
  C.MaxRelErr = crng::fromBits(R.MaxRel);
  if (!R.Failures)
    return C;
  // The host's rules on the one element give its message (the reason, the
  // values as Compare.cpp prints them).
  Comparison One = P.Bitwise
                       ? compareBitwise(Name, Expected1, Actual1)
                       : compareBuffers(Name, Expected1, Actual1, Tol,
                                        PoisonVariant);
  Mismatch M;
  if (One.First) {
    M = std::move(*One.First);
  } else {
    M.Buffer = Name.str();
    M.Expected = formatElement(Expected1, 0);
    M.Actual = formatElement(Actual1, 0);
    M.Reason = "internal error: the device counted a failure here that the "
               "host's rules do not see";
  }
  M.Index = R.First;
  C.First = std::move(M);
  return C;
}

Expected<Comparison>
compareOnDevice(DeviceOps &Ops, StringRef Name, DType T, uint64_t Count,
                cu::DevicePtr Expected, cu::DevicePtr Actual, Tolerance Tol,
                int PoisonVariant, bool Bitwise, double TimeoutSeconds,
                const ElementPairFn &Element) {
  ccore::CmpParams P = cmpParams(T, Count, Tol, PoisonVariant, Bitwise);
  auto R = Ops.compare(P, Expected, Actual, TimeoutSeconds,
                       ("'" + Name + "'").str());
  if (!R)
    return R.takeError();
  HostBuffer E1, A1;
  if (R->Failures) {
    auto Pair = Element(R->First);
    if (!Pair)
      return createStringError(inconvertibleErrorCode(),
                               "internal error: element %llu of '%s' could "
                               "not be read back",
                               (unsigned long long)R->First,
                               Name.str().c_str());
    E1 = std::move(Pair->first);
    A1 = std::move(Pair->second);
  }
  return comparisonFrom(Name, P, *R, E1, A1, Tol, PoisonVariant);
}

} // namespace astra
