#include "astra/Bench/Scoreboard.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace astra;

namespace {

/// A report whose winner runs at \p Speedups per shape (empty: no winner).
KernelReport report(std::string Kernel, std::vector<double> Speedups,
                    std::string File = "kernels/sglang/k.cu") {
  KernelReport R;
  R.File = File;
  R.Kernel = Kernel;
  R.Outcome.Baseline.S = Evaluation::Status::Verified;
  for (size_t I = 0; I < std::max<size_t>(Speedups.size(), 2); ++I) {
    ShapeTiming T;
    T.Shape = "s" + std::to_string(I);
    T.BaselineUs = T.CandidateUs = 100;
    T.BaselineRoofline = T.CandidateRoofline = 0.5;
    R.Outcome.Baseline.Timings.push_back(T);
  }
  if (!Speedups.empty()) {
    Candidate W;
    W.Id = "r1c1";
    W.Lineage = {"vectorize"};
    R.Outcome.Winner = W;
    R.Outcome.WinnerEval.S = Evaluation::Status::Verified;
    for (size_t I = 0; I < Speedups.size(); ++I) {
      ShapeTiming T = R.Outcome.Baseline.Timings[I];
      T.CandidateUs = 100 / Speedups[I];
      T.CandidateRoofline = 0.5 * Speedups[I];
      R.Outcome.WinnerEval.Timings.push_back(T);
    }
  }
  return R;
}

TEST(Scoreboard, GeomeanAndFastPCountFailuresAgainst) {
  KernelReport Failed;
  Failed.File = "kernels/gnn/x.cu";
  Failed.Kernel = "broken";
  Failed.Error = "no spec";
  Scoreboard SB = buildScoreboard({report("a", {2.0, 2.0}),
                                   report("b", {1.3, 1.3}),
                                   report("c", {}), Failed});
  const ScoreSummary &S = SB.Summary;
  EXPECT_EQ(S.Kernels, 4u);
  // Failed and unimproved kernels keep the original: 1.0x.
  EXPECT_NEAR(S.GeomeanSpeedup, std::pow(2.0 * 1.3 * 1.0 * 1.0, 0.25), 1e-9);
  EXPECT_DOUBLE_EQ(S.FastP.at(0.0), 0.75); // The failed one is not correct.
  EXPECT_DOUBLE_EQ(S.FastP.at(1.0), 0.5);  // Unchanged is not faster.
  EXPECT_DOUBLE_EQ(S.FastP.at(1.2), 0.5);
  EXPECT_DOUBLE_EQ(S.FastP.at(1.5), 0.25);
  EXPECT_DOUBLE_EQ(S.FastP.at(2.0), 0.0); // Strictly faster than 2.0x.
  EXPECT_EQ(SB.Kernels[3].Suite, "gnn");
  EXPECT_EQ(SB.Kernels[0].Suite, "sglang");
}

TEST(Scoreboard, TorchColumnsAndRoofline) {
  std::map<std::string, std::pair<double, double>> Torch = {
      {"a|s0", {300.0, 60.0}}, {"a|s1", {300.0, 40.0}}};
  Scoreboard SB = buildScoreboard({report("a", {2.0, 2.0})}, Torch);
  ASSERT_EQ(SB.Rows.size(), 2u);
  EXPECT_DOUBLE_EQ(*SB.Rows[0].CompileUs, 60.0);
  // Ours is 50 us on both: 60/50 and 40/50 -> geomean sqrt(1.2 * 0.8).
  EXPECT_NEAR(*SB.Kernels[0].VsCompile, std::sqrt(1.2 * 0.8), 1e-9);
  EXPECT_EQ(*SB.Summary.AtLeastCompile, 0u);
  EXPECT_NEAR(SB.Summary.MeanRooflineAfter, 1.0, 1e-9);
  std::string M = scoreboardMarkdown(SB, RunInfo());
  EXPECT_NE(M.find("| a | s0 | 100.00 | 50.00 | 2.00x | 50% | 100% | 300.00 | "
                   "60.00 | vectorize |"),
            std::string::npos)
      << M;
  std::string Svg = scoreboardSvg(SB);
  EXPECT_EQ(Svg.rfind("<svg", 0), 0u);
  EXPECT_NE(Svg.find("</svg>"), std::string::npos);
  EXPECT_NE(Svg.find("2.00x"), std::string::npos);
}

TEST(Scoreboard, TorchRowsOfTemplateInstantiations) {
  // A grouped template kernel labels its shape sets "<T> decode"; PyTorch's
  // rows name the spec entry and the set.
  KernelReport R = report("k", {2.0, 2.0});
  R.Outcome.Baseline.Timings[0].Shape = "<__half> decode";
  R.Outcome.WinnerEval.Timings[0].Shape = "<__half> decode";
  std::map<std::string, std::pair<double, double>> Torch = {
      {"k<__half>|decode", {300.0, 60.0}}};
  Scoreboard SB = buildScoreboard({R}, Torch);
  ASSERT_TRUE(SB.Rows[0].CompileUs.has_value());
  EXPECT_DOUBLE_EQ(*SB.Rows[0].CompileUs, 60.0);
  EXPECT_FALSE(SB.Rows[1].CompileUs.has_value());
}

TEST(Scoreboard, JsonIsValid) {
  Scoreboard SB = buildScoreboard({report("a<float>", {1.5, 1.4})});
  std::string J = scoreboardJson(SB, RunInfo());
  rapidjson::Document D;
  D.Parse(J.c_str());
  ASSERT_FALSE(D.HasParseError());
  EXPECT_NEAR(D["summary"]["geomean_speedup"].GetDouble(), std::sqrt(1.5 * 1.4),
              1e-9);
  EXPECT_DOUBLE_EQ(D["summary"]["fast_p"]["1.0"].GetDouble(), 1.0);
}

TEST(Scoreboard, ReadsBackWhatItWrote) {
  KernelReport Failed;
  Failed.File = "kernels/gnn/x.cu";
  Failed.Kernel = "broken";
  Failed.Error = "no spec";
  std::map<std::string, std::pair<double, double>> Torch = {
      {"a|s0", {300.0, 80.0}}};
  Scoreboard SB = buildScoreboard(
      {report("a", {2.0, 1.5}), report("c", {}), Failed}, Torch);
  RunInfo Info;
  Info.ToolVersion = "clang-astra 0.1.0 (abc)";
  Info.Date = "2026-11-22T17:00:00Z";
  Info.Device = "NVIDIA H100 80GB HBM3 (driver 13.0)";
  Info.Agents = "offline";
  Info.Command = "clang-astra bench kernels";
  auto Back = parseScoreboardJson(scoreboardJson(SB, Info), "s.json");
  ASSERT_TRUE(bool(Back)) << llvm::toString(Back.takeError());
  EXPECT_EQ(Back->Info.ToolVersion, Info.ToolVersion);
  EXPECT_EQ(Back->Info.Device, Info.Device);
  EXPECT_EQ(Back->Info.Command, Info.Command);
  // The same document again: every field survived the trip.
  EXPECT_EQ(scoreboardJson(Back->Board, Back->Info), scoreboardJson(SB, Info));
  ASSERT_EQ(Back->Board.Rows.size(), SB.Rows.size());
  EXPECT_EQ(Back->Board.Rows[0].File, "kernels/sglang/k.cu");
  EXPECT_TRUE(Back->Board.Rows[0].Improved);
  ASSERT_TRUE(Back->Board.Rows[0].CompileUs.has_value());
  EXPECT_DOUBLE_EQ(*Back->Board.Rows[0].CompileUs, 80.0);
  EXPECT_FALSE(Back->Board.Rows[1].CompileUs.has_value());
  EXPECT_EQ(Back->Board.Kernels[2].Error, "no spec");
}

TEST(Scoreboard, MergedRunsSummarizeLikeOneRun) {
  std::vector<KernelReport> First = {report("a", {2.0, 2.0}),
                                     report("b", {1.3, 1.1})};
  std::vector<KernelReport> Second = {report("c", {}),
                                      report("d", {1.6, 1.6})};
  std::vector<KernelReport> All = First;
  All.insert(All.end(), Second.begin(), Second.end());
  Scoreboard Merged =
      mergeScoreboards(buildScoreboard(First), buildScoreboard(Second));
  Scoreboard One = buildScoreboard(All);
  EXPECT_EQ(scoreboardJson(Merged, RunInfo()), scoreboardJson(One, RunInfo()));
  EXPECT_EQ(Merged.Summary.Kernels, 4u);
  EXPECT_DOUBLE_EQ(Merged.Summary.FastP.at(1.5), 0.5);
}

TEST(Scoreboard, ReadErrorsNameTheFileAndField) {
  auto Bad = parseScoreboardJson("[1, 2]", "out/scoreboard.json");
  ASSERT_FALSE(bool(Bad));
  EXPECT_EQ(llvm::toString(Bad.takeError()),
            "out/scoreboard.json: <top>: not a scoreboard (invalid JSON or "
            "not an object)");
  Scoreboard SB = buildScoreboard({report("a", {2.0, 2.0})});
  std::string J = scoreboardJson(SB, RunInfo());
  size_t At = J.find("\"min_speedup\"");
  ASSERT_NE(At, std::string::npos);
  J.replace(At, 13, "\"min_speedupX\"");
  auto Missing = parseScoreboardJson(J, "out/scoreboard.json");
  ASSERT_FALSE(bool(Missing));
  EXPECT_EQ(llvm::toString(Missing.takeError()),
            "out/scoreboard.json: kernels[0].min_speedup: missing");
}

} // namespace

namespace {

TEST(Scoreboard, SplitHalvesCountAsOneKernel) {
  // shape-split's halves: the original keeps s0 and s1 (no winner), the
  // clone holds s2 and s3 at 2x. One kernel of four sets.
  KernelReport Small = report("k<float>", {});
  KernelReport Large = report("k_astra_large<float>", {2.0, 2.0});
  for (ShapeTiming *T : {&Large.Outcome.Baseline.Timings[0],
                         &Large.Outcome.Baseline.Timings[1],
                         &Large.Outcome.WinnerEval.Timings[0],
                         &Large.Outcome.WinnerEval.Timings[1]})
    T->Shape = T->Shape == "s0" ? "s2" : "s3";
  Scoreboard SB = buildScoreboard({Small, Large, report("other", {1.5, 1.5})});
  ASSERT_EQ(SB.Kernels.size(), 2u);
  EXPECT_EQ(SB.Kernels[0].Kernel, "k<float>");
  EXPECT_NEAR(SB.Kernels[0].Speedup, std::sqrt(2.0), 1e-9);
  EXPECT_NEAR(SB.Kernels[0].MinSpeedup, 1.0, 1e-9);
  EXPECT_TRUE(SB.Kernels[0].Ok);
  ASSERT_EQ(SB.Rows.size(), 6u);
  EXPECT_EQ(SB.Rows[3].Kernel, "k<float>");
  EXPECT_EQ(SB.Rows[3].Shape, "s3");
  EXPECT_EQ(SB.Summary.Kernels, 2u);
  EXPECT_DOUBLE_EQ(SB.Summary.FastP.at(1.0), 1.0);
}

TEST(Scoreboard, BenchTimeCountsEachFileOnce) {
  std::map<std::string, double> Seconds = {{"kernels/sglang/k.cu", 40.4},
                                           {"kernels/gnn/g.cu", 25.0}};
  Scoreboard SB = buildScoreboard(
      {report("a", {2.0, 2.0}), report("b", {1.5, 1.5}),
       report("g", {1.2, 1.2}, "kernels/gnn/g.cu"),
       report("u", {1.1, 1.1}, "kernels/gnn/untimed.cu")},
      {}, Seconds);
  ASSERT_EQ(SB.Kernels.size(), 4u);
  EXPECT_DOUBLE_EQ(SB.Kernels[0].FileSeconds, 40.4);
  EXPECT_DOUBLE_EQ(SB.Kernels[1].FileSeconds, 40.4);
  EXPECT_DOUBLE_EQ(SB.Kernels[3].FileSeconds, -1);
  // k.cu's two kernels share one file's time.
  EXPECT_DOUBLE_EQ(SB.Summary.BenchSeconds, 65.4);
  EXPECT_EQ(SB.Summary.TimedFiles, 2u);
  std::string Md = scoreboardMarkdown(SB, RunInfo());
  EXPECT_NE(Md.find("| bench time | 65 s over 2 files |"), std::string::npos)
      << Md;
  EXPECT_NE(Md.find("| sglang | a | 2.00x | 2.00x | 100% | - | verified | 40 s |"),
            std::string::npos)
      << Md;
  EXPECT_NE(Md.find("| gnn | u | 1.10x | 1.10x | 55% | - | verified | - |"),
            std::string::npos)
      << Md;

  // Through scoreboard.json and a resumed run's merge.
  auto Back = parseScoreboardJson(scoreboardJson(SB, RunInfo()), "s.json");
  ASSERT_TRUE(bool(Back)) << llvm::toString(Back.takeError());
  EXPECT_DOUBLE_EQ(Back->Board.Kernels[0].FileSeconds, 40.4);
  EXPECT_DOUBLE_EQ(Back->Board.Kernels[3].FileSeconds, -1);
  Scoreboard More = buildScoreboard({report("m", {1.3, 1.3}, "kernels/x/m.cu")},
                                    {}, {{"kernels/x/m.cu", 10.0}});
  Scoreboard Merged = mergeScoreboards(Back->Board, More);
  EXPECT_DOUBLE_EQ(Merged.Summary.BenchSeconds, 75.4);
  EXPECT_EQ(Merged.Summary.TimedFiles, 3u);
}

TEST(Scoreboard, ScoreboardsWithoutTimesReadAsBefore) {
  // A scoreboard.json written before bench recorded times.
  Scoreboard SB = buildScoreboard({report("a", {2.0, 2.0})});
  std::string J = scoreboardJson(SB, RunInfo());
  EXPECT_EQ(J.find("file_seconds"), std::string::npos);
  EXPECT_EQ(J.find("bench_seconds"), std::string::npos);
  auto Back = parseScoreboardJson(J, "s.json");
  ASSERT_TRUE(bool(Back)) << llvm::toString(Back.takeError());
  EXPECT_DOUBLE_EQ(Back->Board.Kernels[0].FileSeconds, -1);
  std::string Md = scoreboardMarkdown(Back->Board, RunInfo());
  EXPECT_EQ(Md.find("| bench time |"), std::string::npos) << Md;
  EXPECT_NE(Md.find("| verified | - |"), std::string::npos) << Md;
}

} // namespace
