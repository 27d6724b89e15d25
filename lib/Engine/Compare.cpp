//===- Compare.cpp - Poison, guards and output comparison -----------------===//
#include "astra/Engine/Compare.h"
#include "astra/Support/Parallel.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <atomic>
#include <cmath>

using namespace llvm;

namespace astra {

uint64_t poisonBits(DType T, unsigned Variant) {
  bool V1 = Variant & 1;
  switch (T) {
  case DType::F32:
    return V1 ? 0xFFC0BEEFull : 0x7FFFDEADull;
  case DType::F64:
    return V1 ? 0xFFF8BEEFBEEFBEEFull : 0x7FFFDEADDEADDEADull;
  case DType::F16:
    return V1 ? 0xFE5Aull : 0x7EADull;
  case DType::BF16:
    return V1 ? 0xFFC5ull : 0x7FDEull;
  case DType::FP8E4M3:
    return V1 ? 0xFFull : 0x7Full;
  case DType::FP8E5M2:
    return V1 ? 0xFEull : 0x7Full;
  case DType::I8:
  case DType::U8:
    return V1 ? 0x5Aull : 0xDEull;
  case DType::I16:
  case DType::U16:
    return V1 ? 0x5A5Aull : 0xDEADull;
  case DType::I32:
  case DType::U32:
    return V1 ? 0x5A5A5A5Aull : 0xDEADBEEFull;
  case DType::I64:
  case DType::U64:
    return V1 ? 0x5A5A5A5A5A5A5A5Aull : 0xDEADBEEFDEADBEEFull;
  }
  return 0;
}

/// Elements per chunk of the parallel scans.
static constexpr uint64_t ChunkElements = uint64_t(1) << 20;

static Comparison compareRange(StringRef Name, const HostBuffer &Expected,
                               const HostBuffer &Actual, Tolerance Tol,
                               int PoisonVariant, uint64_t Lo, uint64_t Hi);

HostBuffer poisonBuffer(DType T, size_t Count, unsigned Variant) {
  HostBuffer B(T, Count);
  B.fillBits(poisonBits(T, Variant));
  return B;
}

uint8_t canaryByte(size_t I) {
  // 0xC5, 0x3A, ... : neither 0x00, 0xFF nor a poison byte, and it changes
  // from byte to byte so no single stored value reproduces it.
  static const uint8_t Pattern[8] = {0xC5, 0x3A, 0x96, 0x69,
                                     0xA3, 0x5C, 0x17, 0xE8};
  return Pattern[I % 8];
}

std::vector<uint8_t> canaryRegion(size_t Bytes) {
  std::vector<uint8_t> R(Bytes);
  for (size_t I = 0; I < Bytes; ++I)
    R[I] = canaryByte(I);
  return R;
}

std::optional<size_t> firstChangedCanary(const std::vector<uint8_t> &Region) {
  for (size_t I = 0; I < Region.size(); ++I)
    if (Region[I] != canaryByte(I))
      return I;
  return std::nullopt;
}

HostBuffer normalizePoison(const HostBuffer &B, unsigned Variant) {
  HostBuffer Out = B;
  if (Variant == 0)
    return Out;
  uint64_t From = poisonBits(B.type(), Variant), To = poisonBits(B.type(), 0);
  for (size_t I = 0; I < B.count(); ++I)
    if (B.bits(I) == From)
      Out.setBits(I, To);
  return Out;
}

std::vector<bool> unwrittenInBoth(const HostBuffer &Run0,
                                  const HostBuffer &Run1) {
  std::vector<bool> Mask(Run0.count(), false);
  if (Run0.count() != Run1.count() || Run0.type() != Run1.type())
    return Mask;
  uint64_t P0 = poisonBits(Run0.type(), 0), P1 = poisonBits(Run0.type(), 1);
  // Most outputs are written in full: find that out on all cores first
  // (vector<bool> cannot be written from several threads).
  std::atomic<bool> Any{false};
  parallelChunks(Run0.count(), ChunkElements,
                 [&](uint64_t, uint64_t Lo, uint64_t Hi) {
                   for (uint64_t I = Lo; I < Hi && !Any; ++I)
                     if (Run0.bits(I) == P0 && Run1.bits(I) == P1)
                       Any = true;
                 });
  if (!Any)
    return Mask;
  for (size_t I = 0; I < Run0.count(); ++I)
    Mask[I] = Run0.bits(I) == P0 && Run1.bits(I) == P1;
  return Mask;
}

HostBuffer withPoisonAt(const HostBuffer &Expected,
                        const std::vector<bool> &Mask, unsigned Variant) {
  HostBuffer Out = Expected;
  uint64_t P = poisonBits(Expected.type(), Variant);
  for (size_t I = 0; I < Mask.size() && I < Out.count(); ++I)
    if (Mask[I])
      Out.setBits(I, P);
  return Out;
}

Tolerance toleranceFor(const KernelSpec &S, const ArgSpec &A) {
  if (!isFloating(A.Type))
    return {0, 0};
  return {S.rtolFor(A), S.atolFor(A)};
}

Tolerance largeValueTolerance(Tolerance T, const HostBuffer &Expected) {
  if (!isFloating(Expected.type()) || Expected.count() == 0)
    return T;
  double Sum = 0;
  uint64_t N = 0;
  for (uint64_t I = 0; I < Expected.count(); ++I) {
    double V = Expected.get(I);
    if (std::isfinite(V)) {
      Sum += V * V;
      ++N;
    }
  }
  return largeValueTolerance(T, Sum, N);
}

Tolerance largeValueTolerance(Tolerance T, double SumSquares, uint64_t Finite) {
  if (Finite)
    T.Atol = std::max(T.Atol, T.Rtol * std::sqrt(SumSquares / double(Finite)));
  return T;
}

static void recordFailure(Comparison &C, StringRef Name, const HostBuffer &E,
                          const HostBuffer &A, uint64_t I, StringRef Reason,
                          int PoisonVariant) {
  bool Unwritten = PoisonVariant >= 0 &&
                   A.bits(I) == poisonBits(A.type(), unsigned(PoisonVariant));
  ++C.Failures;
  if (Unwritten)
    ++C.Unwritten;
  if (C.First)
    return;
  Mismatch M;
  M.Buffer = Name.str();
  M.Index = I;
  M.Expected = formatElement(E, I);
  M.Actual = formatElement(A, I);
  M.Reason = Unwritten ? "not written (still holds the poison pattern)"
                       : Reason.str();
  C.First = std::move(M);
}

Comparison compareBuffers(StringRef Name, const HostBuffer &Expected,
                          const HostBuffer &Actual, Tolerance Tol,
                          int PoisonVariant) {
  Comparison C;
  C.Count = Expected.count();
  if (Expected.count() != Actual.count() || Expected.type() != Actual.type()) {
    C.Failures = C.Count ? C.Count : 1;
    Mismatch M;
    M.Buffer = Name.str();
    M.Reason = formatv("buffers differ in shape ({0} {1} vs {2} {3})",
                       Expected.count(), dtypeName(Expected.type()),
                       Actual.count(), dtypeName(Actual.type()))
                   .str();
    C.First = M;
    return C;
  }
  if (Expected.bytes() == Actual.bytes())
    return C; // Bit for bit the same: no error of any kind.
  // Each chunk keeps its own counts and first mismatch; merged in chunk
  // order, the first mismatch is the lowest index, as in a serial scan.
  uint64_t Chunks = (C.Count + ChunkElements - 1) / ChunkElements;
  std::vector<Comparison> Parts(Chunks);
  parallelChunks(C.Count, ChunkElements,
                 [&](uint64_t K, uint64_t Lo, uint64_t Hi) {
                   Parts[K] = compareRange(Name, Expected, Actual, Tol,
                                           PoisonVariant, Lo, Hi);
                 });
  for (Comparison &P : Parts) {
    C.Failures += P.Failures;
    C.Unwritten += P.Unwritten;
    C.MaxAbsErr = std::max(C.MaxAbsErr, P.MaxAbsErr);
    C.MaxRelErr = std::max(C.MaxRelErr, P.MaxRelErr);
    if (!C.First && P.First)
      C.First = std::move(P.First);
  }
  return C;
}

static Comparison compareRange(StringRef Name, const HostBuffer &Expected,
                               const HostBuffer &Actual, Tolerance Tol,
                               int PoisonVariant, uint64_t Lo, uint64_t Hi) {
  Comparison C;
  DType T = Expected.type();
  if (!isFloating(T)) {
    for (uint64_t I = Lo; I < Hi; ++I) {
      if (Expected.bits(I) == Actual.bits(I))
        continue;
      double D = std::fabs(double(Actual.getInt(I)) - double(Expected.getInt(I)));
      if (T == DType::U64)
        D = std::fabs(double(Actual.bits(I)) - double(Expected.bits(I)));
      C.MaxAbsErr = std::max(C.MaxAbsErr, D);
      recordFailure(C, Name, Expected, Actual, I, "integers differ",
                    PoisonVariant);
    }
    return C;
  }
  for (uint64_t I = Lo; I < Hi; ++I) {
    double E = Expected.get(I), A = Actual.get(I);
    if (std::isnan(E)) {
      if (!std::isnan(A))
        recordFailure(C, Name, Expected, Actual, I,
                      "the baseline gives NaN here", PoisonVariant);
      continue;
    }
    if (std::isinf(E)) {
      if (A != E)
        recordFailure(C, Name, Expected, Actual, I,
                      "the baseline gives an infinity here", PoisonVariant);
      continue;
    }
    if (std::isnan(A)) {
      recordFailure(C, Name, Expected, Actual, I,
                    "NaN where a finite value was expected", PoisonVariant);
      continue;
    }
    if (std::isinf(A)) {
      recordFailure(C, Name, Expected, Actual, I,
                    "infinity where a finite value was expected",
                    PoisonVariant);
      continue;
    }
    double Diff = std::fabs(A - E);
    C.MaxAbsErr = std::max(C.MaxAbsErr, Diff);
    if (E != 0)
      C.MaxRelErr = std::max(C.MaxRelErr, Diff / std::fabs(E));
    if (Diff > Tol.Atol + Tol.Rtol * std::fabs(E))
      recordFailure(C, Name, Expected, Actual, I,
                    formatv("outside tolerance (|diff| {0:e3} > atol {1:e1} + "
                            "rtol {2:e1} * |expected|)",
                            Diff, Tol.Atol, Tol.Rtol)
                        .str(),
                    PoisonVariant);
  }
  return C;
}

Comparison compareBitwise(StringRef Name, const HostBuffer &Expected,
                          const HostBuffer &Actual) {
  Comparison C;
  C.Count = Expected.count();
  if (Expected.count() != Actual.count() || Expected.type() != Actual.type())
    return compareBuffers(Name, Expected, Actual, {}, -1);
  if (Expected.bytes() == Actual.bytes())
    return C;
  for (uint64_t I = 0; I < C.Count; ++I) {
    if (Expected.bits(I) == Actual.bits(I))
      continue;
    if (isFloating(Expected.type())) {
      double D = std::fabs(Actual.get(I) - Expected.get(I));
      if (std::isfinite(D))
        C.MaxAbsErr = std::max(C.MaxAbsErr, D);
    }
    recordFailure(C, Name, Expected, Actual, I, "bits differ", -1);
  }
  return C;
}

std::string weakOutputWarning(StringRef Name, const HostBuffer &B) {
  if (B.count() == 0)
    return "";
  bool Floating = isFloating(B.type());
  // By value for floats: +0 and -0 are the same zero to the tolerance check.
  bool Constant = true;
  for (uint64_t I = 1; I < B.count() && Constant; ++I)
    Constant = Floating ? B.get(I) == B.get(0) : B.bits(I) == B.bits(0);
  HostBuffer First(B.type(), 1);
  First.setBits(0, B.bits(0));
  return weakOutputWarning(Name, First, B.count(), Constant);
}

std::string weakOutputWarning(StringRef Name, const HostBuffer &First1,
                              uint64_t Count, bool Constant) {
  if (!Constant || Count <= 1)
    return "";
  bool Zero = isFloating(First1.type()) ? First1.get(0) == 0 : First1.bits(0) == 0;
  if (Zero)
    return formatv("the baseline's '{0}' is all zeros: a candidate that only "
                   "writes zeros would pass; give the spec inputs that make "
                   "this output non-zero",
                   Name)
        .str();
  return formatv("the baseline's '{0}' holds one value ({1}) in all {2} "
                 "elements: a constant fill would pass; give the spec "
                 "inputs that vary this output",
                 Name, formatElement(First1, 0), Count)
      .str();
}

std::string describe(const Comparison &C) {
  if (C.ok() || !C.First)
    return "";
  const Mismatch &M = *C.First;
  std::string S = formatv("{0}[{1}]: expected {2}, got {3}: {4}", M.Buffer,
                          M.Index, M.Expected, M.Actual, M.Reason)
                      .str();
  S += formatv("; {0} of {1} elements differ", C.Failures, C.Count).str();
  if (C.Unwritten)
    S += formatv(" ({0} not written)", C.Unwritten).str();
  return S;
}

} // namespace astra
