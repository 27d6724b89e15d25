//===- CudaDriver.cpp - dlopen the CUDA driver ----------------------------===//
#include "astra/Runtime/CudaDriver.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>

using namespace llvm;

namespace astra {

char CudaError::ID = 0;

void CudaError::log(raw_ostream &OS) const {
  OS << Call << " failed: " << Name;
  if (!Text.empty())
    OS << " (" << Text << ")";
  if (!Detail.empty())
    OS << ": " << Detail;
}

bool isStickyCudaError(cu::Result Code) {
  switch (Code) {
  case cu::ERROR_ILLEGAL_ADDRESS:
  case cu::ERROR_LAUNCH_TIMEOUT:
  case cu::ERROR_ASSERT:
  case cu::ERROR_HARDWARE_STACK_ERROR:
  case cu::ERROR_ILLEGAL_INSTRUCTION:
  case cu::ERROR_MISALIGNED_ADDRESS:
  case cu::ERROR_INVALID_ADDRESS_SPACE:
  case cu::ERROR_INVALID_PC:
  case cu::ERROR_LAUNCH_FAILED:
  case 214: // CUDA_ERROR_ECC_UNCORRECTABLE
  case 220: // CUDA_ERROR_NVLINK_UNCORRECTABLE
    return true;
  default:
    return false;
  }
}

std::string cudaDriverLibraryName() {
  if (const char *P = std::getenv("ASTRA_LIBCUDA"); P && *P)
    return P;
  return "libcuda.so.1";
}

std::string CudaDriver::versionString() const {
  return formatv("{0}.{1}", Version / 1000, (Version % 1000) / 10).str();
}

std::string CudaDriver::errorName(cu::Result R) const {
  const char *S = nullptr;
  if (Fns.GetErrorName && Fns.GetErrorName(R, &S) == cu::SUCCESS && S)
    return S;
  return formatv("CUDA error {0}", R).str();
}

std::string CudaDriver::errorString(cu::Result R) const {
  const char *S = nullptr;
  if (Fns.GetErrorString && Fns.GetErrorString(R, &S) == cu::SUCCESS && S)
    return S;
  return "";
}

Error CudaDriver::check(cu::Result R, StringRef Call, StringRef Detail) const {
  if (R == cu::SUCCESS)
    return Error::success();
  return make_error<CudaError>(R, Call.str(), errorName(R), errorString(R),
                               Detail.str());
}

namespace {
/// Resolves one symbol into a typed function pointer.
template <typename Fn>
bool resolve(void *Lib, Fn &Slot, const char *Name, std::string &Missing) {
  void *P = dlsym(Lib, Name);
  if (!P) {
    if (!Missing.empty())
      Missing += ", ";
    Missing += Name;
    return false;
  }
  Slot = reinterpret_cast<Fn>(P);
  return true;
}

struct LoadOutcome {
  CudaDriver *Driver = nullptr;
  std::string Error;
};
} // namespace

Expected<CudaDriver &> CudaDriver::get() {
  static std::once_flag Once;
  static LoadOutcome Outcome;
  std::call_once(Once, [] {
    std::string Name = cudaDriverLibraryName();
    void *Lib = dlopen(Name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!Lib) {
      const char *Why = dlerror();
      Outcome.Error = formatv("no NVIDIA driver ({0} could not be loaded: {1})",
                              Name, Why ? Why : "unknown reason")
                          .str();
      return;
    }
    // Intentionally never deleted nor dlclose'd: the driver tears itself
    // down at exit, and unloading it under live contexts crashes.
    auto *D = new CudaDriver();
    D->LibPath = Name;
    cu::Api &A = D->Fns;
    std::string Missing;
    resolve(Lib, A.Init, "cuInit", Missing);
    resolve(Lib, A.DriverGetVersion, "cuDriverGetVersion", Missing);
    resolve(Lib, A.GetErrorName, "cuGetErrorName", Missing);
    resolve(Lib, A.GetErrorString, "cuGetErrorString", Missing);
    resolve(Lib, A.DeviceGetCount, "cuDeviceGetCount", Missing);
    resolve(Lib, A.DeviceGet, "cuDeviceGet", Missing);
    resolve(Lib, A.DeviceGetName, "cuDeviceGetName", Missing);
    resolve(Lib, A.DeviceGetAttribute, "cuDeviceGetAttribute", Missing);
    resolve(Lib, A.DeviceTotalMem, "cuDeviceTotalMem_v2", Missing);
    resolve(Lib, A.DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", Missing);
    resolve(Lib, A.DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2",
            Missing);
    resolve(Lib, A.CtxSetCurrent, "cuCtxSetCurrent", Missing);
    resolve(Lib, A.CtxSynchronize, "cuCtxSynchronize", Missing);
    resolve(Lib, A.MemGetInfo, "cuMemGetInfo_v2", Missing);
    resolve(Lib, A.MemAlloc, "cuMemAlloc_v2", Missing);
    resolve(Lib, A.MemFree, "cuMemFree_v2", Missing);
    resolve(Lib, A.MemcpyHtoD, "cuMemcpyHtoD_v2", Missing);
    resolve(Lib, A.MemcpyDtoH, "cuMemcpyDtoH_v2", Missing);
    resolve(Lib, A.MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", Missing);
    resolve(Lib, A.MemsetD8Async, "cuMemsetD8Async", Missing);
    resolve(Lib, A.ModuleLoadDataEx, "cuModuleLoadDataEx", Missing);
    resolve(Lib, A.ModuleUnload, "cuModuleUnload", Missing);
    resolve(Lib, A.ModuleGetFunction, "cuModuleGetFunction", Missing);
    resolve(Lib, A.FuncGetAttribute, "cuFuncGetAttribute", Missing);
    resolve(Lib, A.FuncSetAttribute, "cuFuncSetAttribute", Missing);
    resolve(Lib, A.LaunchKernel, "cuLaunchKernel", Missing);
    resolve(Lib, A.StreamCreate, "cuStreamCreate", Missing);
    resolve(Lib, A.StreamDestroy, "cuStreamDestroy_v2", Missing);
    resolve(Lib, A.StreamQuery, "cuStreamQuery", Missing);
    resolve(Lib, A.StreamSynchronize, "cuStreamSynchronize", Missing);
    resolve(Lib, A.EventCreate, "cuEventCreate", Missing);
    resolve(Lib, A.EventDestroy, "cuEventDestroy_v2", Missing);
    resolve(Lib, A.EventRecord, "cuEventRecord", Missing);
    // CUDA 12.8 added the _v2 elapsed-time entry; older drivers have only v1
    // with the same signature.
    std::string Unused;
    if (!resolve(Lib, A.EventElapsedTime, "cuEventElapsedTime_v2", Unused))
      resolve(Lib, A.EventElapsedTime, "cuEventElapsedTime", Missing);
    if (!Missing.empty()) {
      Outcome.Error = formatv("the NVIDIA driver at {0} is too old or not a "
                              "CUDA driver: it lacks {1}",
                              Name, Missing)
                          .str();
      return;
    }
    cu::Result R = A.Init(0);
    if (R != cu::SUCCESS) {
      std::string Why = D->errorName(R);
      std::string Text = D->errorString(R);
      if (!Text.empty())
        Why += ": " + Text;
      if (R == cu::ERROR_STUB_LIBRARY)
        Outcome.Error = formatv("no NVIDIA driver ({0} is the CUDA toolkit's "
                                "stub library, not a driver; cuInit: {1})",
                                Name, Why)
                            .str();
      else
        Outcome.Error = formatv("no CUDA GPU found (cuInit: {0})", Why).str();
      return;
    }
    int Count = 0;
    if (A.DeviceGetCount(&Count) != cu::SUCCESS || Count == 0) {
      Outcome.Error = "no CUDA GPU found (the NVIDIA driver reports no device)";
      return;
    }
    A.DriverGetVersion(&D->Version);
    Outcome.Driver = D;
  });
  if (!Outcome.Driver)
    return createStringError(inconvertibleErrorCode(), Outcome.Error);
  return *Outcome.Driver;
}

} // namespace astra
