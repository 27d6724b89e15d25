//===- KernelRunner.h - One kernel with its own device buffers -*- C++ -*-===//
//
// The baseline and the candidate each get a KernelRunner: separate device
// buffers, so a candidate can never see what the baseline left behind. The
// buffers are allocated once per planned run and reused for every seed (a
// kernel that caches results keyed by pointer gets new inputs at the same
// addresses and fails). Each buffer sits between two guard regions of
// canary bytes; with Misalign the kernel gets a pointer one element past an
// aligned address.
//
//   allocation: [guard: 256 B + misalign offset][data][guard: 256 B]
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_ENGINE_KERNELRUNNER_H
#define ASTRA_ENGINE_KERNELRUNNER_H

#include "astra/Engine/DeviceOps.h"
#include "astra/Engine/HostBuffer.h"
#include "astra/Engine/Inputs.h"
#include "astra/Runtime/Device.h"
#include "astra/Spec/Spec.h"

#include "llvm/Support/Error.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace astra {

class KernelRunner {
public:
  /// Allocates the buffers of \p S under \p Vars and resolves \p Launch.
  /// \p Label ("baseline", "candidate") prefixes every message.
  static llvm::Expected<std::unique_ptr<KernelRunner>>
  create(GpuContext &C, cu::Function F, const KernelSpec &S,
         const LaunchSpec &Launch, const Env &Vars, bool Misalign,
         llvm::StringRef Label);

  /// Uploads the inputs and in-outs of \p Values (by name) and rewrites
  /// every guard region. Inputs not in \p Values are left alone.
  llvm::Error upload(const std::map<std::string, HostBuffer> &Values);
  /// upload() of \p Values' host buffers; the device buffers are generated
  /// in place from their recipes (needs setDeviceOps).
  llvm::Error upload(const InputSet &Values);
  /// Fills outputs and scratch with poison pattern \p Variant.
  llvm::Error poison(unsigned Variant);
  /// Queues the kernel on the context's stream.
  llvm::Error launch();
  /// launch() and wait with the deadline.
  llvm::Error run(double TimeoutSeconds);
  /// Downloads every buffer argument.
  llvm::Expected<std::map<std::string, HostBuffer>> download() const;
  /// Downloads the buffers the kernel may write (all but the inputs).
  llvm::Expected<std::map<std::string, HostBuffer>> downloadWritten() const;
  /// Downloads buffer \p Name.
  llvm::Expected<HostBuffer> downloadBuffer(llvm::StringRef Name) const;

  /// Device-side work (see DeviceOps.h). With helpers set, poison() fills
  /// on the GPU and the calls below may be used; not owned.
  void setDeviceOps(DeviceOps *O) { Ops = O; }
  /// Copies the inputs and in-outs as they are now (after upload()) to
  /// device-side pristine copies.
  llvm::Error savePristine();
  /// Sets the inputs and in-outs (only the in-outs with \p InOutsOnly) from
  /// \p Src's pristine copies, device to device, and rewrites every guard.
  /// \p Src may be this runner; it must have the same buffers (the same
  /// spec and shape).
  llvm::Error loadPristine(const KernelRunner &Src, bool InOutsOnly);
  /// Copies every buffer the kernel may write, as it is now, to saved copies.
  llvm::Error saveWritten();
  /// Queues copies of the saved buffers back (the profiler's reset before
  /// each timed launch: in-outs get their values, outputs their poison).
  llvm::Error restoreWritten() const;
  /// Whether written buffer \p Name differs from its saved copy, bit for bit.
  llvm::Expected<bool> changedSinceSave(llvm::StringRef Name,
                                        double TimeoutSeconds);
  /// Whether buffer \p Name differs from \p Src's pristine copy of it.
  llvm::Expected<bool> differsFromPristine(llvm::StringRef Name,
                                           const KernelRunner &Src,
                                           double TimeoutSeconds);
  /// Whether written buffer \p Name differs, bit for bit, from the copy
  /// \p Src's last saveWritten() kept (the verifier asks whether the
  /// candidate wrote exactly what the baseline wrote before downloading).
  llvm::Expected<bool> differsFromSaved(llvm::StringRef Name,
                                        const KernelRunner &Src,
                                        double TimeoutSeconds);
  /// The first guard region whose canary changed, as a message ("wrote
  /// 4 bytes past the end of 'out' (guard byte 0 after element 1023)"), or
  /// empty when every guard is intact.
  llvm::Expected<std::string> checkGuards() const;

  /// The copies saveWritten() last kept of the written buffers.
  llvm::Expected<std::map<std::string, HostBuffer>> downloadSaved() const;
  /// Element \p I of buffer \p Name, or of its saved copy with \p Saved,
  /// alone in a buffer of one element (a failure's evidence).
  llvm::Expected<HostBuffer> downloadElement(llvm::StringRef Name, uint64_t I,
                                             bool Saved) const;
  /// Device address of the copy saveWritten() keeps of \p Name (0 if none).
  cu::DevicePtr savedAddress(llvm::StringRef Name) const;
  /// Device address of buffer \p Name as the kernel sees it (0 if none).
  cu::DevicePtr address(llvm::StringRef Name) const;
  uint64_t count(llvm::StringRef Name) const;
  const ResolvedLaunch &launchConfig() const { return Launch; }
  llvm::StringRef label() const { return Label; }

private:
  KernelRunner() = default;
  struct Buffer {
    const ArgSpec *Arg = nullptr;
    DeviceAlloc Alloc;
    size_t Offset = 0; ///< Of the data in the allocation.
    uint64_t Count = 0;
    size_t Bytes = 0;
    DeviceAlloc Pristine; ///< Inputs and in-outs as uploaded.
    DeviceAlloc Saved;    ///< Written buffers as saveWritten() found them.
  };
  GpuContext *Ctx = nullptr;
  cu::Function Fn = nullptr;
  const KernelSpec *Spec = nullptr;
  std::string Label;
  ResolvedLaunch Launch;
  std::vector<Buffer> Buffers;             ///< Buffer arguments, spec order.
  std::vector<std::vector<uint8_t>> Storage; ///< One per kernel parameter.
  std::vector<void *> Params;
  DeviceOps *Ops = nullptr;
  llvm::Error writeGuards(const Buffer &B) const;
  const Buffer *find(llvm::StringRef Name) const;
  llvm::Expected<HostBuffer> fetch(const Buffer &B) const;
  /// Whether buffer \p Name differs from \p Src's \p Copy of it.
  llvm::Expected<bool> differsFromCopy(llvm::StringRef Name,
                                       const KernelRunner &Src,
                                       DeviceAlloc Buffer::*Copy,
                                       llvm::StringRef Kind,
                                       double TimeoutSeconds);
  llvm::Expected<std::map<std::string, HostBuffer>>
  downloadIf(bool (*Selected)(Role)) const;
  /// Saves the buffers \p Selected picks into their \p Copy allocation
  /// (made on first use; \p Kind names it in messages).
  llvm::Error saveInto(DeviceAlloc Buffer::*Copy, bool (*Selected)(Role),
                       llvm::StringRef Kind);
  /// Queues a device-to-device copy of \p Bytes bytes.
  llvm::Error copy(cu::DevicePtr Dst, cu::DevicePtr Src, size_t Bytes,
                   const llvm::Twine &What) const;
};

/// Packs scalar argument \p A under \p Vars into its parameter bytes (the
/// kernel's parameter type: ScalarType).
llvm::Expected<std::vector<uint8_t>> packScalar(const KernelSpec &S,
                                                const ArgSpec &A,
                                                const Env &Vars);

} // namespace astra

#endif
