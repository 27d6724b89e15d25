//===- WorkerJobs.h - Verify/profile jobs on an executor's workers -*- C++ -*-===//
//
// The engine's jobs as executor tasks: each job's JSON goes into the
// executor's task directory, a worker runs `clang-astra run-job` on it, and
// the result file comes back as the JobResult. A job whose every attempt
// failed (the process died, hung past --job-timeout, lost its GPU, was
// cancelled by Slurm) comes back with verdict error and kind
// "infrastructure": the optimizer reports it as a run error, never as a
// wrong result.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_AGENTS_WORKERJOBS_H
#define ASTRA_AGENTS_WORKERJOBS_H

#include "astra/Engine/Job.h"
#include "astra/Exec/Executor.h"

#include "llvm/Support/raw_ostream.h"

namespace astra {

/// Runs \p Jobs on \p E's workers at once (each attempt limited to
/// \p TimeoutSeconds); the results in the jobs' order. \p Log, when given,
/// gets each job's own log, in the jobs' order.
std::vector<JobResult> runJobsOnWorkers(exec::Executor &E,
                                        llvm::ArrayRef<VerifyJob> Jobs,
                                        unsigned TimeoutSeconds,
                                        llvm::raw_ostream *Log = nullptr);

/// The result of a task that did not finish: verdict error, kind
/// "infrastructure", the attempts' reasons (exposed for tests).
JobResult infrastructureResult(const exec::TaskOutcome &O);

} // namespace astra

#endif
