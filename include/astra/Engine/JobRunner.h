//===- JobRunner.h - Run a verify/profile job ------------------*- C++ -*-===//
//
// runJob runs a job in this process. runJobIsolated runs it in a child
// process (this same binary, `clang-astra run-job`), so a candidate that
// faults (the CUDA context is unusable afterwards), never finishes, or
// corrupts memory cannot take the caller down: the caller gets a verdict
// with the reason instead.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_ENGINE_JOBRUNNER_H
#define ASTRA_ENGINE_JOBRUNNER_H

#include "astra/Engine/Job.h"

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace astra {

/// Runs \p J on this process's GPU. Never throws away a verdict: problems
/// become a result with verdict error and the reason. \p Log receives one
/// line per run (may be null).
JobResult runJob(const VerifyJob &J, llvm::raw_ostream *Log = nullptr);

/// Runs \p J in a child process with a wall-clock limit of
/// \p TimeoutSeconds for the whole job. A child that is killed for the
/// limit gives verdict fail, kind timeout, "timed out after N s"; one that
/// dies on a signal gives "the verifier process crashed (<signal>)".
/// \p Executable is the clang-astra binary to run (empty: this process's
/// own executable).
JobResult runJobIsolated(const VerifyJob &J, unsigned TimeoutSeconds,
                         llvm::raw_ostream *Log = nullptr,
                         llvm::StringRef Executable = "");

/// Where the `run-job` executable is: this process's binary.
std::string jobRunnerExecutable();

/// Combines the verdicts of the runs into the job's (the first failure
/// wins; an error anywhere is an error only when nothing failed).
void summarizeVerdict(JobResult &R);

} // namespace astra

#endif
