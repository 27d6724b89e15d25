//===- Candidate.h - Versions of a kernel and what became of them -*- C++ -*-===//
//
// The optimizer's vocabulary: a Plan is what the Planner wants tried, a
// Candidate is the code the Coder produced for it, an Evaluation is what the
// Tester and the Profiler found, an Attempt is the three together. These are
// plain data so that agents stay small and the orchestrator can be tested
// with fakes.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_AGENTS_CANDIDATE_H
#define ASTRA_AGENTS_CANDIDATE_H

#include "astra/Frontend/CudaParser.h"
#include "astra/Spec/LaunchTuning.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace astra {

/// What to try next, as the Planner says it.
struct Plan {
  enum class Kind { Passes, LLMRewrite };
  Kind K = Kind::Passes;
  /// The candidate to start from ("baseline" or an earlier candidate's id).
  std::string ParentId = "baseline";
  /// Passes to apply to the parent, in order, with their parameters
  /// ("vectorize.bytes" -> "16").
  std::vector<std::string> Passes;
  std::map<std::string, std::string> Params;
  /// For LLM rewrites: the idea to implement, in words.
  std::string Idea;
  /// Why the planner chose this (shown in the report).
  std::string Rationale;

  /// "vectorize+fast-math(vectorize.bytes=8)" or "llm: <idea>".
  std::string label() const;
};

/// One version of the code: the full text of each file it changes.
struct Candidate {
  std::string Id = "baseline";
  std::string ParentId;
  /// New text of each changed file (absolute path -> text). Empty for the
  /// baseline, which is what is on disk.
  FileOverlay Files;
  /// Every pass applied since the original, in order (LLM rewrites appear
  /// as "llm").
  std::vector<std::string> Lineage;
  std::map<std::string, std::string> Params;
  std::string Origin = "baseline"; ///< "baseline", "passes" or "llm".
  /// The block size the code launches the kernel with, when the block-size
  /// pass changed it: the spec's launch is retuned the same way for the
  /// candidate's runs (astra/Spec/LaunchTuning.h).
  std::optional<int64_t> BlockThreads;
  /// The factor the code divides the launch's grid x by, when grid-coarsen
  /// changed it; the spec's launch is divided the same way.
  std::optional<int64_t> GridDivisor;
  /// The factors the code divides the block's x and y by, when
  /// thread-coarsen changed them; the spec's launch is divided the same way.
  std::optional<int64_t> BlockXDivisor, BlockYDivisor;
  /// rows-per-block's divisor of the block x and rows per block.
  std::optional<int64_t> RowDivisor, BlockRows;
  /// delinearize's 3-D grid.
  std::optional<Delinearized> Grid3;
  /// warp-per-row's row count.
  std::optional<std::string> WarpRows;
  std::string Rationale;

  /// The candidate's launch relative to the spec's.
  LaunchChange launchChange() const {
    return {BlockThreads, GridDivisor, BlockXDivisor, BlockYDivisor,
            RowDivisor,   BlockRows,   Grid3,         WarpRows};
  }
  /// Takes the launch of \p C (a parent, or another kernel's winner).
  void copyLaunch(const Candidate &C) {
    BlockThreads = C.BlockThreads;
    GridDivisor = C.GridDivisor;
    BlockXDivisor = C.BlockXDivisor;
    BlockYDivisor = C.BlockYDivisor;
    RowDivisor = C.RowDivisor;
    BlockRows = C.BlockRows;
    Grid3 = C.Grid3;
    WarpRows = C.WarpRows;
  }

  /// A stable hash of the files' contents; equal hashes are the same code.
  std::string contentHash() const;
  bool isBaseline() const { return Id == "baseline"; }
};

/// Timing of one shape set: the baseline and the candidate, measured in the
/// same process.
struct ShapeTiming {
  std::string Shape;
  double BaselineUs = 0, CandidateUs = 0;
  double BaselineSpreadUs = 0, CandidateSpreadUs = 0;
  double Bytes = 0;
  /// Share of the device's measured copy bandwidth (0..1), or negative when
  /// unknown.
  double BaselineRoofline = -1, CandidateRoofline = -1;
  double speedup() const {
    return CandidateUs > 0 ? BaselineUs / CandidateUs : 0;
  }
};

/// Where the time of one evaluation went, in wall seconds (docs/optimize.md,
/// "Where the time goes"). Coding and Compile are CPU work of this process;
/// the GPU jobs' time is split as the job processes report it.
struct StageTimes {
  double Coding = 0;  ///< The coder: the plan's passes and their parses.
  double Compile = 0; ///< The compile gate (and nvcc) and the PTX entries.
  /// The GPU jobs, start to result, as the caller waits for them: the sum
  /// of the four below plus the processes' start and exit.
  double Jobs = 0;
  double Context = 0; ///< Of Jobs: the CUDA contexts.
  double Load = 0;    ///< Of Jobs: module loads (the driver's JIT).
  double Verify = 0;  ///< Of Jobs: the differential test's runs.
  double Profile = 0; ///< Of Jobs: the timing runs.
  /// Of Jobs: what the processes did outside runJob (exec, exit).
  double startup() const {
    double S = Jobs - Context - Load - Verify - Profile;
    return S > 0 ? S : 0;
  }
  double total() const { return Coding + Compile + Jobs; }
  StageTimes &operator+=(const StageTimes &O) {
    Coding += O.Coding;
    Compile += O.Compile;
    Jobs += O.Jobs;
    Context += O.Context;
    Load += O.Load;
    Verify += O.Verify;
    Profile += O.Profile;
    return *this;
  }
};

/// What the Tester and the Profiler found out about a candidate.
struct Evaluation {
  enum class Status {
    NotRun,        ///< Not evaluated (e.g. same code as an earlier attempt).
    CoderFailed,   ///< No code came out (LLM reply without code, pass error).
    ContractBroken, ///< Signature or launch contract changed.
    CompileError,  ///< The NVPTX compile gate failed.
    WrongResult,   ///< The differential test failed.
    RunError,      ///< Crash, timeout, or the run could not be done.
    Verified       ///< Correct on every shape set and seed.
  };
  Status S = Status::NotRun;
  /// Compile error, first mismatch (buffer, index, expected, actual, shape,
  /// seed), or the reason it could not run.
  std::string Detail;
  std::vector<uint64_t> Seeds;
  double MaxAbsError = 0, MaxRelError = 0;
  std::vector<std::string> Warnings;
  /// The launches besides each spec set's own that the candidate was
  /// verified under ("decode@block=512"): the launch space of the code.
  std::vector<std::string> LaunchConfigs;
  /// Filled by the Profiler for verified candidates.
  std::vector<ShapeTiming> Timings;
  /// Registers and spills of the candidate's kernel, when known.
  std::optional<unsigned> Registers, SpillBytes;
  /// The time the evaluation took, by stage (Coding: the orchestrator's).
  StageTimes Stages;

  bool verified() const { return S == Status::Verified; }
  bool profiled() const { return !Timings.empty(); }
  double geomeanSpeedup() const;
  double minSpeedup() const;
  /// What a program that launches each shape set as often as \p Weights
  /// says (a capture's launch counts) gains: its kernel time before over
  /// its kernel time after, sum(w * baseline) / sum(w * candidate). Nullopt
  /// without weights, or when a weighted set has no timing.
  std::optional<double>
  weightedSpeedup(const std::map<std::string, double> &Weights) const;
  static const char *statusName(Status S);
};

/// One experiment of the optimizer, kept for the report.
struct Attempt {
  unsigned Round = 0;
  Plan P;
  Candidate C;
  Evaluation E;
  /// "accepted", "slower", "not faster on every shape set", "compile error",
  /// "wrong result", "duplicate", ...
  std::string Outcome;
};

/// A coder's refusal of its own output, with the status it deserves (a
/// changed signature, code that does not compile), so the report can tell
/// these apart from "no code at all".
class CandidateRejected : public llvm::ErrorInfo<CandidateRejected> {
public:
  static char ID;
  CandidateRejected(Evaluation::Status S, std::string Msg)
      : S(S), Msg(std::move(Msg)) {}
  void log(llvm::raw_ostream &OS) const override { OS << Msg; }
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }
  Evaluation::Status status() const { return S; }

private:
  Evaluation::Status S;
  std::string Msg;
};

} // namespace astra

#endif
