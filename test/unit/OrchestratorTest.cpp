//===- OrchestratorTest.cpp - The optimization loop with fake agents ------===//
//
// Pure logic: the coder, tester and profiler are scripted, so these tests
// check the loop's decisions (what wins, what is rejected, when it stops),
// not the engine.
//
//===----------------------------------------------------------------------===//
#include "astra/Agents/OfflinePlanner.h"
#include "astra/Agents/Orchestrator.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "gtest/gtest.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <thread>

using namespace astra;
using namespace llvm;

namespace {

/// Code is the pipeline's name, so equal pipelines give equal code.
class FakeCoder : public Coder {
public:
  StringRef name() const override { return "fake"; }
  Expected<Candidate> realize(const Plan &P, const Candidate &Parent,
                              const PlanningState &) override {
    if (is_contained(P.Passes, "nocode"))
      return createStringError(inconvertibleErrorCode(), "no code block");
    Candidate C;
    C.Origin = "passes";
    C.Lineage = P.Passes;
    C.Params = P.Params;
    std::string Key = join(P.Passes, "+");
    for (auto &[K, V] : P.Params)
      Key += "," + K + "=" + V;
    if (Key != "noop")
      C.Files["/k.cu"] = Key;
    return C;
  }
};

/// Per pipeline key: verified or not, and a speedup per shape set.
struct Script {
  std::map<std::string, std::vector<double>> Speedups;
  std::map<std::string, Evaluation::Status> Failures;
  /// Keys whose second test fails (the confirmation).
  std::map<std::string, int> FailOnTestNumber;
  /// Keys whose first timing finds the GPU in another state: the original
  /// and the candidate both take this many microseconds on "decode" instead
  /// of the original's 100.
  std::map<std::string, double> UnsteadyOnce;
};

class FakeTester : public Tester {
public:
  explicit FakeTester(Script &S) : S(S) {}
  Evaluation test(const Candidate &C) override {
    std::string Key = C.Files.count("/k.cu") ? C.Files.at("/k.cu") : "";
    int N = ++Calls[Key];
    Evaluation E;
    E.S = Evaluation::Status::Verified;
    auto F = S.Failures.find(Key);
    if (F != S.Failures.end()) {
      E.S = F->second;
      E.Detail = "planted failure";
    }
    auto FN = S.FailOnTestNumber.find(Key);
    if (FN != S.FailOnTestNumber.end() && FN->second == N) {
      E.S = Evaluation::Status::WrongResult;
      E.Detail = "out[7]: expected 1, got 2 (seed 99)";
    }
    return E;
  }
  Script &S;
  std::map<std::string, int> Calls;
};

class FakeProfiler : public Profiler {
public:
  explicit FakeProfiler(Script &S) : S(S) {}
  void profile(const Candidate &C, Evaluation &E) override {
    std::string Key = C.Files.at("/k.cu");
    std::vector<double> Sp = S.Speedups.count(Key)
                                 ? S.Speedups[Key]
                                 : std::vector<double>{1.0, 1.0};
    bool Unsteady = S.UnsteadyOnce.count(Key) && ++Profiles[Key] == 1;
    for (size_t I = 0; I < Sp.size(); ++I) {
      ShapeTiming T;
      T.Shape = I == 0 ? "decode" : "prefill";
      T.BaselineUs = 100;
      T.CandidateUs = 100 / Sp[I];
      if (Unsteady && I == 0)
        T.BaselineUs = T.CandidateUs = S.UnsteadyOnce[Key];
      T.BaselineRoofline = 0.5;
      T.CandidateRoofline = 0.5 * Sp[I];
      E.Timings.push_back(T);
    }
  }
  void retime(const Candidate &C, Evaluation &E) override {
    ++Retimes;
    E.Timings.clear();
    profile(C, E);
  }
  Evaluation profileBaseline() override {
    Evaluation E;
    E.S = Evaluation::Status::Verified;
    for (const char *Shape : {"decode", "prefill"}) {
      ShapeTiming T;
      T.Shape = Shape;
      T.BaselineUs = T.CandidateUs = 100;
      T.BaselineRoofline = T.CandidateRoofline = 0.5;
      E.Timings.push_back(T);
    }
    return E;
  }
  Script &S;
  std::map<std::string, int> Profiles;
  int Retimes = 0;
};

/// Proposes a fixed list per round.
class ListPlanner : public Planner {
public:
  std::vector<std::vector<std::vector<std::string>>> Rounds;
  StringRef name() const override { return "list"; }
  std::vector<Plan> propose(const PlanningState &S, unsigned Max) override {
    std::vector<Plan> Out;
    if (S.Round > Rounds.size())
      return Out;
    for (auto &Passes : Rounds[S.Round - 1]) {
      Plan P;
      P.Passes = Passes;
      Out.push_back(P);
    }
    return Out;
  }
};

KernelFacts facts() {
  KernelFacts F;
  F.Kernel = "k";
  return F;
}

TEST(Orchestrator, PicksTheFastestVerifiedCandidate) {
  Script S;
  S.Speedups["a"] = {1.2, 1.3};
  S.Speedups["b"] = {1.5, 1.6};
  S.Speedups["c"] = {3.0, 3.0};
  S.Failures["c"] = Evaluation::Status::WrongResult; // Fast but wrong.
  ListPlanner P;
  P.Rounds = {{{"a"}, {"b"}, {"c"}}};
  FakeCoder C;
  FakeTester T(S);
  FakeProfiler Pr(S);
  OrchestratorOptions O;
  O.Rounds = 1;
  Orchestrator Orc(P, C, T, Pr, O);
  OptimizeOutcome Out = Orc.run(facts());
  ASSERT_TRUE(Out.Winner.has_value());
  EXPECT_EQ(Out.Winner->Files.at("/k.cu"), "b");
  EXPECT_NEAR(Out.WinnerEval.geomeanSpeedup(), std::sqrt(1.5 * 1.6), 1e-9);
  // The wrong candidate is recorded as such and never considered.
  bool SawWrong = false;
  for (const Attempt &A : Out.Attempts)
    if (A.C.Files.count("/k.cu") && A.C.Files.at("/k.cu") == "c") {
      SawWrong = true;
      EXPECT_EQ(A.E.S, Evaluation::Status::WrongResult);
      EXPECT_NE(A.Outcome.find("wrong result"), std::string::npos);
    }
  EXPECT_TRUE(SawWrong);
  // The last attempt is the confirmation of the winner.
  EXPECT_NE(Out.Attempts.back().Outcome.find("confirmed"), std::string::npos);
}

/// An evaluation confirmed elsewhere: \p Speedups on decode and prefill.
static Evaluation confirmedElsewhere(std::vector<double> Speedups) {
  Evaluation E;
  E.S = Evaluation::Status::Verified;
  for (size_t I = 0; I < Speedups.size(); ++I) {
    ShapeTiming T;
    T.Shape = I == 0 ? "decode" : "prefill";
    T.BaselineUs = 100;
    T.CandidateUs = 100 / Speedups[I];
    E.Timings.push_back(T);
  }
  return E;
}

/// Two candidates within the noise margin of each other: whichever times
/// faster, the one with fewer passes wins, so one GPU and another (or two
/// runs) write the same file.
TEST(Orchestrator, ATieWithinTheMarginGoesToTheSimplerCandidate) {
  for (double Full : {9.88, 9.86}) {
    Script S;
    S.Speedups["a+b+c"] = {Full, Full};
    S.Speedups["b"] = {9.87, 9.87};
    S.Speedups["a"] = {1.5, 1.5};
    ListPlanner P;
    P.Rounds = {{{"a", "b", "c"}, {"b"}, {"a"}}};
    FakeCoder C;
    FakeTester T(S);
    FakeProfiler Pr(S);
    OrchestratorOptions O;
    O.Rounds = 1;
    Orchestrator Orc(P, C, T, Pr, O);
    OptimizeOutcome Out = Orc.run(facts());
    ASSERT_TRUE(Out.Winner.has_value());
    EXPECT_EQ(Out.Winner->Files.at("/k.cu"), "b") << "a+b+c at " << Full;
  }
  // Beyond the margin the faster one wins although it has more passes.
  Script S;
  S.Speedups["a+b+c"] = {12.0, 12.0};
  S.Speedups["b"] = {9.87, 9.87};
  ListPlanner P;
  P.Rounds = {{{"a", "b", "c"}, {"b"}}};
  FakeCoder C;
  FakeTester T(S);
  FakeProfiler Pr(S);
  OrchestratorOptions O;
  O.Rounds = 1;
  Orchestrator Orc(P, C, T, Pr, O);
  OptimizeOutcome Out = Orc.run(facts());
  ASSERT_TRUE(Out.Winner.has_value());
  EXPECT_EQ(Out.Winner->Files.at("/k.cu"), "a+b+c");
}

TEST(Orchestrator, KnownWinnerIsTakenWithoutRunningItAgain) {
  // A shape-split half given the unsplit run's winner with its confirmed
  // evaluation: the code is made but neither tested nor timed; nothing the
  // planner finds beats it, so it wins without a second confirmation.
  Script S;
  S.Speedups["a"] = {1.1, 1.1};
  ListPlanner P;
  P.Rounds = {{{"a"}}};
  FakeCoder C;
  FakeTester T(S);
  FakeProfiler Pr(S);
  OrchestratorOptions O;
  O.Rounds = 1;
  KernelFacts F = facts();
  Plan W;
  W.Passes = {"known"};
  F.KnownWinners.push_back({W, confirmedElsewhere({1.5, 1.6})});
  Orchestrator Orc(P, C, T, Pr, O);
  OptimizeOutcome Out = Orc.run(F);
  ASSERT_TRUE(Out.Winner.has_value());
  EXPECT_EQ(Out.Winner->Files.at("/k.cu"), "known");
  EXPECT_NEAR(Out.WinnerEval.geomeanSpeedup(), std::sqrt(1.5 * 1.6), 1e-9);
  EXPECT_EQ(T.Calls.count("known"), 0u) << "never tested again";
  EXPECT_EQ(Pr.Profiles.count("known"), 0u);
  EXPECT_EQ(T.Calls["a"], 1) << "the loser is not confirmed";
  ASSERT_FALSE(Out.Attempts.empty());
  EXPECT_NE(Out.Attempts.front().Outcome.find("not run again"),
            std::string::npos);

  // A candidate faster than it wins, confirmed as usual; a known winner
  // without an evaluation is only a plan (the planner's business).
  Script S2;
  S2.Speedups["b"] = {2.0, 2.0};
  ListPlanner P2;
  P2.Rounds = {{{"b"}}};
  FakeTester T2(S2);
  FakeProfiler Pr2(S2);
  KernelFacts F2 = facts();
  F2.KnownWinners.push_back({W, confirmedElsewhere({1.5, 1.6})});
  Plan Unknown;
  Unknown.Passes = {"unknown"};
  F2.KnownWinners.push_back({Unknown, Evaluation()});
  Orchestrator Orc2(P2, C, T2, Pr2, O);
  Out = Orc2.run(F2);
  ASSERT_TRUE(Out.Winner.has_value());
  EXPECT_EQ(Out.Winner->Files.at("/k.cu"), "b");
  EXPECT_EQ(T2.Calls["b"], 2) << "tested, then confirmed";
  EXPECT_EQ(T2.Calls.count("unknown"), 0u);
}

TEST(Orchestrator, TimesAgainWhenTheOriginalRanFarFromItsOwnTime) {
  // The first timing finds the original at 600 us on "decode" (100 us in
  // its own timing) and the candidate no faster there: timed again, the
  // candidate's 3x shows and it wins. A steady timing is not repeated.
  struct {
    Script S;
    ListPlanner P;
    FakeCoder C;
  } H;
  H.S.Speedups["staged"] = {3.0, 1.3};
  H.S.UnsteadyOnce["staged"] = 600;
  H.S.Speedups["steady"] = {1.1, 1.1};
  H.P.Rounds = {{{"staged"}, {"steady"}}};
  FakeTester T(H.S);
  FakeProfiler Pr(H.S);
  OrchestratorOptions Opts;
  Opts.Rounds = 1;
  OptimizeOutcome Out = Orchestrator(H.P, H.C, T, Pr, Opts).run(facts());
  ASSERT_TRUE(Out.Winner.has_value());
  EXPECT_EQ(Out.Winner->Files.at("/k.cu"), "staged");
  EXPECT_EQ(Pr.Retimes, 1);
  ASSERT_GE(Out.Attempts.size(), 2u);
  EXPECT_NE(Out.Attempts[0].Outcome.find(
                "faster: 1.97x geomean, 1.30x worst shape (timed twice: the "
                "original took 600.00 us on shape set 'decode' beside the "
                "candidate, 100.00 us in its own timing)"),
            std::string::npos)
      << Out.Attempts[0].Outcome;
  EXPECT_EQ(Out.Attempts[1].Outcome.find("timed twice"), std::string::npos)
      << Out.Attempts[1].Outcome;
}

TEST(Orchestrator, NeverAcceptsARegressionOnAnyShapeSet) {
  Script S;
  S.Speedups["fast-on-average"] = {2.0, 0.95};
  ListPlanner P;
  P.Rounds = {{{"fast-on-average"}}};
  FakeCoder C;
  FakeTester T(S);
  FakeProfiler Pr(S);
  OrchestratorOptions O;
  O.Rounds = 1;
  OptimizeOutcome Out = Orchestrator(P, C, T, Pr, O).run(facts());
  EXPECT_FALSE(Out.Winner.has_value());
  ASSERT_EQ(Out.Attempts.size(), 1u);
  EXPECT_NE(Out.Attempts[0].Outcome.find("slower on prefill 0.95x"),
            std::string::npos)
      << Out.Attempts[0].Outcome;
  EXPECT_NE(Out.NoWinnerReason.find("every shape set"), std::string::npos);

  O.AllowShapeRegression = true;
  FakeTester T2(S);
  OptimizeOutcome Out2 = Orchestrator(P, C, T2, Pr, O).run(facts());
  EXPECT_TRUE(Out2.Winner.has_value());
}

TEST(Orchestrator, SpeedupMustClearTheNoiseMargin) {
  Script S;
  S.Speedups["tiny"] = {1.01, 1.01};
  ListPlanner P;
  P.Rounds = {{{"tiny"}}};
  FakeCoder C;
  FakeTester T(S);
  FakeProfiler Pr(S);
  OrchestratorOptions O;
  O.Rounds = 1;
  OptimizeOutcome Out = Orchestrator(P, C, T, Pr, O).run(facts());
  EXPECT_FALSE(Out.Winner.has_value());
  EXPECT_NE(Out.Attempts[0].Outcome.find("not faster by 1.02x"),
            std::string::npos);
}

TEST(Orchestrator, ShapeMarginCanAskNotSlowerAndFasterOverall) {
  // gelu on the H100: 1.32x on the large set, under 1.02x on the 7 us one.
  Script S;
  S.Speedups["gelu"] = {1.01, 1.32};
  S.Speedups["slower"] = {0.99, 1.5};
  S.Speedups["flat"] = {1.0, 1.02};
  auto Run = [&](std::vector<std::string> Pipeline,
                 std::optional<double> ShapeMargin) {
    ListPlanner P;
    P.Rounds = {{Pipeline}};
    FakeCoder C;
    FakeTester T(S);
    FakeProfiler Pr(S);
    OrchestratorOptions O;
    O.Rounds = 1;
    O.MinShapeSpeedup = ShapeMargin;
    return Orchestrator(P, C, T, Pr, O).run(facts());
  };
  // The default: 1.02x on every shape set.
  OptimizeOutcome Strict = Run({"gelu"}, std::nullopt);
  EXPECT_FALSE(Strict.Winner.has_value());
  EXPECT_NE(Strict.Attempts[0].Outcome.find(
                "not faster by 1.02x on every shape set (decode 1.01x)"),
            std::string::npos)
      << Strict.Attempts[0].Outcome;
  EXPECT_NE(Strict.NoWinnerReason.find("by 1.02x on every shape set"),
            std::string::npos);
  // Not slower anywhere and 1.15x overall: accepted and confirmed.
  OptimizeOutcome Relaxed = Run({"gelu"}, 1.0);
  ASSERT_TRUE(Relaxed.Winner.has_value());
  EXPECT_NEAR(Relaxed.WinnerEval.geomeanSpeedup(), std::sqrt(1.01 * 1.32),
              1e-9);
  // Slower on one set: never, whatever the other set gains.
  OptimizeOutcome Slower = Run({"slower"}, 1.0);
  EXPECT_FALSE(Slower.Winner.has_value());
  EXPECT_NE(Slower.Attempts[0].Outcome.find("slower on decode 0.99x"),
            std::string::npos);
  // Not slower, but not 1.02x overall either.
  OptimizeOutcome Flat = Run({"flat"}, 1.0);
  EXPECT_FALSE(Flat.Winner.has_value());
  EXPECT_NE(Flat.Attempts[0].Outcome.find("not faster by 1.02x overall"),
            std::string::npos)
      << Flat.Attempts[0].Outcome;
  EXPECT_NE(Flat.NoWinnerReason.find("by 1.02x overall and 1.00x on every "
                                     "shape set"),
            std::string::npos)
      << Flat.NoWinnerReason;
}

TEST(Orchestrator, FailedConfirmationFallsBackToTheNextBest) {
  Script S;
  S.Speedups["best"] = {2.0, 2.0};
  S.Speedups["second"] = {1.4, 1.4};
  S.FailOnTestNumber["best"] = 2; // Passes once, fails when confirmed.
  ListPlanner P;
  P.Rounds = {{{"best"}, {"second"}}};
  FakeCoder C;
  FakeTester T(S);
  FakeProfiler Pr(S);
  OrchestratorOptions O;
  O.Rounds = 1;
  OptimizeOutcome Out = Orchestrator(P, C, T, Pr, O).run(facts());
  ASSERT_TRUE(Out.Winner.has_value());
  EXPECT_EQ(Out.Winner->Files.at("/k.cu"), "second");
  bool SawFailedConfirmation = false;
  for (const Attempt &A : Out.Attempts)
    SawFailedConfirmation |=
        A.Outcome.find("failed confirmation") != std::string::npos;
  EXPECT_TRUE(SawFailedConfirmation);
}

TEST(Orchestrator, DuplicatesUnchangedAndCoderFailuresCostNoTest) {
  Script S;
  ListPlanner P;
  P.Rounds = {{{"x"}, {"x"}, {"noop"}, {"nocode"}}};
  FakeCoder C;
  FakeTester T(S);
  FakeProfiler Pr(S);
  OrchestratorOptions O;
  O.Rounds = 1;
  OptimizeOutcome Out = Orchestrator(P, C, T, Pr, O).run(facts());
  ASSERT_EQ(Out.Attempts.size(), 4u);
  EXPECT_NE(Out.Attempts[1].Outcome.find("duplicate of r1c1"), std::string::npos);
  EXPECT_NE(Out.Attempts[2].Outcome.find("unchanged"), std::string::npos);
  EXPECT_NE(Out.Attempts[3].Outcome.find("no code"), std::string::npos);
  EXPECT_EQ(T.Calls["x"], 1);
}

/// Records what it was asked to prepare and test, and in which order.
class RecordingTester : public FakeTester {
public:
  using FakeTester::FakeTester;
  void prepare(ArrayRef<const Candidate *> Cs) override {
    std::vector<std::string> Ids;
    for (const Candidate *C : Cs)
      Ids.push_back(C->Id + "=" + C->Files.at("/k.cu"));
    Prepared.push_back(Ids);
  }
  Evaluation test(const Candidate &C) override {
    Tested.push_back(C.Id);
    return FakeTester::test(C);
  }
  std::vector<std::vector<std::string>> Prepared;
  std::vector<std::string> Tested;
};

class HistoryCoder : public FakeCoder {
public:
  bool readsHistory() const override { return true; }
};

TEST(Orchestrator, PreparesARoundsTestsAndReadsThemInPlanOrder) {
  Script S;
  S.Speedups = {{"b", {1.5, 1.5}}};
  ListPlanner P;
  // A duplicate, a plan without code and one whose code is the original's
  // are not tested, so not prepared either.
  P.Rounds = {{{"a"}, {"b"}, {"a"}, {"nocode"}, {"noop"}, {"c"}},
              {{"b", "d"}}};
  FakeCoder C;
  RecordingTester T(S);
  FakeProfiler Pr(S);
  OrchestratorOptions O;
  O.Rounds = 2;
  OptimizeOutcome Out = Orchestrator(P, C, T, Pr, O).run(facts());
  ASSERT_GE(T.Prepared.size(), 2u);
  EXPECT_EQ(T.Prepared[0],
            (std::vector<std::string>{"r1c1=a", "r1c2=b", "r1c6=c"}));
  EXPECT_EQ(T.Prepared[1], (std::vector<std::string>{"r2c1=b+d"}));
  // The tests come in the plans' order; the winner's confirmation last.
  ASSERT_GE(T.Tested.size(), 4u);
  EXPECT_EQ(std::vector<std::string>(T.Tested.begin(), T.Tested.begin() + 4),
            (std::vector<std::string>{"r1c1", "r1c2", "r1c6", "r2c1"}));
  EXPECT_NE(Out.Attempts[2].Outcome.find("duplicate of r1c1"),
            std::string::npos);
}

TEST(Orchestrator, ACoderThatReadsTheAttemptsCodesOneAtATime) {
  Script S;
  ListPlanner P;
  P.Rounds = {{{"a"}, {"b"}}};
  HistoryCoder C;
  RecordingTester T(S);
  FakeProfiler Pr(S);
  OrchestratorOptions O;
  O.Rounds = 1;
  Orchestrator(P, C, T, Pr, O).run(facts());
  EXPECT_TRUE(T.Prepared.empty());
  EXPECT_EQ(T.Tested, (std::vector<std::string>{"r1c1", "r1c2"}));
}

/// A coder whose realize() may run on several threads: it waits a little
/// and counts how many ran at once.
class ConcurrentCoder : public FakeCoder {
public:
  bool concurrent() const override { return true; }
  Expected<Candidate> realize(const Plan &P, const Candidate &Parent,
                              const PlanningState &S) override {
    unsigned Now = ++Running;
    unsigned Seen = MostAtOnce.load();
    while (Now > Seen && !MostAtOnce.compare_exchange_weak(Seen, Now))
      ;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    --Running;
    return FakeCoder::realize(P, Parent, S);
  }
  std::atomic<unsigned> Running{0}, MostAtOnce{0};
};

TEST(Orchestrator, ACoderThatAllowsItCodesTheRoundSideBySideWithTheSameOutcome) {
  Script S;
  S.Speedups = {{"b", {1.5, 1.5}}, {"b+d", {1.8, 1.7}}};
  S.Failures = {{"c", Evaluation::Status::WrongResult}};
  ListPlanner P;
  P.Rounds = {{{"a"}, {"b"}, {"a"}, {"nocode"}, {"noop"}, {"c"}},
              {{"b", "d"}, {"e"}}};
  OrchestratorOptions O;
  O.Rounds = 2;
  O.CodingThreads = 4;
  auto Run = [&](Coder &C, std::vector<std::string> &Tested) {
    RecordingTester T(S);
    FakeProfiler Pr(S);
    OptimizeOutcome Out = Orchestrator(P, C, T, Pr, O).run(facts());
    Tested = T.Tested;
    return Out;
  };
  FakeCoder Serial;
  ConcurrentCoder Side;
  std::vector<std::string> SerialTests, SideTests;
  OptimizeOutcome A = Run(Serial, SerialTests), B = Run(Side, SideTests);
  EXPECT_GE(Side.MostAtOnce.load(), 2u);
  EXPECT_EQ(SerialTests, SideTests);
  ASSERT_EQ(A.Attempts.size(), B.Attempts.size());
  for (size_t I = 0; I < A.Attempts.size(); ++I) {
    EXPECT_EQ(A.Attempts[I].C.Id, B.Attempts[I].C.Id);
    EXPECT_EQ(A.Attempts[I].Outcome, B.Attempts[I].Outcome);
  }
  ASSERT_TRUE(A.Winner && B.Winner);
  EXPECT_EQ(A.Winner->Id, B.Winner->Id);
  // Each attempt's coding time is its own; the outcome sums them.
  double Coding = 0;
  for (const Attempt &At : B.Attempts)
    Coding += At.E.Stages.Coding;
  EXPECT_GE(B.Attempts[0].E.Stages.Coding, 0.04);
  EXPECT_DOUBLE_EQ(B.Stages.Coding, Coding);
  EXPECT_GE(B.WallSeconds, B.RoundsSeconds);
}

TEST(Orchestrator, StopsAfterTwoRoundsWithoutGain) {
  Script S;
  S.Speedups["a"] = {1.3, 1.3};
  ListPlanner P;
  P.Rounds = {{{"a"}}, {{"b"}}, {{"c"}}, {{"d"}}, {{"e"}}};
  FakeCoder C;
  FakeTester T(S);
  FakeProfiler Pr(S);
  OrchestratorOptions O;
  O.Rounds = 5;
  OptimizeOutcome Out = Orchestrator(P, C, T, Pr, O).run(facts());
  EXPECT_NE(Out.StopReason.find("no improvement in rounds 2 and 3"),
            std::string::npos)
      << Out.StopReason;
  EXPECT_FALSE(T.Calls.count("d"));
}

TEST(Orchestrator, StopsWhenTheTimeBudgetIsSpent) {
  Script S;
  S.Speedups["a"] = {1.3, 1.3};
  ListPlanner P;
  P.Rounds = {{{"a"}, {"b"}}, {{"c"}}};
  FakeCoder C;
  FakeTester T(S);
  FakeProfiler Pr(S);
  OrchestratorOptions O;
  O.TimeBudgetSeconds = 1e-9; // Spent before the first candidate.
  OptimizeOutcome Out = Orchestrator(P, C, T, Pr, O).run(facts());
  EXPECT_NE(Out.StopReason.find("time budget"), std::string::npos)
      << Out.StopReason;
  EXPECT_TRUE(Out.Attempts.empty());
  EXPECT_FALSE(T.Calls.count("a"));
  EXPECT_FALSE(Out.Winner.has_value());
}

TEST(Orchestrator, StopsAtTheRoofline) {
  Script S;
  S.Speedups["roof"] = {1.95, 1.95}; // 0.5 * 1.95 = 97.5% of roofline.
  ListPlanner P;
  P.Rounds = {{{"roof"}}, {{"more"}}};
  FakeCoder C;
  FakeTester T(S);
  FakeProfiler Pr(S);
  OrchestratorOptions O;
  OptimizeOutcome Out = Orchestrator(P, C, T, Pr, O).run(facts());
  EXPECT_NE(Out.StopReason.find("roofline"), std::string::npos);
  EXPECT_FALSE(T.Calls.count("more"));
  EXPECT_TRUE(Out.Winner.has_value());
}

/// A verified evaluation twice as fast as the baseline (one shape set).
static Evaluation twiceAsFast() {
  Evaluation E;
  ShapeTiming T;
  T.BaselineUs = 10;
  T.CandidateUs = 5;
  E.S = Evaluation::Status::Verified;
  E.Timings = {T};
  return E;
}

TEST(OfflinePlanner, FirstRoundCombinesThenRanksSinglePasses) {
  KernelFacts F;
  F.Kernel = "k";
  F.ApplicablePasses = {{"fast-math", {}}, {"restrict-const", {}},
                        {"grid-stride", {}}, {"unroll", {}},
                        {"vectorize", {}}};
  // vectorize fired only on top of restrict-const and grid-stride.
  F.Prerequisites = {{"vectorize", {"restrict-const", "grid-stride"}}};
  Evaluation Base;
  PlanningState St;
  St.Facts = &F;
  St.Round = 1;
  St.Baseline = &Base;
  OfflinePlanner P;
  std::vector<Plan> Plans = P.propose(St, 4);
  ASSERT_EQ(Plans.size(), 4u);
  // All applicable passes in dependency order.
  EXPECT_EQ(join(Plans[0].Passes, ","),
            "restrict-const,grid-stride,vectorize,fast-math,unroll");
  // Memory-bound order: vectorize (with what it needs) first.
  EXPECT_EQ(join(Plans[1].Passes, ","), "restrict-const,grid-stride,vectorize");
  EXPECT_EQ(join(Plans[2].Passes, ","), "grid-stride");
  EXPECT_EQ(join(Plans[3].Passes, ","), "restrict-const");

  // Compute-bound (high arithmetic intensity): fast-math leads.
  F.ArithmeticIntensity = 50;
  std::vector<Plan> CPlans = P.propose(St, 2);
  EXPECT_EQ(join(CPlans[1].Passes, ","), "fast-math");
}

TEST(OfflinePlanner, LaterRoundsGrowVaryAndAblateTheBest) {
  KernelFacts F;
  F.Kernel = "k";
  F.ApplicablePasses = {{"vectorize", {}}, {"fast-math", {}}, {"hoist", {}}};
  Evaluation Base, Good = twiceAsFast();
  Candidate Best;
  Best.Id = "r1c2";
  Best.Origin = "passes";
  Best.Lineage = {"vectorize", "fast-math"};
  PlanningState St;
  St.Facts = &F;
  St.Round = 2;
  St.Baseline = &Base;
  St.Beam = {{&Best, &Good}};
  St.TriedLabels.insert("baseline:hoist+vectorize+fast-math");
  OfflinePlanner P;
  std::vector<Plan> Plans = P.propose(St, 10);
  std::vector<std::string> Labels;
  for (const Plan &Pl : Plans)
    Labels.push_back(Pl.label());
  // Growing with hoist was already tried: not proposed again.
  EXPECT_FALSE(is_contained(Labels, "hoist+vectorize+fast-math"));
  EXPECT_TRUE(is_contained(Labels, "vectorize+fast-math(vectorize.bytes=8)"));
  EXPECT_TRUE(is_contained(Labels, "fast-math")); // Ablation: drop vectorize.
  EXPECT_TRUE(is_contained(Labels, "vectorize")); // Ablation: drop fast-math.
}

TEST(OfflinePlanner, DroppingAnEnablerDropsWhatNeedsIt) {
  KernelFacts F;
  F.ApplicablePasses = {{"restrict-const", {}}, {"vectorize", {}},
                        {"fast-math", {}}};
  F.Prerequisites = {{"vectorize", {"restrict-const"}}};
  Evaluation Base, Good = twiceAsFast();
  Candidate Best;
  Best.Id = "r1c1";
  Best.Origin = "passes";
  Best.Lineage = {"restrict-const", "vectorize", "fast-math"};
  PlanningState St;
  St.Facts = &F;
  St.Round = 2;
  St.Baseline = &Base;
  St.Beam = {{&Best, &Good}};
  OfflinePlanner P;
  std::vector<std::string> Labels;
  for (const Plan &Pl : P.propose(St, 20))
    Labels.push_back(Pl.label());
  EXPECT_TRUE(is_contained(Labels, "vectorize+fast-math") == false)
      << "vectorize without restrict-const does not fire";
  EXPECT_TRUE(is_contained(Labels, "fast-math"));
  EXPECT_TRUE(is_contained(Labels, "restrict-const+vectorize"));
}

TEST(OfflinePlanner, CoarsensTheGridAfterVectorizeAndVariesTheFactor) {
  KernelFacts F;
  F.ApplicablePasses = {{"launch-bounds", {}}, {"grid-coarsen", {}},
                        {"vectorize", {}},     {"grid-stride", {}},
                        {"index32", {}}};
  F.Prerequisites = {{"grid-coarsen", {"grid-stride"}},
                     {"vectorize", {"grid-stride"}}};
  Evaluation Base;
  PlanningState St;
  St.Facts = &F;
  St.Round = 1;
  St.Baseline = &Base;
  OfflinePlanner P;
  std::vector<Plan> Plans = P.propose(St, 3);
  ASSERT_FALSE(Plans.empty());
  // After vectorize (whose width is its default factor) and index32, before
  // the launch annotations.
  EXPECT_EQ(join(Plans[0].Passes, ","),
            "grid-stride,vectorize,index32,grid-coarsen,launch-bounds");

  // Once a pipeline with it wins, larger factors are tried on top.
  Evaluation Good = twiceAsFast();
  Candidate Best;
  Best.Id = "r1c1";
  Best.Origin = "passes";
  Best.Lineage = {"grid-stride", "vectorize", "grid-coarsen"};
  Best.GridDivisor = 4;
  St.Round = 2;
  St.Beam = {{&Best, &Good}};
  std::vector<std::string> Labels;
  for (const Plan &Pl : P.propose(St, 20))
    Labels.push_back(Pl.label());
  EXPECT_TRUE(is_contained(
      Labels, "grid-stride+vectorize+grid-coarsen(grid-coarsen.factor=8)"));
  EXPECT_TRUE(is_contained(
      Labels, "grid-stride+vectorize+grid-coarsen(grid-coarsen.factor=16)"));
}

TEST(OfflinePlanner, ComposesFlatVectorizeLikeVectorize) {
  // gather_features: flat-vectorize needs restrict-const and grid-stride,
  // and grid-coarsen (probed on top of it) follows it, as after vectorize.
  KernelFacts F;
  F.ApplicablePasses = {{"grid-coarsen", {}}, {"ldg", {}},
                        {"flat-vectorize", {}}, {"grid-stride", {}},
                        {"restrict-const", {}}, {"index32", {}}};
  F.Prerequisites = {{"flat-vectorize", {"restrict-const", "grid-stride"}},
                     {"grid-coarsen",
                      {"restrict-const", "grid-stride", "flat-vectorize"}}};
  Evaluation Base;
  PlanningState St;
  St.Facts = &F;
  St.Round = 1;
  St.Baseline = &Base;
  OfflinePlanner P;
  std::vector<Plan> Plans = P.propose(St, 20);
  ASSERT_FALSE(Plans.empty());
  EXPECT_EQ(join(Plans[0].Passes, ","),
            "restrict-const,grid-stride,flat-vectorize,ldg,index32,"
            "grid-coarsen");
  std::vector<std::string> Labels;
  for (const Plan &Pl : Plans)
    Labels.push_back(Pl.label());
  // Alone, with what it needs first.
  EXPECT_TRUE(
      is_contained(Labels, "restrict-const+grid-stride+flat-vectorize"));
}

TEST(OfflinePlanner, PutsRowsPerBlockBeforeLaunchBoundsAndVariesTheRows) {
  // merge_attn_states: rows-per-block needs vectorize (whose width divides
  // the row's threads); it changes the block, so it comes after the other
  // launch passes and before launch-bounds, which must bound the real
  // block.
  KernelFacts F;
  F.ApplicablePasses = {{"launch-bounds", {}},  {"rows-per-block", {}},
                        {"vectorize", {}},      {"restrict-const", {}},
                        {"index32", {}}};
  F.Prerequisites = {{"rows-per-block", {"restrict-const", "vectorize"}},
                     {"vectorize", {"restrict-const"}}};
  Evaluation Base;
  PlanningState St;
  St.Facts = &F;
  St.Round = 1;
  St.Baseline = &Base;
  OfflinePlanner P;
  std::vector<Plan> Plans = P.propose(St, 20);
  ASSERT_FALSE(Plans.empty());
  EXPECT_EQ(join(Plans[0].Passes, ","),
            "restrict-const,vectorize,index32,rows-per-block,launch-bounds");

  // Once a pipeline with it wins, 16 rows are tried on top.
  Evaluation Good = twiceAsFast();
  Candidate Best;
  Best.Id = "r1c1";
  Best.Origin = "passes";
  Best.Lineage = {"restrict-const", "vectorize", "rows-per-block"};
  Best.RowDivisor = 8;
  Best.BlockRows = 4;
  St.Round = 2;
  St.Beam = {{&Best, &Good}};
  std::vector<std::string> Labels;
  for (const Plan &Pl : P.propose(St, 20))
    Labels.push_back(Pl.label());
  EXPECT_TRUE(is_contained(
      Labels,
      "restrict-const+vectorize+rows-per-block(rows-per-block.rows=16)"));
}

TEST(OfflinePlanner, OffersRowCooperativeFirstOnAMemoryBoundKernel) {
  // A thread-per-row softmax: row-cooperative, grid-stride and fast-math
  // apply. It is tried alone before the others on a memory-bound kernel
  // and goes right after restrict-const, before grid-stride (which would
  // turn the thread-per-row body into a loop it does not match).
  KernelFacts F;
  F.ApplicablePasses = {{"fast-math", {}},
                        {"grid-stride", {}},
                        {"row-cooperative", {}},
                        {"restrict-const", {}}};
  F.ArithmeticIntensity = 1;
  Evaluation Base;
  PlanningState St;
  St.Facts = &F;
  St.Round = 1;
  St.Baseline = &Base;
  OfflinePlanner P;
  std::vector<Plan> Plans = P.propose(St, 20);
  ASSERT_FALSE(Plans.empty());
  EXPECT_EQ(join(Plans[0].Passes, ","),
            "restrict-const,row-cooperative,grid-stride,fast-math");
  std::vector<std::string> Singles;
  for (const Plan &Pl : Plans)
    if (Pl.Passes.size() == 1)
      Singles.push_back(Pl.Passes[0]);
  ASSERT_FALSE(Singles.empty());
  EXPECT_EQ(Singles[0], "row-cooperative");
}

TEST(OfflinePlanner, OffersWarpPerRowBeforeRowCooperative) {
  // Where both forms apply, the pipeline of everything gets warp-per-row
  // (a warp per row) before row-cooperative (which then refuses its
  // shuffles), and each is tried alone, warp-per-row first.
  KernelFacts F;
  F.ApplicablePasses = {{"fast-math", {}},
                        {"row-cooperative", {}},
                        {"warp-per-row", {}},
                        {"restrict-const", {}}};
  F.ArithmeticIntensity = 1;
  Evaluation Base;
  PlanningState St;
  St.Facts = &F;
  St.Round = 1;
  St.Baseline = &Base;
  OfflinePlanner P;
  std::vector<Plan> Plans = P.propose(St, 20);
  ASSERT_FALSE(Plans.empty());
  EXPECT_EQ(join(Plans[0].Passes, ","),
            "restrict-const,warp-per-row,row-cooperative,fast-math");
  std::vector<std::string> Singles;
  for (const Plan &Pl : Plans)
    if (Pl.Passes.size() == 1)
      Singles.push_back(Pl.Passes[0]);
  ASSERT_GE(Singles.size(), 2u);
  EXPECT_EQ(Singles[0], "warp-per-row");
  EXPECT_EQ(Singles[1], "row-cooperative");
}

TEST(OfflinePlanner, OffersSmemTileFirstOnAMatrixProduct) {
  // A thread-per-output gemm (PolyBench-ACC's): smem-tile, thread-coarsen,
  // hoist and restrict-const apply. The product is compute-bound by its
  // flop count; smem-tile is tried alone first, and in a pipeline it runs
  // right after restrict-const (whose __restrict__ proves its operands
  // unwritten) and before hoist and thread-coarsen, which work on the
  // tiled loop.
  KernelFacts F;
  F.ApplicablePasses = {{"thread-coarsen", {}},
                        {"hoist", {}},
                        {"smem-tile", {}},
                        {"restrict-const", {}}};
  F.ArithmeticIntensity = 150;
  Evaluation Base;
  PlanningState St;
  St.Facts = &F;
  St.Round = 1;
  St.Baseline = &Base;
  OfflinePlanner P;
  std::vector<Plan> Plans = P.propose(St, 20);
  ASSERT_FALSE(Plans.empty());
  EXPECT_EQ(join(Plans[0].Passes, ","),
            "restrict-const,smem-tile,hoist,thread-coarsen");
  std::vector<std::string> Singles;
  for (const Plan &Pl : Plans)
    if (Pl.Passes.size() == 1)
      Singles.push_back(Pl.Passes[0]);
  ASSERT_FALSE(Singles.empty());
  EXPECT_EQ(Singles[0], "smem-tile");
}

TEST(OfflinePlanner, DelinearizeThenThreadCoarsenFoldsTheBlocksRows) {
  // conv1d: thread-coarsen applies once delinearize has made the grid 3-D;
  // the two go right after restrict-const and late respectively, and a plan
  // with both gets 64 x 8 blocks whose 8 rows each thread takes (blocks of
  // one row on the H100); a variant's shape is kept.
  KernelFacts F;
  F.ApplicablePasses = {{"restrict-const", {}}, {"delinearize", {}},
                        {"thread-coarsen", {}}, {"index32", {}}};
  F.Prerequisites = {{"thread-coarsen", {"delinearize"}}};
  F.ArithmeticIntensity = 150;
  Evaluation Base;
  PlanningState St;
  St.Facts = &F;
  St.Round = 1;
  St.Baseline = &Base;
  OfflinePlanner P;
  std::vector<Plan> Plans = P.propose(St, 20);
  ASSERT_FALSE(Plans.empty());
  EXPECT_EQ(Plans[0].label(),
            "restrict-const+delinearize+index32+thread-coarsen"
            "(delinearize.x=64,delinearize.y=8,thread-coarsen.y=8)");
  std::vector<std::string> Labels;
  for (const Plan &Pl : Plans)
    Labels.push_back(Pl.label());
  // delinearize alone keeps its own defaults.
  EXPECT_TRUE(is_contained(Labels, "delinearize"));

  Evaluation Good = twiceAsFast();
  Candidate Best;
  Best.Id = "r1c1";
  Best.Origin = "passes";
  Best.Lineage = {"restrict-const", "delinearize", "thread-coarsen"};
  Best.Params = {{"delinearize.x", "64"},
                 {"delinearize.y", "8"},
                 {"thread-coarsen.y", "8"}};
  St.Round = 2;
  St.Beam = {{&Best, &Good}};
  Labels.clear();
  for (const Plan &Pl : P.propose(St, 40))
    Labels.push_back(Pl.label());
  EXPECT_TRUE(is_contained(
      Labels, "restrict-const+delinearize+thread-coarsen(delinearize.x=256,"
              "delinearize.y=4,thread-coarsen.x=4,thread-coarsen.y=4)"));
}

TEST(OfflinePlanner, DelinearizeThenThreadCoarsenWithoutLaunchBoundSets) {
  // conv1d's large half after shape-split: every set's original runs for
  // milliseconds, so the plan with both passes takes the patch best on
  // large sets (256 x 4 blocks, 4 x 4 outputs per thread); one set of a
  // few microseconds brings back the 64 x 8 shape.
  KernelFacts F;
  F.ApplicablePasses = {{"restrict-const", {}}, {"delinearize", {}},
                        {"thread-coarsen", {}}};
  F.Prerequisites = {{"thread-coarsen", {"delinearize"}}};
  F.ArithmeticIntensity = 150;
  Evaluation Base;
  for (const char *Set : {"kb", "large"}) {
    ShapeTiming T;
    T.Shape = Set;
    T.BaselineUs = T.CandidateUs = 10000;
    Base.Timings.push_back(T);
  }
  PlanningState St;
  St.Facts = &F;
  St.Round = 1;
  St.Baseline = &Base;
  OfflinePlanner P;
  std::vector<Plan> Plans = P.propose(St, 20);
  ASSERT_FALSE(Plans.empty());
  EXPECT_EQ(Plans[0].label(),
            "restrict-const+delinearize+thread-coarsen(delinearize.x=256,"
            "delinearize.y=4,thread-coarsen.x=4,thread-coarsen.y=4)");
  // thread-coarsen alone (sgemm's large half) takes 8 rows per thread.
  KernelFacts G;
  G.ApplicablePasses = {{"thread-coarsen", {}}};
  G.ArithmeticIntensity = 150;
  St.Facts = &G;
  Plans = P.propose(St, 20);
  ASSERT_FALSE(Plans.empty());
  EXPECT_EQ(Plans[0].label(), "thread-coarsen(thread-coarsen.y=8)");
  ShapeTiming Small;
  Small.Shape = "small";
  Small.BaselineUs = Small.CandidateUs = 5.5;
  Base.Timings.push_back(Small);
  Plans = P.propose(St, 20);
  ASSERT_FALSE(Plans.empty());
  EXPECT_EQ(Plans[0].label(), "thread-coarsen");
  St.Facts = &F;
  Plans = P.propose(St, 20);
  ASSERT_FALSE(Plans.empty());
  EXPECT_EQ(Plans[0].label(),
            "restrict-const+delinearize+thread-coarsen"
            "(delinearize.x=64,delinearize.y=8,thread-coarsen.y=8)");
}

TEST(OfflinePlanner, KnownWinnerFirstAndUnchanged) {
  // A large half after shape-split, seeded with the unsplit run's winner
  // (thread-coarsen with its default 4 rows): it comes first and as it is,
  // although a plan of the planner's own with thread-coarsen takes 8 rows
  // on a kernel without launch-bound sets; the planner's own plans follow,
  // and a later round does not propose it again.
  KernelFacts F;
  F.ApplicablePasses = {{"restrict-const", {}}, {"thread-coarsen", {}}};
  F.ArithmeticIntensity = 150;
  Plan W;
  W.Passes = {"restrict-const", "thread-coarsen"};
  W.Rationale = "the unsplit run's winner";
  F.KnownWinners.push_back({W, Evaluation()});
  Evaluation Base;
  ShapeTiming T;
  T.Shape = "large";
  T.BaselineUs = T.CandidateUs = 10000;
  Base.Timings.push_back(T);
  PlanningState St;
  St.Facts = &F;
  St.Round = 1;
  St.Baseline = &Base;
  OfflinePlanner P;
  std::vector<Plan> Plans = P.propose(St, 20);
  ASSERT_GE(Plans.size(), 2u);
  EXPECT_EQ(Plans[0].label(), "restrict-const+thread-coarsen");
  EXPECT_EQ(Plans[0].Rationale, "the unsplit run's winner");
  EXPECT_EQ(Plans[1].label(),
            "restrict-const+thread-coarsen(thread-coarsen.y=8)");
  // One slot: the known winner takes it.
  Plans = P.propose(St, 1);
  ASSERT_EQ(Plans.size(), 1u);
  EXPECT_EQ(Plans[0].label(), "restrict-const+thread-coarsen");
  // Tried already (round 2 without a beam): not again.
  St.Round = 2;
  St.TriedLabels.insert("baseline:restrict-const+thread-coarsen");
  Plans = P.propose(St, 20);
  for (const Plan &Q : Plans)
    EXPECT_NE(Q.label(), "restrict-const+thread-coarsen");
}

TEST(OfflinePlanner, PipelineWithoutRowsPerBlockSecondOnLaunchBoundSets) {
  // silu_and_mul: every applicable pass (rows-per-block among them), then
  // the same without rows-per-block when a set is launch-bound; not when
  // every set runs long.
  KernelFacts F;
  F.ApplicablePasses = {{"restrict-const", {}}, {"vectorize", {}},
                        {"ldg", {}}, {"rows-per-block", {}}};
  F.Prerequisites = {{"vectorize", {"restrict-const"}},
                     {"rows-per-block", {"restrict-const", "vectorize"}}};
  Evaluation Base;
  ShapeTiming Decode;
  Decode.Shape = "decode";
  Decode.BaselineUs = Decode.CandidateUs = 10.8;
  ShapeTiming Prefill = Decode;
  Prefill.Shape = "prefill";
  Prefill.BaselineUs = Prefill.CandidateUs = 140;
  Base.Timings = {Decode, Prefill};
  PlanningState St;
  St.Facts = &F;
  St.Round = 1;
  St.Baseline = &Base;
  OfflinePlanner P;
  std::vector<Plan> Plans = P.propose(St, 2);
  ASSERT_EQ(Plans.size(), 2u);
  EXPECT_TRUE(is_contained(Plans[0].Passes, "rows-per-block"));
  EXPECT_FALSE(is_contained(Plans[1].Passes, "rows-per-block"));
  EXPECT_EQ(Plans[1].Passes.size(), Plans[0].Passes.size() - 1);
  Base.Timings = {Prefill};
  Plans = P.propose(St, 2);
  ASSERT_EQ(Plans.size(), 2u);
  EXPECT_TRUE(is_contained(Plans[0].Passes, "rows-per-block"));
  EXPECT_NE(Plans[1].Passes.size(), Plans[0].Passes.size() - 1);
}

TEST(OfflinePlanner, VariesTheBestRankedPassFirst) {
  // sgemm-like: compute-bound, its pipeline has unroll (variants 4, 8)
  // before thread-coarsen in the canonical order; with two candidates per
  // round thread-coarsen's variants (ranked first for compute) come first.
  KernelFacts F;
  F.ApplicablePasses = {{"unroll", {}}, {"thread-coarsen", {}}};
  F.ArithmeticIntensity = 100;
  Evaluation Base, Good = twiceAsFast();
  Candidate Best;
  Best.Id = "r1c1";
  Best.Origin = "passes";
  Best.Lineage = {"unroll", "thread-coarsen"};
  Best.BlockYDivisor = 4;
  PlanningState St;
  St.Facts = &F;
  St.Baseline = &Base;
  St.Round = 2;
  St.Beam = {{&Best, &Good}};
  OfflinePlanner P;
  std::vector<std::string> Labels;
  for (const Plan &Pl : P.propose(St, 2))
    Labels.push_back(Pl.label());
  EXPECT_EQ(join(Labels, " "),
            "unroll+thread-coarsen(thread-coarsen.y=2) "
            "unroll+thread-coarsen(thread-coarsen.y=8)");
}

TEST(OfflinePlanner, SweepsTheBlockSizeOfTheBestOrTheOriginal) {
  KernelFacts F;
  F.ApplicablePasses = {{"block-size", {}}, {"fast-math", {}}};
  F.BlockSize = 1024;
  Evaluation Base, Good = twiceAsFast();
  PlanningState St;
  St.Facts = &F;
  St.Round = 2;
  St.Baseline = &Base;
  // Nothing verified faster yet: sweep the original's launch, skipping the
  // size it has (1024) and the default the single pass tried (256).
  St.TriedLabels = {"baseline:block-size", "baseline:fast-math",
                    "baseline:fast-math+block-size"};
  OfflinePlanner P;
  std::vector<std::string> Labels;
  for (const Plan &Pl : P.propose(St, 10))
    Labels.push_back(Pl.label());
  // Half the size first (double is over 1024), then the rest.
  EXPECT_EQ(join(Labels, " "), "block-size(block-size.threads=512) "
                               "block-size(block-size.threads=128)");
  // On top of the best pipeline, which launches 256 already.
  Candidate Best;
  Best.Id = "r1c1";
  Best.Origin = "passes";
  Best.Lineage = {"fast-math", "block-size"};
  Best.BlockThreads = 256;
  St.Beam = {{&Best, &Good}};
  Labels.clear();
  for (const Plan &Pl : P.propose(St, 10))
    Labels.push_back(Pl.label());
  EXPECT_TRUE(is_contained(
      Labels, "fast-math+block-size(block-size.threads=128)"));
  EXPECT_TRUE(is_contained(
      Labels, "fast-math+block-size(block-size.threads=512)"));
  EXPECT_FALSE(is_contained(
      Labels, "fast-math+block-size(block-size.threads=256)"));
  EXPECT_FALSE(is_contained(
      Labels, "fast-math+block-size(block-size.threads=1024)"));
  // Round 1 combines every pass but the block size, which is tried alone.
  PlanningState First = St;
  First.Round = 1;
  First.Beam.clear();
  First.TriedLabels.clear();
  std::vector<Plan> R1 = P.propose(First, 10);
  ASSERT_EQ(R1.size(), 2u);
  EXPECT_EQ(join(R1[0].Passes, ","), "fast-math");
  EXPECT_EQ(join(R1[1].Passes, ","), "block-size");
  // A spec that does not let the launch change: no sweep.
  F.BlockSize = 0;
  St.Beam.clear();
  EXPECT_TRUE(P.propose(St, 10).empty());
}

TEST(OfflinePlanner, RespectsTheAllowedPasses) {
  KernelFacts F;
  F.ApplicablePasses = {{"fast-math", {}}, {"hoist", {}}};
  OfflinePlanner P({"hoist"});
  std::vector<std::string> R = P.rank(F, true);
  ASSERT_EQ(R.size(), 1u);
  EXPECT_EQ(R[0], "hoist");
}

} // namespace
