//===- Report.h - What the optimizer did, for people and machines -*- C++ -*-===//
//
// `optimize --report DIR` writes report.json (every number, every attempt and
// its evidence) and report.md (the summary a person reads first). The same
// data feeds `bench`'s scoreboard.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_AGENTS_REPORT_H
#define ASTRA_AGENTS_REPORT_H

#include "astra/Agents/Orchestrator.h"
#include "astra/Agents/UserTest.h"
#include "astra/Support/Json.h"
#include "astra/Support/JsonMap.h"

#include "llvm/Support/Error.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace astra {

struct KernelReport {
  std::string File;   ///< As shown to users.
  std::string Kernel;
  OptimizeOutcome Outcome;
  std::string Diff;   ///< Unified diff of the accepted change (empty: none).
  /// Set when the kernel could not be optimized at all (no spec, parse
  /// error, no GPU): the reason, and Outcome is empty.
  std::string Error;
  /// LLM tokens used for this kernel (prompt + completion), when any.
  uint64_t PromptTokens = 0, CompletionTokens = 0;
  /// The user's --test command run with the file's rewrite (which holds
  /// this kernel's change), when there was one.
  std::optional<UserTestRecord> Test;
  /// Shape set -> launch count, from the spec's "weights" (a capture of the
  /// program): the weighted speedup is reported when there are any.
  std::map<std::string, double> Weights;

  /// The kept code's speedup weighted by Weights (1 when the kernel is
  /// unchanged), or nullopt without weights.
  std::optional<double> weightedSpeedup() const;
};

struct RunInfo {
  std::string ToolVersion;
  std::string Date;   ///< ISO 8601, UTC.
  std::string Device; ///< GPU name and driver, or "none".
  std::string Agents; ///< "offline" or "llm (<models>)".
  std::string Command;
  /// The compiler (and its flags) whose code was timed, per file when they
  /// differ: "clang" or "nvcc --use_fast_math ...".
  std::string TimedCompiler;
  double CopyBandwidthGBs = 0;
};

/// \p S in words: "coding 0.4 s, compile 1.1 s, GPU jobs 2.7 s (start-up
/// 0.6 s, CUDA context 0.5 s, module load 0.3 s, verify 1.0 s, profile
/// 0.3 s)"; stages that took no time are left out.
std::string describeStages(const StageTimes &S);
/// The kernel's run in words: its wall time by part, then describeStages of
/// the sum over its evaluations.
std::string describeRunTime(const OptimizeOutcome &O);
/// The run's tool, date, device, agents and command: the first members of
/// report.json and scoreboard.json.
void mapRunInfoHeader(JsonIO &IO, RunInfo &Info);

/// \p S as report.json has it (seconds per stage).
void writeStagesJson(JsonWriter &W, const StageTimes &S);

/// An evaluation as report.json has it (status, seeds, errors, warnings,
/// resources, timings); the result cache stores evaluations the same way.
void writeEvaluationJson(JsonWriter &W, const Evaluation &E);
void writeKernelReportJson(JsonWriter &W, const KernelReport &R);
std::string reportJson(const RunInfo &Info, const std::vector<KernelReport> &Rs);
std::string reportMarkdown(const RunInfo &Info,
                           const std::vector<KernelReport> &Rs);

/// Writes DIR/report.json and DIR/report.md (creating DIR).
/// reportJson() of \p Info with the kernels of \p Parts (each a
/// reportJson() text, of one file run on its own), in order: what
/// reportJson() of all their kernels gives. Errors name \p Names[I].
llvm::Expected<std::string>
mergeReportJson(const RunInfo &Info, const std::vector<std::string> &Parts,
                const std::vector<std::string> &Names);
/// The same for reportMarkdown(): the summary table's rows, then the
/// kernels' sections, of every part in order.
std::string mergeReportMarkdown(const RunInfo &Info,
                                const std::vector<std::string> &Parts);
llvm::Error writeReport(llvm::StringRef Dir, const RunInfo &Info,
                        const std::vector<KernelReport> &Rs);

} // namespace astra

#endif
