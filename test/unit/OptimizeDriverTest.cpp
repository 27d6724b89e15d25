//===- OptimizeDriverTest.cpp - The optimize driver's pure logic --------===//
#include "astra/Agents/OptimizeDriver.h"

#include "gtest/gtest.h"

using namespace astra;

namespace {

const char *Original = "a\nb\nc\nd\ne\nf\ng\n";

TEST(MergeEdits, DisjointEditsBothGoIn) {
  std::vector<size_t> Dropped;
  std::string M = mergeEdits(Original, {"A\nb\nc\nd\ne\nf\ng\n",
                                        "a\nb\nc\nd\ne\nf\nG\n"},
                             &Dropped);
  EXPECT_EQ(M, "A\nb\nc\nd\ne\nf\nG\n");
  EXPECT_TRUE(Dropped.empty());
}

TEST(MergeEdits, OverlappingEditDropsTheWholeLaterVersion) {
  // The second version changes b (clashing with the first) and g: neither
  // of its edits goes in.
  std::vector<size_t> Dropped;
  std::string M = mergeEdits(Original, {"a\nB\nc\nd\ne\nf\ng\n",
                                        "a\nX\nc\nd\ne\nf\nG\n"},
                             &Dropped);
  EXPECT_EQ(M, "a\nB\nc\nd\ne\nf\ng\n");
  EXPECT_EQ(Dropped, std::vector<size_t>{1});
}

TEST(MergeEdits, TheSameEditInTwoVersionsIsNoClash) {
  // Two kernels calling one helper (d), both winners rewriting it alike,
  // each with an edit of its own: all of it goes in, the helper once.
  std::vector<size_t> Dropped;
  std::string M = mergeEdits(Original, {"A\nb\nc\nD1\nD2\ne\nf\ng\n",
                                        "a\nb\nc\nD1\nD2\ne\nf\nG\n"},
                             &Dropped);
  EXPECT_EQ(M, "A\nb\nc\nD1\nD2\ne\nf\nG\n");
  EXPECT_TRUE(Dropped.empty());
  // Alike in range but not in text: a clash.
  M = mergeEdits(Original, {"a\nb\nc\nD1\ne\nf\ng\n", "a\nb\nc\nD2\ne\nf\nG\n"},
                 &Dropped);
  EXPECT_EQ(M, "a\nb\nc\nD1\ne\nf\ng\n");
  EXPECT_EQ(Dropped, std::vector<size_t>{1});
}

TEST(MergeEdits, InsertionsAtOnePlaceBothGoIn) {
  // Two kernels' copies of one helper (c), each inserted right after it,
  // each kernel calling its copy (the edits of a and g).
  std::vector<size_t> Dropped;
  std::string M = mergeEdits(Original, {"A\nb\nc\nC1\nd\ne\nf\ng\n",
                                        "a\nb\nc\nC2\nd\ne\nf\nG\n"},
                             &Dropped);
  EXPECT_EQ(M, "A\nb\nc\nC1\nC2\nd\ne\nf\nG\n");
  EXPECT_TRUE(Dropped.empty());
  // An insertion next to a changed line still clashes.
  M = mergeEdits(Original, {"a\nb\nc\nC1\nd\ne\nf\ng\n",
                            "a\nb\nc\nD\ne\nf\nG\n"},
                 &Dropped);
  EXPECT_EQ(M, "a\nb\nc\nC1\nd\ne\nf\ng\n");
  EXPECT_EQ(Dropped, std::vector<size_t>{1});
}

} // namespace

namespace {

ShapeTiming timing(const std::string &Shape, double Speedup) {
  ShapeTiming T;
  T.Shape = Shape;
  T.BaselineUs = 100;
  T.CandidateUs = 100 / Speedup;
  return T;
}

KernelSpec entry(const std::string &Kernel,
                 std::vector<std::string> Shapes) {
  KernelSpec S;
  S.Kernel = Kernel;
  for (const std::string &N : Shapes) {
    ShapeSet Sh;
    Sh.Name = N;
    S.Shapes.push_back(Sh);
  }
  return S;
}

TEST(EvaluationOnHalf, TakesTheHalfsSetsUnderItsLabels) {
  // rmsnorm's unsplit winner, bf16 and fp16 timed together.
  Evaluation Whole;
  Whole.S = Evaluation::Status::Verified;
  Whole.Seeds = {1, 2, 3, 4, 5};
  Whole.Timings = {timing("<__nv_bfloat16> decode", 1.4),
                   timing("<__nv_bfloat16> prefill", 2.3),
                   timing("<__half> decode", 1.5),
                   timing("<__half> prefill", 2.2)};
  // The large half, both instantiations: labels keep their prefix.
  Evaluation Large = evaluationOnHalf(
      Whole, {entry("rmsnorm_astra_large<__nv_bfloat16>", {"prefill"}),
              entry("rmsnorm_astra_large<__half>", {"prefill"})});
  ASSERT_TRUE(Large.verified());
  ASSERT_EQ(Large.Timings.size(), 2u);
  EXPECT_EQ(Large.Timings[0].Shape, "<__nv_bfloat16> prefill");
  EXPECT_NEAR(Large.Timings[0].speedup(), 2.3, 1e-9);
  EXPECT_EQ(Large.Timings[1].Shape, "<__half> prefill");
  EXPECT_EQ(Large.Seeds, Whole.Seeds);
  // A half of one instantiation labels its sets without the prefix, as its
  // jobs do.
  Evaluation One =
      evaluationOnHalf(Whole, {entry("rmsnorm_astra_large<__half>", {"prefill"})});
  ASSERT_EQ(One.Timings.size(), 1u);
  EXPECT_EQ(One.Timings[0].Shape, "prefill");
  EXPECT_NEAR(One.Timings[0].speedup(), 2.2, 1e-9);
  // A set the whole run has no timing for: nothing known.
  EXPECT_FALSE(
      evaluationOnHalf(Whole, {entry("rmsnorm<__half>", {"batch"})}).profiled());
  // A kernel that is no template.
  Evaluation Plain;
  Plain.S = Evaluation::Status::Verified;
  Plain.Timings = {timing("small", 1.03), timing("large", 1.32)};
  Evaluation Small = evaluationOnHalf(Plain, {entry("gelu", {"small"})});
  ASSERT_EQ(Small.Timings.size(), 1u);
  EXPECT_EQ(Small.Timings[0].Shape, "small");
}

} // namespace
