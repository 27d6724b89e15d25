//===- ScaleRules.cpp - Whole-output comparison rules --------------------===//
#include "astra/Engine/ScaleRules.h"
#include "astra/Engine/DeviceCompare.h"
#include "astra/Support/Parallel.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

using namespace llvm;

namespace astra {

/// Elements per chunk of the parallel scans.
static constexpr uint64_t ChunkElements = uint64_t(1) << 20;

/// One ulp relative to a value at the bottom of its binade: the largest
/// relative change one rounding step makes. No rule counts a one-ulp
/// difference against a candidate, whatever rtol a spec gives.
static double oneUlp(DType T) {
  switch (T) {
  case DType::F64:
    return std::ldexp(1.0, -52);
  case DType::F32:
    return std::ldexp(1.0, -23);
  case DType::F16:
    return std::ldexp(1.0, -10);
  case DType::BF16:
    return std::ldexp(1.0, -7);
  case DType::FP8E4M3:
    return std::ldexp(1.0, -3);
  case DType::FP8E5M2:
    return std::ldexp(1.0, -2);
  default:
    return 0;
  }
}

/// \p V with three significant digits (0.0142, 1.02, 1.5e-05).
static std::string num(double V) {
  return formatv("{0}", format("%.3g", V)).str();
}

namespace {

/// The first pass: the reference's scale, the error's norm, whether the
/// candidate is one value. Sums in long double: float64 squares overflow.
struct Moments {
  uint64_t Finite = 0;
  long double SumE2 = 0, SumA2 = 0, SumD2 = 0;
  double MinE = std::numeric_limits<double>::infinity();
  double MaxE = -std::numeric_limits<double>::infinity();
  bool Constant = true;
  double Value = 0; ///< The candidate's value, while Constant.

  void merge(const Moments &O) {
    if (!O.Finite)
      return;
    Constant = Finite ? Constant && O.Constant && O.Value == Value : O.Constant;
    if (!Finite)
      Value = O.Value;
    Finite += O.Finite;
    SumE2 += O.SumE2;
    SumA2 += O.SumA2;
    SumD2 += O.SumD2;
    MinE = std::min(MinE, O.MinE);
    MaxE = std::max(MaxE, O.MaxE);
  }
};

/// The second pass, with thresholds from the first: ccore's counts, merged
/// in chunk order.
struct Counts : ccore::CountsResult {
  void merge(const Counts &O) {
    ZeroedBase += O.ZeroedBase;
    Zeroed += O.Zeroed;
    ExactZeros += O.ExactZeros;
    Meaningful += O.Meaningful;
    Outside += O.Outside;
    WrongSign += O.WrongSign;
    FirstZeroed = std::min(FirstZeroed, O.FirstZeroed);
    FirstOutside = std::min(FirstOutside, O.FirstOutside);
  }
};

} // namespace

/// Merges per-chunk results in chunk order, so the first example is the
/// lowest index, as in a serial scan.
template <typename T, typename FnT> static T scan(uint64_t Count, FnT Fn) {
  std::vector<T> Parts((Count + ChunkElements - 1) / ChunkElements);
  parallelChunks(
      Count, ChunkElements,
      [&](uint64_t K, uint64_t Lo, uint64_t Hi) { Parts[K] = Fn(Lo, Hi); });
  T All;
  for (const T &P : Parts)
    All.merge(P);
  return All;
}

/// The example of a failure: element \p I of both buffers, with the index
/// it has in the whole output.
static Mismatch example(StringRef Name, const ScaleElementFn &Element,
                        uint64_t I, StringRef Reason) {
  auto [E, A] = Element(I);
  Mismatch M;
  M.Buffer = Name.str();
  M.Index = I;
  M.Expected = formatElement(E, 0);
  M.Actual = formatElement(A, 0);
  M.Reason = Reason.str();
  return M;
}

/// The rules, given the first scan's results and a way to make the second.
static ScaleVerdict
judgeScale(StringRef Name, DType T, uint64_t N, double Rtol, const Moments &M,
           llvm::function_ref<Counts(const ccore::CountsParams &)> Count,
           const ScaleElementFn &Element) {
  ScaleVerdict V;
  if (M.Finite == 0 || M.SumE2 == 0)
    return V; // All zeros (the zeros value run): nothing has a scale.
  double Tiny = dtypeMinNormal(T);
  double Rms = double(std::sqrt(M.SumE2 / M.Finite));
  double RmsA = double(std::sqrt(M.SumA2 / M.Finite));
  double Rel = double(std::sqrt(M.SumD2 / M.SumE2));
  double ZeroFloor = std::max(Tiny, ZeroedFloorOfRms * Rms);
  double MeaningFloor = std::max(Tiny, MeaningfulOfRms * Rms);
  double R = std::max(Rtol, oneUlp(T));

  ccore::CountsParams CP;
  CP.Count = N;
  CP.Type = dtypeCode(T);
  CP.ZeroFloor = ZeroFloor;
  CP.MeaningFloor = MeaningFloor;
  CP.R = R;
  CP.Shrink = ZeroedShrink;
  Counts C = Count(CP);
  const uint64_t None = ~0ull;

  std::string Scale = num(Rms);
  if (M.Constant && M.Finite > 1 && C.Outside) {
    V.Kind = "constant";
    V.Example = example(Name, Element, C.FirstOutside, "a constant output");
    V.Evidence =
        formatv("the candidate writes one value ({0}) to all {1} elements of "
                "'{2}' where the reference's values range from {3} to {4} "
                "(RMS {5})",
                V.Example->Actual, M.Finite, Name, num(M.MinE), num(M.MaxE),
                Scale)
            .str();
    return V;
  }
  uint64_t ZeroedAllowed =
      std::max<uint64_t>(1, uint64_t(ZeroedShare * double(C.ZeroedBase)));
  if (C.Zeroed > ZeroedAllowed) {
    V.Kind = "zeroed";
    std::string What =
        C.ExactZeros == C.Zeroed
            ? "are exact zeros"
            : formatv("are zero or nearly ({0} exact zeros; |actual| <= "
                      "|expected| / {1})",
                      C.ExactZeros, uint64_t(ZeroedShrink))
                  .str();
    V.Evidence =
        formatv("{0} of {1} elements of '{2}' {3} where the reference's "
                "magnitude is at least {4} ({5} of its RMS {6}); at most "
                "{7} may be",
                C.Zeroed, N, Name, What, num(ZeroFloor), num(ZeroedFloorOfRms),
                Scale, ZeroedAllowed)
            .str();
    V.Example = example(Name, Element, C.FirstZeroed,
                        "zero where the reference is not");
    return V;
  }
  if (Rtol <= 0)
    return V; // An absolute comparison: no relative rule applies.
  if (Rel > R) {
    V.Kind = "norm";
    V.Evidence =
        formatv("the relative RMS error of '{0}' (||actual - expected|| / "
                "||expected||) is {1}, above rtol {2}; the candidate's "
                "RMS is {3} times the reference's {4}",
                Name, num(Rel), num(R), num(RmsA / Rms), Scale)
            .str();
    if (C.FirstOutside != None)
      V.Example = example(Name, Element, C.FirstOutside, "outside rtol");
    return V;
  }
  uint64_t OutsideAllowed =
      std::max<uint64_t>(1, uint64_t(OutsideRtolShare * double(C.Meaningful)));
  if (C.Outside > OutsideAllowed) {
    V.Kind = "outside-rtol";
    V.Evidence =
        formatv("{0} of the {1} elements of '{2}' whose magnitude is at least "
                "{3} ({4} of the reference's RMS {5}) differ by more than "
                "rtol {6} of their value ({7} with the wrong sign), though "
                "atol covers them; at most {8} may",
                C.Outside, C.Meaningful, Name, num(MeaningFloor),
                num(MeaningfulOfRms), Scale, num(R), C.WrongSign,
                OutsideAllowed)
            .str();
    V.Example = example(Name, Element, C.FirstOutside, "outside rtol");
    return V;
  }
  return V;
}

/// Element \p I of \p B alone.
static HostBuffer elementOf(const HostBuffer &B, uint64_t I) {
  HostBuffer One(B.type(), 1);
  One.setBits(0, B.bits(I));
  return One;
}

ScaleVerdict checkScale(StringRef Name, const HostBuffer &Expected,
                        const HostBuffer &Actual, double Rtol) {
  DType T = Expected.type();
  if (!isFloating(T) || Actual.type() != T ||
      Actual.count() != Expected.count())
    return ScaleVerdict();
  uint64_t N = Expected.count();

  // Below the dtype's smallest normal, precision is absolute: one rounding
  // step (or a flush of a subnormal, -ftz) moves a value to zero. No rule
  // counts a pair that lies there.
  double Tiny = dtypeMinNormal(T);
  Moments M = scan<Moments>(N, [&](uint64_t Lo, uint64_t Hi) {
    Moments P;
    for (uint64_t I = Lo; I < Hi; ++I) {
      double E = Expected.get(I), A = Actual.get(I);
      if (!std::isfinite(E) || !std::isfinite(A))
        continue;
      if (!P.Finite)
        P.Value = A;
      P.Constant = P.Constant && A == P.Value; // +0 == -0, as the tolerance
      ++P.Finite;
      P.SumE2 += (long double)E * E;
      P.SumA2 += (long double)A * A;
      if (std::fabs(E) >= Tiny || std::fabs(A) >= Tiny)
        P.SumD2 += (long double)(A - E) * (A - E);
      P.MinE = std::min(P.MinE, E);
      P.MaxE = std::max(P.MaxE, E);
    }
    return P;
  });
  auto Count = [&](const ccore::CountsParams &CP) {
    return scan<Counts>(N, [&](uint64_t Lo, uint64_t Hi) {
      Counts P;
      for (uint64_t I = Lo; I < Hi; ++I) {
        uint32_t Hit = ccore::countsAdd(P, CP, Expected.bits(I), Actual.bits(I));
        if ((Hit & 1) && P.FirstZeroed == ~0ull)
          P.FirstZeroed = I;
        if ((Hit & 2) && P.FirstOutside == ~0ull)
          P.FirstOutside = I;
      }
      return P;
    });
  };
  return judgeScale(Name, T, N, Rtol, M, Count, [&](uint64_t I) {
    return std::make_pair(elementOf(Expected, I), elementOf(Actual, I));
  });
}

Expected<ScaleVerdict> checkScaleOnDevice(StringRef Name, DType T, uint64_t N,
                                          double Rtol, DeviceOps &Ops,
                                          cu::DevicePtr Expected,
                                          cu::DevicePtr Actual,
                                          double TimeoutSeconds,
                                          const ScaleElementFn &Element) {
  if (!isFloating(T))
    return ScaleVerdict();
  auto Part = Ops.moments(N, dtypeCode(T), dtypeMinNormal(T), Expected, Actual,
                          TimeoutSeconds, "'" + Name.str() + "'");
  if (!Part)
    return Part.takeError();
  Moments M;
  M.Finite = Part->Finite;
  M.SumE2 = Part->SumE2;
  M.SumA2 = Part->SumA2;
  M.SumD2 = Part->SumD2;
  M.MinE = Part->MinE;
  M.MaxE = Part->MaxE;
  M.Constant = Part->Constant;
  M.Value = Part->Value;
  Error Failed = Error::success();
  auto Count = [&](const ccore::CountsParams &CP) {
    Counts C;
    auto R = Ops.counts(CP, Expected, Actual, TimeoutSeconds,
                        "'" + Name.str() + "'");
    if (!R) {
      Failed = R.takeError();
      return C;
    }
    static_cast<ccore::CountsResult &>(C) = *R;
    return C;
  };
  // The example's elements come from the device only when a rule fails.
  ScaleVerdict V = judgeScale(Name, T, N, Rtol, M, Count, Element);
  if (Failed)
    return Failed;
  return V;
}

bool scaleRulesApply(const PlannedRun &Run) {
  return !(Run.Kind == RunKind::Values && Run.Values == ValueMode::Denormal);
}

std::string describe(const ScaleVerdict &V) {
  if (V.ok())
    return "";
  std::string S = V.Evidence;
  if (V.Example)
    S += formatv("; e.g. {0}[{1}]: expected {2}, got {3}", V.Example->Buffer,
                 V.Example->Index, V.Example->Expected, V.Example->Actual)
             .str();
  return S;
}

} // namespace astra
