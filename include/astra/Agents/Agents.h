//===- Agents.h - Planner, Coder, Tester, Profiler -------------*- C++ -*-===//
//
// The four agents of the optimization loop, as small interfaces. Offline
// implementations (rule-based planner, pass coder) and LLM implementations
// plug into the same Orchestrator; the Tester and Profiler wrap the engine
// (compile gate, differential test, timing) and can be replaced by fakes in
// unit tests.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_AGENTS_AGENTS_H
#define ASTRA_AGENTS_AGENTS_H

#include "astra/Agents/Candidate.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace astra {

/// A plan that won on a kernel's shape sets in an earlier run.
struct KnownWinner {
  Plan P;
  /// Its evaluation on exactly this kernel's shape sets (labelled as the
  /// Profiler labels them), verified and confirmed with fresh seeds and
  /// timing in the run that found it: the orchestrator takes it as it is,
  /// without running the code again. Not profiled: unknown, and the planner
  /// proposes the plan first like any other.
  Evaluation E;
};

/// What the agents know about the kernel being optimized.
struct KernelFacts {
  std::string File; ///< Absolute path of the file holding the kernel.
  std::string Kernel; ///< Name as in the spec.
  std::string Source; ///< The kernel's text (with helpers) for prompts.
  /// Passes that change the baseline's code when applied alone, with what
  /// --explain said (fired sites).
  std::map<std::string, std::vector<std::string>> ApplicablePasses;
  /// Passes that refused, with their reasons (for prompts and reports).
  std::map<std::string, std::vector<std::string>> RefusedPasses;
  /// Passes that fire only after others have run (vectorize once
  /// restrict-const has shown the buffers do not alias, or once grid-stride
  /// has made the loop): pass -> the passes it needs first.
  std::map<std::string, std::vector<std::string>> Prerequisites;
  /// The launch configuration belongs to the kernel (block sizes may be
  /// tuned).
  bool LaunchTunable = false;
  /// The block size the spec launches with, when it may be tuned
  /// (tunableBlockLiteral); 0 when not.
  int64_t BlockSize = 0;
  /// Flops per byte from the spec, when it gives flops (else negative).
  double ArithmeticIntensity = -1;
  /// Plans already known to win on this kernel's shape sets: when
  /// shape-split's halves are optimized, the whole kernel's winner, so that
  /// a half starts where the unsplit run ended instead of spending its own
  /// time budget to find it again (rmsnorm's halves reached 1.31x against
  /// 1.81x unsplit on the H100).
  std::vector<KnownWinner> KnownWinners;
};

/// Everything the planner sees when it chooses the next experiments.
struct PlanningState {
  const KernelFacts *Facts = nullptr;
  unsigned Round = 0, Rounds = 0;
  const Evaluation *Baseline = nullptr; ///< The baseline's own profile.
  /// The best verified candidates so far (beam), best first, with their
  /// evaluations.
  std::vector<std::pair<const Candidate *, const Evaluation *>> Beam;
  const std::vector<Attempt> *History = nullptr;
  /// Content hashes and plan labels already tried.
  std::set<std::string> TriedLabels;
};

class Planner {
public:
  virtual ~Planner();
  virtual llvm::StringRef name() const = 0;
  /// Up to \p MaxPlans experiments for this round; fewer (or none) when
  /// nothing promising is left.
  virtual std::vector<Plan> propose(const PlanningState &S,
                                    unsigned MaxPlans) = 0;
};

class Coder {
public:
  virtual ~Coder();
  virtual llvm::StringRef name() const = 0;
  /// Turns a plan into code, starting from \p Parent.
  virtual llvm::Expected<Candidate> realize(const Plan &P,
                                            const Candidate &Parent,
                                            const PlanningState &S) = 0;
  /// Whether realize() reads the attempts made so far (an LLM coder shows
  /// the model the last failures): then a round's candidates are coded and
  /// tested one after another, each seeing those before it; otherwise the
  /// whole round is coded first and its tests may run at the same time.
  virtual bool readsHistory() const { return false; }
  /// Whether realize() may run on several threads at once (a round's plans
  /// coded side by side); it then reads nothing of \p S but the facts.
  virtual bool concurrent() const { return false; }
};

/// The compile gate and the differential test against the original.
class Tester {
public:
  virtual ~Tester();
  virtual Evaluation test(const Candidate &C) = 0;
  /// The candidates test() will be asked about next, in that order (a
  /// round's): a Tester may start their tests now, on several GPUs at once.
  /// test() still reports each, in order, as if it ran it then.
  virtual void prepare(llvm::ArrayRef<const Candidate *> Cs) {}
};

/// Times a verified candidate against the original in one process.
class Profiler {
public:
  virtual ~Profiler();
  /// Fills E.Timings (and resources); on a run error sets E.S = RunError.
  virtual void profile(const Candidate &C, Evaluation &E) = 0;
  /// Times the candidate against the original once more, in a fresh run
  /// without verification, replacing E.Timings; on a run error sets
  /// E.S = RunError. For a timing the orchestrator distrusts (the
  /// original's own time far from its earlier measurement).
  virtual void retime(const Candidate &C, Evaluation &E) = 0;
  /// The baseline timed against itself: its absolute times and roofline.
  virtual Evaluation profileBaseline() = 0;
};

} // namespace astra

#endif
