#include "astra/Support/Json.h"

#include "gtest/gtest.h"

using namespace astra;
using namespace llvm;

namespace {

TEST(Json, NestingIsBoundedWithoutRecursion) {
  // 64 levels are fine; the 65th is refused before any DOM is built (the
  // DOM's parser and destructor recurse per level).
  std::string Ok = std::string(64, '[') + std::string(64, ']');
  EXPECT_FALSE(bool(checkJsonNesting(Ok)));
  std::string Deep = std::string(65, '[') + std::string(65, ']');
  Error E = checkJsonNesting(Deep);
  ASSERT_TRUE(bool(E));
  EXPECT_NE(toString(std::move(E)).find("nested deeper than 64 levels"),
            std::string::npos);
  // A million levels: linear, constant stack.
  std::string Huge = std::string(1000000, '[');
  E = checkJsonNesting(Huge);
  ASSERT_TRUE(bool(E));
  consumeError(std::move(E));
  // Other syntax errors are the DOM parse's to report.
  EXPECT_FALSE(bool(checkJsonNesting("{\"a\": ")));
  rapidjson::Document D;
  Error P = parseJsonWithComments("// c\n{\"a\": " + Deep + "}", "x.json", D);
  ASSERT_TRUE(bool(P));
  // Column 70: the 64th '[' after `{"a": `, the 65th level.
  EXPECT_EQ(toString(std::move(P)),
            "x.json:2:70: invalid JSON: arrays and objects nested deeper than "
            "64 levels");
}

TEST(Json, LineTableAgreesWithLineColumn) {
  std::string Text = "ab\ncd\n\nefg";
  LineTable T(Text);
  for (size_t I = 0; I <= Text.size() + 2; ++I)
    EXPECT_EQ(T.lineColumn(I), lineColumn(Text, I)) << I;
}

} // namespace
