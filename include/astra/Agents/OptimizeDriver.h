//===- OptimizeDriver.h - optimize: files in, verified rewrites out -*- C++ -*-===//
//
// The main job, as a library: for each file, every kernel its spec names is
// optimized by the orchestrator (offline or LLM agents), the winners of all
// kernels are merged into the file, the merged file passes the compile gate
// again and every changed kernel is verified again in it. Only then is the
// new text handed back; writing it (in place, elsewhere, as a diff) is the
// caller's decision. `clang-astra optimize` and `clang-astra bench` both run
// this.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_AGENTS_OPTIMIZEDRIVER_H
#define ASTRA_AGENTS_OPTIMIZEDRIVER_H

#include "astra/Agents/EngineEvaluator.h"
#include "astra/Agents/Orchestrator.h"
#include "astra/Agents/Report.h"
#include "astra/Frontend/CompileCommands.h"
#include "astra/LLM/LLMClient.h"

#include <map>
#include <string>
#include <vector>

namespace astra {

struct OptimizeRequest {
  std::vector<std::string> Files;
  /// Only this kernel (spec name or base name); empty: every kernel of the
  /// spec.
  std::string Kernel;
  /// Explicit spec file; empty: <file>.astra.json.
  std::string SpecPath;
  OrchestratorOptions Orchestrator;
  EngineOptions Engine;
  /// Which compiler makes the code that is timed: "clang" (its NVPTX
  /// backend), "nvcc" (with the build's device flags), or "auto": nvcc when
  /// the build compiles the file with nvcc and the toolkit has it.
  std::string TimingCompiler = "auto";
  /// Passes the agents may use (empty: all).
  std::vector<std::string> AllowedPasses;
  /// "offline" or "llm".
  std::string Agents = "offline";
  LLMConfig PlannerLLM, CoderLLM;
  /// No GPU work: run the passes and the NVPTX compile only.
  bool Static = false;
  /// Directory for LLM transcripts (the report directory); empty: none.
  std::string TranscriptDir;
  /// The result cache (ResultCache.h): outcomes of earlier runs on the same
  /// inputs are reused, and new GPU outcomes are stored.
  bool UseResultCache = false;
  std::string ResultCacheDir; ///< Empty: the default directory.
  /// The options that change an outcome, as text (part of the cache key).
  std::string CacheOptions;
  /// The GPU results are verified on; empty: no GPU here, so a cached
  /// result of any GPU is taken.
  std::string Gpu;
  /// No GPU work at all: cached results only; files without one are
  /// skipped (FileOutcome::Skipped).
  bool CacheOnly = false;
  /// Also optimize each kernel whose shape sets span sizes MinSplitGap
  /// apart split in two by shape-split (one kernel per range of sizes), and
  /// keep the split when it is faster over all sets (offline agents only).
  bool SplitShapes = false;
};

struct FileOutcome {
  std::string File; ///< As given.
  /// Original and final text of every file that changed.
  std::map<std::string, std::string> Original, Final;
  std::vector<KernelReport> Kernels;
  /// Set when the file could not be optimized at all.
  std::string Error;
  /// The run that optimized the file with its kernels split by shape-split
  /// (Kernels then holds both halves), and the threshold of each split
  /// kernel.
  bool Split = false;
  std::map<std::string, int64_t> SplitAt;
  /// "verified on <GPU> at <date>" when the outcome came from the cache.
  std::string FromCache;
  /// Not optimized: CacheOnly and nothing cached.
  bool Skipped = false;
};

class OptimizeDriver {
public:
  OptimizeDriver(const CudaToolchain &TC, const CompileCommands &CC,
                 OptimizeRequest Req, ProgressFn Progress = nullptr)
      : TC(TC), CC(CC), Req(std::move(Req)), Progress(std::move(Progress)) {}
  /// Removes the run's own cache folder (`--no-cache`), if one was made.
  ~OptimizeDriver();
  OptimizeDriver(const OptimizeDriver &) = delete;
  OptimizeDriver &operator=(const OptimizeDriver &) = delete;

  /// Optimizes every file. Errors of one file do not stop the others; they
  /// are in that file's FileOutcome::Error.
  std::vector<FileOutcome> run();

  /// Optimizes one file (one of Req.Files or any other), so that a caller
  /// can keep partial results of a long run.
  FileOutcome runFile(const std::string &File);

  /// Device and copy bandwidth seen by the jobs (for the report).
  RunInfo runInfo() const { return Info; }

private:
  /// One optimization of \p File (compiled by \p Command, workload
  /// \p Spec); with \p Split its kernels are split by shape-split first (a
  /// file where nothing splits comes back with Skipped set), each half
  /// starting from \p Unsplit's winner of its kernel with the evaluation
  /// \p Unsplit confirmed on the half's sets.
  FileOutcome runFileOnce(const std::string &File,
                          const std::vector<std::string> &Command,
                          SpecFile Spec, bool Split,
                          const FileOutcome *Unsplit = nullptr);
  /// The unified diff of each winner (and of a retuned spec) in its report.
  static void attachDiffs(FileOutcome &FO,
                          const std::map<std::string, std::string> &SpecTexts);

  const CudaToolchain &TC;
  const CompileCommands &CC;
  OptimizeRequest Req;
  ProgressFn Progress;
  RunInfo Info;
  /// With the caches off (EngineOptions::UseCache false), a folder of this
  /// run's own for the PCHs and PTX: nothing is read from an earlier run or
  /// left for a later one, and the run's parses still share one PCH.
  std::string ScratchCache;
};

/// Merges the changes each kernel's winner made to \p Original (all texts of
/// one file) into one text. Changes that overlap an earlier one are left out
/// and named in \p Dropped (by index into \p Versions).
std::string mergeEdits(const std::string &Original,
                       const std::vector<std::string> &Versions,
                       std::vector<size_t> *Dropped = nullptr);

/// \p Whole (an evaluation of a kernel before shape-split) on the shape
/// sets of \p Half, one half's spec entries, labelled as the half's jobs
/// label them; not profiled when a set of the half has no timing in it.
Evaluation evaluationOnHalf(const Evaluation &Whole,
                            const std::vector<KernelSpec> &Half);

} // namespace astra

#endif
