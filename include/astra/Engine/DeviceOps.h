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
// The kernels are hand-written PTX (no compiler needed where the verifier
// runs, a GPU machine without LLVM); ptxDeviceOps() exposes the text so a
// test can assemble it with ptxas.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_ENGINE_DEVICEOPS_H
#define ASTRA_ENGINE_DEVICEOPS_H

#include "astra/Runtime/Device.h"

#include "llvm/Support/Error.h"

#include <memory>

namespace astra {

/// The PTX of the helper kernels (entries astra_fill and astra_differs).
llvm::StringRef ptxDeviceOps();

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

private:
  DeviceOps() = default;
  /// Grid size for a grid-stride loop over \p Items.
  unsigned gridFor(uint64_t Items) const;
  GpuContext *Ctx = nullptr;
  std::unique_ptr<GpuModule> Module;
  cu::Function Fill = nullptr, Differs = nullptr;
  DeviceAlloc Flag; ///< The compare's 4-byte answer.
};

} // namespace astra

#endif
