//===- Device.h - Contexts, memory, modules, launches, events --*- C++ -*-===//
//
// Thin owners over the driver API. Every call is checked and its error names
// the call and what it was for; a kernel launch is checked twice (the launch
// itself for configuration errors, the wait for faults), and every wait has
// a deadline so a kernel that never ends turns into a TimeoutError instead of
// a hung tool.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_RUNTIME_DEVICE_H
#define ASTRA_RUNTIME_DEVICE_H

#include "astra/Runtime/CudaDriver.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace astra {

struct Dim3 {
  unsigned X = 1, Y = 1, Z = 1;
  uint64_t total() const { return uint64_t(X) * Y * Z; }
};

struct DeviceInfo {
  int Ordinal = 0;
  std::string Name;
  int SmCount = 0;
  int CcMajor = 0, CcMinor = 0;
  uint64_t L2Bytes = 0;
  uint64_t MemoryBytes = 0;
  int MaxThreadsPerBlock = 0;
  int MaxThreadsPerSm = 0;
  int MaxSharedPerBlockOptin = 0;
  int ClockKHz = 0, MemClockKHz = 0, BusWidthBits = 0;
  int DriverVersion = 0; ///< cuDriverGetVersion (13000 = 13.0).
  std::string driverString() const;
};

/// A kernel that did not finish within its deadline.
class TimeoutError : public llvm::ErrorInfo<TimeoutError> {
public:
  static char ID;
  TimeoutError(double Seconds, std::string What)
      : Seconds(Seconds), What(std::move(What)) {}
  void log(llvm::raw_ostream &OS) const override;
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }
  double seconds() const { return Seconds; }

private:
  double Seconds;
  std::string What;
};

/// The primary context of one device, made current on the calling thread,
/// with one non-blocking stream that all work of this process goes to.
class GpuContext {
public:
  /// Loads the driver and opens device \p Ordinal. Fails with the no-driver
  /// or no-GPU message of CudaDriver::get(), or "GPU <n> does not exist
  /// (this machine has <k>)".
  static llvm::Expected<std::unique_ptr<GpuContext>> open(int Ordinal = 0);
  ~GpuContext();
  GpuContext(const GpuContext &) = delete;
  GpuContext &operator=(const GpuContext &) = delete;

  const DeviceInfo &info() const { return Info; }
  const CudaDriver &driver() const { return *Drv; }
  const cu::Api &api() const { return Drv->api(); }
  cu::Stream stream() const { return Stream; }
  llvm::Error check(cu::Result R, llvm::StringRef Call,
                    llvm::StringRef Detail = "") const {
    return Drv->check(R, Call, Detail);
  }

  /// Waits for everything queued on the stream, polling so that the wait can
  /// end after \p TimeoutSeconds with a TimeoutError naming \p What. A
  /// kernel fault comes back as a CudaError (sticky: the context is dead).
  llvm::Error wait(double TimeoutSeconds, llvm::StringRef What);

  /// True once a wait timed out: a kernel may still be running, and freeing
  /// memory, unloading a module or releasing the context would block on it
  /// for ever. Nothing touches the context again; the process exits (the
  /// verifier is a child process) and the driver reclaims the device.
  bool abandoned() const { return Abandoned; }

  /// Number of GPUs the driver sees.
  static llvm::Expected<int> deviceCount();
  /// Reads the attributes of device \p Ordinal without opening a context.
  static llvm::Expected<DeviceInfo> queryDevice(int Ordinal);

private:
  GpuContext() = default;
  CudaDriver *Drv = nullptr;
  DeviceInfo Info;
  cu::Device Dev = 0;
  cu::Context Ctx = nullptr;
  cu::Stream Stream = nullptr;
  bool Abandoned = false;
};

/// One device allocation, freed on destruction.
class DeviceAlloc {
public:
  DeviceAlloc() = default;
  static llvm::Expected<DeviceAlloc> allocate(GpuContext &C, size_t Bytes,
                                              llvm::StringRef What);
  DeviceAlloc(DeviceAlloc &&O) noexcept { *this = std::move(O); }
  DeviceAlloc &operator=(DeviceAlloc &&O) noexcept;
  ~DeviceAlloc();

  cu::DevicePtr ptr() const { return Ptr; }
  size_t size() const { return Bytes; }
  llvm::Error upload(size_t Offset, const void *Src, size_t N) const;
  llvm::Error download(size_t Offset, void *Dst, size_t N) const;

private:
  GpuContext *Ctx = nullptr;
  cu::DevicePtr Ptr = 0;
  size_t Bytes = 0;
  std::string What;
};

/// What the driver reports about a loaded kernel.
struct KernelAttributes {
  int NumRegs = 0;
  int LocalBytes = 0;  ///< Per thread (spills, local arrays).
  int SharedBytes = 0; ///< Static shared memory.
  int ConstBytes = 0;
  int MaxThreadsPerBlock = 0;
  int PtxVersion = 0, BinaryVersion = 0;
};

/// A module JIT-compiled from PTX text.
class GpuModule {
public:
  /// Loads \p Ptx (PTX text, or a cubin: an ELF image); a JIT error comes
  /// back with the JIT's error log:
  ///   "<Label>: the driver could not load the PTX: CUDA_ERROR_INVALID_PTX
  ///    (...)\n<log>".
  static llvm::Expected<std::unique_ptr<GpuModule>>
  load(GpuContext &C, llvm::StringRef Ptx, llvm::StringRef Label);
  ~GpuModule();

  /// The kernel called \p Entry; the error lists the entries the PTX has.
  llvm::Expected<cu::Function> function(llvm::StringRef Entry) const;
  /// The JIT's info log (may be empty).
  llvm::StringRef infoLog() const { return InfoLog; }

private:
  GpuModule() = default;
  GpuContext *Ctx = nullptr;
  cu::Module Mod = nullptr;
  std::string Label, InfoLog, Ptx;
};

llvm::Expected<KernelAttributes> kernelAttributes(GpuContext &C,
                                                  cu::Function F);

/// Launches \p F on the context's stream. Raises the dynamic shared memory
/// limit first when \p Shmem exceeds the default 48 KiB. Configuration errors
/// (too many threads, too much shared memory) come back here; faults only
/// show in the next GpuContext::wait().
llvm::Error launchKernel(GpuContext &C, cu::Function F, Dim3 Grid, Dim3 Block,
                         unsigned Shmem, void **Params, llvm::StringRef What);

/// A pair of events around work on the context's stream.
class GpuEvent {
public:
  static llvm::Expected<GpuEvent> create(GpuContext &C);
  GpuEvent(GpuEvent &&O) noexcept { *this = std::move(O); }
  GpuEvent &operator=(GpuEvent &&O) noexcept;
  GpuEvent() = default;
  ~GpuEvent();
  llvm::Error record() const;
  /// Milliseconds between two recorded, completed events.
  static llvm::Expected<float> elapsedMs(const GpuEvent &Start,
                                         const GpuEvent &End);

private:
  GpuContext *Ctx = nullptr;
  cu::Event Ev = nullptr;
};

/// Lists the `.entry` names in PTX text (for messages).
std::vector<std::string> ptxEntries(llvm::StringRef Ptx);

} // namespace astra

#endif
