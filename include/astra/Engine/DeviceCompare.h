//===- DeviceCompare.h - The comparison made on the device -----*- C++ -*-===//
//
// A candidate's outputs are compared with the baseline's where both already
// are, on the GPU (DeviceOps::compare, the rules of CompareCore.h), and only
// what a failure report needs crosses to the host: the first failing element
// of each side. These helpers turn the device's counts into the Comparison
// that Compare.h's host scan gives for the same buffers, message included,
// and hold the host mirror of the device reduction (the same rules, run on
// host buffers) that the tests hold both against.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_ENGINE_DEVICECOMPARE_H
#define ASTRA_ENGINE_DEVICECOMPARE_H

#include "astra/Engine/Compare.h"
#include "astra/Engine/CompareCore.h"
#include "astra/Engine/DeviceOps.h"
#include "astra/Engine/HostBuffer.h"

#include "llvm/ADT/StringRef.h"

#include <functional>
#include <optional>
#include <utility>

namespace astra {

/// The device kernels' code of \p T.
crng::DTypeCode dtypeCode(DType T);

/// The parameters of comparing \p Count elements of \p T with tolerance
/// \p Tol (compareBuffers; \p PoisonVariant -1 when the actual buffer was
/// not poisoned) or bit for bit (\p Bitwise: compareBitwise).
ccore::CmpParams cmpParams(DType T, uint64_t Count, Tolerance Tol,
                           int PoisonVariant, bool Bitwise);

/// What the device reduction computes, computed on the host.
ccore::CmpResult compareMirror(const ccore::CmpParams &P,
                               const HostBuffer &Expected,
                               const HostBuffer &Actual);

/// The Comparison of a reduction's result \p R: counts and maxima from
/// \p R, the first mismatch's evidence from \p Expected1 and \p Actual1,
/// the first failing element of each side alone (ignored when nothing
/// failed).
Comparison comparisonFrom(llvm::StringRef Name, const ccore::CmpParams &P,
                          const ccore::CmpResult &R,
                          const HostBuffer &Expected1,
                          const HostBuffer &Actual1, Tolerance Tol,
                          int PoisonVariant);

/// Element I of the expected and of the actual buffer, each alone in a
/// buffer of one element; nullopt after an error (kept by the caller).
using ElementPairFn =
    std::function<std::optional<std::pair<HostBuffer, HostBuffer>>(uint64_t)>;

/// compareBuffers (\p Bitwise: compareBitwise) of \p Count elements of \p T
/// that stay on the device at \p Expected and \p Actual, counted by
/// \p Ops; \p Element fetches the first failing element's evidence.
llvm::Expected<Comparison>
compareOnDevice(DeviceOps &Ops, llvm::StringRef Name, DType T, uint64_t Count,
                cu::DevicePtr Expected, cu::DevicePtr Actual, Tolerance Tol,
                int PoisonVariant, bool Bitwise, double TimeoutSeconds,
                const ElementPairFn &Element);

} // namespace astra

#endif
