//===- EngineCompareTest.cpp - Poison, guards, comparison, validity -------===//
#include "astra/Engine/Compare.h"
#include "astra/Engine/Validity.h"

#include "llvm/Support/Error.h"
#include "gtest/gtest.h"

#include <cmath>
#include <limits>
#include <set>

using namespace astra;
using namespace llvm;

namespace {

HostBuffer floats(DType T, std::initializer_list<double> V) {
  HostBuffer B(T, V.size());
  size_t I = 0;
  for (double X : V)
    B.set(I++, X);
  return B;
}

const double Inf = std::numeric_limits<double>::infinity();
const double NaN = std::numeric_limits<double>::quiet_NaN();

TEST(EngineCompareTest, PoisonIsNaNForFloatsAndDiffersPerVariant) {
  for (DType T : {DType::F32, DType::F64, DType::F16, DType::BF16,
                  DType::FP8E4M3, DType::FP8E5M2}) {
    HostBuffer P0 = poisonBuffer(T, 3, 0), P1 = poisonBuffer(T, 3, 1);
    EXPECT_TRUE(std::isnan(P0.get(2))) << dtypeName(T).str();
    EXPECT_TRUE(std::isnan(P1.get(2))) << dtypeName(T).str();
    EXPECT_NE(P0.bits(0), P1.bits(0));
  }
  for (DType T : {DType::I8, DType::U16, DType::I32, DType::I64}) {
    uint64_t A = poisonBits(T, 0), B = poisonBits(T, 1);
    for (unsigned Byte = 0; Byte < dtypeSize(T); ++Byte)
      EXPECT_NE((A >> (8 * Byte)) & 0xff, (B >> (8 * Byte)) & 0xff)
          << "every byte differs, " << dtypeName(T).str();
    EXPECT_NE(A, ~uint64_t(0) >> (64 - 8 * dtypeSize(T)))
        << "not -1: -1 is a legitimate padding value";
  }
  EXPECT_EQ(poisonBits(DType::F32, 0), 0x7FFFDEADu);
  EXPECT_EQ(poisonBits(DType::I32, 0), 0xDEADBEEFu);
}

TEST(EngineCompareTest, Canary) {
  std::vector<uint8_t> R = canaryRegion(GuardBytes);
  EXPECT_FALSE(firstChangedCanary(R));
  std::set<uint8_t> Distinct(R.begin(), R.end());
  EXPECT_GT(Distinct.size(), 4u) << "no single stored value reproduces it";
  R[37] ^= 1;
  ASSERT_TRUE(firstChangedCanary(R));
  EXPECT_EQ(*firstChangedCanary(R), 37u);
}

TEST(EngineCompareTest, LargeValueToleranceScalesAtolWithOutputRms) {
  // A sum of +-1e4 terms that cancels to about zero: a reordering errs by
  // ~rtol * 1e4, which plain atol + rtol*|expected| rejects.
  HostBuffer E = floats(DType::F32, {3e4, -4e4, 0.0, 1e-3});
  Tolerance Spec{1e-5, 1e-6};
  Tolerance T = largeValueTolerance(Spec, E);
  EXPECT_DOUBLE_EQ(T.Rtol, Spec.Rtol);
  EXPECT_NEAR(T.Atol, 1e-5 * std::sqrt((9e8 + 16e8) / 4), 1e-9);
  HostBuffer Reordered = floats(DType::F32, {3e4, -4e4, 0.2, 1e-3});
  EXPECT_FALSE(compareBuffers("y", E, Reordered, Spec).ok());
  EXPECT_TRUE(compareBuffers("y", E, Reordered, T).ok());
  // A real bug errs by the output's own size and still fails.
  HostBuffer Wrong = floats(DType::F32, {3e4, -4e4, 5e3, 1e-3});
  EXPECT_FALSE(compareBuffers("y", E, Wrong, T).ok());
  // Small outputs keep the spec's atol; integers and NaN are left alone.
  EXPECT_DOUBLE_EQ(largeValueTolerance(Spec, floats(DType::F32, {1e-3, NaN}))
                       .Atol,
                   Spec.Atol);
  HostBuffer Ints(DType::I32, 2);
  Ints.setInt(0, 1 << 20);
  EXPECT_DOUBLE_EQ(largeValueTolerance({0, 0}, Ints).Atol, 0);
}

TEST(EngineCompareTest, ToleranceIsAtolPlusRtolTimesExpected) {
  HostBuffer E = floats(DType::F32, {100.0, 0.0, -1.0});
  Tolerance T{1e-3, 1e-5};
  // 100 * 1e-3 + 1e-5 = 0.10001 allowed.
  EXPECT_TRUE(compareBuffers("o", E, floats(DType::F32, {100.1, 1e-5, -1.001}),
                             T)
                  .ok());
  Comparison C =
      compareBuffers("o", E, floats(DType::F32, {100.2, 0.0, -1.0}), T);
  EXPECT_FALSE(C.ok());
  EXPECT_EQ(C.Failures, 1u);
  ASSERT_TRUE(C.First);
  EXPECT_EQ(C.First->Buffer, "o");
  EXPECT_EQ(C.First->Index, 0u);
  EXPECT_EQ(C.First->Expected, "100");
  EXPECT_NE(C.First->Reason.find("outside tolerance"), std::string::npos);
  EXPECT_NEAR(C.MaxAbsErr, 0.2, 1e-4);
  EXPECT_NEAR(C.MaxRelErr, 0.002, 1e-5);
  // An absolute error near zero is judged by atol alone.
  EXPECT_FALSE(
      compareBuffers("o", E, floats(DType::F32, {100.0, 2e-5, -1.0}), T).ok());
}

TEST(EngineCompareTest, NaNAndInfinityRules) {
  Tolerance T{1e-2, 1e-2};
  HostBuffer E = floats(DType::F32, {1.0, NaN, Inf, -Inf});
  EXPECT_TRUE(
      compareBuffers("o", E, floats(DType::F32, {1.0, NaN, Inf, -Inf}), T).ok())
      << "NaN matches NaN, each infinity itself";
  auto Fails = [&](HostBuffer A, uint64_t Index, StringRef Why) {
    Comparison C = compareBuffers("o", E, A, T);
    ASSERT_FALSE(C.ok());
    EXPECT_EQ(C.First->Index, Index);
    EXPECT_NE(C.First->Reason.find(Why.str()), std::string::npos)
        << C.First->Reason;
  };
  Fails(floats(DType::F32, {NaN, NaN, Inf, -Inf}), 0,
        "NaN where a finite value was expected");
  Fails(floats(DType::F32, {Inf, NaN, Inf, -Inf}), 0,
        "infinity where a finite value was expected");
  Fails(floats(DType::F32, {1.0, 5.0, Inf, -Inf}), 1,
        "the baseline gives NaN here");
  Fails(floats(DType::F32, {1.0, NaN, -Inf, -Inf}), 2,
        "the baseline gives an infinity here");
  Fails(floats(DType::F32, {1.0, NaN, 3e38, -Inf}), 2,
        "the baseline gives an infinity here");
}

TEST(EngineCompareTest, UnwrittenElementsAreNamed) {
  HostBuffer E = floats(DType::BF16, {1, 2, 3, 4});
  HostBuffer A = poisonBuffer(DType::BF16, 4, 0);
  A.set(0, 1);
  A.set(1, 2);
  A.set(2, 3);
  Comparison C = compareBuffers("out", E, A, {1e-2, 1e-2}, 0);
  ASSERT_FALSE(C.ok());
  EXPECT_EQ(C.Unwritten, 1u);
  EXPECT_EQ(C.First->Index, 3u);
  EXPECT_EQ(C.First->Reason, "not written (still holds the poison pattern)");
  EXPECT_EQ(describe(C),
            "out[3]: expected 4 (0x4080), got nan (0x7fde): not written "
            "(still holds the poison pattern); 1 of 4 elements differ (1 not "
            "written)");
  // An integer output whose right answer happens to be the poison value is
  // caught by the second run's different poison; the first compare cannot
  // tell, and says nothing false.
  HostBuffer IE(DType::I32, 1), IA(DType::I32, 1);
  IE.setBits(0, poisonBits(DType::I32, 0));
  IA.setBits(0, poisonBits(DType::I32, 0));
  EXPECT_TRUE(compareBuffers("i", IE, IA, {}, 0).ok());
  IA.setBits(0, poisonBits(DType::I32, 1));
  EXPECT_FALSE(compareBitwise("i", IE, IA).ok());
}

TEST(EngineCompareTest, ElementsLeftUnwrittenInBothRuns) {
  // Element 1 is written, element 0 never (it keeps each run's poison).
  HostBuffer R0 = poisonBuffer(DType::I32, 2, 0), R1 = poisonBuffer(DType::I32, 2, 1);
  R0.setInt(1, 5);
  R1.setInt(1, 5);
  std::vector<bool> Mask = unwrittenInBoth(R0, R1);
  EXPECT_EQ(Mask, (std::vector<bool>{true, false}));
  EXPECT_TRUE(compareBitwise("o", normalizePoison(R0, 0), normalizePoison(R1, 1)).ok());
  // What a run with poison 1 must leave: the poison where the baseline
  // wrote nothing, the values elsewhere.
  HostBuffer E1 = withPoisonAt(R0, Mask, 1);
  EXPECT_EQ(E1.bits(0), poisonBits(DType::I32, 1));
  EXPECT_EQ(E1.getInt(1), 5);
  EXPECT_TRUE(compareBuffers("o", E1, R1, {}, 1).ok());
  // A candidate that writes the untouched element fails.
  HostBuffer C = R1;
  C.setInt(0, 0);
  EXPECT_FALSE(compareBuffers("o", E1, C, {}, 1).ok());
}

TEST(EngineCompareTest, IntegersCompareExactly) {
  HostBuffer E(DType::I64, 3), A(DType::I64, 3);
  for (int I = 0; I < 3; ++I) {
    E.setInt(I, (int64_t(1) << 60) + I);
    A.setInt(I, (int64_t(1) << 60) + I);
  }
  EXPECT_TRUE(compareBuffers("i", E, A, {0.5, 10}).ok())
      << "tolerances do not apply to integers";
  A.setInt(2, (int64_t(1) << 60) + 3);
  Comparison C = compareBuffers("i", E, A, {0.5, 10});
  ASSERT_FALSE(C.ok());
  EXPECT_EQ(C.First->Index, 2u);
  EXPECT_EQ(C.First->Expected, "1152921504606846978");
  EXPECT_EQ(C.First->Actual, "1152921504606846979");
}

TEST(EngineCompareTest, BitwiseCatchesAnyChange) {
  HostBuffer E = floats(DType::F32, {1.0, -0.0, 3.0});
  HostBuffer A = E;
  EXPECT_TRUE(compareBitwise("x", E, A).ok());
  A.set(1, 0.0); // -0 and +0 compare equal as numbers, not as bits
  Comparison C = compareBitwise("x", E, A);
  ASSERT_FALSE(C.ok());
  EXPECT_EQ(C.First->Index, 1u);
  EXPECT_EQ(C.First->Reason, "bits differ");
  EXPECT_FALSE(compareBitwise("x", E, floats(DType::F32, {1.0})).ok())
      << "a shape difference fails";
}

TEST(EngineCompareTest, WeakOutputWarnings) {
  EXPECT_EQ(weakOutputWarning("o", floats(DType::F32, {1, 2, 3})), "");
  std::string Z = weakOutputWarning("o", floats(DType::F32, {0, 0, -0.0}));
  EXPECT_NE(Z.find("all zeros"), std::string::npos) << Z;
  std::string K = weakOutputWarning("o", floats(DType::F32, {7, 7, 7}));
  EXPECT_NE(K.find("one value (7)"), std::string::npos) << K;
  // Values within atol of zero are not weak: the scale rules judge them
  // (ScaleRulesTest.ZerosUnderAtolFail).
  EXPECT_EQ(weakOutputWarning("o", floats(DType::F32, {1e-4, -2e-4, 5e-4})),
            "");
  HostBuffer I(DType::I32, 2);
  EXPECT_NE(weakOutputWarning("i", I).find("all zeros"), std::string::npos);
}

// neighbor_sample over a 4-node graph:
//   0: {1, 2, 3}   1: {}   2: {0}   3: {0, 1, 2, 3, ... } (node 3 has 3)
struct SampleFixture {
  KernelSpec S;
  HostBuffer RowPtr{DType::I64, 5}, Col{DType::I64, 7}, Nodes{DType::I64, 3},
      Out{DType::I64, 6};
  ValidityCheck C;
  Env Vars;
  SampleFixture() {
    S.Kernel = "sample";
    S.SpecPath = "s.astra.json";
    int64_t RP[] = {0, 3, 3, 4, 7};
    int64_t CO[] = {1, 2, 3, 0, 0, 1, 2};
    for (int I = 0; I < 5; ++I)
      RowPtr.setInt(I, RP[I]);
    for (int I = 0; I < 7; ++I)
      Col.setInt(I, CO[I]);
    int64_t N[] = {0, 1, 2};
    for (int I = 0; I < 3; ++I)
      Nodes.setInt(I, N[I]);
    C.Name = "neighbor_sample";
    C.Params = {{"rowptr", "rowptr"}, {"col", "col"}, {"nodes", "nodes"},
                {"out", "out"},       {"fanout", "2"}};
  }
  void setOut(std::initializer_list<int64_t> V) {
    size_t I = 0;
    for (int64_t X : V)
      Out.setInt(I++, X);
  }
  ValidityResult run() {
    std::map<std::string, const HostBuffer *> B = {
        {"rowptr", &RowPtr}, {"col", &Col}, {"nodes", &Nodes}, {"out", &Out}};
    return cantFail(runValidityCheck(C, S, Vars, B));
  }
};

TEST(EngineValidityTest, NeighborSampleAcceptsValidSamples) {
  SampleFixture F;
  F.setOut({3, 1, -1, -1, 0, -1});
  EXPECT_TRUE(F.run().Ok) << F.run().Message;
  F.setOut({2, 3, -1, -1, 0, -1});
  EXPECT_TRUE(F.run().Ok);
  EXPECT_EQ(validityCheckedBuffers(F.C), std::vector<std::string>{"out"});
}

TEST(EngineValidityTest, NeighborSampleRejectsInvalidSamples) {
  SampleFixture F;
  F.setOut({3, 3, -1, -1, 0, -1});
  ValidityResult R = F.run();
  EXPECT_FALSE(R.Ok);
  EXPECT_NE(R.Message.find("neighbour 3 is sampled twice"), std::string::npos)
      << R.Message;
  EXPECT_EQ(R.Index, 1u);
  F.setOut({3, 0, -1, -1, 0, -1});
  R = F.run();
  EXPECT_NE(R.Message.find("slot 1 holds 0, which is not a neighbour"),
            std::string::npos)
      << R.Message;
  F.setOut({3, 1, 0, -1, 0, -1});
  R = F.run();
  EXPECT_NE(R.Message.find("out row 1 (node 1, degree 0): slot 0 holds 0, "
                           "expected -1"),
            std::string::npos)
      << R.Message;
  F.setOut({3, 1, -1, -1, -1, -1});
  R = F.run();
  EXPECT_FALSE(R.Ok) << "a node with one neighbour must get it";
  EXPECT_EQ(R.Index, 4u);
}

TEST(EngineValidityTest, NeighborSampleRejectsBiasedSamplers) {
  // 400 nodes of degree 10, fanout 2: a sampler that always keeps the first
  // two neighbours is valid per row but not uniform.
  KernelSpec S;
  S.Kernel = "sample";
  ValidityCheck C;
  C.Name = "neighbor_sample";
  C.Params = {{"rowptr", "rp"}, {"col", "col"}, {"nodes", "n"},
              {"out", "o"},     {"fanout", "f"}};
  Env Vars;
  Vars["f"] = Value::ofInt(2);
  HostBuffer RP(DType::I32, 401), Col(DType::I32, 4000), N(DType::I32, 400),
      O(DType::I32, 800);
  for (int I = 0; I <= 400; ++I)
    RP.setInt(I, I * 10);
  for (int I = 0; I < 4000; ++I)
    Col.setInt(I, I % 10);
  for (int I = 0; I < 400; ++I) {
    N.setInt(I, I);
    O.setInt(2 * I, 0);
    O.setInt(2 * I + 1, 1);
  }
  std::map<std::string, const HostBuffer *> B = {
      {"rp", &RP}, {"col", &Col}, {"n", &N}, {"o", &O}};
  ValidityResult R = cantFail(runValidityCheck(C, S, Vars, B));
  EXPECT_FALSE(R.Ok);
  EXPECT_NE(R.Message.find("not uniform"), std::string::npos) << R.Message;
  // Spread picks across the row: uniform enough.
  for (int I = 0; I < 400; ++I) {
    O.setInt(2 * I, (I * 7) % 10);
    O.setInt(2 * I + 1, (I * 7 + 5) % 10);
  }
  R = cantFail(runValidityCheck(C, S, Vars, B));
  EXPECT_TRUE(R.Ok) << R.Message;
}

TEST(EngineValidityTest, MisconfiguredChecksAreErrors) {
  SampleFixture F;
  F.C.Params.pop_back(); // no fanout
  std::map<std::string, const HostBuffer *> B = {{"rowptr", &F.RowPtr},
                                                 {"col", &F.Col},
                                                 {"nodes", &F.Nodes},
                                                 {"out", &F.Out}};
  auto R = runValidityCheck(F.C, F.S, F.Vars, B);
  ASSERT_FALSE(bool(R));
  EXPECT_EQ(toString(R.takeError()),
            "s.astra.json: kernel 'sample': check 'neighbor_sample': "
            "params.fanout is missing");
  ValidityCheck U;
  U.Name = "top_k";
  auto R2 = runValidityCheck(U, F.S, F.Vars, B);
  ASSERT_FALSE(bool(R2));
  EXPECT_NE(toString(R2.takeError()).find("unknown validity check"),
            std::string::npos);
}

} // namespace
