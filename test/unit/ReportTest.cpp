#include "astra/Agents/Report.h"

#include "gtest/gtest.h"

using namespace astra;

namespace {

KernelReport sampleReport() {
  KernelReport R;
  R.File = "kernels/sglang/silu_and_mul.cu";
  R.Kernel = "silu_and_mul<__nv_bfloat16>";
  OptimizeOutcome &O = R.Outcome;
  O.Kernel = R.Kernel;
  O.StopReason = "all 5 rounds done";
  O.Baseline.S = Evaluation::Status::Verified;
  ShapeTiming B;
  B.Shape = "prefill";
  B.BaselineUs = B.CandidateUs = 135.6;
  B.BaselineRoofline = B.CandidateRoofline = 0.66;
  O.Baseline.Timings = {B};
  Candidate W;
  W.Id = "r1c1";
  W.Origin = "passes";
  W.Lineage = {"vectorize", "fast-math"};
  W.Rationale = "memory-bound | 16-byte loads";
  O.Winner = W;
  O.WinnerEval.S = Evaluation::Status::Verified;
  O.WinnerEval.Seeds = {1, 2, 3, 4, 5};
  ShapeTiming T = B;
  T.CandidateUs = 100.0;
  T.CandidateRoofline = 0.9;
  O.WinnerEval.Timings = {T};
  Attempt A;
  A.Round = 1;
  A.C = W;
  A.P.Passes = W.Lineage;
  A.E = O.WinnerEval;
  A.Outcome = "faster: 1.36x geomean";
  Attempt Bad;
  Bad.Round = 1;
  Bad.C.Id = "r1c2";
  Bad.P.Passes = {"ldg"};
  Bad.E.S = Evaluation::Status::WrongResult;
  Bad.E.Detail = "out[5]: expected 1, got 2 (seed 7)";
  Bad.Outcome = "wrong result: out[5]: expected 1, got 2 (seed 7) | x";
  O.Attempts = {A, Bad};
  R.Diff = "--- a/k.cu\n+++ b/k.cu\n";
  return R;
}

TEST(Report, JsonHoldsNumbersAttemptsAndEvidence) {
  RunInfo Info;
  Info.ToolVersion = "clang-astra 0.1.0";
  Info.Device = "NVIDIA H100";
  std::string J = reportJson(Info, {sampleReport()});
  rapidjson::Document D;
  D.Parse(J.c_str());
  ASSERT_FALSE(D.HasParseError()) << J;
  const auto &K = D["kernels"][0];
  EXPECT_TRUE(K["improved"].GetBool());
  EXPECT_STREQ(K["winner"]["changes"].GetString(), "vectorize+fast-math");
  EXPECT_NEAR(K["winner"]["evaluation"]["geomean_speedup"].GetDouble(),
              135.6 / 100.0, 1e-9);
  EXPECT_EQ(K["winner"]["evaluation"]["seeds"].Size(), 5u);
  EXPECT_EQ(K["attempts"].Size(), 2u);
  EXPECT_STREQ(K["attempts"][1]["evaluation"]["status"].GetString(),
               "wrong result");
  EXPECT_NE(std::string(K["attempts"][1]["outcome"].GetString()).find("seed 7"),
            std::string::npos);
}

TEST(Report, MarkdownSummarizesAndEscapesCells) {
  RunInfo Info;
  std::string M = reportMarkdown(Info, {sampleReport()});
  EXPECT_NE(M.find("| silu_and_mul<__nv_bfloat16> | kernels/sglang/silu_and_mul.cu "
                   "| improved | 1.36x | vectorize + fast-math |"),
            std::string::npos)
      << M;
  EXPECT_NE(M.find("| prefill | 135.60 | 100.00 | 1.36x | 66% | 90% |"),
            std::string::npos)
      << M;
  // The baseline column is the winner's own run's baseline (what the
  // acceptance compared), even when the first timing of the original read
  // otherwise.
  KernelReport R2 = sampleReport();
  R2.Outcome.Baseline.Timings[0].BaselineUs = 140.0;
  std::string M2 = reportMarkdown(Info, {R2});
  EXPECT_NE(M2.find("| prefill | 135.60 | 100.00 | 1.36x | 66% | 90% |"),
            std::string::npos)
      << M2;
  // A '|' inside a cell must not break the table.
  EXPECT_EQ(M.find("(seed 7) | x"), std::string::npos);
  EXPECT_NE(M.find("(seed 7) / x"), std::string::npos);
  EXPECT_NE(M.find("| 1 | r1c2 | ldg | wrong result: out[5]"), std::string::npos);
}

TEST(Report, KernelsThatCouldNotRunSayWhy) {
  KernelReport R;
  R.File = "k.cu";
  R.Kernel = "k";
  R.Error = "no spec at k.cu.astra.json";
  std::string M = reportMarkdown(RunInfo(), {R});
  EXPECT_NE(M.find("error: no spec at k.cu.astra.json"), std::string::npos);
  std::string J = reportJson(RunInfo(), {R});
  EXPECT_NE(J.find("\"error\": \"no spec at k.cu.astra.json\""), std::string::npos);
}

} // namespace

namespace {
/// bench with several workers runs each file on its own and merges the
/// reports: the result must be what one run over all the files writes.
TEST(Report, MergedPartsAreOneRunsReport) {
  RunInfo Info, Part;
  Info.ToolVersion = Part.ToolVersion = "clang-astra 0.1.0";
  Info.Command = "clang-astra bench kernels --gpus 2";
  Part.Command = "clang-astra bench kernels/a.cu --gpus 1";
  KernelReport A = sampleReport(), B = sampleReport(), C;
  B.File = "kernels/b.cu";
  B.Outcome.Winner.reset();
  B.Outcome.NoWinnerReason = "nothing faster";
  C.File = "kernels/c.cu";
  C.Kernel = "c";
  C.Error = "infrastructure failure: gpu 1: killed by signal 9 (Killed)";
  std::vector<std::string> Json = {reportJson(Part, {A}),
                                   reportJson(Part, {B, C}),
                                   reportJson(Part, {})};
  auto Merged = mergeReportJson(Info, Json, {"a", "b", "c"});
  ASSERT_TRUE(bool(Merged)) << toString(Merged.takeError());
  EXPECT_EQ(*Merged, reportJson(Info, {A, B, C}));
  EXPECT_EQ(*mergeReportJson(Info, {}, {}), reportJson(Info, {}));
  EXPECT_EQ(mergeReportMarkdown(Info, {reportMarkdown(Part, {A}),
                                       reportMarkdown(Part, {B, C})}),
            reportMarkdown(Info, {A, B, C}));
  auto Bad = mergeReportJson(Info, {"{\"kernels\": 3}"}, {"w/0/report.json"});
  ASSERT_FALSE(bool(Bad));
  EXPECT_EQ(toString(Bad.takeError()),
            "w/0/report.json: not a report (no kernels array)");
}
} // namespace
