//===- ExternalTools.h - compute-sanitizer and Nsight Compute --*- C++ -*-===//
//
// Both tools instrument a whole process, so they run a child `run-job` that
// launches only the kernel of interest (JobOptions::CandidateOnly): the
// sanitizer's findings and ncu's metrics then belong to that kernel alone.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_ENGINE_EXTERNALTOOLS_H
#define ASTRA_ENGINE_EXTERNALTOOLS_H

#include "astra/Engine/Job.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <string>
#include <vector>

namespace astra {

/// \p Name (compute-sanitizer, ncu) from PATH, $CUDA_PATH/bin,
/// $CUDA_HOME/bin or /usr/local/cuda/bin; empty when none has it.
std::string findCudaTool(llvm::StringRef Name);

/// Runs the candidate of \p J under compute-sanitizer memcheck and racecheck
/// (smallest shape set plus the adversarial runs, first seed). Errors found
/// fail \p R (kind sanitizer); a missing tool is a warning.
void runSanitizers(const VerifyJob &J, JobResult &R, llvm::raw_ostream *Log);

/// Collects Nsight Compute metrics (DRAM throughput, achieved occupancy,
/// the top warp stall reasons) for the baseline and the candidate on the
/// first shape set into R.NcuMetrics. Problems are warnings.
void runNcu(const VerifyJob &J, JobResult &R, llvm::raw_ostream *Log);

/// The number of problems compute-sanitizer reported: "ERROR SUMMARY: N
/// errors", or racecheck's hazard count when larger (racecheck files some
/// races as warnings); -1 when the output has no summary. \p FirstError
/// receives the first reported problem (a few lines).
int parseSanitizerOutput(llvm::StringRef Text, std::string *FirstError);

/// Metrics of the last kernel in `ncu --csv --page raw` output: column name
/// to value.
std::map<std::string, std::string> parseNcuRawCsv(llvm::StringRef Text);

/// The summary clang-astra reports from raw ncu metrics:
/// dram_throughput_pct, achieved_occupancy_pct, duration, top_stalls.
std::map<std::string, std::string>
summarizeNcuMetrics(const std::map<std::string, std::string> &Raw);

} // namespace astra

#endif
