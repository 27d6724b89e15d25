//===- OptimizeOptions.h - Options shared by optimize and bench -*- C++ -*-===//
#ifndef ASTRA_TOOLS_OPTIMIZEOPTIONS_H
#define ASTRA_TOOLS_OPTIMIZEOPTIONS_H

#include "Common.h"
#include "astra/Agents/OptimizeDriver.h"
#include "astra/Exec/Executor.h"

#include "llvm/Support/CommandLine.h"

namespace astra {
namespace tool {

/// The optimizer's options, registered for one subcommand (optimize and
/// bench each own a set, so both accept the same flags).
class OptimizeOptions {
public:
  explicit OptimizeOptions(llvm::cl::SubCommand &Cmd);
  /// Builds the driver's request, checking the values.
  llvm::Expected<OptimizeRequest> request(std::vector<std::string> Files) const;

  /// Repeatable: optimize and bench run the driver once per kernel.
  llvm::cl::list<std::string> Kernels;
  llvm::cl::opt<std::string> SpecPath, ReportDir;
  llvm::cl::opt<unsigned> Rounds, Candidates, Beam, Seeds, Runs, JobTimeout;
  llvm::cl::opt<double> MinSpeedup, MinShapeSpeedup, TimeBudget;
  llvm::cl::opt<bool> AllowShapeRegression, SplitShapes, Static, Sanitize,
      NoCache;
  llvm::cl::list<std::string> Passes;
  llvm::cl::opt<std::string> Agents, LLMBaseUrl, LLMModel, LLMPlannerModel,
      LLMCoderModel;
  llvm::cl::opt<double> LLMTimeout;
  llvm::cl::opt<unsigned> LLMRetries;
  llvm::cl::opt<bool> NoLLMCache;
  llvm::cl::opt<unsigned long long> Seed;
  llvm::cl::opt<std::string> TimingCompiler;
  /// --test: the user's command, run with each file's rewrite in place.
  llvm::cl::opt<std::string> TestCommand, TestDir;
  llvm::cl::opt<unsigned> TestTimeout;
  /// Where jobs run: --gpus, --executor, --slurm-args, --job-dir.
  llvm::cl::opt<std::string> Gpus, ExecutorKind, SlurmArgs, JobDir;
  /// -j: candidates of a round coded and compiled at once.
  llvm::cl::opt<unsigned> Jobs;

  /// The executor the options ask for; null where jobs run as before, in
  /// one child process at a time on this machine's first GPU (one local
  /// GPU, or none: the commands then say what they do without one).
  /// \p What names the work in messages ("optimize", "bench").
  llvm::Expected<std::unique_ptr<exec::Executor>>
  makeExecutor(llvm::StringRef What) const;
};

/// Prints the executor's workers and jobs on stderr as they change (a
/// line rewritten in place on a terminal), unless --quiet.
void showExecutorProgress(exec::Executor &E, llvm::StringRef What);

/// --test on one file's outcome: the rewrite \p Final (path -> text) is put
/// in place, the user's command runs, and the rewrite stays only when it
/// passes and \p KeepOnPass. Each of \p Owners (the kernels whose change is
/// in \p Final) gets the record; when the command fails, their winners are
/// dropped with the reason. Prints what happened. Returns whether the
/// rewrite passed; an error when the files could not be written or put
/// back, or the command fails on the original code too (a broken command).
llvm::Expected<bool> testRewrite(const OptimizeOptions &O, FileOutcome &FO,
                                 const std::map<std::string, std::string> &Final,
                                 bool KeepOnPass,
                                 const std::vector<size_t> &Owners);

/// Puts back what an interrupted --test run left in \p Files (and the
/// files their journals name), with a note for each.
llvm::Error recoverInterruptedTests(const std::vector<std::string> &Files);

/// A progress line on stderr (rewritten in place on a terminal).
ProgressFn progressPrinter();
/// One line per kernel: improved by how much, or why not.
void printKernelSummary(llvm::raw_ostream &OS, const KernelReport &R);
/// Tool version, date, agents and command line for a report.
void fillRunInfo(RunInfo &Info, const OptimizeOptions &O, const Session &S);
std::string absolutePath(llvm::StringRef P);
/// Whether the progress printer is silenced (the global --quiet).
extern bool ProgressQuiet;

} // namespace tool
} // namespace astra

#endif
