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

#include "astra/Engine/HostBuffer.h"
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
  /// Uploads only the in-out buffers of \p Values (to reset them).
  llvm::Error uploadInOuts(const std::map<std::string, HostBuffer> &Values);
  /// Fills outputs and scratch with poison pattern \p Variant.
  llvm::Error poison(unsigned Variant);
  /// Queues the kernel on the context's stream.
  llvm::Error launch();
  /// launch() and wait with the deadline.
  llvm::Error run(double TimeoutSeconds);
  /// Downloads every buffer argument.
  llvm::Expected<std::map<std::string, HostBuffer>> download() const;
  /// The first guard region whose canary changed, as a message ("wrote
  /// 4 bytes past the end of 'out' (guard byte 0 after element 1023)"), or
  /// empty when every guard is intact.
  llvm::Expected<std::string> checkGuards() const;

  /// Device address of buffer \p Name as the kernel sees it (0 if none).
  cu::DevicePtr address(llvm::StringRef Name) const;
  uint64_t count(llvm::StringRef Name) const;
  const ResolvedLaunch &launchConfig() const { return Launch; }
  llvm::StringRef label() const { return Label; }
  /// Bytes of the in-out and output buffers, for the profiler's resets.
  struct BufferView {
    std::string Name;
    Role R;
    DType T;
    cu::DevicePtr Ptr;
    uint64_t Count;
    size_t Bytes;
  };
  std::vector<BufferView> buffers() const;

private:
  KernelRunner() = default;
  struct Buffer {
    const ArgSpec *Arg = nullptr;
    DeviceAlloc Alloc;
    size_t Offset = 0; ///< Of the data in the allocation.
    uint64_t Count = 0;
    size_t Bytes = 0;
  };
  GpuContext *Ctx = nullptr;
  cu::Function Fn = nullptr;
  const KernelSpec *Spec = nullptr;
  std::string Label;
  ResolvedLaunch Launch;
  std::vector<Buffer> Buffers;             ///< Buffer arguments, spec order.
  std::vector<std::vector<uint8_t>> Storage; ///< One per kernel parameter.
  std::vector<void *> Params;
  llvm::Error writeGuards(const Buffer &B) const;
};

/// Packs scalar argument \p A under \p Vars into its parameter bytes (the
/// kernel's parameter type: ScalarType).
llvm::Expected<std::vector<uint8_t>> packScalar(const KernelSpec &S,
                                                const ArgSpec &A,
                                                const Env &Vars);

} // namespace astra

#endif
