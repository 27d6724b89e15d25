//===- HostBuffer.h - Typed bytes on the host ------------------*- C++ -*-===//
//
// Inputs are generated, and outputs compared, on the host as raw bytes of the
// kernel's element type: the bytes are what the kernel sees, so a test can
// replay them exactly. Conversions to and from double cover every spec dtype;
// the 16- and 8-bit floats are converted by bit manipulation with
// round-to-nearest-even, so the same seed gives the same bytes on every
// machine (no dependence on the host's half-float support).
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_ENGINE_HOSTBUFFER_H
#define ASTRA_ENGINE_HOSTBUFFER_H

#include "astra/Spec/Spec.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace astra {

// Scalar conversions. Narrowing uses round-to-nearest-even; values beyond
// the largest finite value become infinity, except in fp8 e4m3, which has no
// infinity and gives NaN (the OCP FP8 "no saturation" conversion).
uint16_t doubleToHalfBits(double V);
double halfBitsToDouble(uint16_t B);
uint16_t doubleToBf16Bits(double V);
double bf16BitsToDouble(uint16_t B);
uint8_t doubleToFp8E4M3Bits(double V);
double fp8E4M3BitsToDouble(uint8_t B);
uint8_t doubleToFp8E5M2Bits(double V);
double fp8E5M2BitsToDouble(uint8_t B);

/// Largest finite value of a floating dtype.
double dtypeMaxFinite(DType T);
/// Smallest positive normal value of a floating dtype.
double dtypeMinNormal(DType T);
/// Whether \p T is a signed integer type.
bool isSignedInt(DType T);

/// An allocator whose value-initialisation leaves the bytes alone, so that a
/// buffer is not zeroed on one core when it is made: the first write to a
/// fresh page is a page fault, and for the 1.6 GB inputs of the KernelBench
/// sets those took 1.3-4 s on one core of the development machine (the
/// generation itself 3.8 s), more than the parallel generator after them.
template <typename T> struct UninitAllocator : std::allocator<T> {
  template <typename U> struct rebind {
    using other = UninitAllocator<U>;
  };
  UninitAllocator() = default;
  template <typename U> UninitAllocator(const UninitAllocator<U> &) {}
  template <typename U> void construct(U *P) noexcept {
    ::new (static_cast<void *>(P)) U;
  }
  template <typename U, typename... ArgTs>
  void construct(U *P, ArgTs &&...Args) {
    ::new (static_cast<void *>(P)) U(std::forward<ArgTs>(Args)...);
  }
};

using ByteVector = std::vector<uint8_t, UninitAllocator<uint8_t>>;

class HostBuffer {
public:
  HostBuffer() = default;
  /// A buffer of \p Count zero elements; the zeros are written on all cores.
  HostBuffer(DType T, size_t Count);

  DType type() const { return Type; }
  size_t count() const { return Count; }
  size_t byteSize() const { return Bytes.size(); }
  uint8_t *data() { return Bytes.data(); }
  const uint8_t *data() const { return Bytes.data(); }
  const ByteVector &bytes() const { return Bytes; }

  /// Element \p I as a double (integers above 2^53 lose precision; use
  /// getInt/bits for exact integer work).
  double get(size_t I) const;
  /// Stores \p V converted to the element type: floats round to nearest
  /// even, integers round to nearest and saturate at the type's range.
  void set(size_t I, double V);
  /// Exact integer access (integer dtypes only; unsigned reads as int64 bits).
  int64_t getInt(size_t I) const;
  void setInt(size_t I, int64_t V);
  /// The element's raw bits (zero-extended).
  uint64_t bits(size_t I) const;
  void setBits(size_t I, uint64_t B);
  /// Fills every element with the raw bit pattern \p B.
  void fillBits(uint64_t B);

  bool operator==(const HostBuffer &O) const {
    return Type == O.Type && Count == O.Count && Bytes == O.Bytes;
  }
  bool operator!=(const HostBuffer &O) const { return !(*this == O); }

private:
  DType Type = DType::F32;
  size_t Count = 0;
  ByteVector Bytes;
};

/// Element \p I of \p B printed for messages: integers exactly, floats with
/// enough digits to tell neighbours apart, "nan"/"inf" spelled out, and the
/// raw bits of 16/8-bit floats and NaNs in hex, e.g. "nan (0x7fffdead)".
std::string formatElement(const HostBuffer &B, size_t I);

} // namespace astra

#endif
