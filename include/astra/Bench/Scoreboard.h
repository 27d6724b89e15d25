//===- Scoreboard.h - The benchmark's numbers and their summary -*- C++ -*-===//
//
// `clang-astra bench` turns optimize reports into a scoreboard: per kernel and
// shape set the baseline and optimized times, speedup, share of roofline and
// whether the result was verified; then the summary measures the field uses:
// Astra's geometric-mean speedup and KernelBench's fast_p (the share of ALL
// kernels that are correct and faster than the baseline by more than p;
// kernels that failed count against it). PyTorch eager and torch.compile
// columns are added when their timings are given.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_BENCH_SCOREBOARD_H
#define ASTRA_BENCH_SCOREBOARD_H

#include "astra/Agents/Report.h"

#include "llvm/Support/Error.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace astra {

struct ScoreRow {
  std::string Suite, File, Kernel, Shape;
  double BaselineUs = 0, OptimizedUs = 0;
  double BaselineRoofline = -1, OptimizedRoofline = -1;
  bool Verified = false; ///< The kept version passed the differential test.
  bool Improved = false; ///< A rewrite was accepted.
  std::string Changes;
  std::optional<double> EagerUs, CompileUs; ///< PyTorch peers.
  double speedup() const {
    return OptimizedUs > 0 ? BaselineUs / OptimizedUs : 0;
  }
};

struct KernelScore {
  std::string Suite, File, Kernel;
  bool Ok = false; ///< Ran, and the kept version is verified.
  std::string Error;
  double Speedup = 0; ///< Geometric mean over its shape sets (0 on error).
  double MinSpeedup = 0;
  /// Weighted by the launch counts of the spec's "weights" (a capture of
  /// the program): sum(w * baseline us) / sum(w * optimized us), what the
  /// program's time in the kernel gains. Absent without weights.
  std::optional<double> WeightedSpeedup;
  double RooflineAfter = -1; ///< Mean over shape sets, when known.
  bool MemoryBound = true;
  std::optional<double> VsCompile; ///< torch.compile time / our time (geomean).
  /// Seconds bench spent on the kernel's file (every kernel of it, split
  /// halves and checks included); -1 where not known (older scoreboards).
  /// What planning a suite's runs into GPU reservations needs.
  double FileSeconds = -1;
};

struct ScoreSummary {
  unsigned Kernels = 0;
  double GeomeanSpeedup = 0;
  /// p -> share of all kernels correct and faster than p (p = 0: correct).
  std::map<double, double> FastP;
  double MeanRooflineAfter = -1; ///< Over memory-bound kernels with data.
  unsigned SlowerAnywhere = 0;   ///< Kernels slower on some shape set.
  std::optional<unsigned> AtLeastCompile, CompileCompared;
  /// Sum of FileSeconds over the files that have one, and how many do.
  double BenchSeconds = 0;
  unsigned TimedFiles = 0;
};

struct Scoreboard {
  std::vector<ScoreRow> Rows;
  std::vector<KernelScore> Kernels;
  ScoreSummary Summary;
};

/// Builds the scoreboard from optimize reports; \p Suite names each file's
/// suite (kernels/<suite>/...). \p Torch maps "kernel|shape" to
/// {eager_us, compile_us}; \p FileSeconds maps a report's File to the
/// seconds bench spent on it.
Scoreboard buildScoreboard(
    const std::vector<KernelReport> &Reports,
    const std::map<std::string, std::pair<double, double>> &Torch = {},
    const std::map<std::string, double> &FileSeconds = {});

/// Recomputes \p SB's summary from its kernel scores (after a merge).
void summarizeScoreboard(Scoreboard &SB);

/// A scoreboard read back from scoreboard.json, with the run it came from.
struct StoredScoreboard {
  Scoreboard Board;
  RunInfo Info;
};
/// Parses scoreboardJson()'s output; errors name \p Path.
llvm::Expected<StoredScoreboard> parseScoreboardJson(llvm::StringRef Text,
                                                     llvm::StringRef Path);

/// \p Earlier's kernels and rows followed by \p Later's, summarized again:
/// one scoreboard from a suite measured in several runs (`bench --resume`).
Scoreboard mergeScoreboards(const Scoreboard &Earlier,
                            const Scoreboard &Later);

/// Reads bench/torch_baselines.py's JSON output into the map above.
llvm::Expected<std::map<std::string, std::pair<double, double>>>
loadTorchBaselines(llvm::StringRef Path);

std::string scoreboardMarkdown(const Scoreboard &S, const RunInfo &Info);
std::string scoreboardJson(const Scoreboard &S, const RunInfo &Info);
/// A horizontal bar chart of per-kernel speedups (log scale), with
/// torch.compile's ratio marked where known.
std::string scoreboardSvg(const Scoreboard &S);

} // namespace astra

#endif
