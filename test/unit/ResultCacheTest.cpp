//===- ResultCacheTest.cpp - optimize's outcomes across runs --------------===//
#include "astra/Agents/ResultCache.h"
#include "astra/Support/FileIO.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"

using namespace astra;
using namespace llvm;

namespace {

class ResultCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(sys::fs::createUniqueDirectory("astra-result-cache", Tmp));
    Cu = path("k.cu");
    Header = path("helpers.cuh");
    Spec = path("k.cu.astra.json");
    write(Header, "__device__ float twice(float x) { return 2 * x; }\n");
    write(Cu, "#include \"helpers.cuh\"\n#include <cuda_runtime.h>\n"
              "__global__ void k(float *p) { p[0] = twice(p[0]); }\n");
    write(Spec, "{}\n");
  }
  void TearDown() override { sys::fs::remove_directories(Tmp); }
  std::string path(StringRef Name) {
    SmallString<256> P(Tmp);
    sys::path::append(P, Name);
    return std::string(P);
  }
  void write(StringRef P, StringRef Text) {
    ASSERT_FALSE(bool(writeFileAtomically(P, Text)));
  }
  std::string key(StringRef Options = "rounds=5") {
    return ResultCache::key(Cu, Spec, {"clang++", "-x", "cuda", Cu}, Options);
  }
  FileOutcome outcome() {
    FileOutcome O;
    O.File = "k.cu";
    O.Original[Cu] = *readFile(Cu);
    O.Final[Cu] = "// faster\n" + O.Original[Cu];
    KernelReport R;
    R.File = "k.cu";
    R.Kernel = "k";
    R.Diff = "--- a/k.cu\n+++ b/k.cu\n";
    Candidate C;
    C.Id = "r1c2";
    C.Origin = "passes";
    C.Lineage = {"restrict-const", "block-size"};
    C.Params = {{"block-size.threads", "256"}};
    C.BlockThreads = 256;
    C.GridDivisor = 4;
    C.BlockYDivisor = 4;
    C.Files[Cu] = O.Final[Cu];
    R.Outcome.Winner = C;
    ShapeTiming T;
    T.Shape = "decode";
    T.BaselineUs = 10;
    T.CandidateUs = 4;
    T.Bytes = 1e6;
    T.BaselineRoofline = 0.3;
    T.CandidateRoofline = 0.75;
    R.Outcome.WinnerEval.Timings = {T};
    R.Outcome.WinnerEval.Seeds = {7, 8, 9, 10, 11};
    R.Outcome.WinnerEval.MaxRelError = 1e-6;
    O.Kernels.push_back(R);
    KernelReport U;
    U.File = "k.cu";
    U.Kernel = "other";
    U.Outcome.NoWinnerReason = "nothing was faster";
    O.Kernels.push_back(U);
    return O;
  }
  SmallString<256> Tmp;
  std::string Cu, Header, Spec;
};

TEST_F(ResultCacheTest, KeyCoversFileHeadersSpecCommandAndOptions) {
  std::string K = key();
  EXPECT_EQ(K, key()) << "deterministic";
  EXPECT_NE(K, key("rounds=3"));
  EXPECT_NE(K, ResultCache::key(Cu, Spec, {"clang++", "-O2", Cu}, "rounds=5"));
  write(Header, "__device__ float twice(float x) { return x + x; }\n");
  EXPECT_NE(K, key()) << "a local header changed";
  std::string K2 = key();
  write(Spec, "{ }\n");
  EXPECT_NE(K2, key()) << "the spec changed";
  std::string K3 = key();
  write(path("unrelated.cuh"), "int x;\n");
  EXPECT_EQ(K3, key()) << "a header nobody includes";
}

TEST_F(ResultCacheTest, StoresAndFindsPerGpu) {
  ResultCache C(path("cache"));
  std::string K = key();
  EXPECT_FALSE(C.lookup(K, "NVIDIA H100 80GB HBM3"));
  ASSERT_FALSE(bool(C.store(K, "NVIDIA H100 80GB HBM3", outcome(),
                            "2026-11-22T10:00:00Z")));
  std::optional<CachedOutcome> Hit = C.lookup(K, "NVIDIA H100 80GB HBM3");
  ASSERT_TRUE(Hit);
  EXPECT_EQ(Hit->Gpu, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(Hit->Date, "2026-11-22T10:00:00Z");
  const FileOutcome &O = Hit->Outcome;
  EXPECT_EQ(O.Final.at(Cu), outcome().Final.at(Cu));
  ASSERT_EQ(O.Kernels.size(), 2u);
  const KernelReport &R = O.Kernels[0];
  ASSERT_TRUE(R.Outcome.Winner);
  EXPECT_EQ(R.Outcome.Winner->Lineage,
            (std::vector<std::string>{"restrict-const", "block-size"}));
  EXPECT_EQ(R.Outcome.Winner->BlockThreads, std::optional<int64_t>(256));
  EXPECT_EQ(R.Outcome.Winner->GridDivisor, std::optional<int64_t>(4));
  EXPECT_EQ(R.Outcome.Winner->BlockYDivisor, std::optional<int64_t>(4));
  EXPECT_EQ(R.Outcome.Winner->BlockXDivisor, std::nullopt);
  EXPECT_EQ(R.Outcome.Winner->Params.at("block-size.threads"), "256");
  EXPECT_DOUBLE_EQ(R.Outcome.WinnerEval.geomeanSpeedup(), 2.5);
  EXPECT_DOUBLE_EQ(R.Outcome.WinnerEval.Timings[0].CandidateRoofline, 0.75);
  EXPECT_EQ(R.Outcome.WinnerEval.Seeds.size(), 5u);
  EXPECT_EQ(R.Diff, "--- a/k.cu\n+++ b/k.cu\n");
  EXPECT_FALSE(O.Kernels[1].Outcome.Winner);
  EXPECT_EQ(O.Kernels[1].Outcome.NoWinnerReason, "nothing was faster");

  // Another GPU's result is not this GPU's; without a GPU any one will do.
  EXPECT_FALSE(C.lookup(K, "NVIDIA H200"));
  EXPECT_TRUE(C.lookup(K, ""));
  ASSERT_FALSE(bool(C.store(K, "NVIDIA H200", outcome(),
                            "2026-11-23T10:00:00Z")));
  ASSERT_TRUE(C.lookup(K, ""));
  EXPECT_EQ(C.lookup(K, "")->Gpu, "NVIDIA H200") << "the newest";
}

TEST_F(ResultCacheTest, AnEntryForTextThatChangedSinceIsNotUsed) {
  ResultCache C(path("cache"));
  std::string K = key();
  ASSERT_FALSE(bool(C.store(K, "GPU", outcome(), "2026-11-22T10:00:00Z")));
  // Same key (a caller that hashed before an edit), but the file moved on:
  // writing the entry's text would lose the edit.
  write(Cu, *readFile(Cu) + "// edited\n");
  EXPECT_FALSE(C.lookup(K, "GPU"));
}

TEST_F(ResultCacheTest, UnreadableEntriesAreMisses) {
  ResultCache C(path("cache"));
  std::string K = key();
  SmallString<256> Dir(path("cache"));
  sys::path::append(Dir, K);
  ASSERT_FALSE(sys::fs::create_directories(Dir));
  SmallString<256> Entry(Dir);
  sys::path::append(Entry, "GPU.json");
  write(Entry, "{\"version\": 1, \"gpu\": \"GPU\"");
  EXPECT_FALSE(C.lookup(K, "GPU"));
  write(Entry, "{\"version\": 1, \"gpu\": 3}");
  EXPECT_FALSE(C.lookup(K, "GPU"));
}

} // namespace
