//===- CounterRng.h - Counter-based input values, host and device -*- C++ -*-===//
//
// The value distributions of the spec's inputs (normal, uniform, randint and
// the adversarial value modes) are made element by element from a
// counter-based generator: element I of a buffer is a pure function of the
// buffer's key and I, so any chunk of a buffer can be made anywhere, in any
// order, and a failure replays from its seed.
//
//   bits    = Philox-4x32-10(key = the buffer's 64-bit stream key,
//                            counter = (I low, I high, attempt, 0))
//   uniform = (bits[0..63] >> 11) * 2^-53                  in [0, 1)
//   normal  = Marsaglia's polar method on the two 53-bit uniforms of an
//             attempt, attempts 0, 1, ... until one is accepted (at most
//             64; the 65th would come with probability 0.215^64); its two
//             normals are elements 2K and 2K+1, counted by the pair K
//   randint = rejection sampling on bits[0..63] (no modulo bias)
//
// This header is compiled twice: into the engine on the host, and by the
// NVPTX backend into the PTX of the verifier's device kernels
// (lib/Engine/device/, embedded in the binary at build time). Both compile it
// without floating-point contraction and use only IEEE-exact operations in
// a fixed order (add, multiply, divide, sqrt, conversions; the logarithm is
// our own series), so the device makes the same bytes as the host, bit for
// bit; test/gpu/engine/device-inputs.test checks it on the GPU.
//
// It needs nothing but <stdint.h> (the device build is freestanding).
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_ENGINE_COUNTERRNG_H
#define ASTRA_ENGINE_COUNTERRNG_H

#include <stdint.h>

namespace astra {
namespace crng {

/// Dtype codes the device kernels understand (the order of astra::DType).
enum DTypeCode : uint32_t {
  F32, F64, F16, BF16, FP8E4M3, FP8E5M2,
  I8, U8, I16, U16, I32, U32, I64, U64
};

/// What a generated buffer holds: the generator and its parameters.
enum GenKind : uint32_t {
  GenZero = 0,     ///< 0.0
  GenUniform = 1,  ///< A + B * uniform
  GenNormal = 2,   ///< A + B * normal
  GenRandInt = 3,  ///< an integer in [Lo, Hi]
  GenDenormal = 4, ///< A * uniform with a random sign (A: the min normal)
};

/// One buffer's recipe; the device kernel takes it by value, so its layout
/// is the same on both sides (plain 8- and 4-byte fields, no padding holes).
struct GenParams {
  uint64_t Key = 0;
  uint64_t Count = 0;
  uint32_t Kind = GenZero;
  uint32_t Type = F32;
  uint32_t Negate = 0; ///< -|v| before rounding (values=negative).
  uint32_t Reserved = 0;
  double A = 0, B = 0;
  int64_t Lo = 0, Hi = 0;
};

inline uint64_t bitsOf(double V) {
  uint64_t B;
  __builtin_memcpy(&B, &V, 8);
  return B;
}
inline double fromBits(uint64_t B) {
  double V;
  __builtin_memcpy(&V, &B, 8);
  return V;
}

/// Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as
/// 1, 2, 3", SC 2011): 128 random bits for a 128-bit counter.
struct Bits128 {
  uint32_t W[4];
  uint64_t lo() const { return uint64_t(W[0]) | uint64_t(W[1]) << 32; }
  uint64_t hi() const { return uint64_t(W[2]) | uint64_t(W[3]) << 32; }
};

/// Ten rounds on counter \p C with key \p K (the Random123 reference's
/// philox4x32_10, whose known answers the unit tests check).
inline Bits128 philoxBlock(const uint32_t C[4], const uint32_t K[2]) {
  uint32_t C0 = C[0], C1 = C[1], C2 = C[2], C3 = C[3], K0 = K[0], K1 = K[1];
  for (int R = 0; R < 10; ++R) {
    uint64_t P0 = uint64_t(0xD2511F53u) * C0, P1 = uint64_t(0xCD9E8D57u) * C2;
    uint32_t N0 = uint32_t(P1 >> 32) ^ C1 ^ K0, N1 = uint32_t(P1);
    uint32_t N2 = uint32_t(P0 >> 32) ^ C3 ^ K1, N3 = uint32_t(P0);
    C0 = N0;
    C1 = N1;
    C2 = N2;
    C3 = N3;
    K0 += 0x9E3779B9u;
    K1 += 0xBB67AE85u;
  }
  return Bits128{{C0, C1, C2, C3}};
}

/// The bits of attempt \p Attempt at element \p Index of stream \p Key.
inline Bits128 philox(uint64_t Key, uint64_t Index, uint32_t Attempt) {
  const uint32_t C[4] = {uint32_t(Index), uint32_t(Index >> 32), Attempt, 0};
  const uint32_t K[2] = {uint32_t(Key), uint32_t(Key >> 32)};
  return philoxBlock(C, K);
}

inline double unit53(uint64_t W) { return double(W >> 11) * 0x1.0p-53; }

/// Natural logarithm of a positive finite X in IEEE-exact operations (the
/// series of Inputs.cpp's portableLog): the same bits on every machine.
inline double log(double X) {
  int E = 0;
  uint64_t Bits = bitsOf(X);
  if ((Bits >> 52) == 0) {
    X *= 0x1.0p54;
    E = -54;
    Bits = bitsOf(X);
  }
  E += int(Bits >> 52) - 1022;
  double M = fromBits((Bits & ((uint64_t(1) << 52) - 1)) | (uint64_t(1022) << 52));
  if (M < 0.70710678118654752440) {
    M *= 2;
    --E;
  }
  double Z = (M - 1) / (M + 1);
  double Z2 = Z * Z;
  const double C[] = {1.0,      1.0 / 3,  1.0 / 5,  1.0 / 7,
                      1.0 / 9,  1.0 / 11, 1.0 / 13, 1.0 / 15,
                      1.0 / 17, 1.0 / 19, 1.0 / 21};
  double P = C[10];
  for (int K = 9; K >= 0; --K)
    P = P * Z2 + C[K];
  return 2 * (Z * P) + E * 0.69314718055994530942;
}

struct Pair {
  double First, Second;
};

/// The two standard normals of element pair \p K (elements 2K and 2K+1):
/// the polar method gives two per accepted attempt.
inline Pair normalPair(uint64_t Key, uint64_t K) {
  for (uint32_t Attempt = 0; Attempt < 64; ++Attempt) {
    Bits128 R = philox(Key, K, Attempt);
    double U = 2 * unit53(R.lo()) - 1, V = 2 * unit53(R.hi()) - 1;
    double S2 = U * U + V * V;
    if (S2 < 1 && S2 != 0) {
      double F = __builtin_sqrt(-2 * log(S2) / S2);
      return Pair{U * F, V * F};
    }
  }
  return Pair{0, 0};
}

/// Standard normal for element \p I.
inline double normal(uint64_t Key, uint64_t I) {
  Pair P = normalPair(Key, I >> 1);
  return (I & 1) ? P.Second : P.First;
}

/// Uniform integer in [Lo, Hi] for element \p I, unbiased.
inline int64_t randint(uint64_t Key, uint64_t I, int64_t Lo, int64_t Hi) {
  if (Hi <= Lo)
    return Lo;
  uint64_t Span = uint64_t(Hi) - uint64_t(Lo) + 1; // 0 means 2^64.
  uint64_t X = philox(Key, I, 0).lo();
  if (Span == 0)
    return int64_t(X);
  uint64_t Limit = UINT64_MAX - (UINT64_MAX % Span + 1) % Span;
  for (uint32_t Attempt = 1; X > Limit && Attempt < 64; ++Attempt)
    X = philox(Key, I, Attempt).lo();
  return int64_t(uint64_t(Lo) + X % Span);
}

/// A small binary float (sign, ExpBits, ManBits); FiniteOnly is fp8 e4m3,
/// which has no infinity. Round to nearest even, as HostBuffer's encoders.
inline uint32_t encodeMini(uint32_t ExpBits, uint32_t ManBits, bool FiniteOnly,
                           double V) {
  int Bias = (1 << (ExpBits - 1)) - 1;
  uint32_t ExpMask = (1u << ExpBits) - 1;
  uint32_t Nan = FiniteOnly ? (ExpMask << ManBits) | ((1u << ManBits) - 1)
                            : (ExpMask << ManBits) | (1u << (ManBits - 1));
  uint64_t DB = bitsOf(V);
  uint32_t Sign = uint32_t(DB >> 63) << (ExpBits + ManBits);
  uint32_t DExp = uint32_t(DB >> 52) & 0x7ff;
  uint64_t DFrac = DB & ((uint64_t(1) << 52) - 1);
  if (DExp == 0x7ff) {
    if (DFrac != 0 || FiniteOnly)
      return Sign | Nan;
    return Sign | (ExpMask << ManBits);
  }
  if (DExp == 0)
    return Sign;
  int E = int(DExp) - 1023;
  uint64_t Sig = (uint64_t(1) << 52) | DFrac;
  int MinExp = 1 - Bias;
  int TE = E > MinExp ? E : MinExp;
  int Shift = 52 - int(ManBits) + (TE - E);
  uint64_t Q;
  if (Shift > 60) {
    Q = 0;
  } else {
    Q = Sig >> Shift;
    uint64_t Rem = Sig & ((uint64_t(1) << Shift) - 1);
    uint64_t HalfUlp = uint64_t(1) << (Shift - 1);
    if (Rem > HalfUlp || (Rem == HalfUlp && (Q & 1)))
      ++Q;
  }
  if (Q >= (uint64_t(2) << ManBits)) {
    Q >>= 1;
    ++TE;
  }
  uint32_t ExpField, Man;
  if (Q >= (uint64_t(1) << ManBits)) {
    ExpField = uint32_t(TE + Bias);
    Man = uint32_t(Q - (uint64_t(1) << ManBits));
  } else {
    ExpField = 0;
    Man = uint32_t(Q);
  }
  if (FiniteOnly) {
    if (ExpField > ExpMask ||
        (ExpField == ExpMask && Man == (1u << ManBits) - 1))
      return Sign | Nan;
  } else if (ExpField >= ExpMask) {
    return Sign | (ExpMask << ManBits);
  }
  return Sign | (ExpField << ManBits) | Man;
}

/// \p V rounded to the nearest integer (ties to even) and saturated to
/// [Min, Max]; NaN gives 0 (HostBuffer::set's rule for integer dtypes).
inline uint64_t saturateInt(double V, double Min, double Max, int64_t IMin,
                            uint64_t IMax, bool Signed) {
  if (V != V)
    return 0;
  double R = __builtin_rint(V);
  if (R <= Min)
    return uint64_t(IMin);
  if (R >= Max)
    return IMax;
  return Signed ? uint64_t(int64_t(R)) : uint64_t(R);
}

/// The bits of \p V stored as dtype \p T (zero-extended), as
/// HostBuffer::set stores it.
inline uint64_t storeBits(uint32_t T, double V) {
  switch (T) {
  case F32: {
    float F = float(V);
    uint32_t B;
    __builtin_memcpy(&B, &F, 4);
    return B;
  }
  case F64:
    return bitsOf(V);
  case F16:
    return encodeMini(5, 10, false, V);
  case BF16:
    return encodeMini(8, 7, false, V);
  case FP8E4M3:
    return encodeMini(4, 3, true, V);
  case FP8E5M2:
    return encodeMini(5, 2, false, V);
  case I8:
    return uint8_t(saturateInt(V, -128.0, 127.0, -128, 0x7f, true));
  case U8:
    return saturateInt(V, 0.0, 255.0, 0, 0xff, false);
  case I16:
    return uint16_t(saturateInt(V, -32768.0, 32767.0, -32768, 0x7fff, true));
  case U16:
    return saturateInt(V, 0.0, 65535.0, 0, 0xffff, false);
  case I32:
    return uint32_t(saturateInt(V, -2147483648.0, 2147483647.0,
                                -2147483647 - 1, 0x7fffffff, true));
  case U32:
    return saturateInt(V, 0.0, 4294967295.0, 0, 0xffffffffu, false);
  case I64:
    return saturateInt(V, -9223372036854775808.0, 9223372036854775807.0,
                       INT64_MIN, uint64_t(INT64_MAX), true);
  default: // U64
    return saturateInt(V, 0.0, 18446744073709551615.0, 0, UINT64_MAX, false);
  }
}

inline bool isFloatCode(uint32_t T) { return T <= FP8E5M2; }

/// The stored bits of value \p V of a buffer \p P describes (negated
/// first for values=negative).
inline uint64_t finishBits(const GenParams &P, double V) {
  if (P.Negate)
    V = fromBits(bitsOf(V) | (uint64_t(1) << 63));
  return storeBits(P.Type, V);
}

/// The bits of element \p I of the buffer \p P describes.
inline uint64_t elementBits(const GenParams &P, uint64_t I) {
  double V = 0;
  switch (P.Kind) {
  case GenUniform:
    V = P.A + P.B * unit53(philox(P.Key, I, 0).lo());
    break;
  case GenNormal:
    V = P.A + P.B * normal(P.Key, I);
    break;
  case GenRandInt: {
    int64_t X = randint(P.Key, I, P.Lo, P.Hi);
    if (!isFloatCode(P.Type)) // HostBuffer::setInt: the low bytes.
      return P.Type == I8 || P.Type == U8     ? uint64_t(uint8_t(X))
             : P.Type == I16 || P.Type == U16 ? uint64_t(uint16_t(X))
             : P.Type == I32 || P.Type == U32 ? uint64_t(uint32_t(X))
                                              : uint64_t(X);
    V = double(X);
    break;
  }
  case GenDenormal: {
    Bits128 R = philox(P.Key, I, 0);
    double Mag = P.A * unit53(R.lo());
    V = (R.W[2] & 1) ? -Mag : Mag;
    break;
  }
  default:
    V = 0;
  }
  return finishBits(P, V);
}

/// Bytes per element of dtype code \p T.
inline unsigned sizeOf(uint32_t T) {
  switch (T) {
  case F64:
  case I64:
  case U64:
    return 8;
  case F32:
  case I32:
  case U32:
    return 4;
  case F16:
  case BF16:
  case I16:
  case U16:
    return 2;
  default:
    return 1;
  }
}

} // namespace crng
} // namespace astra

#endif
