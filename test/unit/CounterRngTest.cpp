//===- CounterRngTest.cpp - The counter-based input generator -------------===//
//
// The host side of the generator the GPU runs (CounterRng.h): the known
// answers of Philox-4x32-10, determinism, values that depend on the element
// index alone (any chunking, any number of threads), the distributions'
// ranges, and planInputs' split between host and device buffers. The GPU
// test test/gpu/engine/device-kernels.test holds the device to these bytes.
//
//===----------------------------------------------------------------------===//
#include "astra/Engine/CounterRng.h"
#include "astra/Engine/DeviceCompare.h"
#include "astra/Engine/Inputs.h"
#include "astra/Support/Parallel.h"

#include "gtest/gtest.h"

#include <cmath>
#include <set>

using namespace astra;

namespace {

TEST(CounterRngTest, PhiloxKnownAnswers) {
  // Random123's kat_vectors for philox4x32 with 10 rounds.
  struct Kat {
    uint32_t C[4], K[2], Want[4];
  } Kats[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
       {0xffffffff, 0xffffffff},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const Kat &T : Kats) {
    crng::Bits128 R = crng::philoxBlock(T.C, T.K);
    for (int I = 0; I < 4; ++I)
      EXPECT_EQ(R.W[I], T.Want[I]) << "word " << I;
  }
}

crng::GenParams recipe(crng::GenKind K, DType T, uint64_t Count,
                       uint64_t Key = 42) {
  crng::GenParams P;
  P.Kind = K;
  P.Type = dtypeCode(T);
  P.Count = Count;
  P.Key = Key;
  return P;
}

HostBuffer made(const crng::GenParams &P) {
  HostBuffer B(DType(P.Type), P.Count);
  generateOnHost(P, B);
  return B;
}

TEST(CounterRngTest, ValuesDependOnTheElementIndexAlone) {
  crng::GenParams P = recipe(crng::GenNormal, DType::BF16, (1u << 20) * 3 + 17);
  P.A = 0.5;
  P.B = 2;
  HostBuffer All = made(P);
  ParallelThreadLimit = 1;
  HostBuffer One = made(P);
  ParallelThreadLimit = 0;
  EXPECT_TRUE(All == One) << "the number of threads changed the values";
  // A prefix of the buffer, and any element made alone, are the same bytes.
  crng::GenParams Short = P;
  Short.Count = 1000;
  HostBuffer Prefix = made(Short);
  for (uint64_t I = 0; I < Short.Count; ++I)
    ASSERT_EQ(Prefix.bits(I), All.bits(I)) << I;
  for (uint64_t I : {uint64_t(0), uint64_t(1) << 20, P.Count - 1})
    EXPECT_EQ(crng::elementBits(P, I), All.bits(I)) << I;
  // Another key is another stream.
  crng::GenParams Other = P;
  Other.Key = 43;
  EXPECT_FALSE(made(Other) == All);
}

TEST(CounterRngTest, DistributionsKeepTheirRanges) {
  const uint64_t N = 200000;
  {
    crng::GenParams P = recipe(crng::GenUniform, DType::F32, N);
    P.A = -3;
    P.B = 8;
    HostBuffer B = made(P);
    double Sum = 0;
    for (uint64_t I = 0; I < N; ++I) {
      ASSERT_GE(B.get(I), -3.0);
      ASSERT_LE(B.get(I), 5.0); // f32 rounding may reach the bound.
      Sum += B.get(I);
    }
    EXPECT_NEAR(Sum / N, 1.0, 0.05);
  }
  {
    crng::GenParams P = recipe(crng::GenNormal, DType::F64, N);
    P.A = 1;
    P.B = 2;
    HostBuffer B = made(P);
    double Sum = 0, Sum2 = 0;
    for (uint64_t I = 0; I < N; ++I) {
      Sum += B.get(I);
      Sum2 += (B.get(I) - 1) * (B.get(I) - 1);
    }
    EXPECT_NEAR(Sum / N, 1.0, 0.03);
    EXPECT_NEAR(std::sqrt(Sum2 / N), 2.0, 0.03);
  }
  {
    crng::GenParams P = recipe(crng::GenRandInt, DType::I32, N);
    P.Lo = -3;
    P.Hi = 3;
    HostBuffer B = made(P);
    std::set<int64_t> Seen;
    for (uint64_t I = 0; I < N; ++I) {
      ASSERT_GE(B.getInt(I), -3);
      ASSERT_LE(B.getInt(I), 3);
      Seen.insert(B.getInt(I));
    }
    EXPECT_EQ(Seen.size(), 7u);
    // The whole 64-bit range: no overflow in the span.
    P.Type = dtypeCode(DType::I64);
    P.Lo = INT64_MIN;
    P.Hi = INT64_MAX;
    HostBuffer W = made(P);
    EXPECT_NE(W.getInt(0), W.getInt(1));
  }
  {
    crng::GenParams P = recipe(crng::GenDenormal, DType::BF16, N);
    P.A = dtypeMinNormal(DType::BF16);
    HostBuffer B = made(P);
    bool Neg = false, Pos = false;
    for (uint64_t I = 0; I < N; ++I) {
      ASSERT_LE(std::fabs(B.get(I)), P.A); // Rounding may reach it.
      Neg |= B.get(I) < 0;
      Pos |= B.get(I) > 0;
    }
    EXPECT_TRUE(Neg && Pos);
  }
  {
    crng::GenParams P = recipe(crng::GenNormal, DType::F16, N);
    P.B = 1;
    P.Negate = 1;
    HostBuffer B = made(P);
    for (uint64_t I = 0; I < N; ++I)
      ASSERT_TRUE(B.bits(I) & 0x8000) << I << ": " << B.get(I);
  }
}

TEST(CounterRngTest, StoresAsHostBufferDoes) {
  // Every dtype rounds (floats) or saturates (integers) as HostBuffer::set.
  for (DType T : {DType::F32, DType::F64, DType::F16, DType::BF16,
                  DType::FP8E4M3, DType::FP8E5M2, DType::I8, DType::U8,
                  DType::I16, DType::U16, DType::I32, DType::U32, DType::I64,
                  DType::U64}) {
    crng::GenParams P = recipe(crng::GenNormal, T, 5000);
    P.B = isFloating(T) ? 300 : 1e12;
    HostBuffer Want(T, P.Count);
    for (uint64_t I = 0; I < P.Count; ++I)
      Want.set(I, P.B * crng::normal(P.Key, I));
    EXPECT_TRUE(made(P) == Want) << dtypeName(T).str();
  }
  EXPECT_EQ(crng::storeBits(crng::FP8E4M3, 1e6), 0x7fu) << "e4m3 overflows to NaN";
}

TEST(CounterRngTest, LogMatchesPortableLog) {
  for (double X : {1e-300, 1e-10, 0.1, 0.5, 0.7, 1.0, 1.5, 2.0, 1e10})
    EXPECT_EQ(crng::log(X), portableLog(X)) << X;
}

KernelSpec specOf(std::vector<std::pair<const char *, const char *>> Inits,
                  DType T = DType::F32) {
  KernelSpec S;
  S.Kernel = "k";
  S.SpecPath = "k.cu.astra.json";
  unsigned I = 0;
  for (auto &[Name, Init] : Inits) {
    ArgSpec A;
    A.Name = Name;
    A.IsBuffer = true;
    A.Type = llvm::StringRef(Name).starts_with("i") ? DType::I32 : T;
    A.R = Role::Input;
    A.Count = cantFail(SpecExpr::parse("n"));
    A.Init = cantFail(parseGenerator(Init));
    A.Index = I++;
    S.Args.push_back(std::move(A));
  }
  return S;
}

TEST(CounterRngTest, PlanLeavesValueDistributionsToTheDevice) {
  KernelSpec S = specOf({{"x", "normal(0, 1)"},
                         {"u", "uniform(-1, 1)"},
                         {"iv", "randint(0, 9)"},
                         {"s", "sorted(0, 1)"},
                         {"a", "arange()"},
                         {"c", "constant(1)"},
                         {"idx", "indices_into(n)"}});
  Env E;
  E["n"] = Value::ofInt(3000);
  for (ValueMode M : {ValueMode::Spec, ValueMode::Large, ValueMode::Negative,
                      ValueMode::Zeros, ValueMode::Denormal}) {
    InputSet Dev = cantFail(planInputs(S, E, 7, M, /*OnDevice=*/true));
    std::set<std::string> OnDevice;
    for (auto &[Name, P] : Dev.Device)
      OnDevice.insert(Name);
    std::set<std::string> Want = {"x", "u", "iv"};
    // A mode that replaces the values makes sorted ones too (arange counts
    // as structural: modes leave it alone); negating a host buffer's values
    // stays on the host.
    if (M == ValueMode::Large || M == ValueMode::Zeros ||
        M == ValueMode::Denormal)
      Want.insert("s");
    EXPECT_EQ(OnDevice, Want) << valueModeName(M).str();
    // Made on the host, every buffer is the same bytes.
    auto Host = cantFail(generateInputs(S, E, 7, M));
    ASSERT_EQ(Host.size(), 7u);
    for (auto &[Name, B] : Host)
      EXPECT_TRUE(*Dev.host(Name) == B) << Name << " " << valueModeName(M).str();
  }
}

TEST(CompareMirrorTest, AgreesWithTheHostComparison) {
  // Planted differences of every kind; the mirror (the device's rules) and
  // compareBuffers must count, locate and measure them alike.
  for (DType T : {DType::F32, DType::BF16, DType::F16, DType::FP8E4M3}) {
    crng::GenParams P = recipe(crng::GenNormal, T, 3 * (1u << 20) + 5);
    P.B = 3;
    HostBuffer E = made(P), A = E;
    uint64_t N = P.Count;
    double Nan = std::nan(""), Inf = HUGE_VAL;
    A.set(N - 1, E.get(N - 1) + 5);        // outside tolerance, last chunk
    A.set(2 * (1u << 20), Nan);            // NaN where finite
    A.set(2 * (1u << 20) + 1, Inf);        // Inf where finite
    E.set(10, Nan);                        // baseline NaN, candidate not
    E.set(11, Nan);
    A.set(11, Nan);                        // baseline NaN matched
    E.set(12, -Inf);
    A.set(12, Inf);                        // wrong infinity
    A.setBits(1u << 20, poisonBits(T, 1)); // unwritten
    A.set(77, E.get(77) * (1 + 1e-3));     // within tolerance
    if (T != DType::FP8E4M3)
      A.set(78, -0.0), E.set(78, 0.0);     // -0 == +0
    Tolerance Tol{1e-2, 1e-3};
    for (bool Bitwise : {false, true}) {
      int Poison = Bitwise ? -1 : 1;
      ccore::CmpParams CP = cmpParams(T, N, Tol, Poison, Bitwise);
      ccore::CmpResult R = compareMirror(CP, E, A);
      Comparison Want = Bitwise ? compareBitwise("out", E, A)
                                : compareBuffers("out", E, A, Tol, Poison);
      HostBuffer E1(T, 1), A1(T, 1);
      E1.setBits(0, E.bits(R.First));
      A1.setBits(0, A.bits(R.First));
      Comparison Got = comparisonFrom("out", CP, R, E1, A1, Tol, Poison);
      SCOPED_TRACE(dtypeName(T).str() + (Bitwise ? " bitwise" : " tolerance"));
      EXPECT_EQ(Got.Failures, Want.Failures);
      EXPECT_EQ(Got.Unwritten, Want.Unwritten);
      EXPECT_EQ(Got.MaxAbsErr, Want.MaxAbsErr);
      EXPECT_EQ(Got.MaxRelErr, Want.MaxRelErr);
      EXPECT_EQ(describe(Got), describe(Want));
      EXPECT_EQ(Got.First->Index, 10u);
    }
    // Integers: exact.
    crng::GenParams IP = recipe(crng::GenRandInt, DType::I32, 5000);
    IP.Lo = -50;
    IP.Hi = 50;
    HostBuffer IE = made(IP), IA = IE;
    IA.setInt(4000, IE.getInt(4000) + 1);
    ccore::CmpParams ICP = cmpParams(DType::I32, 5000, {}, 0, false);
    ccore::CmpResult IR = compareMirror(ICP, IE, IA);
    EXPECT_EQ(IR.Failures, 1u);
    EXPECT_EQ(IR.First, 4000u);
    EXPECT_EQ(crng::fromBits(IR.MaxAbs), 1.0);
  }
}

} // namespace
