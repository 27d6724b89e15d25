#include "astra/Frontend/PreamblePch.h"

#include "gtest/gtest.h"

using namespace astra;

namespace {

TEST(PreamblePchTest, SizeEndsAfterTheLeadingDirectives) {
  std::string Text = "// header comment\n"
                     "/* block\n   comment */\n"
                     "#include <cuda_runtime.h>\n"
                     "#define N 4\n"
                     "#  include \"a.h\" // why\n"
                     "#pragma unroll\n"
                     "\n"
                     "__global__ void k() {}\n"
                     "#include \"late.h\"\n";
  EXPECT_EQ(preambleSize(Text), Text.find("\n\n__global__") + 1);
  // Directives before the first #include are part of it, not on their own.
  EXPECT_EQ(preambleSize("#define A 1\n#include <a.h>\n#define B\nint x;"),
            std::string("#define A 1\n#include <a.h>\n#define B\n").size());
}

TEST(PreamblePchTest, WholeConditionalBlocksOnly) {
  std::string Guarded = "#ifdef _WIN32\n#define NOMINMAX\n#endif\n"
                        "#include <a.h>\n#if X\n#include <b.h>\n#else\n"
                        "#include <c.h>\n#endif\nint x;\n";
  EXPECT_EQ(preambleSize(Guarded), Guarded.find("int x;"));
  // Code inside a block ends the preamble before the block.
  std::string Open = "#include <a.h>\n#ifdef X\nint y;\n#endif\n";
  EXPECT_EQ(preambleSize(Open), std::string("#include <a.h>\n").size());
  // A stray #endif or #else is not skipped.
  EXPECT_EQ(preambleSize("#include <a.h>\n#endif\n"), 15u);
  // Directives other than these end it (#error, #line, #include_next).
  EXPECT_EQ(preambleSize("#include <a.h>\n#line 4\n#include <b.h>\n"), 15u);
}

TEST(PreamblePchTest, CodeOrNoIncludeMeansNoPreamble) {
  EXPECT_EQ(preambleSize("int x;\n#include <a.h>\n"), 0u);
  EXPECT_EQ(preambleSize("#define A 1\n__global__ void k() {}\n"), 0u);
  EXPECT_EQ(preambleSize(""), 0u);
}

TEST(PreamblePchTest, ContinuationsAndOpenCommentsOnDirectiveLines) {
  std::string Cont = "#include \\\n  <a.h>\nint x;\n";
  EXPECT_EQ(preambleSize(Cont), Cont.find("int x;"));
  // A comment opened on an #include line and closed later: stop before it.
  std::string Open = "#include <a.h>\n#include <b.h> /* starts\n ends */\n";
  EXPECT_EQ(preambleSize(Open), std::string("#include <a.h>\n").size());
  // No newline at the end of the file.
  EXPECT_EQ(preambleSize("#include <a.h>"), 14u);
}

TEST(PreamblePchTest, BlankKeepsOffsetsAndLines) {
  std::string Text = "#include <a.h>\r\n#include \"b.h\"\nint x;\n";
  unsigned Size = preambleSize(Text);
  std::string B = blankPreamble(Text, Size);
  ASSERT_EQ(B.size(), Text.size());
  EXPECT_EQ(B.substr(Size), Text.substr(Size));
  EXPECT_EQ(B.substr(0, Size), std::string(14, ' ') + "\r\n" +
                                   std::string(14, ' ') + "\n");
}

} // namespace
