//===- ScaleRulesTest.cpp - Whole-output rules against tolerance hacks ----===//
//
// Each hack is shown to pass the element-wise comparison with the dtype's
// default tolerance and then to fail its rule; each equivalent rewrite
// passes both. The data are small simulations of real kernels (bf16
// x * y + x, gelu, softmax, f32 row sums and means) on normal inputs.
//
//===----------------------------------------------------------------------===//
#include "astra/Engine/ScaleRules.h"
#include "astra/Engine/Compare.h"

#include "gtest/gtest.h"

#include <cmath>
#include <functional>
#include <limits>
#include <random>

using namespace astra;

namespace {

/// The dtype defaults of docs/spec-format.md.
const Tolerance Bf16Tol{1.6e-2, 1e-2};
const Tolerance F32Tol{1e-4, 1e-5};

/// Deterministic normal values (Box-Muller on a fixed engine, not
/// std::normal_distribution, whose algorithm the standard leaves open).
class Normal {
public:
  explicit Normal(uint64_t Seed) : G(Seed) {}
  double operator()() {
    double U1 = (double(G() >> 11) + 1) * 0x1p-53,
           U2 = double(G() >> 11) * 0x1p-53;
    return std::sqrt(-2 * std::log(U1)) * std::cos(2 * M_PI * U2);
  }

private:
  std::mt19937_64 G;
};

double bf16(double V) { return bf16BitsToDouble(doubleToBf16Bits(V)); }
double f32(double V) { return double(float(V)); }

HostBuffer make(DType T, size_t N, const std::function<double(size_t)> &F) {
  HostBuffer B(T, N);
  for (size_t I = 0; I < N; ++I)
    B.set(I, F(I));
  return B;
}

HostBuffer map(const HostBuffer &E, const std::function<double(double)> &F) {
  HostBuffer A(E.type(), E.count());
  for (size_t I = 0; I < E.count(); ++I)
    A.set(I, F(E.get(I)));
  return A;
}

/// bf16 x * y + x with normal inputs, computed in float32 and rounded once
/// (the baseline of the engine's bf16 GPU tests).
struct MulAdd {
  std::vector<double> X, Y;
  HostBuffer Out;
  explicit MulAdd(size_t N = 65536, uint64_t Seed = 1) {
    Normal R(Seed);
    for (size_t I = 0; I < N; ++I) {
      X.push_back(bf16(R()));
      Y.push_back(bf16(R()));
    }
    Out = make(DType::BF16, N, [&](size_t I) {
      return f32(std::fma(float(X[I]), float(Y[I]), float(X[I])));
    });
  }
};

double share(const std::string &Evidence) {
  // "N of the M elements ...": N / M.
  unsigned long long A = 0, B = 0;
  if (std::sscanf(Evidence.c_str(), "%llu of the %llu", &A, &B) == 2 && B)
    return double(A) / double(B);
  return -1;
}

void expectPasses(const HostBuffer &E, const HostBuffer &A, Tolerance T) {
  Comparison C = compareBuffers("out", E, A, T);
  EXPECT_TRUE(C.ok()) << describe(C);
  ScaleVerdict V = checkScale("out", E, A, T.Rtol);
  EXPECT_TRUE(V.ok()) << V.Kind << ": " << describe(V);
}

/// The hack passes element by element (that is the point of it) and fails
/// rule \p Kind.
ScaleVerdict expectCaught(const HostBuffer &E, const HostBuffer &A, Tolerance T,
                          llvm::StringRef Kind) {
  Comparison C = compareBuffers("out", E, A, T);
  EXPECT_TRUE(C.ok()) << "the element-wise rule already catches it: "
                      << describe(C);
  ScaleVerdict V = checkScale("out", E, A, T.Rtol);
  EXPECT_EQ(V.Kind, Kind.str()) << describe(V);
  return V;
}

//===--- Hacks ----------------------------------------------------------===//

TEST(ScaleRulesTest, ZerosUnderAtolFail) {
  // KernelBench issue 165: a bf16 softmax over 4096 columns gives values
  // near 1/4096, all far below atol 0.01, so zeros pass element by element.
  Normal R(7);
  size_t Cols = 4096, Rows = 4;
  std::vector<double> P(Cols * Rows);
  for (size_t Row = 0; Row < Rows; ++Row) {
    double Sum = 0;
    for (size_t J = 0; J < Cols; ++J)
      Sum += P[Row * Cols + J] = std::exp(bf16(R()));
    for (size_t J = 0; J < Cols; ++J)
      P[Row * Cols + J] /= Sum;
  }
  HostBuffer E = make(DType::BF16, P.size(), [&](size_t I) { return P[I]; });
  ScaleVerdict V =
      expectCaught(E, map(E, [](double) { return 0.0; }), Bf16Tol, "constant");
  EXPECT_NE(V.Evidence.find("writes one value (0 (0x0000)) to all 16384 "
                            "elements of 'out'"),
            std::string::npos)
      << V.Evidence;
  ASSERT_TRUE(V.Example);
  EXPECT_EQ(V.Example->Actual, "0 (0x0000)");
  // A constant at the output's mean is no better.
  expectCaught(E, map(E, [&](double) { return 1.0 / Cols; }), Bf16Tol,
               "constant");
}

TEST(ScaleRulesTest, FlushSmallToZeroBf16Fails) {
  // The planted fault of issue 24: bf16 outputs below 0.01 written as zero.
  // Every flushed element is within atol, so the element-wise rule passes.
  MulAdd M;
  HostBuffer A =
      map(M.Out, [](double V) { return std::fabs(V) < 0.01 ? 0.0 : V; });
  ScaleVerdict V = expectCaught(M.Out, A, Bf16Tol, "zeroed");
  EXPECT_NE(V.Evidence.find("of 65536 elements of 'out' are exact zeros where "
                            "the reference's magnitude is at least"),
            std::string::npos)
      << V.Evidence;
  unsigned long long Zeroed = 0;
  ASSERT_EQ(std::sscanf(V.Evidence.c_str(), "%llu", &Zeroed), 1);
  // About 1.5% of a normal-shaped output (ScaleRules.h cites this).
  EXPECT_GT(Zeroed, 65536 * 0.01);
  EXPECT_LT(Zeroed, 65536 * 0.025);
  ASSERT_TRUE(V.Example);
  EXPECT_EQ(V.Example->Actual, "0 (0x0000)");
  EXPECT_EQ(describe(V).find(V.Evidence + "; e.g. out["), 0u) << describe(V);
}

TEST(ScaleRulesTest, FlushSmallToZeroGeluFails) {
  Normal R(3);
  HostBuffer E = make(DType::BF16, 65536, [&](size_t) {
    double X = bf16(R());
    return f32(0.5 * X * (1 + std::erf(X / std::sqrt(2.0))));
  });
  ScaleVerdict V = expectCaught(
      E, map(E, [](double V) { return std::fabs(V) < 0.01 ? 0.0 : V; }),
      Bf16Tol, "zeroed");
  unsigned long long Zeroed = 0;
  ASSERT_EQ(std::sscanf(V.Evidence.c_str(), "%llu", &Zeroed), 1);
  EXPECT_GT(Zeroed, 65536 * 0.01);
}

TEST(ScaleRulesTest, FlushToTinyNonZeroFails) {
  // The same flush, dodging a count of exact zeros.
  MulAdd M;
  HostBuffer A = map(M.Out, [](double V) {
    return std::fabs(V) < 0.01 ? std::copysign(1e-30, V) : V;
  });
  ScaleVerdict V = expectCaught(M.Out, A, Bf16Tol, "zeroed");
  EXPECT_NE(V.Evidence.find("are zero or nearly (0 exact zeros"),
            std::string::npos)
      << V.Evidence;
}

TEST(ScaleRulesTest, FewZeroedElementsAreTolerated) {
  // One element in a thousand may come back zeroed (a rare exact
  // cancellation); two more fail.
  MulAdd M(4000);
  HostBuffer A = M.Out;
  std::vector<size_t> Small; // Above the counted floor, within atol.
  for (size_t I = 0; I < 4000; ++I)
    if (std::fabs(M.Out.get(I)) > 0.003 && std::fabs(M.Out.get(I)) < 0.009)
      Small.push_back(I);
  ASSERT_GT(Small.size(), 5u);
  for (int K = 0; K < 3; ++K)
    A.set(Small[K], 0.0);
  EXPECT_TRUE(checkScale("out", M.Out, A, Bf16Tol.Rtol).ok());
  A.set(Small[3], 0.0);
  A.set(Small[4], 0.0);
  EXPECT_EQ(checkScale("out", M.Out, A, Bf16Tol.Rtol).Kind, "zeroed");
}

TEST(ScaleRulesTest, ConstantOutputFails) {
  // A reference of small values (RMS about 1e-3), a candidate that writes
  // their mean: within atol everywhere.
  Normal R(11);
  HostBuffer E =
      make(DType::BF16, 4096, [&](size_t) { return 1e-3 + 5e-4 * R(); });
  ScaleVerdict V =
      expectCaught(E, map(E, [](double) { return 1e-3; }), Bf16Tol, "constant");
  EXPECT_NE(V.Evidence.find("where the reference's values range from"),
            std::string::npos)
      << V.Evidence;
}

TEST(ScaleRulesTest, ScaleErrorWithinRtolFails) {
  // A 1.4% scale error on bf16 outputs below 2 (an RMSNorm of uniform
  // inputs, weights up to 1): with the two roundings to bf16 (one ulp, at
  // most 2^-7 of the value) inside atol + rtol * |expected| everywhere, and
  // its relative RMS error (1.4%) is under rtol 1.6e-2 too.
  std::mt19937_64 G(37);
  auto Uniform = [&](double Lo, double Hi) {
    return Lo + (Hi - Lo) * double(G() >> 11) * 0x1p-53;
  };
  std::vector<double> V(65536);
  for (double &X : V)
    X = f32(Uniform(-std::sqrt(3.0), std::sqrt(3.0)) * Uniform(0.5, 1.0));
  HostBuffer E = make(DType::BF16, V.size(), [&](size_t I) { return V[I]; });
  ScaleVerdict SV = expectCaught(
      E,
      make(DType::BF16, V.size(), [&](size_t I) { return f32(V[I] * 1.014); }),
      Bf16Tol, "outside-rtol");
  // Far above the 2% allowed (ScaleRules.h cites this).
  double S = share(SV.Evidence);
  EXPECT_GT(S, 0.1) << SV.Evidence;
  EXPECT_NE(SV.Evidence.find("(0 with the wrong sign), though atol covers "
                             "them"),
            std::string::npos)
      << SV.Evidence;
}

TEST(ScaleRulesTest, BiasUnderAtolFails) {
  // Every value pushed away from zero by 0.009, just under atol.
  MulAdd M;
  expectCaught(M.Out,
               map(M.Out, [](double V) { return V + std::copysign(0.009, V); }),
               Bf16Tol, "outside-rtol");
}

TEST(ScaleRulesTest, ScaleErrorOnSmallOutputsFails) {
  // A 2% scale error on f32 outputs of RMS 1e-3: atol 1e-5 (1% of the
  // scale) hides most of it element by element; the relative RMS error is
  // 2%, far above rtol 1e-4.
  Normal R(5);
  HostBuffer E = make(DType::F32, 4096, [&](size_t) { return 1e-3 * R(); });
  HostBuffer A = map(E, [](double V) { return V * 1.02; });
  ScaleVerdict V = checkScale("out", E, A, F32Tol.Rtol);
  EXPECT_EQ(V.Kind, "norm") << describe(V);
  EXPECT_NE(V.Evidence.find("is 0.02, above rtol 0.0001; the candidate's RMS "
                            "is 1.02 times the reference's"),
            std::string::npos)
      << V.Evidence;
  // A sign flip: the same RMS, twice the reference as error.
  V = checkScale("out", E, map(E, [](double V) { return -V; }), F32Tol.Rtol);
  EXPECT_EQ(V.Kind, "norm") << describe(V);
}

//===--- Equivalent rewrites --------------------------------------------===//

TEST(ScaleRulesTest, FusedMultiplyAddPasses) {
  MulAdd M;
  expectPasses(
      M.Out,
      make(DType::BF16, M.X.size(),
           [&](size_t I) { return f32(f32(M.X[I] * M.Y[I]) + M.X[I]); }),
      Bf16Tol);
}

TEST(ScaleRulesTest, Bf16ArithmeticPasses) {
  // Each operation rounded to bf16 where the baseline rounds once: the
  // largest legitimate difference in precision.
  MulAdd M;
  HostBuffer A = make(DType::BF16, M.X.size(), [&](size_t I) {
    return bf16(bf16(M.X[I] * M.Y[I]) + M.X[I]);
  });
  expectPasses(M.Out, A, Bf16Tol);
  // Not by a wide margin of the rule it comes closest to: about 0.5% of the
  // meaningful elements lie outside rtol (ScaleRules.h cites this).
  HostBuffer Worse = M.Out;
  size_t Outside = 0, Meaningful = 0;
  double Rms = 0;
  for (size_t I = 0; I < A.count(); ++I)
    Rms += M.Out.get(I) * M.Out.get(I);
  Rms = std::sqrt(Rms / A.count());
  for (size_t I = 0; I < A.count(); ++I) {
    double E = M.Out.get(I);
    if (std::fabs(E) < MeaningfulOfRms * Rms)
      continue;
    ++Meaningful;
    Outside += std::fabs(A.get(I) - E) > Bf16Tol.Rtol * std::fabs(E);
  }
  EXPECT_GT(double(Outside) / Meaningful, 0.002);
  EXPECT_LT(double(Outside) / Meaningful, 0.008);
}

TEST(ScaleRulesTest, RoundingDifferencesPass) {
  // Round toward zero instead of to nearest: up to one ulp on every element.
  MulAdd M;
  HostBuffer A = map(M.Out, [](double V) { return V; });
  for (size_t I = 0; I < A.count(); ++I) {
    double Exact = M.X[I] * M.Y[I] + M.X[I];
    A.setBits(I, doubleToBf16Bits(Exact));
    if (std::fabs(A.get(I)) > std::fabs(Exact))
      A.setBits(I, A.bits(I) - 1);
  }
  expectPasses(M.Out, A, Bf16Tol);
  // fp8 e4m3: one ulp on every tenth element.
  Normal R(9);
  HostBuffer E8 = make(DType::FP8E4M3, 4096, [&](size_t) { return 64 * R(); });
  HostBuffer A8 = E8;
  for (size_t I = 0; I < A8.count(); I += 10)
    if (A8.get(I) != 0 && std::fabs(A8.get(I)) < 400)
      A8.setBits(I, A8.bits(I) + 1);
  expectPasses(E8, A8, {0.125, 1.6e-2});
}

TEST(ScaleRulesTest, RtolBelowOneUlpCountsNoRoundingDifference) {
  // A spec may ask for less than the output dtype resolves (bf16 with rtol
  // 1e-3, under its 2^-8 to 2^-7 ulp); a one-ulp rounding difference on a
  // tenth of the elements is still no error of the rewrite's.
  MulAdd M(4096);
  HostBuffer A = M.Out;
  for (size_t I = 0; I < A.count(); I += 10)
    if (A.get(I) != 0)
      A.setBits(I, A.bits(I) + 1);
  EXPECT_TRUE(compareBuffers("out", M.Out, A, {1e-3, 1e-1}).ok());
  ScaleVerdict V = checkScale("out", M.Out, A, 1e-3);
  EXPECT_TRUE(V.ok()) << describe(V);
}

TEST(ScaleRulesTest, FastMathPasses) {
  // __expf, __fdividef, rsqrtf: a few ulps of their own result; the model
  // of __expf's error, 2 + 1.16 |x| ulps (CUDA C Programming Guide), on a
  // softmax's exponentials.
  Normal R(13);
  std::vector<double> X(8192);
  for (double &V : X)
    V = f32(3 * R());
  HostBuffer E =
      make(DType::F32, X.size(), [&](size_t I) { return f32(std::exp(X[I])); });
  std::mt19937_64 G(1);
  HostBuffer A = make(DType::F32, X.size(), [&](size_t I) {
    double Ulps =
        (2 + 1.16 * std::fabs(X[I])) * (double(G() % 2001) / 1000 - 1);
    return f32(std::exp(X[I]) * (1 + Ulps * 0x1p-23));
  });
  expectPasses(E, A, F32Tol);
}

/// Row sums of \p Cols normal values, in order or as a pairwise tree.
double serialSum(const std::vector<float> &V) {
  float S = 0;
  for (float X : V)
    S += X;
  return S;
}
float treeSum(const float *V, size_t N) {
  if (N == 1)
    return V[0];
  return treeSum(V, N / 2) + treeSum(V + N / 2, N - N / 2);
}

TEST(ScaleRulesTest, ReorderedSumsPass) {
  // Tree against serial reductions of 4096 terms, as sums (RMS 64) and as
  // means (RMS 1/64: outputs far smaller than the terms, where atol alone
  // judged them before), with the tolerance of kernels/kernelbench's
  // sum_rows spec: near zero the two orders differ by more than f32's
  // default atol (1e-5).
  Normal R(17);
  size_t Rows = 512, Cols = 4096;
  std::vector<double> Serial, Tree;
  for (size_t Row = 0; Row < Rows; ++Row) {
    std::vector<float> V(Cols);
    for (float &X : V)
      X = float(R());
    Serial.push_back(serialSum(V));
    Tree.push_back(treeSum(V.data(), Cols));
  }
  for (double Div : {1.0, double(Cols)}) {
    HostBuffer E =
        make(DType::F32, Rows, [&](size_t I) { return f32(Serial[I] / Div); });
    HostBuffer A =
        make(DType::F32, Rows, [&](size_t I) { return f32(Tree[I] / Div); });
    EXPECT_NE(E, A) << "the orders must differ somewhere";
    expectPasses(E, A, {1e-4, 1e-2});
  }
}

TEST(ScaleRulesTest, LargeValueRunReorderingPasses) {
  // The values=large run: terms of 1e4 that partly cancel, summed in two
  // orders; the element-wise check uses largeValueTolerance, the scale
  // rules the spec's rtol. In every 50th row the terms cancel exactly but
  // for a residue below their ulp (a, -a, r): in order the sum is r, with r
  // added to a first it is zero. That is rounding, not a flush: it must not
  // count, and it does not, being far below a thousandth of the scale.
  Normal R(19);
  size_t Rows = 1024, Cols = 256;
  std::vector<double> Serial, Tree;
  size_t Cancelled = 0;
  for (size_t Row = 0; Row < Rows; ++Row) {
    std::vector<float> V(Cols);
    for (float &X : V)
      X = float(1e4 * R());
    if (Row % 50 == 0) {
      float A = float(1e4 * R()), Res = float(1e-4 * R());
      Serial.push_back((A + -A) + Res);
      Tree.push_back((A + Res) - A);
      Cancelled += Tree.back() == 0 && Serial.back() != 0;
      continue;
    }
    Serial.push_back(serialSum(V));
    Tree.push_back(treeSum(V.data(), Cols));
  }
  EXPECT_GT(Cancelled, 10u);
  HostBuffer E = make(DType::F32, Rows, [&](size_t I) { return Serial[I]; });
  HostBuffer A = make(DType::F32, Rows, [&](size_t I) { return Tree[I]; });
  Tolerance T = largeValueTolerance(F32Tol, E);
  EXPECT_TRUE(compareBuffers("out", E, A, T).ok());
  ScaleVerdict V = checkScale("out", E, A, F32Tol.Rtol);
  EXPECT_TRUE(V.ok()) << describe(V);
}

TEST(ScaleRulesTest, LegitimatelyNearZeroOutputsPass) {
  // Outputs of RMS 1e-6 with float32 rounding noise.
  Normal R(23);
  HostBuffer E = make(DType::F32, 4096, [&](size_t) { return 1e-6 * R(); });
  std::mt19937_64 G(2);
  expectPasses(E,
               map(E,
                   [&](double V) {
                     return f32(V *
                                (1 + 4e-7 * (double(G() % 1001) / 500 - 1)));
                   }),
               F32Tol);
  // A relu of a sum: half the reference is exactly zero, and where the
  // pre-activation is within rounding of zero the candidate's sign flips.
  HostBuffer Pre = make(DType::F32, 4096, [&](size_t) { return R(); });
  HostBuffer Er = map(Pre, [](double V) { return std::max(V, 0.0); });
  HostBuffer Ar = map(Pre, [&](double V) {
    return std::max(V + 1e-6 * (double(G() % 1001) / 500 - 1), 0.0);
  });
  expectPasses(Er, Ar, F32Tol);
}

TEST(ScaleRulesTest, ZeroAndSubnormalReferencesAreNotJudged) {
  // The zeros value run: an all-zero reference has no scale; the
  // element-wise rule alone decides.
  HostBuffer Z(DType::BF16, 64);
  EXPECT_TRUE(checkScale("out", Z, Z, Bf16Tol.Rtol).ok());
  EXPECT_TRUE(
      checkScale("out", Z, map(Z, [](double) { return 1e-3; }), Bf16Tol.Rtol)
          .ok());
  // Subnormal reference values flushed to zero (-ftz): below the dtype's
  // smallest normal precision is absolute.
  double Sub = std::numeric_limits<float>::denorm_min() * 1000;
  HostBuffer E = make(DType::F32, 64, [&](size_t I) {
    return (I % 2 ? 1 : -1) * Sub * (I + 1);
  });
  EXPECT_TRUE(
      checkScale("out", E, map(E, [](double) { return 0.0; }), F32Tol.Rtol)
          .ok());
}

TEST(ScaleRulesTest, EveryRunButTheDenormalOneIsJudged) {
  PlannedRun Run;
  EXPECT_TRUE(scaleRulesApply(Run));
  Run.Kind = RunKind::OddSizes;
  EXPECT_TRUE(scaleRulesApply(Run));
  Run.Kind = RunKind::Misaligned;
  EXPECT_TRUE(scaleRulesApply(Run));
  Run.Kind = RunKind::Values;
  for (ValueMode M :
       {ValueMode::Large, ValueMode::Negative, ValueMode::Zeros}) {
    Run.Values = M;
    EXPECT_TRUE(scaleRulesApply(Run)) << valueModeName(M).str();
  }
  Run.Values = ValueMode::Denormal;
  EXPECT_FALSE(scaleRulesApply(Run));
}

TEST(ScaleRulesTest, NonFiniteAndPoisonedElementsAreSkipped) {
  // Elements the baseline leaves unwritten (poison NaN in both) and NaN or
  // infinity pairs are the element-wise rules' business.
  MulAdd M(4096);
  HostBuffer E = M.Out, A = M.Out;
  for (size_t I = 0; I < 4096; I += 2) {
    E.setBits(I, poisonBits(DType::BF16, 0));
    A.setBits(I, poisonBits(DType::BF16, 0));
  }
  EXPECT_TRUE(checkScale("out", E, A, Bf16Tol.Rtol).ok());
  A = map(E, [](double V) { return std::isnan(V) ? V : 0.0; });
  EXPECT_EQ(checkScale("out", E, A, Bf16Tol.Rtol).Kind, "constant");
}

TEST(ScaleRulesTest, AbsoluteSpecsKeepOnlyTheZeroAndConstantRules) {
  // rtol 0 with atol > 0 asks for an absolute comparison: a scale error the
  // spec's atol allows passes; a flush to zero still fails.
  Normal R(29);
  HostBuffer E = make(DType::F32, 4096, [&](size_t) { return 1e-3 * R(); });
  EXPECT_TRUE(
      checkScale("out", E, map(E, [](double V) { return V * 1.05; }), 0).ok());
  EXPECT_EQ(
      checkScale("out", E,
                 map(E, [](double V) { return std::fabs(V) < 1e-3 ? 0.0 : V; }),
                 0)
          .Kind,
      "zeroed");
}

TEST(ScaleRulesTest, IntegersAndShapeMismatchesAreNotJudged) {
  HostBuffer E(DType::I32, 8), A(DType::I32, 8);
  for (int I = 0; I < 8; ++I)
    E.setInt(I, I + 1);
  EXPECT_TRUE(checkScale("i", E, A, 0).ok());
  EXPECT_TRUE(
      checkScale("o", HostBuffer(DType::F32, 4), HostBuffer(DType::F32, 3), 0)
          .ok());
}

TEST(ScaleRulesTest, FirstExampleIsTheLowestIndexAcrossChunks) {
  // More than one parallel chunk (2^20 elements): the example and counts
  // are those of a serial scan.
  size_t N = (size_t(1) << 21) + 7;
  Normal R(31);
  HostBuffer E = make(DType::F32, N, [&](size_t) { return R(); });
  HostBuffer A = E;
  size_t Zeroed = 0;
  for (size_t I = (size_t(1) << 20) + 3; I < N; I += 97) {
    if (std::fabs(E.get(I)) < 0.1)
      continue;
    A.set(I, 0);
    ++Zeroed;
  }
  ScaleVerdict V = checkScale("out", E, A, F32Tol.Rtol);
  ASSERT_EQ(V.Kind, "zeroed") << describe(V);
  ASSERT_TRUE(V.Example);
  EXPECT_GE(V.Example->Index, (size_t(1) << 20) + 3);
  EXPECT_LT(V.Example->Index, (size_t(1) << 20) + 3 + 97 * 20);
  EXPECT_EQ(
      V.Evidence.find(std::to_string(Zeroed) + " of " + std::to_string(N)), 0u)
      << V.Evidence;
}

} // namespace
