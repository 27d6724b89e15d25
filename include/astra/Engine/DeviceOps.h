//===- DeviceOps.h - Fill and compare device buffers on the GPU -*- C++ -*-===//
//
// A verification moves every buffer across PCIe several times per seed if
// the host does the work: the input-unchanged check alone downloaded every
// input twice per kernel run, and on KernelBench's 3.2 GB shapes one
// candidate took 87-254 s to verify on the H100. These helpers keep the
// bulk work on the device: poison is written by a fill kernel, and "has this
// buffer changed?" (inputs after a run, a kernel's second run against its
// first) is answered by a compare kernel, so only the outputs that are
// compared with tolerance cross to the host. The host still forms every
// message: when the device says "different", the caller downloads the buffer
// and explains it exactly as before.
//
// The fill and change kernels are hand-written PTX; the input generator
// and the comparison's reductions are C++ shared with the host
// (CounterRng.h, CompareCore.h) compiled to PTX at build time and embedded.
// No compiler is needed where the verifier runs (a GPU machine without
// LLVM); ptxDeviceOps() and ptxVerifierKernels() expose the texts so a test
// can assemble them with ptxas.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_ENGINE_DEVICEOPS_H
#define ASTRA_ENGINE_DEVICEOPS_H

#include "astra/Engine/CompareCore.h"
#include "astra/Runtime/Device.h"

#include "llvm/Support/Error.h"

#include <memory>

namespace astra {

/// The PTX of the helper kernels (entries astra_fill and astra_differs).
llvm::StringRef ptxDeviceOps();

/// The PTX of the generated kernels (astra_generate, astra_compare,
/// astra_moments, astra_counts, astra_constant), built from
/// lib/Engine/device/VerifierKernels.cpp.
llvm::StringRef ptxVerifierKernels();

/// Blocks of the moments kernel: fixed, so that its sums are accumulated in
/// the same order on every GPU.
constexpr unsigned MomentBlocks = 1024;

class DeviceOps {
public:
  /// JIT-loads the helper module into \p C.
  static llvm::Expected<std::unique_ptr<DeviceOps>> load(GpuContext &C);

  /// Queues a fill of \p Count elements of \p ElemSize bytes (1, 2, 4 or 8)
  /// at \p Dst with the low \p ElemSize bytes of \p Bits. \p Dst must be
  /// aligned to \p ElemSize.
  llvm::Error fill(cu::DevicePtr Dst, uint64_t Count, unsigned ElemSize,
                   uint64_t Bits, llvm::StringRef What);

  /// Whether \p Bytes bytes at \p A and \p B differ anywhere. Waits for the
  /// stream (everything queued before, then the compare) with
  /// \p TimeoutSeconds.
  llvm::Expected<bool> differs(cu::DevicePtr A, cu::DevicePtr B,
                               uint64_t Bytes, double TimeoutSeconds,
                               llvm::StringRef What);

  /// Queues the generation of the buffer \p P describes at \p Dst (aligned
  /// to its element size): the bytes generateOnHost(P) makes.
  llvm::Error generate(const crng::GenParams &P, cu::DevicePtr Dst,
                       llvm::StringRef What);

  /// The element-wise comparison of \p Actual with \p Expected
  /// (ccore::compareElement on every element). Waits for the stream.
  llvm::Expected<ccore::CmpResult> compare(const ccore::CmpParams &P,
                                           cu::DevicePtr Expected,
                                           cu::DevicePtr Actual,
                                           double TimeoutSeconds,
                                           llvm::StringRef What);
  /// The scale rules' first scan, its per-block parts merged on the host in
  /// block order.
  llvm::Expected<ccore::MomentsPart>
  moments(uint64_t Count, uint32_t Type, double Tiny, cu::DevicePtr Expected,
          cu::DevicePtr Actual, double TimeoutSeconds, llvm::StringRef What);
  /// The scale rules' second scan.
  llvm::Expected<ccore::CountsResult> counts(const ccore::CountsParams &P,
                                             cu::DevicePtr Expected,
                                             cu::DevicePtr Actual,
                                             double TimeoutSeconds,
                                             llvm::StringRef What);
  /// How many of the \p Count elements at \p B differ from the first (by
  /// value for floats, by bits otherwise): 0 when the buffer is one value.
  llvm::Expected<uint64_t> differentFromFirst(uint64_t Count, uint32_t Type,
                                              cu::DevicePtr B,
                                              double TimeoutSeconds,
                                              llvm::StringRef What);

private:
  DeviceOps() = default;
  /// Uploads \p Bytes of \p Init to the result area, queues \p F over
  /// \p Items (\p Blocks when given), waits, and downloads the result.
  llvm::Error reduce(cu::Function F, void **Params, uint64_t Items,
                     const void *Init, void *Out, size_t Bytes,
                     unsigned Blocks, double TimeoutSeconds,
                     llvm::StringRef What);
  /// Grid size for a grid-stride loop over \p Items.
  unsigned gridFor(uint64_t Items) const;
  GpuContext *Ctx = nullptr;
  std::unique_ptr<GpuModule> Module;
  cu::Function Fill = nullptr, Differs = nullptr;
  DeviceAlloc Flag; ///< The compare's 4-byte answer.
  std::unique_ptr<GpuModule> Generated; ///< ptxVerifierKernels().
  cu::Function Generate = nullptr, Compare = nullptr, Moments = nullptr,
               Counts = nullptr, Constant = nullptr;
  DeviceAlloc Result; ///< The reductions' results.
};

} // namespace astra

#endif
