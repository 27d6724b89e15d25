//===- FakeCuda.cpp - A CUDA driver and CUPTI without a GPU, for tests ----===//
//
// The capture library (lib/CaptureInject) runs inside a CUDA program; CI has
// no GPU. This library stands in for libcuda.so.1 and libcupti so that the
// real capture library can be tested end to end on any machine: "device
// memory" is host memory, a launch calls CUPTI's subscriber around a host
// function, and cuInit loads CUDA_INJECTION64_PATH and calls its
// InitializeInjection, as the driver does. Only what the capture library
// and FakeProgram.cpp call is implemented, with the driver's signatures from
// cuda.h and cupti.h.
//
//===----------------------------------------------------------------------===//
#include <cuda.h>
#include <cupti.h>

#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

struct FakeFunction {
  std::string Name;
  std::vector<size_t> Sizes, Offsets;
};

std::mutex Mutex;
std::map<uintptr_t, size_t> Allocations; ///< Base -> size.
CUpti_CallbackFunc Subscriber = nullptr;
void *SubscriberData = nullptr;
bool Enabled[1024];

bool findAllocation(uintptr_t P, uintptr_t &Base, size_t &Size) {
  std::lock_guard<std::mutex> Lock(Mutex);
  auto It = Allocations.upper_bound(P);
  if (It == Allocations.begin())
    return false;
  --It;
  if (P >= It->first + It->second)
    return false;
  Base = It->first;
  Size = It->second;
  return true;
}

template <typename P>
CUresult launch(CUpti_CallbackId Id, const char *Api, CUfunction F,
                const P &Params) {
  CUresult Result = CUDA_SUCCESS;
  uint64_t Correlation = 0;
  CUpti_CallbackData D{};
  D.functionName = Api;
  D.functionParams = &Params;
  D.symbolName = reinterpret_cast<FakeFunction *>(F)->Name.c_str();
  D.correlationData = &Correlation;
  if (Subscriber && Enabled[Id]) {
    D.callbackSite = CUPTI_API_ENTER;
    Subscriber(SubscriberData, CUPTI_CB_DOMAIN_DRIVER_API, Id, &D);
    D.callbackSite = CUPTI_API_EXIT;
    D.functionReturnValue = &Result;
    Subscriber(SubscriberData, CUPTI_CB_DOMAIN_DRIVER_API, Id, &D);
  }
  return Result;
}

} // namespace

extern "C" {

/// For FakeProgram: a kernel with parameters of these sizes, laid out as
/// the device does (each aligned to its size).
CUfunction fakeKernel(const char *Name, const size_t *Sizes, size_t N) {
  auto *F = new FakeFunction;
  F->Name = Name;
  size_t Off = 0;
  for (size_t I = 0; I < N; ++I) {
    Off = (Off + Sizes[I] - 1) / Sizes[I] * Sizes[I];
    F->Sizes.push_back(Sizes[I]);
    F->Offsets.push_back(Off);
    Off += Sizes[I];
  }
  return reinterpret_cast<CUfunction>(F);
}

CUresult CUDAAPI cuInit(unsigned int) {
  static bool Done = false;
  if (Done)
    return CUDA_SUCCESS;
  Done = true;
  if (const char *Path = std::getenv("CUDA_INJECTION64_PATH")) {
    void *H = dlopen(Path, RTLD_NOW | RTLD_LOCAL);
    if (!H)
      return CUDA_ERROR_UNKNOWN;
    auto Init = reinterpret_cast<int (*)()>(dlsym(H, "InitializeInjection"));
    if (!Init || Init() != 1)
      return CUDA_ERROR_UNKNOWN;
  }
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAlloc(CUdeviceptr *P, size_t Size) {
  void *M = std::malloc(Size);
  if (!M)
    return CUDA_ERROR_OUT_OF_MEMORY;
  std::memset(M, 0, Size);
  std::lock_guard<std::mutex> Lock(Mutex);
  Allocations[uintptr_t(M)] = Size;
  *P = CUdeviceptr(uintptr_t(M));
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemFree(CUdeviceptr P) {
  std::lock_guard<std::mutex> Lock(Mutex);
  Allocations.erase(uintptr_t(P));
  std::free(reinterpret_cast<void *>(uintptr_t(P)));
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr D, const void *S, size_t N) {
  std::memcpy(reinterpret_cast<void *>(uintptr_t(D)), S, N);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyDtoHAsync(void *D, CUdeviceptr S, size_t N,
                                   CUstream) {
  uintptr_t Base;
  size_t Size;
  if (!findAllocation(uintptr_t(S), Base, Size) ||
      uintptr_t(S) + N > Base + Size)
    return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(D, reinterpret_cast<const void *>(uintptr_t(S)), N);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuPointerGetAttributes(unsigned int N,
                                        CUpointer_attribute *Attrs,
                                        void **Data, CUdeviceptr P) {
  uintptr_t Base = 0;
  size_t Size = 0;
  bool Found = findAllocation(uintptr_t(P), Base, Size);
  for (unsigned I = 0; I < N; ++I) {
    switch (Attrs[I]) {
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
      *static_cast<unsigned *>(Data[I]) = Found ? CU_MEMORYTYPE_DEVICE : 0;
      break;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
      *static_cast<bool *>(Data[I]) = false;
      break;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
      *static_cast<CUdeviceptr *>(Data[I]) = Base;
      break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
      *static_cast<size_t *>(Data[I]) = Size;
      break;
    default:
      break;
    }
  }
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemGetAddressRange(CUdeviceptr *B, size_t *S,
                                      CUdeviceptr P) {
  uintptr_t Base;
  size_t Size;
  if (!findAllocation(uintptr_t(P), Base, Size))
    return CUDA_ERROR_NOT_FOUND;
  *B = Base;
  *S = Size;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncGetParamInfo(CUfunction F, size_t I, size_t *Offset,
                                    size_t *Size) {
  auto *FF = reinterpret_cast<FakeFunction *>(F);
  if (I >= FF->Sizes.size())
    return CUDA_ERROR_INVALID_VALUE;
  *Offset = FF->Offsets[I];
  if (Size)
    *Size = FF->Sizes[I];
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncGetName(const char **Name, CUfunction F) {
  *Name = reinterpret_cast<FakeFunction *>(F)->Name.c_str();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamCreate(CUstream *S, unsigned int) {
  static uintptr_t Next = 0x1000;
  *S = reinterpret_cast<CUstream>(Next += 0x10);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream) { return CUDA_SUCCESS; }

CUresult CUDAAPI cuStreamIsCapturing(CUstream,
                                     CUstreamCaptureStatus *Status) {
  *Status = CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamGetId(CUstream S, unsigned long long *Id) {
  *Id = uintptr_t(S) == 0 ? 0 : uintptr_t(S) / 0x10;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetDevice(CUdevice *D) {
  *D = 0;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetName(char *Name, int Len, CUdevice) {
  std::strncpy(Name, "Fake GPU (test/capture/FakeCuda.cpp)", size_t(Len));
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetErrorName(CUresult R, const char **S) {
  *S = R == CUDA_SUCCESS ? "CUDA_SUCCESS" : "CUDA_ERROR_FAKE";
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchKernel(CUfunction F, unsigned GX, unsigned GY,
                                unsigned GZ, unsigned BX, unsigned BY,
                                unsigned BZ, unsigned Shmem, CUstream S,
                                void **Params, void **Extra) {
  cuLaunchKernel_params P{F, GX, GY, GZ, BX, BY, BZ, Shmem, S, Params, Extra};
  return launch(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel", F,
                P);
}

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *C, CUfunction F,
                                  void **Params, void **Extra) {
  cuLaunchKernelEx_params P{C, F, Params, Extra};
  return launch(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, "cuLaunchKernelEx",
                F, P);
}

// CUPTI.
CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle *H,
                                    CUpti_CallbackFunc F, void *D) {
  if (Subscriber)
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  Subscriber = F;
  SubscriberData = D;
  *H = reinterpret_cast<CUpti_SubscriberHandle>(&Subscriber);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t Enable,
                                         CUpti_SubscriberHandle,
                                         CUpti_CallbackDomain Domain,
                                         CUpti_CallbackId Id) {
  if (Domain == CUPTI_CB_DOMAIN_DRIVER_API && Id < 1024)
    Enabled[Id] = Enable != 0;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult R, const char **S) {
  *S = R == CUPTI_SUCCESS ? "CUPTI_SUCCESS" : "CUPTI_ERROR_FAKE";
  return CUPTI_SUCCESS;
}

} // extern "C"
