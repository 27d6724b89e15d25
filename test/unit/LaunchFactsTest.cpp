#include "ParseCudaForTest.h"
#include "astra/Frontend/KernelModel.h"
#include "astra/Frontend/LaunchFacts.h"
#include "astra/Spec/LaunchSpace.h"
#include "astra/Spec/Spec.h"

#include "llvm/Support/FileSystem.h"
#include "gtest/gtest.h"

using namespace astra;
using namespace llvm;

namespace {

/// Parses \p Code as a .cu file (real clang, real CUDA headers) and keeps
/// the AST for the test.
class LaunchFactsTest : public ::testing::Test {
protected:
  void parse(StringRef Code) {
    auto PF = parseCudaForTest("/launch-facts-test/k.cu", Code);
    ASSERT_TRUE(bool(PF)) << toString(PF.takeError());
    File = std::move(*PF);
    Kernels = collectKernels(File->context());
  }

  LaunchFacts facts(StringRef Kernel) {
    for (const KernelInfo &K : Kernels)
      if (K.Name == Kernel)
        return analyzeLaunches(File->context(), K.Decl);
    ADD_FAILURE() << "no kernel " << Kernel.str();
    return {};
  }

  std::unique_ptr<ParsedFile> File;
  std::vector<KernelInfo> Kernels;
};

constexpr const char *Code = R"cu(
#include <algorithm>
#include <cuda_runtime.h>
__global__ void k_const(float *p, int n) {}
__global__ void k_min(float *p, int d) {}
__global__ void k_free(float *p, int rows) {}
__global__ void k_mult(float *p, int n) {}
__global__ void k_pow2(float *p, int n) {}
__global__ void k_changed(float *p, int n) {}
__global__ void k_none(float *p, int n) {}
__global__ void k_ptr(float *p, int n) {}
__global__ void k_api(float *p, int n) {}
static int cdiv(int a, int b) { return (a + b - 1) / b; }
void run(float *p, int n, int d, int rows, int bs, int k) {
  k_const<<<(n + 255) / 256, 256>>>(p, n);
  const dim3 block(std::min(d, 512));
  k_min<<<rows, block>>>(p, d);
  k_free<<<cdiv(rows, bs), bs, bs * sizeof(float)>>>(p, rows);
  k_mult<<<n, 32 * k>>>(p, n);
  k_pow2<<<n, 1 << k>>>(p, n);
  int t = 128;
  t *= 2;
  k_changed<<<n, t>>>(p, n);
  void (*fp)(float *, int) = k_ptr;
  (void)fp;
  k_ptr<<<1, 32>>>(p, n);
  void *args[] = {&p, &n};
  cudaLaunchKernel((const void *)k_api, dim3(n), dim3(64), args, 0, 0);
}
)cu";

TEST_F(LaunchFactsTest, BlocksTheCodeProves) {
  parse(Code);
  LaunchFacts C = facts("k_const");
  EXPECT_TRUE(C.allVisible()) << C.Hidden;
  ASSERT_EQ(C.Launches.size(), 1u);
  auto CB = C.Launches[0].Block.constant();
  ASSERT_TRUE(CB.has_value());
  EXPECT_EQ((*CB)[0], 256);
  EXPECT_EQ(C.maxThreads(), std::optional<int64_t>(256));
  EXPECT_TRUE(C.blockXPowerOfTwo());
  EXPECT_EQ(C.Launches[0].Exprs.Grid[0], "((n + 255) / 256)");

  // min(d, 512): bounded, not constant, not a power of two.
  LaunchFacts M = facts("k_min");
  ASSERT_EQ(M.Launches.size(), 1u);
  EXPECT_FALSE(M.Launches[0].Block.constant());
  EXPECT_EQ(M.maxThreads(), std::optional<int64_t>(512));
  std::string Why;
  EXPECT_FALSE(M.blockXPowerOfTwo(&Why));
  EXPECT_NE(Why.find("'d', a parameter of 'run'"), std::string::npos) << Why;
  EXPECT_EQ(M.Launches[0].Exprs.Block[0], "min(d, 512)");
  EXPECT_TRUE(M.Launches[0].FreeBlockVar.empty());

  // A caller's variable: free, unbounded; grid and shmem follow it.
  LaunchFacts F = facts("k_free");
  ASSERT_EQ(F.Launches.size(), 1u);
  EXPECT_FALSE(F.maxThreads(&Why));
  EXPECT_NE(Why.find("known only at run time ('bs', a parameter of 'run')"),
            std::string::npos)
      << Why;
  EXPECT_EQ(F.Launches[0].FreeBlockVar, "bs");
  EXPECT_EQ(F.Launches[0].Exprs.Block[0], "$B");
  EXPECT_EQ(F.Launches[0].Exprs.Grid[0], "(((rows + $B) - 1) / $B)");
  EXPECT_EQ(F.Launches[0].Exprs.Shmem, "($B * 4)");

  LaunchFacts X = facts("k_mult");
  EXPECT_EQ(X.Launches[0].Block.Dim[0].MultipleOf, 32);
  LaunchFacts P = facts("k_pow2");
  EXPECT_TRUE(P.blockXPowerOfTwo());

  // A local changed after its initialization is not its initializer.
  LaunchFacts Ch = facts("k_changed");
  EXPECT_FALSE(Ch.Launches[0].Block.constant());
  EXPECT_FALSE(Ch.maxThreads());
}

TEST_F(LaunchFactsTest, WhatTheFileDoesNotShow) {
  parse(Code);
  LaunchFacts N = facts("k_none");
  EXPECT_EQ(N.Hidden, "no launch of the kernel in this file");
  EXPECT_FALSE(N.maxThreads());

  LaunchFacts P = facts("k_ptr");
  EXPECT_NE(P.Hidden.find("other than in a launch (a function pointer"),
            std::string::npos)
      << P.Hidden;
  EXPECT_TRUE(P.AddressTaken);

  // cudaLaunchKernel is a launch, not an escape: its block is read.
  LaunchFacts A = facts("k_api");
  EXPECT_TRUE(A.allVisible()) << A.Hidden;
  ASSERT_EQ(A.Launches.size(), 1u);
  EXPECT_EQ(A.Launches[0].Api, LaunchApi::LaunchKernel);
  EXPECT_EQ(A.maxThreads(), std::optional<int64_t>(64));
  EXPECT_EQ(A.chevrons().size(), 0u);
}

/// The launch space of k_free: a run-time block swept with the launch
/// site's grid; the spec's own launch is not repeated.
TEST_F(LaunchFactsTest, LaunchSpaceFollowsTheLaunchSite) {
  parse(Code);
  KernelLaunchFacts F = plainFacts(facts("k_free"));
  auto Specs = parseSpec(R"J({"version": 1, "kernels": {"k_free": {
      "shapes": {"s": {"r": 1000}},
      "args": {"p": {"dtype": "f32", "count": "r", "role": "output"},
               "rows": {"value": "r"}},
      "launch": {"grid": "cdiv(r, 256)", "block": 256, "shmem": 1024}}}})J",
                         "k.json");
  ASSERT_TRUE(bool(Specs)) << toString(Specs.takeError());
  const KernelSpec &S = Specs->Kernels[0];
  auto Plan = planLaunchSpace(S, F, S.Shapes[0]);
  ASSERT_TRUE(bool(Plan)) << toString(Plan.takeError());
  std::vector<std::string> Names;
  for (const LaunchVariant &V : Plan->Variants) {
    Names.push_back(V.Name);
    auto R = V.Launch.resolve(V.Vars);
    ASSERT_TRUE(bool(R)) << toString(R.takeError());
    int64_t B = R->Block[0];
    EXPECT_EQ(R->Grid[0], (1000 + B - 1) / B) << V.Name;
    EXPECT_EQ(R->Shmem, B * 4) << V.Name;
    EXPECT_TRUE(V.Note.empty()) << V.Note;
  }
  EXPECT_EQ(Names, (std::vector<std::string>{"block=32", "block=64",
                                              "block=100", "block=128",
                                              "block=512", "block=1024"}));

  // The spec narrows what the code cannot tell.
  KernelSpec Narrow = S;
  Narrow.LaunchSpaceBlocks = {128, 256};
  auto NP = planLaunchSpace(Narrow, F, S.Shapes[0]);
  ASSERT_TRUE(bool(NP));
  ASSERT_EQ(NP->Variants.size(), 1u);
  EXPECT_EQ(NP->Variants[0].Name, "block=128");
}

/// A block that follows a shape variable (min(d, 512)): the variable is set
/// so the block takes the swept sizes, within the bound the code proves.
TEST_F(LaunchFactsTest, LaunchSpaceVariesTheShapeABlockFollows) {
  parse(Code);
  KernelLaunchFacts F = plainFacts(facts("k_min"));
  auto Specs = parseSpec(R"J({"version": 1, "kernels": {"k_min": {
      "shapes": {"s": {"T": 4, "D": 4096}},
      "args": {"p": {"dtype": "f32", "count": "T * D", "role": "output"},
               "d": {"value": "D"}},
      "launch": {"grid": "T", "block": "min(D, 512)"}}}})J",
                         "k.json");
  ASSERT_TRUE(bool(Specs)) << toString(Specs.takeError());
  const KernelSpec &S = Specs->Kernels[0];
  auto Plan = planLaunchSpace(S, F, S.Shapes[0]);
  ASSERT_TRUE(bool(Plan)) << toString(Plan.takeError());
  std::vector<std::string> Names;
  for (const LaunchVariant &V : Plan->Variants)
    Names.push_back(V.Name);
  // 512 is the base set's own block; 1024 is over the code's bound.
  EXPECT_EQ(Names, (std::vector<std::string>{
                       "block=32 (D=32)", "block=64 (D=64)",
                       "block=100 (D=100)", "block=128 (D=128)",
                       "block=256 (D=256)"}));

  // Only made smaller: from D = 64 only 32 and 64 (its own) are reachable.
  ShapeSet Short = S.Shapes[0];
  Short.Vars["D"] = Value::ofInt(64);
  auto SP = planLaunchSpace(S, F, Short);
  ASSERT_TRUE(bool(SP)) << toString(SP.takeError());
  ASSERT_EQ(SP->Variants.size(), 1u);
  EXPECT_EQ(SP->Variants[0].Name, "block=32 (D=32)");
}

} // namespace
