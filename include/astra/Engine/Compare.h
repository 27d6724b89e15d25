//===- Compare.h - Poison, guards and output comparison --------*- C++ -*-===//
//
// The rules that decide whether a candidate's outputs equal the baseline's:
//
// - Before every run, output and scratch buffers are filled with a poison
//   pattern (a quiet NaN with a recognisable payload for floats, 0xDEAD...
//   for integers), so an element a kernel never writes cannot pass by
//   holding a value left from an earlier run. The second run of a candidate
//   uses a different pattern, so an unwritten integer element whose poison
//   happened to equal the right answer still shows as a difference.
// - Every buffer has a guard region before and after it filled with a
//   canary; a changed canary byte is a write out of bounds.
// - Floats: |actual - expected| <= atol + rtol * |expected|; NaN/Inf where
//   the baseline is finite fails; a baseline NaN must be matched by a NaN;
//   a baseline Inf must be matched by the same Inf. Integers: exact.
// - A float output that passes element by element is then judged as a
//   whole against the reference's own scale (ScaleRules.h), so atol cannot
//   hide zeros, a flush to zero or a constant.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_ENGINE_COMPARE_H
#define ASTRA_ENGINE_COMPARE_H

#include "astra/Engine/HostBuffer.h"
#include "astra/Spec/Spec.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace astra {

/// The poison bit pattern of \p T; \p Variant 0 and 1 differ in every byte.
uint64_t poisonBits(DType T, unsigned Variant);
/// A buffer of \p Count elements all holding the poison pattern.
HostBuffer poisonBuffer(DType T, size_t Count, unsigned Variant);

/// Bytes of canary before and after every device buffer.
constexpr size_t GuardBytes = 256;
/// The canary byte at offset \p I of a guard region (a fixed, non-constant
/// pattern so a kernel that writes any one value cannot keep it intact).
uint8_t canaryByte(size_t I);
std::vector<uint8_t> canaryRegion(size_t Bytes);
/// Offset of the first byte of \p Region that is not the canary.
std::optional<size_t> firstChangedCanary(const std::vector<uint8_t> &Region);

/// \p B with every element that holds poison pattern \p Variant replaced by
/// pattern 0, so two runs made with different poison compare equal where
/// both left an element unwritten.
HostBuffer normalizePoison(const HostBuffer &B, unsigned Variant);

/// Elements a kernel left unwritten in both of two runs: \p Run0 was made
/// with poison 0 and \p Run1 with poison 1, and the element still holds it.
std::vector<bool> unwrittenInBoth(const HostBuffer &Run0,
                                  const HostBuffer &Run1);

/// \p Expected with the elements of \p Mask set to poison \p Variant: what a
/// run with that poison must leave where the baseline writes nothing.
HostBuffer withPoisonAt(const HostBuffer &Expected,
                        const std::vector<bool> &Mask, unsigned Variant);

struct Tolerance {
  double Rtol = 0, Atol = 0;
};
/// The tolerance of buffer \p A: the argument's own override, else the
/// kernel's, else the dtype's default. Integers always compare exactly.
Tolerance toleranceFor(const KernelSpec &S, const ArgSpec &A);

/// The tolerance for a run on large-magnitude inputs. The spec's atol is an
/// error floor at the spec's own value scale; with inputs 1e3-1e4 times
/// larger, a legitimate reordering of a float sum errs by about rtol times
/// the size of the terms, which can exceed atol + rtol * |expected| where
/// terms cancel. So atol rises to rtol times the RMS of the baseline's output:
/// still far below any real bug's error, which is of the output's own size.
Tolerance largeValueTolerance(Tolerance T, const HostBuffer &Expected);
/// The same from the sum of the squares of the output's \p Finite finite
/// values (the device computes them where the output stays).
Tolerance largeValueTolerance(Tolerance T, double SumSquares, uint64_t Finite);

/// The first element that failed, with the evidence.
struct Mismatch {
  std::string Buffer;
  uint64_t Index = 0;
  std::string Expected, Actual;
  /// Why it failed: "outside tolerance", "NaN where a finite value was
  /// expected", "not written (still holds the poison pattern)", ...
  std::string Reason;
};

struct Comparison {
  uint64_t Count = 0;
  uint64_t Failures = 0;
  uint64_t Unwritten = 0; ///< Failures that still hold the poison pattern.
  double MaxAbsErr = 0, MaxRelErr = 0;
  std::optional<Mismatch> First;
  bool ok() const { return Failures == 0; }
};

/// Compares \p Actual with \p Expected element by element. \p PoisonVariant
/// is the pattern the actual buffer was filled with before the run (to tell
/// an unwritten element from a wrong one); -1 when it was not poisoned.
Comparison compareBuffers(llvm::StringRef Name, const HostBuffer &Expected,
                          const HostBuffer &Actual, Tolerance Tol,
                          int PoisonVariant = -1);

/// Bit-for-bit comparison (inputs that must come back unchanged, a
/// candidate against its own previous run).
Comparison compareBitwise(llvm::StringRef Name, const HostBuffer &Expected,
                          const HostBuffer &Actual);

/// A warning when the baseline's output \p B cannot tell a correct kernel
/// from a trivial one: all zeros, or one constant value. (Outputs that lie
/// within atol of zero are no longer weak: the rules of ScaleRules.h judge
/// them by their own scale.) Empty when it is fine.
std::string weakOutputWarning(llvm::StringRef Name, const HostBuffer &B);
/// The same from what the device found: whether the \p Count elements are
/// one value, and the first of them alone in \p First1.
std::string weakOutputWarning(llvm::StringRef Name, const HostBuffer &First1,
                              uint64_t Count, bool Constant);

/// One-line summary for messages:
///   "out[1023]: expected 0.5, got nan (0x7fffdead): not written (still holds
///    the poison pattern); 1 of 1024 elements differ".
std::string describe(const Comparison &C);

} // namespace astra

#endif
