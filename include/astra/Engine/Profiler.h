//===- Profiler.h - Timing with CUDA events --------------------*- C++ -*-===//
//
// Method (docs/engine.md): the baseline and the candidate are timed in the
// same process, interleaved A B A B ..., each on its own buffers. Before every
// timed launch, in-out buffers are restored from a pristine device copy,
// outputs get their poison back, and the L2 cache is flushed by a memset of
// twice its size; then CUDA events bracket the launch alone. After warm-up runs,
// Runs timed launches per kernel give the median and the spread (p10/p90,
// MAD). The outputs left by the last timed launch are compared with the
// baseline's again, so a kernel that behaves differently when timed (counts
// its calls, caches results) fails.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_ENGINE_PROFILER_H
#define ASTRA_ENGINE_PROFILER_H

#include "astra/Engine/DifferentialTest.h"
#include "astra/Runtime/Device.h"

#include "llvm/Support/Error.h"

namespace astra {

/// Times one device-to-device copy of \p Bytes (median of several) and
/// returns read + write bandwidth in GB/s (1e9 bytes/s).
llvm::Expected<double> measureCopyBandwidth(GpuContext &C, uint64_t Bytes);

/// The device's copy bandwidth, measured once per device name and driver
/// version and cached as <cache dir>/bandwidth/<device>-<driver>.json.
/// \p CacheDir empty: the default cache directory. \p FromCache tells
/// whether the value came from the cache.
llvm::Expected<double> deviceCopyBandwidth(GpuContext &C,
                                           llvm::StringRef CacheDir,
                                           bool *FromCache = nullptr);

/// Times the baseline (and the candidate, when the session has one) on
/// \p Run (its first seed's inputs) and stores the timing in \p Out; a
/// candidate whose outputs change under timing fails \p Out.
void profileRun(EngineSession &S, const PlannedRun &Run, RunResult &Out);

} // namespace astra

#endif
