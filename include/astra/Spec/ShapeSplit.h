//===- ShapeSplit.h - One kernel per range of workload sizes ----*- C++ -*-===//
//
// A kernel whose shape sets span a wide range of sizes (a 5 us decode batch
// and a 40 ms prefill) often wants different code for each end: the small
// sets are launch-bound and lose when a thread does more work, the large ones
// gain 3-5x from it. shape-split gives each end its own kernel: the launch
// sites pick the clone `<kernel>_astra_large` when the original launch runs
// `Threshold` threads or more, the original kernel otherwise, and the spec
// entry is split the same way (the clone's entry holds the large sets), so
// each kernel is then optimized and verified on its own sets.
//
// The size of a shape set is the number of threads of the spec's launch
// (grid x block), which is what the launch sites compute from the original
// launch configuration: the spec's launch must be the kernel's own
// (launch_tunable) for the two to agree.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_SPEC_SHAPESPLIT_H
#define ASTRA_SPEC_SHAPESPLIT_H

#include "astra/Spec/Spec.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <string>

namespace astra {

/// The suffix of the clone's name: kernel `k` becomes `k_astra_large`.
inline constexpr const char *SplitCloneSuffix = "_astra_large";

/// Threads the launch of \p K runs for shape set \p S (grid x block).
llvm::Expected<int64_t> launchThreads(const KernelSpec &K, const ShapeSet &S);

/// Sizes must differ by this factor at least for the default threshold to
/// split between them: closer sets behave alike.
inline constexpr int64_t MinSplitGap = 4;

/// The threshold shape-split uses when none is given: between the two
/// consecutive sizes (over the sets of every entry in \p Specs) that differ
/// by the largest factor (the smaller pair on a tie), the smallest power of
/// two at or above their geometric mean. Fails, saying why, when there are
/// fewer than two sizes or no two differ by MinSplitGap.
llvm::Expected<int64_t> defaultSplitThreshold(
    llvm::ArrayRef<const KernelSpec *> Specs);

/// The spec name of the clone of the kernel named \p SpecName
/// ("ns::k<float>" -> "ns::k_astra_large<float>").
std::string splitCloneName(llvm::StringRef SpecName);

/// The kernel a clone was split from ("k_astra_large<float>" ->
/// "k<float>"); other names as they are.
std::string splitOriginName(llvm::StringRef SpecName);

/// Splits \p K at \p Threshold: \p K keeps the sets below it, the returned
/// entry (named after the clone) holds the others. Fails, naming the entry,
/// when either side would be empty.
llvm::Expected<KernelSpec> splitSpec(KernelSpec &K, int64_t Threshold);

/// The text of spec file \p Path (contents \p Text) with each entry of
/// \p Kernels split at \p Threshold: the entry loses its large sets, and a
/// copy of it (comments and formatting kept) named after the clone and
/// holding only those follows it. The result is parsed again and must
/// describe exactly that, else this fails.
llvm::Expected<std::string> splitSpecText(llvm::StringRef Text,
                                          llvm::StringRef Path,
                                          llvm::ArrayRef<std::string> Kernels,
                                          int64_t Threshold);

/// \p Text with the entries of each kernel of \p Splits (qualified name ->
/// threshold) split: every entry describing the kernel or one of its
/// instantiations (splitSpecText).
llvm::Expected<std::string>
followSplits(llvm::StringRef Text, llvm::StringRef Path,
             const std::map<std::string, int64_t> &Splits);

} // namespace astra

#endif
