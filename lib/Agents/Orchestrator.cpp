//===- Orchestrator.cpp ---------------------------------------------------===//
#include "astra/Agents/Orchestrator.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <optional>
#include <set>

using namespace llvm;

namespace astra {

double Orchestrator::shapeMargin() const {
  return Opts.MinShapeSpeedup.value_or(Opts.MinSpeedup);
}

bool Orchestrator::acceptable(const Evaluation &E) const {
  if (!E.verified() || !E.profiled())
    return false;
  if (Opts.AllowShapeRegression)
    return E.geomeanSpeedup() >= Opts.MinSpeedup;
  return E.geomeanSpeedup() >= Opts.MinSpeedup &&
         E.minSpeedup() >= shapeMargin();
}

static std::string fmtSpeedup(double S) {
  std::string Out;
  raw_string_ostream OS(Out);
  OS << format("%.2fx", S);
  return Out;
}

std::string Orchestrator::rule() const {
  if (shapeMargin() == Opts.MinSpeedup)
    return fmtSpeedup(Opts.MinSpeedup) + " on every shape set";
  return fmtSpeedup(Opts.MinSpeedup) + " overall and " +
         fmtSpeedup(shapeMargin()) + " on every shape set";
}

/// Names the shape sets where \p E is not faster by the margin.
static std::string slowShapes(const Evaluation &E, double Margin) {
  std::string Out;
  for (const ShapeTiming &T : E.Timings)
    if (T.speedup() < Margin)
      Out += (Out.empty() ? "" : ", ") + T.Shape + " " + fmtSpeedup(T.speedup());
  return Out;
}

/// A shape set whose original, timed beside the candidate, took over 1.5x
/// longer or shorter than in the original's own timing at the start: the
/// GPU was not in the state it was in then (idle clocks, another process),
/// and the pair's ratio says little either way. Empty when there is none.
static std::string unsteadyBaseline(const Evaluation &Base,
                                    const Evaluation &E) {
  for (const ShapeTiming &T : E.Timings)
    for (const ShapeTiming &B : Base.Timings) {
      if (B.Shape != T.Shape || B.BaselineUs <= 0 || T.BaselineUs <= 0)
        continue;
      double Ratio = T.BaselineUs / B.BaselineUs;
      if (Ratio > 1.5 || Ratio < 1 / 1.5) {
        std::string Out;
        raw_string_ostream OS(Out);
        OS << "the original took " << format("%.2f", T.BaselineUs)
           << " us on shape set '" << T.Shape << "' beside the candidate, "
           << format("%.2f", B.BaselineUs) << " us in its own timing";
        return Out;
      }
    }
  return "";
}

namespace {
struct Entry {
  const Candidate *C;
  const Evaluation *E;
};
} // namespace

static double secondsSince(std::chrono::steady_clock::time_point T) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - T)
      .count();
}

OptimizeOutcome Orchestrator::run(const KernelFacts &Facts) {
  auto RunStart = std::chrono::steady_clock::now();
  OptimizeOutcome Out = search(Facts);
  Out.WallSeconds = secondsSince(RunStart);
  Out.Stages = Out.Baseline.Stages;
  for (const Attempt &A : Out.Attempts)
    Out.Stages += A.E.Stages;
  return Out;
}

OptimizeOutcome Orchestrator::search(const KernelFacts &Facts) {
  OptimizeOutcome Out;
  Out.Kernel = Facts.Kernel;
  auto BaselineStart = std::chrono::steady_clock::now();
  Out.Baseline = TheProfiler.profileBaseline();
  Out.BaselineSeconds = secondsSince(BaselineStart);
  if (!Out.Baseline.profiled()) {
    Out.StopReason = "the baseline could not be run: " + Out.Baseline.Detail;
    Out.NoWinnerReason = Out.StopReason;
    return Out;
  }

  // A timing whose original ran far from its own earlier time is done once
  // more (measured on the H100: a 5.6 us kernel timed at 33.8 us beside a
  // candidate after a long verification, which sank a candidate 3.4-3.6x
  // faster on the large shape sets). Returns what the attempt's
  // outcome says about it (empty for a steady timing).
  auto RetimeIfUnsteady = [&](const Candidate &C, Evaluation &E,
                              auto &&Note) -> std::string {
    std::string Odd = unsteadyBaseline(Out.Baseline, E);
    if (Odd.empty())
      return "";
    Note("timing again: " + Odd);
    TheProfiler.retime(C, E);
    return " (timed twice: " + Odd + ")";
  };

  // Stable storage: the beam and the planning state point into these.
  std::deque<Candidate> Candidates;
  std::deque<Evaluation> Evaluations;
  std::map<std::string, size_t> ById;
  Candidates.push_back(Candidate());
  Evaluations.push_back(Out.Baseline);
  ById["baseline"] = 0;
  std::map<std::string, std::string> SeenHash; // content hash -> candidate id

  std::vector<Entry> Beam;
  std::string BestId;
  double BestScore = 1.0;
  unsigned RoundsWithoutGain = 0;
  PlanningState State;
  State.Facts = &Facts;
  State.Rounds = Opts.Rounds;
  State.Baseline = &Evaluations.front();
  State.History = &Out.Attempts;

  // Keeps a verified and timed candidate: a parent worth extending when
  // faster on average, even when not yet faster on every shape set; the
  // best so far when acceptable and faster than it (then true).
  auto Keep = [&](const Candidate &C, const Evaluation &E) {
    Candidates.push_back(C);
    Evaluations.push_back(E);
    ById[C.Id] = Candidates.size() - 1;
    double Score = E.geomeanSpeedup();
    if (Score > 1.0)
      Beam.push_back({&Candidates.back(), &Evaluations.back()});
    if (!acceptable(E) || Score <= BestScore)
      return false;
    BestScore = Score;
    BestId = C.Id;
    return true;
  };

  // Known winners with their confirmed evaluation on these shape sets (a
  // shape-split half, given the unsplit run's winner): the code is made,
  // not run again; it is a parent and a winner like the others, and needs
  // no second confirmation.
  unsigned KnownTaken = 0;
  for (const KnownWinner &K : Facts.KnownWinners) {
    if (!K.E.verified() || !K.E.profiled())
      continue;
    Expected<Candidate> C = TheCoder.realize(K.P, Candidates.front(), State);
    if (!C) {
      consumeError(C.takeError());
      continue;
    }
    if (C->Files.empty() || SeenHash.count(C->contentHash()))
      continue;
    C->Id = KnownWinnerIdPrefix + std::to_string(++KnownTaken);
    C->ParentId = "baseline";
    if (C->Rationale.empty())
      C->Rationale = K.P.Rationale;
    SeenHash[C->contentHash()] = C->Id;
    State.TriedLabels.insert(K.P.ParentId + ":" + K.P.label());
    Attempt A;
    A.Round = 1;
    A.P = K.P;
    A.C = *C;
    A.E = K.E;
    double Score = K.E.geomeanSpeedup();
    A.Outcome = std::string(acceptable(K.E) ? "faster" : "known") + ": " +
                fmtSpeedup(Score) + " geomean, " +
                fmtSpeedup(K.E.minSpeedup()) +
                " worst shape, as confirmed in the run that found it (not "
                "run again)";
    Keep(*C, K.E);
    if (Progress)
      Progress({Facts.Kernel, 1, Opts.Rounds, 0, 0, K.P.label(), BestScore,
                "known winner (" + K.P.label() + "): " + A.Outcome});
    Out.Attempts.push_back(std::move(A));
  }

  auto Start = std::chrono::steady_clock::now();
  auto OverBudget = [&] {
    return Opts.TimeBudgetSeconds > 0 &&
           std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         Start)
                   .count() > Opts.TimeBudgetSeconds;
  };
  bool BudgetSpent = false;
  for (unsigned Round = 1; Round <= Opts.Rounds && !BudgetSpent; ++Round) {
    State.Round = Round;
    State.Beam.clear();
    for (const Entry &B : Beam)
      State.Beam.push_back({B.C, B.E});
    std::vector<Plan> Plans = ThePlanner.propose(State, Opts.CandidatesPerRound);
    if (Plans.empty()) {
      Out.StopReason = "the planner had nothing left to try after round " +
                       std::to_string(Round - 1);
      break;
    }
    bool Gained = false;
    // A coder that does not read the attempts codes the whole round first,
    // so the Tester can run the round's tests at once (one per GPU); what
    // follows sees their outcomes in the plans' order either way.
    std::vector<std::optional<Expected<Candidate>>> Coded(Plans.size());
    std::vector<double> CodingSeconds(Plans.size());
    auto Realize = [&](unsigned I) -> Expected<Candidate> {
      const Plan &P = Plans[I];
      auto ParentIt = ById.find(P.ParentId);
      const Candidate &Parent =
          Candidates[ParentIt == ById.end() ? 0 : ParentIt->second];
      Expected<Candidate> C = TheCoder.realize(P, Parent, State);
      if (C) {
        C->Id = "r" + std::to_string(Round) + "c" + std::to_string(I + 1);
        C->ParentId = Parent.Id;
        if (C->Rationale.empty())
          C->Rationale = P.Rationale;
      }
      return C;
    };
    auto Code = [&](unsigned I) {
      auto T0 = std::chrono::steady_clock::now();
      Coded[I].emplace(Realize(I));
      CodingSeconds[I] = secondsSince(T0);
    };
    if (!TheCoder.readsHistory() && !OverBudget()) {
      for (const Plan &P : Plans)
        State.TriedLabels.insert(P.ParentId + ":" + P.label());
      if (TheCoder.concurrent() && Plans.size() > 1) {
        // Side by side: each plan's code depends only on its parent.
        llvm::DefaultThreadPool Pool(
            llvm::hardware_concurrency(Opts.CodingThreads));
        for (unsigned I = 0; I < Plans.size(); ++I)
          Pool.async([&Code, I] { Code(I); });
        Pool.wait();
      } else {
        for (unsigned I = 0; I < Plans.size(); ++I)
          Code(I);
      }
      std::vector<const Candidate *> ToTest;
      std::set<std::string> Hashes;
      for (unsigned I = 0; I < Plans.size(); ++I) {
        Expected<Candidate> &C = *Coded[I];
        if (!C || C->Files.empty())
          continue;
        std::string Hash = C->contentHash();
        if (SeenHash.count(Hash) || !Hashes.insert(Hash).second)
          continue;
        ToTest.push_back(&*C);
      }
      TheTester.prepare(ToTest);
    }
    for (unsigned I = 0; I < Plans.size(); ++I) {
      if (OverBudget()) {
        BudgetSpent = true;
        Out.StopReason = "the time budget (" +
                         std::to_string(int(Opts.TimeBudgetSeconds)) +
                         " s) was spent in round " + std::to_string(Round);
        break;
      }
      const Plan &P = Plans[I];
      Attempt A;
      A.Round = Round;
      A.P = P;
      auto Report = [&](const std::string &Status) {
        if (Progress)
          Progress({Facts.Kernel, Round, Opts.Rounds, I + 1,
                    unsigned(Plans.size()), P.label(), BestScore, Status});
      };
      Report("coding");
      if (!Coded[I]) {
        State.TriedLabels.insert(P.ParentId + ":" + P.label());
        Code(I);
      }
      A.E.Stages.Coding = CodingSeconds[I];
      Expected<Candidate> C = std::move(*Coded[I]);
      if (!C) {
        A.E.S = Evaluation::Status::CoderFailed;
        handleAllErrors(
            C.takeError(),
            [&](const CandidateRejected &R) {
              A.E.S = R.status();
              A.E.Detail = R.message();
            },
            [&](const ErrorInfoBase &E) { A.E.Detail = E.message(); });
        A.Outcome = (A.E.S == Evaluation::Status::CoderFailed
                         ? std::string("no code")
                         : std::string(Evaluation::statusName(A.E.S))) +
                    ": " + A.E.Detail;
        Report(A.Outcome);
        Out.Attempts.push_back(std::move(A));
        continue;
      }
      A.C = *C;
      if (C->Files.empty()) {
        A.Outcome = "unchanged: the plan produced the baseline's code";
        Report(A.Outcome);
        Out.Attempts.push_back(std::move(A));
        continue;
      }
      std::string Hash = C->contentHash();
      if (SeenHash.count(Hash)) {
        A.Outcome = "duplicate of " + SeenHash[Hash];
        Report(A.Outcome);
        Out.Attempts.push_back(std::move(A));
        continue;
      }
      SeenHash[Hash] = C->Id;

      Report("testing");
      auto Secs = [](std::chrono::steady_clock::time_point Since) {
        return " (" +
               std::to_string(int(std::chrono::duration<double>(
                                      std::chrono::steady_clock::now() - Since)
                                      .count() +
                                  0.5)) +
               " s)";
      };
      auto TestStart = std::chrono::steady_clock::now();
      Evaluation E = TheTester.test(*C);
      E.Stages.Coding = CodingSeconds[I];
      std::string TestTime = Secs(TestStart);
      if (!E.verified()) {
        A.E = E;
        A.Outcome = std::string(Evaluation::statusName(E.S)) +
                    (E.Detail.empty() ? "" : ": " + E.Detail);
        Report(std::string(Evaluation::statusName(E.S)) + TestTime);
        Out.Attempts.push_back(std::move(A));
        continue;
      }
      Report("profiling; verified" + TestTime);
      auto ProfileStart = std::chrono::steady_clock::now();
      TheProfiler.profile(*C, E);
      std::string Retimed = RetimeIfUnsteady(*C, E, Report);
      std::string ProfileTime = Secs(ProfileStart);
      A.E = E;
      if (!E.verified() || !E.profiled()) {
        A.Outcome = "run error while timing: " + E.Detail;
        Report(A.Outcome);
        Out.Attempts.push_back(std::move(A));
        continue;
      }
      double Score = E.geomeanSpeedup();
      if (acceptable(E)) {
        A.Outcome = "faster: " + fmtSpeedup(Score) + " geomean, " +
                    fmtSpeedup(E.minSpeedup()) + " worst shape";
      } else if (E.minSpeedup() < 1.0) {
        A.Outcome = "slower on " + slowShapes(E, 1.0);
      } else if (E.minSpeedup() < shapeMargin()) {
        A.Outcome = "not faster by " + fmtSpeedup(shapeMargin()) +
                    " on every shape set (" + slowShapes(E, shapeMargin()) +
                    ")";
      } else {
        A.Outcome = "not faster by " + fmtSpeedup(Opts.MinSpeedup) +
                    " overall (geomean " + fmtSpeedup(Score) + ")";
      }
      A.Outcome += Retimed;
      Gained |= Keep(*C, E);
      Report(A.Outcome + "; profiled" + ProfileTime);
      Out.Attempts.push_back(std::move(A));
    }
    // Code made for plans the budget left untested.
    for (auto &C : Coded)
      if (C && !*C)
        consumeError(C->takeError());
    std::stable_sort(Beam.begin(), Beam.end(), [](const Entry &A, const Entry &B) {
      return A.E->geomeanSpeedup() > B.E->geomeanSpeedup();
    });
    if (Beam.size() > Opts.BeamWidth)
      Beam.resize(Opts.BeamWidth);

    if (!BestId.empty()) {
      const Evaluation &BE = Evaluations[ById[BestId]];
      bool AtRoof = true;
      for (const ShapeTiming &T : BE.Timings)
        AtRoof &= T.CandidateRoofline >= Opts.RooflineStop;
      if (AtRoof) {
        Out.StopReason = "within " +
                         std::to_string(int((1 - Opts.RooflineStop) * 100 + 0.5)) +
                         "% of the roofline on every shape set after round " +
                         std::to_string(Round);
        break;
      }
    }
    if (BudgetSpent)
      break;
    RoundsWithoutGain = Gained ? 0 : RoundsWithoutGain + 1;
    if (RoundsWithoutGain >= 2) {
      Out.StopReason = "no improvement in rounds " + std::to_string(Round - 1) +
                       " and " + std::to_string(Round);
      break;
    }
    if (Round == Opts.Rounds)
      Out.StopReason = "all " + std::to_string(Opts.Rounds) + " rounds done";
  }

  Out.RoundsSeconds = secondsSince(Start);
  auto ConfirmStart = std::chrono::steady_clock::now();
  // Rank every acceptable candidate; confirm from the best down.
  std::vector<size_t> Ranked;
  for (size_t I = 1; I < Candidates.size(); ++I)
    if (acceptable(Evaluations[I]))
      Ranked.push_back(I);
  std::stable_sort(Ranked.begin(), Ranked.end(), [&](size_t A, size_t B) {
    return Evaluations[A].geomeanSpeedup() > Evaluations[B].geomeanSpeedup();
  });
  // Candidates closer to the fastest than the margin a candidate must beat
  // the original by are a tie the timer cannot settle: which of them times
  // faster changes from run to run and from GPU to GPU. The simplest of them
  // (fewest passes, then the earliest made) is confirmed first, so that the
  // winner, and the file written, do not depend on which GPU timed it.
  if (!Ranked.empty()) {
    double Top = Evaluations[Ranked.front()].geomeanSpeedup();
    auto Pick = Ranked.begin();
    for (auto It = Ranked.begin(); It != Ranked.end(); ++It) {
      if (Evaluations[*It].geomeanSpeedup() * Opts.MinSpeedup < Top)
        break;
      size_t N = Candidates[*It].Lineage.size(),
             PickN = Candidates[*Pick].Lineage.size();
      if (N < PickN || (N == PickN && *It < *Pick))
        Pick = It;
    }
    std::rotate(Ranked.begin(), Pick, std::next(Pick));
  }
  // At most three confirmations: each costs a full test and timing.
  if (Ranked.size() > 3)
    Ranked.resize(3);
  for (size_t Idx : Ranked) {
    const Candidate &C = Candidates[Idx];
    if (!Opts.Confirm || isKnownWinner(C)) {
      Out.Winner = C;
      Out.WinnerEval = Evaluations[Idx];
      break;
    }
    if (Progress)
      Progress({Facts.Kernel, Opts.Rounds, Opts.Rounds, 0, 0, C.Id,
                BestScore, "confirming " + C.Id});
    Evaluation E = TheTester.test(C);
    std::string Retimed;
    if (E.verified()) {
      TheProfiler.profile(C, E);
      if (E.verified())
        Retimed = RetimeIfUnsteady(C, E, [](const std::string &) {});
    }
    Attempt A;
    A.Round = 0;
    A.P.Rationale = "confirmation of " + C.Id + " with fresh seeds and timing";
    A.C = C;
    A.E = E;
    if (acceptable(E)) {
      A.Outcome =
          "confirmed: " + fmtSpeedup(E.geomeanSpeedup()) + " geomean" + Retimed;
      Out.Attempts.push_back(A);
      Out.Winner = C;
      Out.WinnerEval = E;
      break;
    }
    A.Outcome = !E.verified()
                    ? std::string("failed confirmation: ") +
                          Evaluation::statusName(E.S) + ": " + E.Detail
                    : "not confirmed: " +
                          (E.minSpeedup() < shapeMargin()
                               ? slowShapes(E, shapeMargin())
                               : "geomean " +
                                     fmtSpeedup(E.geomeanSpeedup()));
    Out.Attempts.push_back(A);
  }
  Out.ConfirmSeconds = secondsSince(ConfirmStart);
  if (!Out.Winner) {
    if (Ranked.empty()) {
      unsigned Verified = 0;
      for (const Attempt &A : Out.Attempts)
        Verified += A.E.verified();
      Out.NoWinnerReason =
          Out.Attempts.empty()
              ? "no candidate was produced"
              : Verified == 0
                    ? "no candidate passed the compile gate and the "
                      "differential test"
                    : "no verified candidate was faster than the original by " +
                          rule();
    } else {
      Out.NoWinnerReason = "the faster candidates did not hold up when "
                           "confirmed with fresh seeds and a fresh timing";
    }
  }
  return Out;
}

} // namespace astra
