//===- HostBufferTest.cpp - dtype conversions -----------------------------===//
#include "astra/Engine/HostBuffer.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace astra;

namespace {

double f32(uint32_t Bits) {
  float F;
  std::memcpy(&F, &Bits, 4);
  return F;
}

TEST(HostBufferTest, HalfExactValues) {
  EXPECT_EQ(doubleToHalfBits(1.0), 0x3C00);
  EXPECT_EQ(doubleToHalfBits(-2.0), 0xC000);
  EXPECT_EQ(doubleToHalfBits(65504.0), 0x7BFF);
  EXPECT_EQ(doubleToHalfBits(0.0), 0x0000);
  EXPECT_EQ(doubleToHalfBits(-0.0), 0x8000);
  EXPECT_EQ(doubleToHalfBits(std::ldexp(1.0, -24)), 0x0001); // smallest subnormal
  EXPECT_EQ(doubleToHalfBits(std::ldexp(1.0, -14)), 0x0400); // smallest normal
  EXPECT_EQ(halfBitsToDouble(0x3555), 0.333251953125);
  EXPECT_EQ(halfBitsToDouble(0x0001), std::ldexp(1.0, -24));
  EXPECT_TRUE(std::isinf(halfBitsToDouble(0x7C00)));
  EXPECT_TRUE(std::isnan(halfBitsToDouble(0x7E00)));
}

TEST(HostBufferTest, HalfRoundsToNearestEven) {
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties go to the even 1.
  EXPECT_EQ(doubleToHalfBits(1.0 + std::ldexp(1.0, -11)), 0x3C00);
  // 1 + 3*2^-11 is halfway between 1+2^-10 (odd) and 1+2^-9 (even).
  EXPECT_EQ(doubleToHalfBits(1.0 + 3 * std::ldexp(1.0, -11)), 0x3C02);
  // Just above the tie rounds up.
  EXPECT_EQ(doubleToHalfBits(1.0 + std::ldexp(1.0, -11) + 1e-9), 0x3C01);
  // 65520 is the tie between 65504 and 2^16 (not representable): infinity.
  EXPECT_EQ(doubleToHalfBits(65520.0), 0x7C00);
  EXPECT_EQ(doubleToHalfBits(65519.0), 0x7BFF);
  // Half the smallest subnormal is a tie with zero: rounds to even (0).
  EXPECT_EQ(doubleToHalfBits(std::ldexp(1.0, -25)), 0x0000);
  EXPECT_EQ(doubleToHalfBits(std::ldexp(1.5, -25)), 0x0001);
  // The largest subnormal rounds up into the smallest normal.
  EXPECT_EQ(doubleToHalfBits(std::ldexp(1.0, -14) - std::ldexp(1.0, -26)),
            0x0400);
  EXPECT_EQ(doubleToHalfBits(1e10), 0x7C00);
  EXPECT_EQ(doubleToHalfBits(-1e10), 0xFC00);
  EXPECT_EQ(doubleToHalfBits(1e-10), 0x0000);
}

TEST(HostBufferTest, HalfRoundTripsEveryCode) {
  for (uint32_t B = 0; B < 0x10000; ++B) {
    double V = halfBitsToDouble(uint16_t(B));
    if (std::isnan(V))
      continue;
    ASSERT_EQ(doubleToHalfBits(V), B) << "code 0x" << std::hex << B;
  }
}

TEST(HostBufferTest, Bf16MatchesFloatTruncationWithRounding) {
  EXPECT_EQ(doubleToBf16Bits(1.0), 0x3F80);
  EXPECT_EQ(doubleToBf16Bits(-1.0), 0xBF80);
  EXPECT_EQ(doubleToBf16Bits(3.140625), 0x4049);
  // Ties to even: 1 + 2^-8 sits between 1 (even) and 1 + 2^-7.
  EXPECT_EQ(doubleToBf16Bits(1.0 + std::ldexp(1.0, -8)), 0x3F80);
  EXPECT_EQ(doubleToBf16Bits(1.0 + 3 * std::ldexp(1.0, -8)), 0x3F82);
  EXPECT_TRUE(std::isinf(bf16BitsToDouble(doubleToBf16Bits(1e39))));
  EXPECT_EQ(bf16BitsToDouble(0x7F7F), f32(0x7F7F0000));
  for (uint32_t B = 0; B < 0x10000; ++B) {
    double V = bf16BitsToDouble(uint16_t(B));
    if (std::isnan(V))
      continue;
    ASSERT_EQ(V, f32(B << 16));
    ASSERT_EQ(doubleToBf16Bits(V), B);
  }
}

TEST(HostBufferTest, Fp8E4M3) {
  EXPECT_EQ(fp8E4M3BitsToDouble(0x7E), 448.0); // largest finite
  EXPECT_TRUE(std::isnan(fp8E4M3BitsToDouble(0x7F)));
  EXPECT_EQ(fp8E4M3BitsToDouble(0x01), std::ldexp(1.0, -9));
  EXPECT_EQ(fp8E4M3BitsToDouble(0x38), 1.0);
  EXPECT_EQ(doubleToFp8E4M3Bits(1.0), 0x38);
  EXPECT_EQ(doubleToFp8E4M3Bits(448.0), 0x7E);
  // No infinity in e4m3: overflow and infinity become NaN.
  EXPECT_EQ(doubleToFp8E4M3Bits(1000.0), 0x7F);
  EXPECT_EQ(doubleToFp8E4M3Bits(-1000.0), 0xFF);
  EXPECT_EQ(doubleToFp8E4M3Bits(std::numeric_limits<double>::infinity()), 0x7F);
  // 464 is the tie between 448 and 480 (which would be the NaN code).
  EXPECT_EQ(doubleToFp8E4M3Bits(463.0), 0x7E);
  for (uint32_t B = 0; B < 256; ++B) {
    double V = fp8E4M3BitsToDouble(uint8_t(B));
    if (std::isnan(V))
      continue;
    ASSERT_EQ(doubleToFp8E4M3Bits(V), B);
  }
}

TEST(HostBufferTest, Fp8E5M2) {
  EXPECT_EQ(fp8E5M2BitsToDouble(0x7B), 57344.0);
  EXPECT_TRUE(std::isinf(fp8E5M2BitsToDouble(0x7C)));
  EXPECT_TRUE(std::isnan(fp8E5M2BitsToDouble(0x7E)));
  EXPECT_EQ(doubleToFp8E5M2Bits(1.0), 0x3C);
  EXPECT_EQ(doubleToFp8E5M2Bits(1e6), 0x7C);
  for (uint32_t B = 0; B < 256; ++B) {
    double V = fp8E5M2BitsToDouble(uint8_t(B));
    if (std::isnan(V))
      continue;
    ASSERT_EQ(doubleToFp8E5M2Bits(V), B);
  }
}

TEST(HostBufferTest, LimitsPerDType) {
  EXPECT_EQ(dtypeMaxFinite(DType::F16), 65504.0);
  EXPECT_EQ(dtypeMaxFinite(DType::FP8E4M3), 448.0);
  EXPECT_EQ(dtypeMaxFinite(DType::FP8E5M2), 57344.0);
  EXPECT_EQ(dtypeMinNormal(DType::F16), std::ldexp(1.0, -14));
  EXPECT_EQ(dtypeMinNormal(DType::BF16), std::ldexp(1.0, -126));
}

TEST(HostBufferTest, SetAndGetEveryDType) {
  for (DType T : {DType::F32, DType::F64, DType::F16, DType::BF16,
                  DType::FP8E4M3, DType::FP8E5M2, DType::I8, DType::U8,
                  DType::I16, DType::U16, DType::I32, DType::U32, DType::I64,
                  DType::U64}) {
    HostBuffer B(T, 4);
    EXPECT_EQ(B.byteSize(), 4 * dtypeSize(T)) << dtypeName(T).str();
    B.set(0, 3.0);
    B.set(1, 0.0);
    B.set(2, 1.5);
    EXPECT_EQ(B.get(0), 3.0) << dtypeName(T).str();
    EXPECT_EQ(B.get(1), 0.0) << dtypeName(T).str();
    // Integers round 1.5 to nearest (2); floats hold it exactly.
    EXPECT_EQ(B.get(2), isFloating(T) ? 1.5 : 2.0) << dtypeName(T).str();
  }
}

TEST(HostBufferTest, IntegersSaturateAndStayExact) {
  HostBuffer B(DType::I8, 3);
  B.set(0, 1000);
  B.set(1, -1000);
  B.set(2, std::nan(""));
  EXPECT_EQ(B.getInt(0), 127);
  EXPECT_EQ(B.getInt(1), -128);
  EXPECT_EQ(B.getInt(2), 0);
  HostBuffer L(DType::I64, 1);
  L.setInt(0, (int64_t(1) << 62) + 1); // not representable as a double
  EXPECT_EQ(L.getInt(0), (int64_t(1) << 62) + 1);
  HostBuffer U(DType::U32, 1);
  U.setInt(0, 0xFFFFFFFFll);
  EXPECT_EQ(U.getInt(0), 0xFFFFFFFFll);
  EXPECT_EQ(U.get(0), 4294967295.0);
}

TEST(HostBufferTest, BytesAreLittleEndian) {
  HostBuffer B(DType::I32, 1);
  B.setInt(0, 0x01020304);
  EXPECT_EQ(B.data()[0], 0x04);
  EXPECT_EQ(B.data()[3], 0x01);
  HostBuffer H(DType::F16, 1);
  H.set(0, 1.0);
  EXPECT_EQ(H.data()[0], 0x00);
  EXPECT_EQ(H.data()[1], 0x3C);
}

TEST(HostBufferTest, FormatElement) {
  HostBuffer F(DType::F32, 3);
  F.set(0, 0.5);
  F.setBits(1, 0x7FFFDEAD);
  F.set(2, -std::numeric_limits<double>::infinity());
  EXPECT_EQ(formatElement(F, 0), "0.5");
  EXPECT_EQ(formatElement(F, 1), "nan (0x7fffdead)");
  EXPECT_EQ(formatElement(F, 2), "-inf");
  HostBuffer H(DType::BF16, 1);
  H.set(0, 1.0);
  EXPECT_EQ(formatElement(H, 0), "1 (0x3f80)");
  HostBuffer I(DType::I64, 1);
  I.setInt(0, -7);
  EXPECT_EQ(formatElement(I, 0), "-7");
}

} // namespace

// The bytes are allocated without value-initialisation and zeroed in
// chunks on all cores: a buffer made where a freed one lay (the allocator
// reuses a small block) still reads as zeros, and so does one of several
// 16 MB chunks.
TEST(HostBufferTest, NewBuffersAreZero) {
  for (size_t Count : {size_t(1000), size_t(3) << 23}) {
    {
      HostBuffer Dirty(DType::I32, Count);
      Dirty.fillBits(0xdeadbeef);
    }
    HostBuffer B(DType::I32, Count);
    ASSERT_EQ(B.byteSize(), Count * 4);
    size_t NonZero = 0;
    for (uint8_t V : B.bytes())
      NonZero += V != 0;
    EXPECT_EQ(NonZero, 0u) << Count << " elements";
  }
}
