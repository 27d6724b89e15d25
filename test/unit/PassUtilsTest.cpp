// The pass utilities (passes/utils) on code parsed by the real clang with the
// real CUDA headers.
#include "ParseCudaForTest.h"
#include "utils/CudaIdioms.h"
#include "utils/Mutation.h"
#include "utils/SourceText.h"

#include "clang/AST/ParentMap.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/ASTMatchers/ASTMatchers.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"

using namespace astra;
using namespace astra::cudaidiom;
using namespace clang;
using namespace clang::ast_matchers;
using namespace llvm;

namespace {

constexpr const char *Code = R"cu(
#include <cuda_runtime.h>
__device__ void probe(int) {}
__device__ void byValue(int) {}
__device__ void byRef(int &) {}
__device__ void byConstRef(const int &) {}
__device__ void helperSync() { __syncthreads(); }


__global__ void k(float *out, int n) {
  int t = threadIdx.x;
  unsigned u = blockDim.y;
  long c = (long)threadIdx.x;
  float f = threadIdx.x;
  int a = 0, b = 1, v = 2, w = 3, x = 4, y = 5;
  a = 7;
  byValue(b);
  byRef(v);
  byConstRef(w);
  probe(x);
  int *q = &y;
  helperSync();
  #pragma unroll
  for (int i = 0; i < 4; ++i) {
    out[i] = i;
  }
  do { --n; } while (n > 0);
  if (n) out[0] = 1; else out[1] = 2;
    int deep = 0; int second = 1;
  (void)t; (void)u; (void)c; (void)f; (void)q; (void)deep; (void)second;
}
)cu";

class PassUtilsTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto PF = parseCudaForTest("/pass-utils-test/k.cu", Code);
    ASSERT_TRUE(bool(PF)) << toString(PF.takeError());
    File = std::move(*PF);
  }

  ASTContext &ctx() { return File->context(); }
  const SourceManager &sm() { return File->sourceManager(); }

  template <typename T, typename M> const T *find(M Matcher) {
    auto Found = match(Matcher.bind("x"), ctx());
    EXPECT_FALSE(Found.empty());
    return Found.empty() ? nullptr : Found.front().template getNodeAs<T>("x");
  }
  const FunctionDecl *function(StringRef Name) {
    return find<FunctionDecl>(functionDecl(
        hasName(Name), isDefinition(), unless(isTemplateInstantiation()),
        unless(isExplicitTemplateSpecialization())));
  }
  /// A local of kernel k (headers declare parameters of the same names).
  const VarDecl *var(StringRef Name) {
    return find<VarDecl>(
        varDecl(hasName(Name), hasAncestor(functionDecl(hasName("k")))));
  }
  /// The text from \p Loc to the end of its line.
  std::string restOfLine(SourceLocation Loc) {
    StringRef Buf = sm().getBufferData(sm().getFileID(Loc));
    StringRef Rest = Buf.substr(sm().getFileOffset(Loc));
    return Rest.substr(0, Rest.find('\n')).str();
  }

  std::unique_ptr<ParsedFile> File;
};

TEST_F(PassUtilsTest, BuiltinsAndTheCastsLookedThrough) {
  const Expr *T = var("t")->getInit();
  EXPECT_EQ(builtinRef(T->IgnoreParenImpCasts()).name(), "threadIdx.x");
  EXPECT_TRUE(matchBuiltin(T).is(cudaidiom::Builtin::ThreadIdx, 'x'));
  EXPECT_EQ(matchBuiltin(var("u")->getInit()).name(), "blockDim.y");
  // A written integer cast: matchBuiltin looks through it, the plain
  // recognizer after implicit casts does not.
  const Expr *C = var("c")->getInit();
  EXPECT_TRUE(matchBuiltin(C).is(cudaidiom::Builtin::ThreadIdx, 'x'));
  EXPECT_FALSE(builtinRef(C->IgnoreParenImpCasts()));
  // A conversion to float: the other way round.
  const Expr *F = var("f")->getInit();
  EXPECT_FALSE(matchBuiltin(F));
  EXPECT_TRUE(builtinRef(F->IgnoreParenImpCasts()));
  EXPECT_FALSE(builtinRef(var("a")->getInit()));
  EXPECT_EQ(BuiltinRef().name(), "");
}

TEST_F(PassUtilsTest, BarriersAndCollectives) {
  for (StringRef N :
       {"__syncthreads", "__syncthreads_or", "__syncwarp", "__barrier_sync",
        "__nvvm_bar_sync", "sync", "arrive_and_wait"}) {
    EXPECT_TRUE(isBarrierName(N)) << N.str();
    EXPECT_TRUE(isCollectiveName(N)) << N.str();
  }
  for (StringRef N : {"__shfl_xor_sync", "__ballot_sync", "__any", "__all",
                      "__reduce_add_sync", "__activemask"}) {
    EXPECT_FALSE(isBarrierName(N)) << N.str();
    EXPECT_TRUE(isCollectiveName(N)) << N.str();
  }
  for (StringRef N : {"expf", "__any_thing", "syncthreads", "atomicAdd"}) {
    EXPECT_FALSE(isBarrierName(N)) << N.str();
    EXPECT_FALSE(isCollectiveName(N)) << N.str();
  }
  // Through the body of a user function.
  const auto *Call =
      find<CallExpr>(callExpr(callee(functionDecl(hasName("helperSync")))));
  EXPECT_TRUE(isBarrierCall(sm(), Call));
  const auto *Probe =
      find<CallExpr>(callExpr(callee(functionDecl(hasName("probe")))));
  EXPECT_FALSE(isBarrierCall(sm(), Probe));
  EXPECT_FALSE(isSyncthreadsCall(Call));
}

TEST_F(PassUtilsTest, WhereStatementsEnd) {
  const LangOptions &LO = ctx().getLangOpts();
  auto After = [&](const Stmt *S) {
    SourceLocation L = endOfStatement(S, sm(), LO);
    EXPECT_TRUE(L.isValid());
    return L.isValid() ? restOfLine(L) : std::string("<invalid>");
  };
  auto InK = hasAncestor(functionDecl(hasName("k")));
  // An expression statement: past its `;`.
  const auto *Assign = find<BinaryOperator>(binaryOperator(
      isAssignmentOperator(), hasLHS(declRefExpr(to(equalsNode(var("a")))))));
  EXPECT_EQ(After(Assign), "");
  // `#pragma unroll` wraps the loop in an attribute: past the loop's `}`.
  const auto *Loop = find<ForStmt>(forStmt(InK));
  const Stmt *Attributed = ParentMap(function("k")->getBody()).getParent(Loop);
  ASSERT_TRUE(Attributed && isa<AttributedStmt>(Attributed));
  EXPECT_EQ(After(Attributed), "");
  EXPECT_EQ(After(find<DoStmt>(doStmt(InK))), "");
  // An if with an else: past the else branch's `;`.
  EXPECT_EQ(After(find<IfStmt>(ifStmt(hasElse(stmt()), InK))), "");
  // A declaration followed by another on its line.
  EXPECT_EQ(After(find<DeclStmt>(declStmt(has(varDecl(hasName("deep")))))),
            " int second = 1;");
}

TEST_F(PassUtilsTest, IndentationOfALine) {
  SourceLocation Deep = var("deep")->getOuterLocStart();
  SourceLocation Second = var("second")->getOuterLocStart();
  EXPECT_EQ(lineIndent(Deep, sm()), "    ");
  EXPECT_TRUE(startsLine(Deep, sm()));
  // `second` shares the line: the line's indentation, but not its own.
  EXPECT_EQ(lineIndent(Second, sm()), "    ");
  EXPECT_FALSE(startsLine(Second, sm()));
  EXPECT_EQ(reindent("a\n  b\n\nc", "  "), "a\n    b\n\n  c");
  EXPECT_EQ(reindent("R\"(x\ny)\"", "  "), "R\"(x\ny)\"");
}

TEST_F(PassUtilsTest, WhatChangesAVariable) {
  const FunctionDecl *K = function("k");
  ParentMap PM(K->getBody());
  auto Modified = [&](StringRef Name) {
    std::vector<const DeclRefExpr *> Refs =
        referencesTo(K->getBody(), var(Name));
    EXPECT_FALSE(Refs.empty()) << Name.str();
    bool Any = false;
    for (const DeclRefExpr *R : Refs)
      Any |= isModifyingUse(R, PM);
    return Any;
  };
  EXPECT_TRUE(Modified("a"));  // Assigned.
  EXPECT_FALSE(Modified("b")); // Passed by value.
  EXPECT_TRUE(Modified("v"));  // Bound to int &.
  EXPECT_FALSE(Modified("w")); // Bound to const int &.
  EXPECT_TRUE(Modified("y"));  // Address taken.
  EXPECT_FALSE(Modified("t"));

  EXPECT_TRUE(mayModify(K->getBody(), var("a")));
  EXPECT_FALSE(mayModify(K->getBody(), var("b")));
  EXPECT_TRUE(mayModify(K->getBody(), var("v")));
  // Conservative where isModifyingUse is not: any lvalue argument counts.
  EXPECT_TRUE(mayModify(K->getBody(), var("w")));
  EXPECT_TRUE(mayModify(K->getBody(), var("y")));
  EXPECT_FALSE(mayModify(K->getBody(), var("t")));
  const auto *Assign = find<BinaryOperator>(binaryOperator(
      isAssignmentOperator(), hasLHS(declRefExpr(to(equalsNode(var("a")))))));
  EXPECT_EQ(lvalueVar(Assign->getLHS()), var("a"));
}

TEST_F(PassUtilsTest, FreshIdentifiersAvoidEveryNameSeen) {
  EXPECT_EQ(freshIdentifier(ctx(), "astra_unused"), "astra_unused");
  // `deep` is a name in the file; so is `probe`.
  EXPECT_EQ(freshIdentifier(ctx(), "deep"), "deep1");
  EXPECT_EQ(freshIdentifier(ctx(), "astra_unused", {"astra_unused"}),
            "astra_unused1");
}

} // namespace

namespace {

/// What passes share lives in passes/utils: no pass includes another pass's
/// header (AllPasses.cpp, the registry, includes them all).
TEST(PassLayeringTest, NoPassIncludesAnotherPass) {
  std::error_code EC;
  std::string Dir = std::string(ASTRA_SOURCE_DIR) + "/passes";
  unsigned Passes = 0;
  for (sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC;
       It.increment(EC)) {
    StringRef Path = It->path();
    if (!Path.ends_with(".cpp") && !Path.ends_with(".h"))
      continue;
    StringRef Stem = sys::path::stem(Path);
    if (Stem == "AllPasses")
      continue;
    ++Passes;
    auto Buf = MemoryBuffer::getFile(Path);
    ASSERT_TRUE(bool(Buf)) << Path.str();
    SmallVector<StringRef> Lines;
    (*Buf)->getBuffer().split(Lines, '\n');
    for (StringRef L : Lines) {
      if (!L.consume_front("#include \""))
        continue;
      StringRef Header = L.take_until([](char C) { return C == '"'; });
      if (Header.contains('/') || sys::path::stem(Header) == Stem)
        continue;
      EXPECT_FALSE(sys::fs::exists(Dir + "/" + Header.str()))
          << Path.str() << " includes the pass header " << Header.str()
          << "; move what it shares to passes/utils";
    }
  }
  EXPECT_FALSE(EC) << EC.message();
  EXPECT_GT(Passes, 20u);
}

} // namespace
