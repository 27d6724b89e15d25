//===- ShapeSplitTest.cpp - Splitting specs by launch size ----------------===//
#include "astra/Spec/ShapeSplit.h"

#include "llvm/Support/Error.h"
#include "gtest/gtest.h"

using namespace astra;
using namespace llvm;

namespace {

const char *SpecText = R"js(// two kernels
{
  "version": 1,
  "kernels": {
    "k": {
      "shapes": {
        "tiny":  {"n": 4096},   // 4096 threads
        "small": {"n": 16384},
        "large": {"n": 8388608},
      },
      "args": {"p": {"dtype": "f32", "count": "n", "role": "output"}, "n": {"value": "n"}},
      "launch": {"grid": "cdiv(n, 256)", "block": 256},
      "launch_tunable": true,
    },
    "t<float>": {
      "shapes": {"big": {"T": 4096, "D": 128}, "one": {"T": 1, "D": 128}},
      "args": {"p": {"dtype": "f32", "count": "T * D", "role": "output"}, "d": {"value": "D"}},
      "launch": {"grid": ["T", 1], "block": "D"}
    }
  }
}
)js";

SpecFile load(StringRef Text) {
  auto S = parseSpec(Text, "t.astra.json");
  EXPECT_TRUE(bool(S)) << (S ? "" : toString(S.takeError()));
  return S ? std::move(*S) : SpecFile();
}

std::vector<std::string> sets(const KernelSpec &K) {
  std::vector<std::string> N;
  for (const ShapeSet &S : K.Shapes)
    N.push_back(S.Name);
  return N;
}

TEST(ShapeSplit, LaunchThreadsIsGridTimesBlock) {
  SpecFile F = load(SpecText);
  const KernelSpec &T = *F.find("t<float>");
  EXPECT_EQ(cantFail(launchThreads(T, T.Shapes[0])), 4096 * 128);
  EXPECT_EQ(cantFail(launchThreads(T, T.Shapes[1])), 128);
}

TEST(ShapeSplit, DefaultThresholdSitsInTheWidestGap) {
  SpecFile F = load(SpecText);
  // 4096, 16384 and 8388608 threads: the widest gap is 16384 -> 8388608;
  // their geometric mean is 2^18.5, the power of two above it 2^19.
  EXPECT_EQ(cantFail(defaultSplitThreshold({F.find("k")})), 1 << 19);
  // Over both kernels the sizes are 128, 4096, ...: 128 -> 4096 is 32x,
  // 16384 -> 524288 is 32x too, the smaller pair wins the tie: 2^10 > 724.
  EXPECT_EQ(cantFail(defaultSplitThreshold({F.find("k"), F.find("t<float>")})),
            1024);
}

TEST(ShapeSplit, NoThresholdWithoutAWideGap) {
  SpecFile F = load(SpecText);
  KernelSpec K = *F.find("k");
  K.Shapes.pop_back(); // 4096 and 16384: 4x apart exactly, still splits.
  EXPECT_EQ(cantFail(defaultSplitThreshold({&K})), 8192);
  K.Shapes[1].Vars["n"] = Value::ofInt(8192); // 2x apart: nothing to split.
  auto T = defaultSplitThreshold({&K});
  ASSERT_FALSE(bool(T));
  EXPECT_NE(toString(T.takeError()).find("no two sizes 4x apart"),
            std::string::npos);
  K.Shapes.pop_back();
  T = defaultSplitThreshold({&K});
  ASSERT_FALSE(bool(T));
  EXPECT_NE(toString(T.takeError()).find("nothing to split"),
            std::string::npos);
}

TEST(ShapeSplit, CloneNamesRoundTrip) {
  EXPECT_EQ(splitCloneName("k"), "k_astra_large");
  EXPECT_EQ(splitCloneName("ns::t<float, 2>"), "ns::t_astra_large<float, 2>");
  EXPECT_EQ(splitOriginName("ns::t_astra_large<float, 2>"), "ns::t<float, 2>");
  EXPECT_EQ(splitOriginName("k_astra_large"), "k");
  EXPECT_EQ(splitOriginName("k"), "k");
  EXPECT_EQ(splitOriginName("k<x_astra_large>"), "k<x_astra_large>");
}

TEST(ShapeSplit, SplitSpecMovesTheLargeSets) {
  SpecFile F = load(SpecText);
  KernelSpec K = *F.find("k");
  auto Clone = splitSpec(K, 1 << 19);
  ASSERT_TRUE(bool(Clone)) << toString(Clone.takeError());
  EXPECT_EQ(sets(K), (std::vector<std::string>{"tiny", "small"}));
  EXPECT_EQ(Clone->Kernel, "k_astra_large");
  EXPECT_EQ(sets(*Clone), (std::vector<std::string>{"large"}));
  EXPECT_EQ(Clone->Launch.Grid[0].text(), K.Launch.Grid[0].text());
  // A threshold with every set on one side is refused, naming the kernel.
  KernelSpec K2 = *F.find("k");
  auto None = splitSpec(K2, 1 << 30);
  ASSERT_FALSE(bool(None));
  EXPECT_NE(toString(None.takeError()).find("kernel 'k': no shape set"),
            std::string::npos);
  EXPECT_EQ(K2.Shapes.size(), 3u); // Unchanged on failure.
}

TEST(ShapeSplit, SpecTextKeepsCommentsAndParsesBack) {
  auto New = splitSpecText(SpecText, "t.astra.json", {"k", "t<float>"}, 8192);
  ASSERT_TRUE(bool(New)) << toString(New.takeError());
  SpecFile F = load(*New);
  ASSERT_EQ(F.Kernels.size(), 4u);
  EXPECT_EQ(sets(*F.find("k")), (std::vector<std::string>{"tiny"}));
  EXPECT_EQ(sets(*F.find("k_astra_large")),
            (std::vector<std::string>{"small", "large"}));
  EXPECT_EQ(sets(*F.find("t<float>")), (std::vector<std::string>{"one"}));
  EXPECT_EQ(sets(*F.find("t_astra_large<float>")),
            (std::vector<std::string>{"big"}));
  // The comment on the set that stayed is kept; the copy is the entry's text.
  EXPECT_NE(New->find("\"tiny\":  {\"n\": 4096},   // 4096 threads"),
            std::string::npos);
  EXPECT_NE(New->find("// two kernels"), std::string::npos);
  // Splitting again is refused: the clone has an entry.
  auto Again = splitSpecText(*New, "t.astra.json", {"k"}, 2048);
  ASSERT_FALSE(bool(Again));
  EXPECT_NE(toString(Again.takeError()).find("split already"),
            std::string::npos);
}

TEST(ShapeSplit, FollowSplitsFindsInstantiations) {
  auto New = followSplits(SpecText, "t.astra.json", {{"t", 8192}});
  ASSERT_TRUE(bool(New)) << toString(New.takeError());
  SpecFile F = load(*New);
  EXPECT_TRUE(F.find("t_astra_large<float>"));
  EXPECT_FALSE(F.find("k_astra_large"));
  auto Missing = followSplits(SpecText, "t.astra.json", {{"nope", 8192}});
  ASSERT_FALSE(bool(Missing));
  EXPECT_NE(toString(Missing.takeError()).find("no entry for kernel 'nope'"),
            std::string::npos);
}

} // namespace
