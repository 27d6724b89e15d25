//===- LaunchTuningTest.cpp - Block size literals in specs ----------------===//
#include "astra/Spec/LaunchTuning.h"

#include "llvm/Support/Error.h"
#include "gtest/gtest.h"

#include <cstring>

using namespace astra;
using namespace llvm;

namespace {

const char *SpecText = R"js(// four kernels
{
  "version": 1,
  "kernels": {
    "a": {
      "shapes": {"s": {"n": 5000}},
      "args": {"p": {"dtype": "f32", "count": "n", "role": "output"}, "n": {"value": "n"}},
      // 256 threads; the grid rounds up
      "launch": {"grid": "(n + 255) / 256", "block": 256, "shmem": "256 * 4"},
      "launch_tunable": true
    },
    "b": {
      "shapes": {"s": {"T": 4, "d": 3000}},
      "args": {"p": {"dtype": "f32", "count": "T * d", "role": "output"}, "d": {"value": "d"}},
      "launch": {"grid": ["T", 1], "block": "min(1024, d)"},
      "launch_tunable": true
    },
    "c": {
      "shapes": {"s": {"n": 4096}},
      "args": {"p": {"dtype": "f32", "count": "n", "role": "output"}, "n": {"value": "n"}},
      "launch": {"grid": "cdiv(n, 128)", "block": "128"}
    },
    "d": {
      "shapes": {"s": {"n": 4096}},
      "args": {"p": {"dtype": "f32", "count": "n", "role": "output"}, "n": {"value": "n"}},
      "launch": {"grid": "cdiv(n, 128)", "block": "max(64, min(n, 128))"},
      "launch_tunable": true
    }
  }
}
)js";

SpecFile load(StringRef Text) {
  auto S = parseSpec(Text, "t.astra.json");
  EXPECT_TRUE(bool(S)) << (S ? "" : toString(S.takeError()));
  return S ? std::move(*S) : SpecFile();
}

/// A block size and grid divisor change, the thread-coarsen divisors unset
/// (named so that the aggregate's later members need no initializers here).
LaunchChange change(std::optional<int64_t> Threads,
                    std::optional<int64_t> GridDivisor) {
  LaunchChange C;
  C.BlockThreads = Threads;
  C.GridDivisor = GridDivisor;
  return C;
}

TEST(LaunchTuningTest, LiteralsAreWholeNumbers) {
  EXPECT_TRUE(mentionsLiteral("min(1024, d)", 1024));
  EXPECT_FALSE(mentionsLiteral("min(10240, d)", 1024));
  EXPECT_FALSE(mentionsLiteral("x1024 + 1024.5 + 1024e0", 1024));
  EXPECT_EQ(replaceLiteral("cdiv(n, 256) + n256 + 2560", 256, 128),
            "cdiv(n, 128) + n256 + 2560");
  EXPECT_EQ(replaceLiterals("(n + 255) / 256", gridLiterals(256, 512)),
            "(n + 511) / 512");
}

TEST(LaunchTuningTest, TheBlockSizeLiteral) {
  SpecFile S = load(SpecText);
  ASSERT_EQ(S.Kernels.size(), 4u);
  auto A = tunableBlockLiteral(*S.find("a"));
  ASSERT_TRUE(bool(A)) << toString(A.takeError());
  EXPECT_EQ(*A, 256);
  auto B = tunableBlockLiteral(*S.find("b"));
  ASSERT_TRUE(bool(B)) << toString(B.takeError());
  EXPECT_EQ(*B, 1024);
  auto C = tunableBlockLiteral(*S.find("c"));
  ASSERT_FALSE(bool(C));
  EXPECT_NE(toString(C.takeError()).find("launch_tunable"), std::string::npos);
  auto D = tunableBlockLiteral(*S.find("d"));
  ASSERT_FALSE(bool(D)) << "64 and 128: which one is the block size?";
  EXPECT_NE(toString(D.takeError()).find("exactly one block size literal"),
            std::string::npos);
  EXPECT_EQ(defaultRetunedBlock(1024), 256);
  EXPECT_EQ(defaultRetunedBlock(256), 128);
}

TEST(LaunchTuningTest, RetunedLaunchEvaluates) {
  SpecFile S = load(SpecText);
  auto L = retuneLaunch(S.find("a")->Launch, 256, 128);
  ASSERT_TRUE(bool(L)) << toString(L.takeError());
  EXPECT_EQ(L->Grid[0].text(), "(n + 127) / 128");
  EXPECT_EQ(L->Shmem.text(), "128 * 4");
  auto R = L->resolve(S.find("a")->Shapes.front().Vars);
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(R->Block[0], 128);
  EXPECT_EQ(R->Grid[0], (5000 + 127) / 128);
}

TEST(LaunchTuningTest, SpecTextKeepsEverythingButTheLaunch) {
  auto New = retuneSpecText(SpecText, "t.astra.json", {"a", "b"}, change(512, std::nullopt));
  ASSERT_TRUE(bool(New)) << toString(New.takeError());
  StringRef N = *New;
  EXPECT_NE(N.find(R"js("launch": {"grid": "(n + 511) / 512", "block": 512, "shmem": "512 * 4"})js"),
            StringRef::npos)
      << N.str();
  EXPECT_NE(N.find(R"js("launch": {"grid": ["T", 1], "block": "min(512, d)"})js"),
            StringRef::npos)
      << N.str();
  // Comments, kernel c and the shapes stay byte for byte.
  EXPECT_NE(N.find("// 256 threads; the grid rounds up"), StringRef::npos);
  EXPECT_NE(N.find(R"js("launch": {"grid": "cdiv(n, 128)", "block": "128"})js"),
            StringRef::npos);
  // 255 -> 511 and 256 -> 512 keep the length, 1024 -> 512 is one shorter:
  // nothing else changed size.
  EXPECT_EQ(N.size(), strlen(SpecText) - 1);
}

TEST(LaunchTuningTest, SpecTextRefusesWhatItCannotRetune) {
  auto E = retuneSpecText(SpecText, "t.astra.json", {"c"}, change(256, std::nullopt));
  ASSERT_FALSE(bool(E));
  EXPECT_NE(toString(E.takeError()).find("launch_tunable"), std::string::npos);
  auto Missing = retuneSpecText(SpecText, "t.astra.json", {"zz"}, change(256, std::nullopt));
  ASSERT_FALSE(bool(Missing));
  EXPECT_NE(toString(Missing.takeError()).find("no entry for kernel 'zz'"),
            std::string::npos);
}

TEST(LaunchTuningTest, DividedGridRoundsUp) {
  SpecFile S = load(SpecText);
  // Block size first, then the grid: what grid-coarsen after block-size
  // launches.
  auto L = changedLaunch(*S.find("a"), change(128, 4));
  ASSERT_TRUE(bool(L)) << toString(L.takeError());
  EXPECT_EQ(L->Grid[0].text(), "cdiv((n + 127) / 128, 4)");
  auto R = L->resolve(S.find("a")->Shapes.front().Vars);
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(R->Grid[0], ((5000 + 127) / 128 + 3) / 4);
  EXPECT_EQ(R->Block[0], 128);
  // A 2-D grid: only x is divided.
  auto B = changedLaunch(*S.find("b"), change(std::nullopt, 8));
  ASSERT_TRUE(bool(B)) << toString(B.takeError());
  EXPECT_EQ(B->Grid[0].text(), "cdiv(T, 8)");
  EXPECT_EQ(B->Grid[1].text(), "1");
  EXPECT_EQ(B->Block[0].text(), "min(1024, d)");
  // The grid of a launch that is not the kernel's own is not changed.
  auto C = changedLaunch(*S.find("c"), change(std::nullopt, 4));
  ASSERT_FALSE(bool(C));
  EXPECT_NE(toString(C.takeError()).find("launch_tunable"), std::string::npos);
}

TEST(LaunchTuningTest, SpecTextWithDividedGrid) {
  auto New = retuneSpecText(SpecText, "t.astra.json", {"a", "b"},
                            change(512, 4));
  ASSERT_TRUE(bool(New)) << toString(New.takeError());
  StringRef N = *New;
  EXPECT_NE(N.find(R"js("launch": {"grid": "cdiv((n + 511) / 512, 4)", "block": 512, "shmem": "512 * 4"})js"),
            StringRef::npos)
      << N.str();
  EXPECT_NE(N.find(R"js("launch": {"grid": ["cdiv(T, 4)", 1], "block": "min(512, d)"})js"),
            StringRef::npos)
      << N.str();
  EXPECT_NE(N.find(R"js("launch": {"grid": "cdiv(n, 128)", "block": "128"})js"),
            StringRef::npos);
  // A bare number becomes a string expression.
  std::string Bare = R"js({"version": 1, "kernels": {"k": {
    "shapes": {"s": {"n": 10}},
    "args": {"p": {"dtype": "f32", "count": "n", "role": "output"}},
    "launch": {"grid": [64, 2], "block": 256}, "launch_tunable": true}}})js";
  auto B = retuneSpecText(Bare, "b.astra.json", {"k"},
                          change(std::nullopt, 2));
  ASSERT_TRUE(bool(B)) << toString(B.takeError());
  EXPECT_NE(B->find(R"js("grid": ["cdiv(64, 2)", 2])js"), std::string::npos)
      << *B;
}

TEST(LaunchTuningTest, DividedBlock) {
  // thread-coarsen: a 32 x 32 block made 16 x 8; the grid stays.
  std::string Text = R"js({"version": 1, "kernels": {"mm": {
    "shapes": {"s": {"n": 64}},
    "args": {"p": {"dtype": "f32", "count": "n", "role": "output"}},
    // a comment that stays
    "launch": {"grid": ["cdiv(n, 32)", "cdiv(n, 32)", 1], "block": [32, "32", 1]},
    "launch_tunable": true}}})js";
  SpecFile S = load(Text);
  LaunchChange C;
  C.BlockXDivisor = 2;
  C.BlockYDivisor = 4;
  auto L = changedLaunch(*S.find("mm"), C);
  ASSERT_TRUE(bool(L)) << toString(L.takeError());
  EXPECT_EQ(L->Block[0].text(), "16");
  EXPECT_EQ(L->Block[1].text(), "8");
  EXPECT_EQ(L->Grid[0].text(), "cdiv(n, 32)");
  auto New = retuneSpecText(Text, "t.astra.json", {"mm"}, C);
  ASSERT_TRUE(bool(New)) << toString(New.takeError());
  EXPECT_NE(New->find(R"js("block": [16, 8, 1])js"), std::string::npos)
      << *New;
  EXPECT_NE(New->find("// a comment that stays"), std::string::npos);
  // A size the factor does not divide, a size that is not a constant, and
  // a launch that is not the kernel's own are refused.
  LaunchChange Y3;
  Y3.BlockYDivisor = 3;
  auto Bad = changedLaunch(*S.find("mm"), Y3);
  ASSERT_FALSE(bool(Bad));
  EXPECT_NE(toString(Bad.takeError()).find("32 is not a multiple of 3"),
            std::string::npos);
  SpecFile Base = load(SpecText);
  LaunchChange X2;
  X2.BlockXDivisor = 2;
  auto NotConst = changedLaunch(*Base.find("b"), X2);
  ASSERT_FALSE(bool(NotConst));
  EXPECT_NE(toString(NotConst.takeError()).find("is not a constant"),
            std::string::npos);
  auto NotOwn = changedLaunch(*Base.find("c"), X2);
  ASSERT_FALSE(bool(NotOwn));
  EXPECT_NE(toString(NotOwn.takeError()).find("launch_tunable"),
            std::string::npos);
  // A 1-D block is divided along x, in the spec's text too (a bare number
  // and a string); dividing its absent y fails.
  auto X = changedLaunch(*Base.find("a"), X2);
  ASSERT_TRUE(bool(X)) << toString(X.takeError());
  EXPECT_EQ(X->Block[0].text(), "128");
  auto XText = retuneSpecText(SpecText, "t.astra.json", {"a"}, X2);
  ASSERT_TRUE(bool(XText)) << toString(XText.takeError());
  EXPECT_NE(XText->find(R"js("grid": "(n + 255) / 256", "block": 128, "shmem": "256 * 4")js"),
            std::string::npos)
      << *XText;
  std::string Str = R"js({"version": 1, "kernels": {"k": {
    "shapes": {"s": {"n": 10}},
    "args": {"p": {"dtype": "f32", "count": "n", "role": "output"}},
    "launch": {"grid": "n", "block": "256"}, "launch_tunable": true}}})js";
  auto SText = retuneSpecText(Str, "s.astra.json", {"k"}, X2);
  ASSERT_TRUE(bool(SText)) << toString(SText.takeError());
  EXPECT_NE(SText->find(R"js("block": 128})js"), std::string::npos) << *SText;
  LaunchChange Y2;
  Y2.BlockYDivisor = 2;
  EXPECT_FALSE(bool(changedLaunch(*Base.find("a"), Y2)));
}

TEST(LaunchTuningTest, RowsPerBlock) {
  // rows-per-block: 4 rows per block, each with the block's x divided by 8,
  // where 4 divides the grid and the block fits; the original launch
  // elsewhere. Checked by evaluating the changed launch at shapes of both
  // kinds, and in the spec's text.
  std::string Text = R"js({"version": 1, "kernels": {"m": {
    "shapes": {"s": {"T": 16, "H": 32, "D": 128}},
    "args": {"p": {"dtype": "f32", "count": "T * H * D", "role": "output"}},
    // a comment that stays
    "launch": {"grid": "T * H", "block": "D", "shmem": "0"},
    "launch_tunable": true}}})js";
  SpecFile S = load(Text);
  LaunchChange C;
  C.RowDivisor = 8;
  C.BlockRows = 4;
  auto L = changedLaunch(*S.find("m"), C);
  ASSERT_TRUE(bool(L)) << toString(L.takeError());
  EXPECT_EQ(L->Grid[0].text(), "(T * H) % 4 == 0 && (D) % 8 == 0 && (D) / 8 "
                               "* 4 <= 1024 ? (T * H) / 4 : (T * H)");
  auto Dims = [&](int64_t T, int64_t H, int64_t D) {
    Env E{{"T", Value::ofInt(T)}, {"H", Value::ofInt(H)},
          {"D", Value::ofInt(D)}};
    auto R = L->resolve(E);
    EXPECT_TRUE(bool(R));
    if (!R) {
      consumeError(R.takeError());
      return std::string();
    }
    return std::to_string(R->Grid[0]) + " " + std::to_string(R->Block[0]) +
           "x" + std::to_string(R->Block[1]);
  };
  EXPECT_EQ(Dims(16, 32, 128), "128 16x4");
  EXPECT_EQ(Dims(3, 3, 128), "9 128x1");   // 4 does not divide 9 rows.
  EXPECT_EQ(Dims(16, 32, 100), "512 100x1"); // 8 does not divide 100.
  auto New = retuneSpecText(Text, "t.astra.json", {"m"}, C);
  ASSERT_TRUE(bool(New)) << toString(New.takeError());
  EXPECT_NE(New->find(R"js("block": ["(T * H) % 4 == 0 && (D) % 8 == 0 && (D) / 8 * 4 <= 1024 ? (D) / 8 : (D)", "(T * H) % 4 == 0 && (D) % 8 == 0 && (D) / 8 * 4 <= 1024 ? 4 : 1", "1"])js"),
            std::string::npos)
      << *New;
  EXPECT_NE(New->find(R"js("grid": ["(T * H) % 4 == 0 && (D) % 8 == 0 && (D) / 8 * 4 <= 1024 ? (T * H) / 4 : (T * H)", "1", "1"])js"),
            std::string::npos)
      << *New;
  EXPECT_NE(New->find("// a comment that stays"), std::string::npos);
  EXPECT_NE(New->find(R"js("shmem": "0")js"), std::string::npos);
  // A 2-D block and a launch that is not the kernel's own are refused.
  std::string TwoD = R"js({"version": 1, "kernels": {"m": {
    "shapes": {"s": {"n": 64}},
    "args": {"p": {"dtype": "f32", "count": "n", "role": "output"}},
    "launch": {"grid": "n", "block": [32, 4, 1]}, "launch_tunable": true}}})js";
  SpecFile S2 = load(TwoD);
  auto Bad = changedLaunch(*S2.find("m"), C);
  ASSERT_FALSE(bool(Bad));
  EXPECT_NE(toString(Bad.takeError()).find("not 1-D"), std::string::npos);
  SpecFile Base = load(SpecText);
  auto NotOwn = changedLaunch(*Base.find("c"), C);
  ASSERT_FALSE(bool(NotOwn));
  EXPECT_NE(toString(NotOwn.takeError()).find("launch_tunable"),
            std::string::npos);
}


TEST(LaunchTuningTest, SubstituteNamesReplacesWholeNames) {
  std::map<std::string, std::string> M = {{"n", "(N)"}, {"len", "(L)"}};
  EXPECT_EQ(substituteNames("((len - k) + 1) * n", M), "(((L) - k) + 1) * (N)");
  // Longer names, names inside others and number suffixes stay.
  EXPECT_EQ(substituteNames("nn + n1 + 1n + len_2", M), "nn + n1 + 1n + len_2");
}

TEST(LaunchTuningTest, Delinearized) {
  // delinearize: x over A = len - k + 1, y over B = oc, z over C = batch,
  // 128 x 8 blocks where that grid fits; else the flat grid over the same
  // blocks. Checked by evaluating the changed launch, then with
  // thread-coarsen's block division on top, and in the spec's text.
  std::string Text = R"js({"version": 1, "kernels": {"conv": {
    "shapes": {"s": {"B": 2, "OC": 8, "L": 512, "K": 3}},
    "args": {"p": {"dtype": "f32", "count": "B * OC * (L - K + 1)", "role": "output"},
             "batch": {"value": "B"}, "oc": {"value": "OC"},
             "len": {"value": "L"}, "k": {"value": "K"}},
    "launch": {"grid": "cdiv(B * OC * (L - K + 1), 256)", "block": 256},
    "launch_tunable": true}}})js";
  SpecFile S = load(Text);
  LaunchChange C;
  C.Grid3 = Delinearized{"((len - k) + 1)", "oc", "batch", 128, 8};
  auto L = changedLaunch(*S.find("conv"), C);
  ASSERT_TRUE(bool(L)) << toString(L.takeError());
  auto Dims = [&](const LaunchSpec &LS, int64_t B, int64_t OC, int64_t Len) {
    Env E{{"B", Value::ofInt(B)}, {"OC", Value::ofInt(OC)},
          {"L", Value::ofInt(Len)}, {"K", Value::ofInt(3)}};
    auto R = LS.resolve(E);
    EXPECT_TRUE(bool(R));
    if (!R) {
      consumeError(R.takeError());
      return std::string();
    }
    return std::to_string(R->Grid[0]) + "x" + std::to_string(R->Grid[1]) +
           "x" + std::to_string(R->Grid[2]) + " " +
           std::to_string(R->Block[0]) + "x" + std::to_string(R->Block[1]);
  };
  EXPECT_EQ(Dims(*L, 2, 8, 512), "4x1x2 128x8");      // cdiv(510, 128) = 4.
  EXPECT_EQ(Dims(*L, 32, 128, 32768), "256x16x32 128x8");
  // 65536 batches do not fit a grid's z: the flat grid covers the
  // original's cdiv(T, 256) * 256 threads with 1024-thread blocks.
  EXPECT_EQ(Dims(*L, 65536, 2, 4), "256x1x1 128x8");
  C.BlockXDivisor = 2;
  C.BlockYDivisor = 8;
  auto L2 = changedLaunch(*S.find("conv"), C);
  ASSERT_TRUE(bool(L2)) << toString(L2.takeError());
  EXPECT_EQ(Dims(*L2, 2, 8, 512), "4x1x2 64x1");
  auto New = retuneSpecText(Text, "t.astra.json", {"conv"}, C);
  ASSERT_TRUE(bool(New)) << toString(New.takeError());
  EXPECT_NE(New->find(R"js("block": ["64", "1", "1"])js"), std::string::npos)
      << *New;
  EXPECT_NE(New->find("? cdiv(((((L) - (K)) + 1)), 128) : cdiv((cdiv(B * OC * (L - K + 1), 256)) * 256, 1024)"),
            std::string::npos)
      << *New;
  // A launch that is not the kernel's own is refused.
  SpecFile Base = load(SpecText);
  LaunchChange D;
  D.Grid3 = Delinearized{"n", "n", "1", 128, 8};
  auto NotOwn = changedLaunch(*Base.find("c"), D);
  ASSERT_FALSE(bool(NotOwn));
  EXPECT_NE(toString(NotOwn.takeError()).find("launch_tunable"),
            std::string::npos);
}

TEST(LaunchTuningTest, WarpPerRow) {
  // warp-per-row: a warp per row of the kernel's row count (its parameter
  // `rows`, the spec's R), where the block is a multiple of 32; with a
  // block the spec does not fix, the original grid where it is not. Checked
  // by evaluating the launch, after block-size's retuning too, and in the
  // spec's text.
  std::string Text = R"js({"version": 1, "kernels": {"m": {
    "shapes": {"s": {"R": 1000, "C": 64}},
    "args": {"p": {"dtype": "f32", "count": "R * C", "role": "output"},
             "rows": {"value": "R"}, "cols": {"value": "C"}},
    // a comment that stays
    "launch": {"grid": "cdiv(R, 256)", "block": 256},
    "launch_tunable": true}, "v": {
    "shapes": {"s": {"R": 1000, "B": 100}},
    "args": {"p": {"dtype": "f32", "count": "R", "role": "output"},
             "rows": {"value": "R"}},
    "launch": {"grid": "cdiv(R, B)", "block": "B"},
    "launch_tunable": true}}})js";
  SpecFile S = load(Text);
  LaunchChange C;
  C.WarpRows = "rows";
  auto Grid = [&](const LaunchSpec &LS, int64_t R, int64_t B) {
    Env E{{"R", Value::ofInt(R)}, {"C", Value::ofInt(64)},
          {"B", Value::ofInt(B)}};
    auto X = LS.resolve(E);
    EXPECT_TRUE(bool(X));
    if (!X) {
      consumeError(X.takeError());
      return std::string();
    }
    return std::to_string(X->Grid[0]) + " " + std::to_string(X->Block[0]);
  };
  auto L = changedLaunch(*S.find("m"), C);
  ASSERT_TRUE(bool(L)) << toString(L.takeError());
  EXPECT_EQ(L->Grid[0].text(), "cdiv((R), (256) / 32)");
  EXPECT_EQ(Grid(*L, 1000, 0), "125 256"); // 1000 warps of 8 per block.
  EXPECT_EQ(Grid(*L, 1001, 0), "126 256");
  auto V = changedLaunch(*S.find("v"), C);
  ASSERT_TRUE(bool(V)) << toString(V.takeError());
  EXPECT_EQ(Grid(*V, 1000, 128), "250 128");
  EXPECT_EQ(Grid(*V, 1000, 100), "10 100"); // The original grid.
  // block-size's literal follows into the grid.
  C.BlockThreads = 128;
  auto L2 = changedLaunch(*S.find("m"), C);
  ASSERT_TRUE(bool(L2)) << toString(L2.takeError());
  EXPECT_EQ(Grid(*L2, 1000, 0), "250 128");
  C.BlockThreads.reset();
  auto New = retuneSpecText(Text, "t.astra.json", {"m", "v"}, C);
  ASSERT_TRUE(bool(New)) << toString(New.takeError());
  EXPECT_NE(New->find(R"js("grid": ["cdiv((R), (256) / 32)", "1", "1"])js"),
            std::string::npos)
      << *New;
  EXPECT_NE(New->find(R"js("grid": ["(B) % 32 == 0 ? cdiv((R), (B) / 32) : (cdiv(R, B))", "1", "1"])js"),
            std::string::npos)
      << *New;
  EXPECT_NE(New->find("// a comment that stays"), std::string::npos);
  // A 2-D block and a launch that is not the kernel's own are refused.
  std::string TwoD = R"js({"version": 1, "kernels": {"m": {
    "shapes": {"s": {"n": 64}},
    "args": {"p": {"dtype": "f32", "count": "n", "role": "output"}},
    "launch": {"grid": "n", "block": [32, 4, 1]}, "launch_tunable": true}}})js";
  SpecFile S2 = load(TwoD);
  auto Bad = changedLaunch(*S2.find("m"), C);
  ASSERT_FALSE(bool(Bad));
  EXPECT_NE(toString(Bad.takeError()).find("1-D"), std::string::npos);
  SpecFile Base = load(SpecText);
  auto NotOwn = changedLaunch(*Base.find("c"), C);
  ASSERT_FALSE(bool(NotOwn));
  EXPECT_NE(toString(NotOwn.takeError()).find("launch_tunable"),
            std::string::npos);
}

} // namespace
