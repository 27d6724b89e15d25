//===- Orchestrator.h - Rounds of plan, code, test, profile ----*- C++ -*-===//
//
// Runs the optimization loop for one kernel: a beam search from the best
// verified candidates, a few candidates a round, stopping early when the
// kernel is near the roofline or a round brings nothing. Every candidate is
// tested against the original (never against its parent), and the winner is
// confirmed with fresh seeds and a fresh timing before it is accepted, so a
// lucky measurement cannot win.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_AGENTS_ORCHESTRATOR_H
#define ASTRA_AGENTS_ORCHESTRATOR_H

#include "astra/Agents/Agents.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace astra {

struct OrchestratorOptions {
  unsigned Rounds = 5;
  unsigned CandidatesPerRound = 4;
  unsigned BeamWidth = 2;
  /// A candidate counts as faster only if it beats the baseline by this
  /// factor on every shape set (timing noise on an H100 is ~1%).
  double MinSpeedup = 1.02;
  /// When set, what every shape set must reach instead, MinSpeedup then
  /// applying to the geometric mean: 1.0 asks "not slower on any shape set,
  /// and faster overall" (a microsecond, launch-bound set cannot veto a
  /// 1.3x gain elsewhere, as gelu's did on the H100). At least 1.0.
  std::optional<double> MinShapeSpeedup;
  /// Stop when every shape set is at this share of the roofline or more.
  double RooflineStop = 0.95;
  /// Accept candidates slower on some shape set (never by default).
  bool AllowShapeRegression = false;
  /// Confirm the winner with a second test and profile before accepting.
  bool Confirm = true;
  /// Wall-clock seconds per kernel after which no new candidate is started
  /// (the winner is still confirmed); 0: no limit. Keeps a suite run inside
  /// a GPU reservation.
  double TimeBudgetSeconds = 0;
  /// A round's plans coded at once when the coder allows it
  /// (Coder::concurrent); 0: one per core. The outcome does not depend on
  /// it.
  unsigned CodingThreads = 0;
};

/// The id of a candidate taken from KernelFacts::KnownWinners with its
/// evaluation (not run again) starts with this: "known1".
inline constexpr const char KnownWinnerIdPrefix[] = "known";
/// Whether \p C is such a candidate: confirmed in the run that found it.
inline bool isKnownWinner(const Candidate &C) {
  return llvm::StringRef(C.Id).starts_with(KnownWinnerIdPrefix);
}

/// Progress as it happens: "kernel, round, candidate, best so far".
struct ProgressEvent {
  std::string Kernel;
  unsigned Round = 0, Rounds = 0;
  unsigned Candidate = 0, Candidates = 0;
  std::string Label;
  double BestSpeedup = 1.0;
  std::string Status; ///< What just happened to the candidate.
};
using ProgressFn = std::function<void(const ProgressEvent &)>;

struct OptimizeOutcome {
  std::string Kernel;
  Evaluation Baseline;
  /// The accepted candidate, if any, with its confirmed evaluation.
  std::optional<Candidate> Winner;
  Evaluation WinnerEval;
  std::vector<Attempt> Attempts;
  /// Why the optimizer stopped and, without a winner, why nothing was
  /// accepted.
  std::string StopReason;
  std::string NoWinnerReason;
  /// Where the time went (docs/optimize.md, "Where the time goes"): every
  /// evaluation's stages summed (the baseline's, the candidates', the
  /// confirmations'), and the wall-clock time of each part of the run.
  StageTimes Stages;
  double SetupSeconds = 0;    ///< Before the search (parse, the probes).
  double BaselineSeconds = 0; ///< The baseline's compile and timing.
  double RoundsSeconds = 0;   ///< The rounds.
  double ConfirmSeconds = 0;  ///< The winner's confirmation.
  double WallSeconds = 0;     ///< All of the kernel's time.
};

class Orchestrator {
public:
  Orchestrator(Planner &P, Coder &C, Tester &T, Profiler &Prof,
               OrchestratorOptions Opts, ProgressFn Progress = nullptr)
      : ThePlanner(P), TheCoder(C), TheTester(T), TheProfiler(Prof),
        Opts(Opts), Progress(std::move(Progress)) {}

  OptimizeOutcome run(const KernelFacts &Facts);

  /// Whether \p E beats the baseline enough on every shape set (or on
  /// geometric mean with AllowShapeRegression).
  bool acceptable(const Evaluation &E) const;
  /// What every shape set must reach (MinShapeSpeedup, else MinSpeedup).
  double shapeMargin() const;
  /// The acceptance rule in words: "1.02x on every shape set".
  std::string rule() const;

private:
  /// run() without the totals.
  OptimizeOutcome search(const KernelFacts &Facts);

  Planner &ThePlanner;
  Coder &TheCoder;
  Tester &TheTester;
  Profiler &TheProfiler;
  OrchestratorOptions Opts;
  ProgressFn Progress;
};

} // namespace astra

#endif
