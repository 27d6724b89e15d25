#include "astra/Support/Diff.h"

#include "gtest/gtest.h"

#include <random>

using namespace astra;

namespace {

/// Applies hunks to Old and checks the result is New.
std::string applyHunks(const std::string &Old, const std::string &New) {
  auto A = splitLinesKeepEnds(Old);
  auto B = splitLinesKeepEnds(New);
  std::string Out;
  size_t O = 0;
  for (const DiffHunk &H : diffLines(Old, New)) {
    for (; O < H.OldBegin; ++O)
      Out += A[O].str();
    for (size_t K = 0; K < H.NewCount; ++K)
      Out += B[H.NewBegin + K].str();
    O = H.OldBegin + H.OldCount;
  }
  for (; O < A.size(); ++O)
    Out += A[O].str();
  return Out;
}

TEST(Diff, EqualTextsHaveNoHunks) {
  EXPECT_TRUE(diffLines("a\nb\n", "a\nb\n").empty());
  EXPECT_EQ(unifiedDiff("a\n", "a\n", "x", "x"), "");
}

TEST(Diff, UnifiedDiffOfOneChangedLine) {
  std::string D = unifiedDiff("a\nb\nc\n", "a\nB\nc\n", "k.cu", "k.cu");
  EXPECT_EQ(D, "--- a/k.cu\n+++ b/k.cu\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
}

TEST(Diff, MissingNewlineAtEnd) {
  std::string D = unifiedDiff("a\n", "a\nb", "f", "f");
  EXPECT_NE(D.find("+b\n\\ No newline at end of file\n"), std::string::npos);
}

TEST(Diff, RandomEditsReconstruct) {
  std::mt19937 Rng(42);
  for (int Trial = 0; Trial < 200; ++Trial) {
    std::string Old, New;
    int N = Rng() % 30, M = Rng() % 30;
    for (int I = 0; I < N; ++I)
      Old += std::string(1, 'a' + Rng() % 4) + "\n";
    for (int I = 0; I < M; ++I)
      New += std::string(1, 'a' + Rng() % 4) + "\n";
    EXPECT_EQ(applyHunks(Old, New), New) << "trial " << Trial;
  }
}

} // namespace
