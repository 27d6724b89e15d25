//===- ScaleRules.h - Whole-output comparison rules ----------*- C++ -*-===//
//
// The element-wise comparison (Compare.h) accepts |actual - expected| <=
// atol + rtol * |expected|. Its atol is absolute: where a reference's values
// are small next to atol, or an element is small next to the output, atol
// alone covers any answer there, and a candidate that writes zeros (all
// zeros when every output is small; only the small ones, a flush-to-zero,
// otherwise) passes. KernelBench issue 165 is that hack on bf16 problems; a
// candidate that flushed bf16 outputs below 0.01 to zero passed here with a
// maximum relative error of 1.00.
//
// These rules judge a float output that passed element by element by its
// shape against the reference's own scale, the root mean square S of the
// reference's finite values, never by atol:
//
// - constant: the candidate writes one value everywhere and the reference
//   differs from it beyond rtol somewhere it has a meaningful magnitude.
// - zeroed: elements the reference gives at least ZeroedFloorOfRms * S come
//   back as zero, or shrunk more than ZeroedShrink-fold, in more than
//   ZeroedShare of them.
// - norm: the relative RMS error ||actual - expected|| / ||expected||
//   exceeds rtol (a scale error, or many small errors that add up).
// - outside-rtol: of the elements the reference gives at least
//   MeaningfulOfRms * S, more than OutsideRtolShare differ by more than rtol
//   times their own value, though atol covers them.
//
// Every threshold is relative to S and rtol, so a candidate passes on
// outputs of RMS 0.001 exactly when it passes on the same outputs scaled
// up; the thresholds' reasoning is with each constant below.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_ENGINE_SCALERULES_H
#define ASTRA_ENGINE_SCALERULES_H

#include "astra/Engine/Compare.h"
#include "astra/Engine/DeviceOps.h"
#include "astra/Engine/HostBuffer.h"
#include "astra/Engine/RunPlan.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace astra {

/// Elements the reference gives at least this fraction of its RMS count for
/// the zeroed rule. A legitimate rewrite's absolute error is of the order of
/// the float32 rounding of the terms that make an element (a sum of 4096
/// normal terms in tree instead of serial order differs by at most about
/// 1e-6 of the output's scale, unit test ScaleRulesTest.ReorderedSumsPass),
/// and fast-math's approximations err by a few ulps of their own result, so
/// an element of a thousandth of the scale cannot come back as zero by
/// rounding or reordering; terms that cancel to exactly zero in one order
/// leave a residue below their ulp in the other, far under this floor
/// (unit test ScaleRulesTest.LargeValueRunReorderingPasses). A flush of bf16
/// values below 0.01 on outputs of RMS 1 zeroes the elements from 0.001 to
/// 0.01: 2.0% of a bf16 x * y + x and 1.8% of a gelu output of normal inputs
/// (unit tests ScaleRulesTest.FlushSmallToZero*).
constexpr double ZeroedFloorOfRms = 1e-3;
/// How much smaller than the reference an element must come back to count
/// as zeroed: an exact zero, or a flush to a tiny non-zero value (1e-30) to
/// dodge a count of exact zeros. Rounding and reordering change a value by
/// a few ulps, never by a factor of 1024, unless the error is as large as
/// the value itself, and then the result lands this close to zero by chance
/// about once in a thousand such elements.
constexpr double ZeroedShrink = 1024;
/// The share of the counted elements (ZeroedFloorOfRms) that may be zeroed,
/// at least one element: a rare exact cancellation (bf16 arithmetic where
/// the baseline rounds once) must not fail a rewrite, and the flush hack
/// above zeroes about twenty times this share.
constexpr double ZeroedShare = 1e-3;
/// Elements the reference gives at least this fraction of its RMS are of
/// meaningful magnitude: their relative error must be within rtol. Below it,
/// cancellation legitimately costs relative precision: the reordered sum of
/// 4096 terms above, off by up to 1e-6 of the output's scale, is off by
/// 1e-5 relative at a tenth of it, inside the f32 default rtol of 1e-4.
constexpr double MeaningfulOfRms = 0.1;
/// The share of meaningful elements that may lie outside rtol, at least one
/// element. Rewrites that compute as the baseline does (float32 inside,
/// the output rounded once) put none there: a one-ulp rounding difference
/// is within every default rtol. A rewrite that does its arithmetic in bf16
/// where the baseline used float32 puts 0.45% there (x * y + x on normal
/// inputs); a 1.4% scale error on bf16 outputs below 2, which passes
/// element by element, puts 17% there (unit tests
/// ScaleRulesTest.Bf16ArithmeticPasses, ScaleErrorWithinRtolFails).
constexpr double OutsideRtolShare = 0.02;

/// What the rules found; empty Kind when the output passed them.
struct ScaleVerdict {
  /// "constant", "zeroed", "norm" or "outside-rtol": the failure kind.
  std::string Kind;
  /// The evidence, for messages: "412 of 4096 elements of 'out' are exact
  /// zeros where the reference's magnitude is at least 0.00142 ...".
  std::string Evidence;
  /// One element that shows it (the first).
  std::optional<Mismatch> Example;
  bool ok() const { return Kind.empty(); }
};

/// Judges \p Actual against \p Expected by the rules above, with the
/// buffer's relative tolerance \p Rtol (its atol plays no part). Only float
/// buffers, and only pairs where both values are finite (non-finite values
/// are the element-wise rules' business); nothing to judge where the
/// reference is all zeros. With \p Rtol 0 (a spec that asks for an absolute
/// comparison) only the constant and zeroed rules apply.
ScaleVerdict checkScale(llvm::StringRef Name, const HostBuffer &Expected,
                        const HostBuffer &Actual, double Rtol);

/// Element I of the expected and of the actual output, each alone in a
/// buffer of one element (the evidence a message shows).
using ScaleElementFn =
    std::function<std::pair<HostBuffer, HostBuffer>(uint64_t)>;

/// checkScale on outputs that stay on the device (\p N elements of \p T at
/// \p Expected and \p Actual), its two scans made by \p Ops; \p Element
/// fetches an example element when a rule fails. Not for f64 outputs,
/// whose squares overflow the device's double sums (the caller compares
/// those on the host).
llvm::Expected<ScaleVerdict>
checkScaleOnDevice(llvm::StringRef Name, DType T, uint64_t N, double Rtol,
                   DeviceOps &Ops, cu::DevicePtr Expected, cu::DevicePtr Actual,
                   double TimeoutSeconds, const ScaleElementFn &Element);

/// Whether the rules judge the outputs of \p Run: every run but the
/// denormal value run. Its inputs are subnormal, and flushing them to zero
/// (-ftz, fast-math) is a legitimate choice whose effect reaches every
/// output derived from them, whatever its magnitude after a gain (a norm
/// divides by sqrt(eps)): there the element-wise rules alone decide.
bool scaleRulesApply(const PlannedRun &Run);

/// One line for a failure message: the evidence and the example element.
std::string describe(const ScaleVerdict &V);

} // namespace astra

#endif
