// kernelBodies (passes/utils/PassSupport.h) on plain C++: which bodies of a
// function template a rewrite is judged on. (PassSupport.h and
// astra/Frontend/CudaParser.h each define an astra::TextEdit, so this test
// builds its AST with clang's tooling instead of parseCuda.)
#include "utils/PassSupport.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/ASTMatchers/ASTMatchers.h"
#include "clang/Tooling/Tooling.h"
#include "gtest/gtest.h"

using namespace astra;
using namespace clang;
using namespace clang::ast_matchers;

namespace {

constexpr const char *Code = R"cc(
template <typename T> void scale(T *p, T a) { p[0] *= a; }
template <> void scale<double>(double *p, double a) {}
template void scale<float>(float *, float);
template void scale<int>(int *, int);
template <typename T> void never(T *p) { p[0] = T(); }
void plain(int *p) { p[0] = 1; }
)cc";

const FunctionDecl *pattern(ASTContext &Ctx, llvm::StringRef Name) {
  auto Found = match(functionDecl(hasName(Name), isDefinition(),
                                  unless(isTemplateInstantiation()),
                                  unless(isExplicitTemplateSpecialization()))
                         .bind("f"),
                     Ctx);
  EXPECT_EQ(Found.size(), 1u) << Name.str();
  return Found.empty() ? nullptr : Found.front().getNodeAs<FunctionDecl>("f");
}

TEST(KernelBodiesTest, TheInstantiationsOrTheFunctionItself) {
  std::unique_ptr<ASTUnit> AST =
      tooling::buildASTFromCodeWithArgs(Code, {"-std=c++17"});
  ASSERT_TRUE(AST);
  ASTContext &Ctx = AST->getASTContext();

  // The explicit specialization has its own text and is left out.
  std::vector<KernelBody> B = kernelBodies(pattern(Ctx, "scale"));
  ASSERT_EQ(B.size(), 2u);
  EXPECT_EQ(B[0].Label, "scale<float>");
  EXPECT_EQ(B[1].Label, "scale<int>");
  EXPECT_TRUE(B[0].FD->isTemplateInstantiation());
  EXPECT_FALSE(neverInstantiated(B));

  const FunctionDecl *Plain = pattern(Ctx, "plain");
  std::vector<KernelBody> P = kernelBodies(Plain);
  ASSERT_EQ(P.size(), 1u);
  EXPECT_EQ(P[0].FD, Plain);
  EXPECT_EQ(P[0].Label, "");
  EXPECT_FALSE(neverInstantiated(P));

  std::vector<KernelBody> N = kernelBodies(pattern(Ctx, "never"));
  ASSERT_EQ(N.size(), 1u);
  EXPECT_TRUE(neverInstantiated(N));
}

} // namespace
