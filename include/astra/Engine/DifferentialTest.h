//===- DifferentialTest.h - Baseline vs candidate on the GPU ---*- C++ -*-===//
//
// For each planned run and seed: generate the inputs once, upload the same
// bytes to the baseline's and the candidate's own buffers, poison outputs,
// run the baseline twice (to learn whether it is deterministic), run the
// candidate, compare every written buffer and check inputs and guards, then
// run the candidate again with a different poison and compare it with its
// first run bit for bit. docs/engine.md lists what each failure means.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_ENGINE_DIFFERENTIALTEST_H
#define ASTRA_ENGINE_DIFFERENTIALTEST_H

#include "astra/Engine/DeviceOps.h"
#include "astra/Engine/Inputs.h"
#include "astra/Engine/Job.h"
#include "astra/Engine/RunPlan.h"
#include "astra/Runtime/Device.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace astra {

/// What every stage of one job shares: the device, the loaded kernels, the
/// spec (checked against the PTX) and the result being filled.
struct EngineSession {
  GpuContext &Ctx;
  const VerifyJob &Job;
  JobResult &Result;
  KernelSpec Spec;
  cu::Function Baseline = nullptr;
  cu::Function Candidate = nullptr; ///< Null when the job has none.
  LaunchSpec CandidateLaunch;
  llvm::raw_ostream *Log = nullptr; ///< Progress lines; may be null.
  DeviceOps *Ops = nullptr; ///< Fill and compare on the GPU; not owned.
  /// Inputs made, and outputs compared, on the GPU (deviceVerifyEnabled());
  /// false: on the host, as before the device path existed.
  bool OnDevice = false;

  EngineSession(GpuContext &C, const VerifyJob &J, JobResult &R)
      : Ctx(C), Job(J), Result(R), Spec(J.Spec) {}
  double timeout() const { return Job.Options.KernelTimeout; }
};

/// Runs the differential test of \p Run and fills \p Out (verdict, seeds,
/// errors, first failure, warnings), on the inputs \p Made gives, which must
/// be at this run's first seed (InputPrefetcher::skipTo): the job's one
/// prefetcher over inputRequests(), so that this run's first seed was made
/// while the run before it ran. Sets Result.ContextLost when a kernel
/// crashed or hung; nothing more can run in this process then.
void verifyRun(EngineSession &S, const PlannedRun &Run, RunResult &Out,
               InputPrefetcher &Made);

/// Runs only the candidate (or, without one, the baseline) once per seed of
/// \p Run, with no checks: the child run under compute-sanitizer or ncu.
/// \p Made as for verifyRun.
void runCandidateOnly(EngineSession &S, const PlannedRun &Run, RunResult &Out,
                      InputPrefetcher &Made);

/// Every seed of every run of \p Runs, in order: what a job's prefetcher
/// makes. A run's first seed is at the sum of the seed counts before it.
std::vector<InputRequest> inputRequests(llvm::ArrayRef<PlannedRun> Runs);

/// Turns an error from running a kernel into the verdict of \p Out: a
/// candidate's crash, hang or launch error is a failure (kind crash,
/// timeout, launch-error), the baseline's or anything else is an error.
/// \p Where says which run and seed ("shape set 'small', seed 7").
void recordRunError(EngineSession &S, llvm::Error E, bool IsCandidate,
                    llvm::StringRef Where, std::optional<uint64_t> Seed,
                    RunResult &Out);

/// A result for \p Run with its name, kind and variables filled in.
RunResult startRunResult(const PlannedRun &Run);

/// Sets \p Out to fail with \p F unless it already failed.
void recordFailure(RunResult &Out, FailureInfo F);

/// "shape set 'small', seed 7" / "shape set 'small+odd' (n=517), seed 7".
std::string describeRun(const PlannedRun &Run, std::optional<uint64_t> Seed);

} // namespace astra

#endif
