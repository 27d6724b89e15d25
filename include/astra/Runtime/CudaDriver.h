//===- CudaDriver.h - The CUDA driver API, opened at run time --*- C++ -*-===//
//
// clang-astra must start (list, rewrite, compile) on machines without an
// NVIDIA driver, so it never links libcuda: the driver is opened with
// dlopen("libcuda.so.1") the first time a GPU is needed, and every entry
// point is resolved by its exported name (the _v2/_v4 names that cuda.h's
// macros select; calling the unversioned legacy symbols would get the old
// 32-bit ABI). $ASTRA_LIBCUDA names another library (tests use it to check
// the no-driver path).
//
// The few driver types and enum values are declared here rather than taken
// from cuda.h, so the tool builds where no CUDA toolkit is installed; the
// values are the driver's stable ABI (checked against CUDA 13.0's cuda.h).
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_RUNTIME_CUDADRIVER_H
#define ASTRA_RUNTIME_CUDADRIVER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstddef>
#include <string>

namespace astra {
namespace cu {

using Result = int; ///< CUresult.
using Device = int; ///< CUdevice.
using DevicePtr = unsigned long long; ///< CUdeviceptr.
struct CtxSt;
struct ModSt;
struct FuncSt;
struct StreamSt;
struct EventSt;
using Context = CtxSt *;
using Module = ModSt *;
using Function = FuncSt *;
using Stream = StreamSt *;
using Event = EventSt *;

enum : Result {
  SUCCESS = 0,
  ERROR_INVALID_VALUE = 1,
  ERROR_OUT_OF_MEMORY = 2,
  ERROR_NOT_INITIALIZED = 3,
  ERROR_STUB_LIBRARY = 34,
  ERROR_NO_DEVICE = 100,
  ERROR_INVALID_PTX = 218,
  ERROR_NOT_FOUND = 500,
  ERROR_NOT_READY = 600,
  ERROR_ILLEGAL_ADDRESS = 700,
  ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
  ERROR_LAUNCH_TIMEOUT = 702,
  ERROR_ASSERT = 710,
  ERROR_HARDWARE_STACK_ERROR = 714,
  ERROR_ILLEGAL_INSTRUCTION = 715,
  ERROR_MISALIGNED_ADDRESS = 716,
  ERROR_INVALID_ADDRESS_SPACE = 717,
  ERROR_INVALID_PC = 718,
  ERROR_LAUNCH_FAILED = 719,
};

// CUdevice_attribute values.
enum : int {
  DEV_ATTR_MAX_THREADS_PER_BLOCK = 1,
  DEV_ATTR_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  DEV_ATTR_CLOCK_RATE = 13,
  DEV_ATTR_MULTIPROCESSOR_COUNT = 16,
  DEV_ATTR_MEMORY_CLOCK_RATE = 36,
  DEV_ATTR_GLOBAL_MEMORY_BUS_WIDTH = 37,
  DEV_ATTR_L2_CACHE_SIZE = 38,
  DEV_ATTR_MAX_THREADS_PER_MULTIPROCESSOR = 39,
  DEV_ATTR_COMPUTE_CAPABILITY_MAJOR = 75,
  DEV_ATTR_COMPUTE_CAPABILITY_MINOR = 76,
  DEV_ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
};

// CUfunction_attribute values.
enum : int {
  FUNC_ATTR_MAX_THREADS_PER_BLOCK = 0,
  FUNC_ATTR_SHARED_SIZE_BYTES = 1,
  FUNC_ATTR_CONST_SIZE_BYTES = 2,
  FUNC_ATTR_LOCAL_SIZE_BYTES = 3,
  FUNC_ATTR_NUM_REGS = 4,
  FUNC_ATTR_PTX_VERSION = 5,
  FUNC_ATTR_BINARY_VERSION = 6,
  FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
};

// CUjit_option values.
enum : int {
  JIT_INFO_LOG_BUFFER = 3,
  JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  JIT_ERROR_LOG_BUFFER = 5,
  JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  JIT_LOG_VERBOSE = 12,
};

enum : unsigned { STREAM_NON_BLOCKING = 1, EVENT_DEFAULT = 0 };

/// The entry points clang-astra uses, resolved by their exported names.
struct Api {
  Result (*Init)(unsigned);
  Result (*DriverGetVersion)(int *);
  Result (*GetErrorName)(Result, const char **);
  Result (*GetErrorString)(Result, const char **);
  Result (*DeviceGetCount)(int *);
  Result (*DeviceGet)(Device *, int);
  Result (*DeviceGetName)(char *, int, Device);
  Result (*DeviceGetAttribute)(int *, int, Device);
  Result (*DeviceTotalMem)(size_t *, Device);           // cuDeviceTotalMem_v2
  Result (*DevicePrimaryCtxRetain)(Context *, Device);
  Result (*DevicePrimaryCtxRelease)(Device);           // _v2
  Result (*CtxSetCurrent)(Context);
  Result (*CtxSynchronize)();
  Result (*MemGetInfo)(size_t *, size_t *);            // _v2
  Result (*MemAlloc)(DevicePtr *, size_t);             // _v2
  Result (*MemFree)(DevicePtr);                        // _v2
  Result (*MemcpyHtoD)(DevicePtr, const void *, size_t); // _v2
  Result (*MemcpyDtoH)(void *, DevicePtr, size_t);     // _v2
  Result (*MemcpyDtoDAsync)(DevicePtr, DevicePtr, size_t, Stream); // _v2
  Result (*MemsetD8Async)(DevicePtr, unsigned char, size_t, Stream);
  Result (*ModuleLoadDataEx)(Module *, const void *, unsigned, int *, void **);
  Result (*ModuleUnload)(Module);
  Result (*ModuleGetFunction)(Function *, Module, const char *);
  Result (*FuncGetAttribute)(int *, int, Function);
  Result (*FuncSetAttribute)(Function, int, int);
  Result (*LaunchKernel)(Function, unsigned, unsigned, unsigned, unsigned,
                         unsigned, unsigned, unsigned, Stream, void **,
                         void **);
  Result (*StreamCreate)(Stream *, unsigned);
  Result (*StreamDestroy)(Stream);                     // _v2
  Result (*StreamQuery)(Stream);
  Result (*StreamSynchronize)(Stream);
  Result (*EventCreate)(Event *, unsigned);
  Result (*EventDestroy)(Event);                       // _v2
  Result (*EventRecord)(Event, Stream);
  Result (*EventElapsedTime)(float *, Event, Event);   // _v2 (CUDA 12.8+), else v1
};

} // namespace cu

/// A failed driver call. Keeps the result code so callers can tell a kernel
/// that crashed the context (sticky errors such as ILLEGAL_ADDRESS) from a
/// recoverable failure.
class CudaError : public llvm::ErrorInfo<CudaError> {
public:
  static char ID;
  CudaError(cu::Result Code, std::string Call, std::string Name,
            std::string Text, std::string Detail = "")
      : Code(Code), Call(std::move(Call)), Name(std::move(Name)),
        Text(std::move(Text)), Detail(std::move(Detail)) {}
  void log(llvm::raw_ostream &OS) const override;
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }
  cu::Result code() const { return Code; }
  llvm::StringRef call() const { return Call; }
  /// "CUDA_ERROR_ILLEGAL_ADDRESS".
  llvm::StringRef name() const { return Name; }
  /// The driver's description: "an illegal memory access was encountered".
  llvm::StringRef text() const { return Text; }

private:
  cu::Result Code;
  std::string Call, Name, Text, Detail;
};

/// True for errors after which the context is unusable (the kernel faulted);
/// every later call in the process fails with the same code.
bool isStickyCudaError(cu::Result Code);

/// The loaded driver. One per process; get() loads it on first use.
class CudaDriver {
public:
  /// Opens the driver ($ASTRA_LIBCUDA, else libcuda.so.1), resolves every
  /// entry point and calls cuInit. Errors:
  ///   "no NVIDIA driver (libcuda.so.1 could not be loaded: <dlerror>)"
  ///   "no CUDA GPU found (cuInit: CUDA_ERROR_NO_DEVICE ...)"
  /// The outcome is remembered: later calls return the same answer.
  static llvm::Expected<CudaDriver &> get();

  const cu::Api &api() const { return Fns; }
  /// cuDriverGetVersion, e.g. 13000 for CUDA 13.0.
  int version() const { return Version; }
  /// "13.0".
  std::string versionString() const;
  /// Path the library was loaded from.
  llvm::StringRef libraryPath() const { return LibPath; }

  /// Success for CUDA_SUCCESS, else a CudaError naming \p Call:
  ///   "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
  llvm::Error check(cu::Result R, llvm::StringRef Call,
                    llvm::StringRef Detail = "") const;
  std::string errorName(cu::Result R) const;
  std::string errorString(cu::Result R) const;

private:
  CudaDriver() = default;
  cu::Api Fns{};
  int Version = 0;
  std::string LibPath;
};

/// The library name clang-astra opens: $ASTRA_LIBCUDA or "libcuda.so.1".
std::string cudaDriverLibraryName();

} // namespace astra

#endif
