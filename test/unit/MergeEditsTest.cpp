//===- MergeEditsTest.cpp - Merging the winners of several kernels --------===//
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

} // namespace
