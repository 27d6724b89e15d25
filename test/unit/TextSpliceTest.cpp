#include "astra/Support/TextSplice.h"

#include "gtest/gtest.h"

using namespace astra;

namespace {

TEST(TextSpliceTest, AppliesByOffsetWhateverTheOrderGiven) {
  auto R = spliceText("a + b", {{4, 1, "c"}, {0, 1, "x"}});
  ASSERT_TRUE(R);
  EXPECT_EQ(*R, "x + c");
}

TEST(TextSpliceTest, InsertionsBeforeTheReplacementAtTheirOffset) {
  // The replacement is given first; the insertions at its offset still come
  // before its text, in the order they were given.
  auto R = spliceText("f(x);", {{2, 1, "y"}, {2, 0, "("}, {2, 0, "int)"}});
  ASSERT_TRUE(R);
  EXPECT_EQ(*R, "f((int)y);");
  // An insertion at a replacement's end follows it.
  R = spliceText("f(x);", {{3, 0, "+1"}, {2, 1, "y"}});
  ASSERT_TRUE(R);
  EXPECT_EQ(*R, "f(y+1);");
}

TEST(TextSpliceTest, OverlapsAreRefusedTouchingIsNot) {
  EXPECT_FALSE(spliceText("abcdef", {{1, 3, "X"}, {3, 2, "Y"}}));
  EXPECT_FALSE(spliceText("abcdef", {{1, 3, "X"}, {2, 0, "Y"}}));
  EXPECT_FALSE(spliceText("abcdef", {{1, 2, "X"}, {1, 3, "Y"}}));
  auto R = spliceText("abcdef", {{1, 2, "X"}, {3, 2, "Y"}});
  ASSERT_TRUE(R);
  EXPECT_EQ(*R, "aXYf");
}

TEST(TextSpliceTest, AWindowTakesTheSplicesInsideIt) {
  // [2, 6) of "0123456789": the splice at 0 and the one across 6 are left
  // out; an insertion at the window's end is in.
  std::vector<Splice> S = {
      {0, 1, "A"}, {3, 1, "B"}, {6, 0, "C"}, {5, 2, "D"}, {7, 0, "E"}};
  auto R = spliceText("0123456789", 2, 6, S);
  ASSERT_TRUE(R);
  EXPECT_EQ(*R, "2B45C");
  // A window past the text is refused.
  EXPECT_FALSE(spliceText("0123", 2, 9, {}));
}

TEST(TextSpliceTest, TheWholeTextRefusesSplicesOutsideIt) {
  EXPECT_FALSE(spliceText("abc", {{2, 2, "X"}}));
  EXPECT_FALSE(spliceText("abc", {{4, 0, "X"}}));
  auto R = spliceText("abc", {{3, 0, "d"}});
  ASSERT_TRUE(R);
  EXPECT_EQ(*R, "abcd");
}

TEST(TextSpliceTest, SpliceBeforeOrdersInsertionsFirst) {
  EXPECT_TRUE(spliceBefore({1, 0, ""}, {1, 2, ""}));
  EXPECT_FALSE(spliceBefore({1, 2, ""}, {1, 0, ""}));
  EXPECT_FALSE(spliceBefore({1, 0, ""}, {1, 0, ""}));
  EXPECT_TRUE(spliceBefore({1, 5, ""}, {2, 0, ""}));
}

} // namespace
