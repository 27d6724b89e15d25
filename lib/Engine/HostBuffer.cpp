//===- HostBuffer.cpp - Typed bytes and dtype conversions -----------------===//
#include "astra/Engine/HostBuffer.h"
#include "astra/Engine/CompareCore.h"
#include "astra/Support/Parallel.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <limits>

using namespace llvm;

namespace astra {

namespace {

/// A small binary floating-point format: sign, ExpBits, ManBits.
struct MiniFloat {
  unsigned ExpBits, ManBits;
  /// e4m3: the all-ones exponent holds normal numbers; only S.1111.111 is NaN
  /// and there is no infinity.
  bool FiniteOnly;
  int bias() const { return (1 << (ExpBits - 1)) - 1; }
  uint32_t expMask() const { return (1u << ExpBits) - 1; }
};

constexpr MiniFloat Half{5, 10, false};
constexpr MiniFloat Bf16{8, 7, false};
constexpr MiniFloat E4M3{4, 3, true};
constexpr MiniFloat E5M2{5, 2, false};

/// The encoders and decoders are the ones the device kernels use
/// (CounterRng.h, CompareCore.h): the bytes a generated input gets and the
/// value an element compares as are the same on both sides.
uint32_t encodeMini(const MiniFloat &F, double V) {
  return crng::encodeMini(F.ExpBits, F.ManBits, F.FiniteOnly, V);
}

double decodeMini(const MiniFloat &F, uint32_t B) {
  return ccore::decodeMini(F.ExpBits, F.ManBits, F.FiniteOnly, B);
}

double maxFiniteMini(const MiniFloat &F) {
  if (F.FiniteOnly) // e4m3: S.1111.110 = 448
    return decodeMini(F, (F.expMask() << F.ManBits) | ((1u << F.ManBits) - 2));
  return decodeMini(F, ((F.expMask() - 1) << F.ManBits) |
                           ((1u << F.ManBits) - 1));
}

template <typename T> T saturate(double V) {
  if (std::isnan(V))
    return 0;
  double R = std::nearbyint(V);
  if (R <= double(std::numeric_limits<T>::min()))
    return std::numeric_limits<T>::min();
  if (R >= double(std::numeric_limits<T>::max()))
    return std::numeric_limits<T>::max();
  return T(R);
}

} // namespace

uint16_t doubleToHalfBits(double V) { return uint16_t(encodeMini(Half, V)); }
double halfBitsToDouble(uint16_t B) { return decodeMini(Half, B); }
uint16_t doubleToBf16Bits(double V) { return uint16_t(encodeMini(Bf16, V)); }
double bf16BitsToDouble(uint16_t B) { return decodeMini(Bf16, B); }
uint8_t doubleToFp8E4M3Bits(double V) { return uint8_t(encodeMini(E4M3, V)); }
double fp8E4M3BitsToDouble(uint8_t B) { return decodeMini(E4M3, B); }
uint8_t doubleToFp8E5M2Bits(double V) { return uint8_t(encodeMini(E5M2, V)); }
double fp8E5M2BitsToDouble(uint8_t B) { return decodeMini(E5M2, B); }

double dtypeMaxFinite(DType T) {
  switch (T) {
  case DType::F32:
    return std::numeric_limits<float>::max();
  case DType::F64:
    return std::numeric_limits<double>::max();
  case DType::F16:
    return maxFiniteMini(Half);
  case DType::BF16:
    return maxFiniteMini(Bf16);
  case DType::FP8E4M3:
    return maxFiniteMini(E4M3);
  case DType::FP8E5M2:
    return maxFiniteMini(E5M2);
  default:
    return 0;
  }
}

double dtypeMinNormal(DType T) {
  switch (T) {
  case DType::F32:
    return std::numeric_limits<float>::min();
  case DType::F64:
    return std::numeric_limits<double>::min();
  case DType::F16:
    return std::ldexp(1.0, 1 - Half.bias());
  case DType::BF16:
    return std::ldexp(1.0, 1 - Bf16.bias());
  case DType::FP8E4M3:
    return std::ldexp(1.0, 1 - E4M3.bias());
  case DType::FP8E5M2:
    return std::ldexp(1.0, 1 - E5M2.bias());
  default:
    return 0;
  }
}

bool isSignedInt(DType T) {
  return T == DType::I8 || T == DType::I16 || T == DType::I32 ||
         T == DType::I64;
}

uint64_t HostBuffer::bits(size_t I) const {
  const uint8_t *P = Bytes.data() + I * dtypeSize(Type);
  switch (dtypeSize(Type)) {
  case 1:
    return *P;
  case 2: {
    uint16_t V;
    std::memcpy(&V, P, 2);
    return V;
  }
  case 4: {
    uint32_t V;
    std::memcpy(&V, P, 4);
    return V;
  }
  default: {
    uint64_t V;
    std::memcpy(&V, P, 8);
    return V;
  }
  }
}

void HostBuffer::setBits(size_t I, uint64_t B) {
  uint8_t *P = Bytes.data() + I * dtypeSize(Type);
  switch (dtypeSize(Type)) {
  case 1:
    *P = uint8_t(B);
    break;
  case 2: {
    uint16_t V = uint16_t(B);
    std::memcpy(P, &V, 2);
    break;
  }
  case 4: {
    uint32_t V = uint32_t(B);
    std::memcpy(P, &V, 4);
    break;
  }
  default:
    std::memcpy(P, &B, 8);
  }
}

HostBuffer::HostBuffer(DType T, size_t Count)
    : Type(T), Count(Count), Bytes(Count * dtypeSize(T)) {
  parallelChunks(Bytes.size(), uint64_t(1) << 24,
                 [&](uint64_t, uint64_t Begin, uint64_t End) {
                   std::memset(Bytes.data() + Begin, 0, End - Begin);
                 });
}

void HostBuffer::fillBits(uint64_t B) {
  if (Count == 0)
    return;
  setBits(0, B);
  size_t Size = dtypeSize(Type);
  for (size_t I = 1; I < Count; ++I)
    std::memcpy(Bytes.data() + I * Size, Bytes.data(), Size);
}

int64_t HostBuffer::getInt(size_t I) const {
  uint64_t B = bits(I);
  switch (Type) {
  case DType::I8:
    return int8_t(B);
  case DType::I16:
    return int16_t(B);
  case DType::I32:
    return int32_t(B);
  case DType::I64:
  case DType::U64:
    return int64_t(B);
  case DType::U8:
  case DType::U16:
  case DType::U32:
    return int64_t(B);
  default:
    return int64_t(get(I));
  }
}

void HostBuffer::setInt(size_t I, int64_t V) {
  if (isFloating(Type)) {
    set(I, double(V));
    return;
  }
  setBits(I, uint64_t(V));
}

double HostBuffer::get(size_t I) const {
  uint64_t B = bits(I);
  switch (Type) {
  case DType::F32: {
    float F;
    uint32_t U = uint32_t(B);
    std::memcpy(&F, &U, 4);
    return F;
  }
  case DType::F64: {
    double D;
    std::memcpy(&D, &B, 8);
    return D;
  }
  case DType::F16:
    return halfBitsToDouble(uint16_t(B));
  case DType::BF16:
    return bf16BitsToDouble(uint16_t(B));
  case DType::FP8E4M3:
    return fp8E4M3BitsToDouble(uint8_t(B));
  case DType::FP8E5M2:
    return fp8E5M2BitsToDouble(uint8_t(B));
  case DType::U64:
    return double(B);
  default:
    return double(getInt(I));
  }
}

void HostBuffer::set(size_t I, double V) {
  switch (Type) {
  case DType::F32: {
    float F = float(V);
    uint32_t U;
    std::memcpy(&U, &F, 4);
    setBits(I, U);
    return;
  }
  case DType::F64: {
    uint64_t U;
    std::memcpy(&U, &V, 8);
    setBits(I, U);
    return;
  }
  case DType::F16:
    setBits(I, doubleToHalfBits(V));
    return;
  case DType::BF16:
    setBits(I, doubleToBf16Bits(V));
    return;
  case DType::FP8E4M3:
    setBits(I, doubleToFp8E4M3Bits(V));
    return;
  case DType::FP8E5M2:
    setBits(I, doubleToFp8E5M2Bits(V));
    return;
  case DType::I8:
    setBits(I, uint8_t(saturate<int8_t>(V)));
    return;
  case DType::U8:
    setBits(I, saturate<uint8_t>(V));
    return;
  case DType::I16:
    setBits(I, uint16_t(saturate<int16_t>(V)));
    return;
  case DType::U16:
    setBits(I, saturate<uint16_t>(V));
    return;
  case DType::I32:
    setBits(I, uint32_t(saturate<int32_t>(V)));
    return;
  case DType::U32:
    setBits(I, saturate<uint32_t>(V));
    return;
  case DType::I64:
    setBits(I, uint64_t(saturate<int64_t>(V)));
    return;
  case DType::U64:
    setBits(I, saturate<uint64_t>(V));
    return;
  }
}

std::string formatElement(const HostBuffer &B, size_t I) {
  DType T = B.type();
  if (!isFloating(T)) {
    if (T == DType::U64)
      return std::to_string(B.bits(I));
    return std::to_string(B.getInt(I));
  }
  double V = B.get(I);
  unsigned Hex = dtypeSize(T) * 2;
  if (std::isnan(V))
    return formatv("nan (0x{0})", format_hex_no_prefix(B.bits(I), Hex)).str();
  if (std::isinf(V))
    return V > 0 ? "inf" : "-inf";
  // Enough digits to round-trip the element type.
  unsigned Digits = T == DType::F64 ? 17 : T == DType::F32 ? 9 : 5;
  std::string S = formatv("{0}", format("%.*g", Digits, V)).str();
  if (dtypeSize(T) <= 2)
    S += formatv(" (0x{0})", format_hex_no_prefix(B.bits(I), Hex)).str();
  return S;
}

} // namespace astra
