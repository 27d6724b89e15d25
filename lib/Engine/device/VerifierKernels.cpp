//===- VerifierKernels.cpp - The verifier's generated device kernels ------===//
//
// Compiled by the NVPTX backend at build time (lib/Engine/CMakeLists.txt:
// clang --target=nvptx64-nvidia-cuda, freestanding, no contraction) into PTX
// that the engine embeds and JIT-loads (VerifierKernels.h); never part of the
// host build. The element rules are the host's own (CounterRng.h,
// CompareCore.h), so host and device agree bit for bit.
//
// Every kernel is a grid-stride loop; the grids the host launches are fixed
// in size where a result depends on the order of a sum (the scale rules'
// moments), so the sums are the same on every GPU.
//
//===----------------------------------------------------------------------===//
#include "astra/Engine/CompareCore.h"

using namespace astra;

#define KERNEL extern "C" __attribute__((nvptx_kernel))

namespace {

uint64_t threadIndex() {
  return uint64_t(__nvvm_read_ptx_sreg_ctaid_x()) *
             __nvvm_read_ptx_sreg_ntid_x() +
         __nvvm_read_ptx_sreg_tid_x();
}
uint64_t threadCount() {
  return uint64_t(__nvvm_read_ptx_sreg_nctaid_x()) *
         __nvvm_read_ptx_sreg_ntid_x();
}

void storeBits(uint8_t *P, unsigned Size, uint64_t I, uint64_t B) {
  switch (Size) {
  case 8:
    reinterpret_cast<uint64_t *>(P)[I] = B;
    break;
  case 4:
    reinterpret_cast<uint32_t *>(P)[I] = uint32_t(B);
    break;
  case 2:
    reinterpret_cast<uint16_t *>(P)[I] = uint16_t(B);
    break;
  default:
    P[I] = uint8_t(B);
  }
}

uint64_t loadAligned(const uint8_t *P, unsigned Size, uint64_t I) {
  switch (Size) {
  case 8:
    return reinterpret_cast<const uint64_t *>(P)[I];
  case 4:
    return reinterpret_cast<const uint32_t *>(P)[I];
  case 2:
    return reinterpret_cast<const uint16_t *>(P)[I];
  default:
    return P[I];
  }
}

void atomicMaxDouble(uint64_t *Bits, double V) {
  // Non-negative doubles order as their bits do.
  if (V > 0)
    __atomic_fetch_max(Bits, crng::bitsOf(V), __ATOMIC_RELAXED);
}

/// Threads of a block of the moments kernel (a power of two).
constexpr unsigned MomentThreads = 256;
/// The block's partial moments (raw words: shared memory takes no
/// constructor).
__attribute__((address_space(3))) uint64_t
    SharedWords[MomentThreads * sizeof(ccore::MomentsPart) / 8];

} // namespace

/// Dst[I] = element I of the buffer P describes, for I < P.Count.
KERNEL void astra_generate(crng::GenParams P, uint8_t *Dst) {
  unsigned Size = crng::sizeOf(P.Type);
  for (uint64_t I = threadIndex(), N = threadCount(); I < P.Count; I += N)
    storeBits(Dst, Size, I, crng::elementBits(P, I));
}

/// The element-wise comparison of Actual with Expected; R must hold a
/// CmpResult with First = ~0 and zeros elsewhere.
KERNEL void astra_compare(ccore::CmpParams P, const uint8_t *Expected,
                          const uint8_t *Actual, ccore::CmpResult *R) {
  unsigned Size = crng::sizeOf(P.Type);
  uint64_t Failures = 0, Unwritten = 0, First = ~0ull;
  double MaxAbs = 0, MaxRel = 0;
  for (uint64_t I = threadIndex(), N = threadCount(); I < P.Count; I += N) {
    uint64_t EB = loadAligned(Expected, Size, I),
             AB = loadAligned(Actual, Size, I);
    if (ccore::compareElement(P, EB, AB, MaxAbs, MaxRel) == ccore::CmpPass)
      continue;
    ++Failures;
    Unwritten += ccore::unwritten(P, AB);
    if (I < First)
      First = I;
  }
  if (Failures) {
    __atomic_fetch_add(&R->Failures, Failures, __ATOMIC_RELAXED);
    if (Unwritten)
      __atomic_fetch_add(&R->Unwritten, Unwritten, __ATOMIC_RELAXED);
    __atomic_fetch_min(&R->First, First, __ATOMIC_RELAXED);
  }
  atomicMaxDouble(&R->MaxAbs, MaxAbs);
  atomicMaxDouble(&R->MaxRel, MaxRel);
}

/// The scale rules' first scan: one MomentsPart per block in Parts, summed
/// per thread in index order and then over a fixed tree.
KERNEL void astra_moments(uint64_t Count, uint32_t Type, double Tiny,
                          const uint8_t *Expected, const uint8_t *Actual,
                          ccore::MomentsPart *Parts) {
  unsigned Size = crng::sizeOf(Type);
  ccore::MomentsPart M;
  for (uint64_t I = threadIndex(), N = threadCount(); I < Count; I += N)
    ccore::momentsAdd(M, Type, Tiny, loadAligned(Expected, Size, I),
                      loadAligned(Actual, Size, I));
  unsigned T = __nvvm_read_ptx_sreg_tid_x();
  auto *Shared = (ccore::MomentsPart *)SharedWords;
  Shared[T] = M;
  __syncthreads();
  for (unsigned Half = MomentThreads / 2; Half; Half /= 2) {
    if (T < Half) {
      ccore::MomentsPart A = Shared[T];
      ccore::momentsMerge(A, Shared[T + Half]);
      Shared[T] = A;
    }
    __syncthreads();
  }
  if (T == 0)
    Parts[__nvvm_read_ptx_sreg_ctaid_x()] = Shared[0];
}

/// The scale rules' second scan; R must hold a CountsResult as constructed.
KERNEL void astra_counts(ccore::CountsParams P, const uint8_t *Expected,
                         const uint8_t *Actual, ccore::CountsResult *R) {
  unsigned Size = crng::sizeOf(P.Type);
  ccore::CountsResult C;
  for (uint64_t I = threadIndex(), N = threadCount(); I < P.Count; I += N) {
    uint32_t Hit = ccore::countsAdd(C, P, loadAligned(Expected, Size, I),
                                    loadAligned(Actual, Size, I));
    if ((Hit & 1) && I < C.FirstZeroed)
      C.FirstZeroed = I;
    if ((Hit & 2) && I < C.FirstOutside)
      C.FirstOutside = I;
  }
  uint64_t *Sums[] = {&R->ZeroedBase, &R->Zeroed,  &R->ExactZeros,
                      &R->Meaningful, &R->Outside, &R->WrongSign};
  uint64_t Mine[] = {C.ZeroedBase, C.Zeroed,  C.ExactZeros,
                     C.Meaningful, C.Outside, C.WrongSign};
  for (int K = 0; K < 6; ++K)
    if (Mine[K])
      __atomic_fetch_add(Sums[K], Mine[K], __ATOMIC_RELAXED);
  if (C.FirstZeroed != ~0ull)
    __atomic_fetch_min(&R->FirstZeroed, C.FirstZeroed, __ATOMIC_RELAXED);
  if (C.FirstOutside != ~0ull)
    __atomic_fetch_min(&R->FirstOutside, C.FirstOutside, __ATOMIC_RELAXED);
}

/// *Differs += the elements of B that differ from element 0: by value for
/// floats (+0 and -0 are one value, NaN equals nothing), by bits otherwise
/// (weakOutputWarning's "one value in every element").
KERNEL void astra_constant(uint64_t Count, uint32_t Type, const uint8_t *B,
                           uint64_t *Differs) {
  unsigned Size = crng::sizeOf(Type);
  uint64_t First = loadAligned(B, Size, 0), Mine = 0;
  bool Float = crng::isFloatCode(Type);
  double FirstV = ccore::toDouble(Type, First);
  for (uint64_t I = threadIndex(), N = threadCount(); I < Count; I += N) {
    uint64_t X = loadAligned(B, Size, I);
    Mine += Float ? !(ccore::toDouble(Type, X) == FirstV) : X != First;
  }
  if (Mine)
    __atomic_fetch_add(Differs, Mine, __ATOMIC_RELAXED);
}
