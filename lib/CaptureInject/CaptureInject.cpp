//===- CaptureInject.cpp - Records a program's kernel launches -----------===//
//
// The injection library of `clang-astra capture` (libastra-capture.so). The
// CUDA driver loads it in the user's program through CUDA_INJECTION64_PATH
// and calls InitializeInjection during cuInit. It subscribes to CUPTI's
// callbacks on the driver's launch entry points, which every launch passes
// through, also those of a statically linked cudart that reaches the driver
// through cuGetProcAddress (a preloaded cuLaunchKernel would miss those).
//
// For each launch of a selected kernel it records, at the API's entry (before
// the launch is queued): grid, block, dynamic shared memory, the stream, the
// bytes of every parameter (offsets and sizes from cuFuncGetParamInfo), and
// for each parameter that holds a device address the allocation it points
// into (cuPointerGetAttributes). Launches with the same configuration,
// scalars and buffer extents are one configuration with a count. The first
// launch of a configuration also copies the buffers' contents, within the
// --max-bytes budget, after the launch's stream has finished the work
// queued before it: what the kernel would read.
//
// Plain C++ (no LLVM), and neither libcuda nor libcupti is linked: the
// driver is already loaded when the library is, and libcupti is opened from
// the path clang-astra found (ASTRA_CAPTURE_CUPTI), so the library loads in
// any program. The folder's format is in astra/Capture/CaptureFormat.h and
// docs/capture.md.
//
//===----------------------------------------------------------------------===//
#include "astra/Capture/CaptureFormat.h"

#include <cuda.h>
#include <cupti.h>

#include <cxxabi.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

using namespace astra::capture;

namespace {

//===----------------------------------------------------------------------===//
// Driver and CUPTI entry points, resolved at run time
//===----------------------------------------------------------------------===//

/// The driver's versioned symbol of an API (cuda.h maps cuMemcpyDtoH to
/// cuMemcpyDtoH_v2): the macro is expanded before it is stringified.
#define ASTRA_STR2(X) #X
#define ASTRA_STR(X) ASTRA_STR2(X)

struct Driver {
  decltype(&::cuFuncGetName) FuncGetName = nullptr;
  decltype(&::cuKernelGetName) KernelGetName = nullptr;
  decltype(&::cuFuncGetParamInfo) FuncGetParamInfo = nullptr;
  decltype(&::cuKernelGetParamInfo) KernelGetParamInfo = nullptr;
  decltype(&::cuPointerGetAttributes) PointerGetAttributes = nullptr;
  decltype(&::cuMemGetAddressRange) MemGetAddressRange = nullptr;
  decltype(&::cuMemcpyDtoHAsync) MemcpyDtoHAsync = nullptr;
  decltype(&::cuStreamSynchronize) StreamSynchronize = nullptr;
  decltype(&::cuStreamIsCapturing) StreamIsCapturing = nullptr;
  decltype(&::cuStreamGetId) StreamGetId = nullptr;
  decltype(&::cuThreadExchangeStreamCaptureMode) ExchangeCaptureMode = nullptr;
  decltype(&::cuCtxGetDevice) CtxGetDevice = nullptr;
  decltype(&::cuDeviceGetName) DeviceGetName = nullptr;
  decltype(&::cuGetErrorName) GetErrorName = nullptr;

  /// Empty when every entry point the capture needs was found; otherwise
  /// what is missing.
  std::string load() {
    void *H = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!H)
      H = dlopen("libcuda.so.1", RTLD_NOW);
    if (!H)
      return "libcuda.so.1 is not loaded";
    std::string Missing;
    auto Get = [&](auto &Fn, const char *Name, bool Required) {
      Fn = reinterpret_cast<std::remove_reference_t<decltype(Fn)>>(
          dlsym(H, Name));
      if (!Fn && Required)
        Missing += std::string(Missing.empty() ? "" : ", ") + Name;
    };
    Get(FuncGetName, ASTRA_STR(cuFuncGetName), false);
    Get(KernelGetName, ASTRA_STR(cuKernelGetName), false);
    Get(FuncGetParamInfo, ASTRA_STR(cuFuncGetParamInfo), true);
    Get(KernelGetParamInfo, ASTRA_STR(cuKernelGetParamInfo), false);
    Get(PointerGetAttributes, ASTRA_STR(cuPointerGetAttributes), true);
    Get(MemGetAddressRange, ASTRA_STR(cuMemGetAddressRange), true);
    Get(MemcpyDtoHAsync, ASTRA_STR(cuMemcpyDtoHAsync), true);
    Get(StreamSynchronize, ASTRA_STR(cuStreamSynchronize), true);
    Get(StreamIsCapturing, ASTRA_STR(cuStreamIsCapturing), true);
    Get(StreamGetId, ASTRA_STR(cuStreamGetId), false);
    Get(ExchangeCaptureMode, ASTRA_STR(cuThreadExchangeStreamCaptureMode),
        false);
    Get(CtxGetDevice, ASTRA_STR(cuCtxGetDevice), false);
    Get(DeviceGetName, ASTRA_STR(cuDeviceGetName), false);
    Get(GetErrorName, ASTRA_STR(cuGetErrorName), false);
    if (!Missing.empty())
      return "the driver lacks " + Missing +
             " (cuFuncGetParamInfo needs a CUDA 12.4 or later driver)";
    return "";
  }

  std::string errorName(CUresult R) const {
    const char *S = nullptr;
    if (GetErrorName && GetErrorName(R, &S) == CUDA_SUCCESS && S)
      return S;
    return "CUresult " + std::to_string(int(R));
  }
};

struct Cupti {
  decltype(&::cuptiSubscribe) Subscribe = nullptr;
  decltype(&::cuptiEnableCallback) EnableCallback = nullptr;
  decltype(&::cuptiGetResultString) GetResultString = nullptr;

  std::string load(const char *Path) {
    std::vector<std::string> Tried;
    void *H = nullptr;
    if (Path && *Path) {
      H = dlopen(Path, RTLD_NOW | RTLD_LOCAL);
      Tried.push_back(Path);
    } else {
      for (const char *Name : {"libcupti.so", "libcupti.so.13", "libcupti.so.12"}) {
        H = dlopen(Name, RTLD_NOW | RTLD_LOCAL);
        Tried.push_back(Name);
        if (H)
          break;
      }
    }
    if (!H) {
      const char *Why = dlerror();
      std::string List;
      for (const std::string &T : Tried)
        List += (List.empty() ? "" : ", ") + T;
      return "libcupti could not be loaded (tried " + List + ")" +
             (Why ? std::string(": ") + Why : std::string());
    }
    Subscribe = reinterpret_cast<decltype(Subscribe)>(dlsym(H, "cuptiSubscribe"));
    EnableCallback =
        reinterpret_cast<decltype(EnableCallback)>(dlsym(H, "cuptiEnableCallback"));
    GetResultString = reinterpret_cast<decltype(GetResultString)>(
        dlsym(H, "cuptiGetResultString"));
    if (!Subscribe || !EnableCallback)
      return "libcupti lacks cuptiSubscribe or cuptiEnableCallback";
    return "";
  }

  std::string resultName(CUptiResult R) const {
    const char *S = nullptr;
    if (GetResultString && GetResultString(R, &S) == CUPTI_SUCCESS && S)
      return S;
    return "CUptiResult " + std::to_string(int(R));
  }
};

//===----------------------------------------------------------------------===//
// Files
//===----------------------------------------------------------------------===//

/// Writes \p Size bytes to \p Path atomically (a temporary file in the same
/// folder, then rename) with mode 0600. False on any failure.
bool writeFileAtomically(const std::string &Path, const void *Data,
                         size_t Size) {
  std::string Tmp = Path + ".tmp." + std::to_string(getpid());
  int Fd = open(Tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (Fd < 0)
    return false;
  fchmod(Fd, 0600);
  const char *P = static_cast<const char *>(Data);
  size_t Done = 0;
  while (Done < Size) {
    ssize_t N = write(Fd, P + Done, Size - Done);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0) {
      close(Fd);
      unlink(Tmp.c_str());
      return false;
    }
    Done += size_t(N);
  }
  if (close(Fd) != 0 || rename(Tmp.c_str(), Path.c_str()) != 0) {
    unlink(Tmp.c_str());
    return false;
  }
  return true;
}

std::string jsonString(const std::string &S) {
  std::string Out = "\"";
  for (unsigned char C : S) {
    if (C == '"' || C == '\\') {
      Out += '\\';
      Out += char(C);
    } else if (C < 0x20) {
      char Buf[8];
      std::snprintf(Buf, sizeof Buf, "\\u%04x", C);
      Out += Buf;
    } else {
      Out += char(C);
    }
  }
  return Out + "\"";
}

std::string hexBytes(const unsigned char *P, size_t N) {
  static const char Digits[] = "0123456789abcdef";
  std::string S;
  S.reserve(2 * N);
  for (size_t I = 0; I < N; ++I) {
    S += Digits[P[I] >> 4];
    S += Digits[P[I] & 15];
  }
  return S;
}

std::string hexAddress(uint64_t A) {
  char Buf[24];
  std::snprintf(Buf, sizeof Buf, "0x%" PRIx64, A);
  return Buf;
}

double monotonicSeconds() {
  timespec T;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &T);
  return double(T.tv_sec) + 1e-9 * double(T.tv_nsec);
}

//===----------------------------------------------------------------------===//
// What is recorded
//===----------------------------------------------------------------------===//

struct Allocation {
  uint64_t Base = 0, Size = 0, Offset = 0;
  const char *Memory = "device"; ///< device, managed, host
  /// Bytes from the pointer to the allocation's end.
  uint64_t extent() const { return Size - Offset; }
};

struct ArgRecord {
  std::vector<unsigned char> Bytes;
  bool IsPointer = false;
  Allocation Alloc;
  std::string Blob;           ///< Relative path; empty: no contents.
  uint64_t BlobHash = 0;
  std::string ContentsMissing; ///< Why there are no contents.
};

struct Config {
  uint64_t Launches = 0, FailedLaunches = 0, FirstLaunch = 0;
  const char *Api = "";
  unsigned Grid[3] = {1, 1, 1}, Block[3] = {1, 1, 1}, Shmem = 0;
  unsigned Cluster[3] = {0, 0, 0};
  bool Cooperative = false, GraphCapture = false;
  std::vector<uint64_t> Streams; ///< Distinct stream ids (at most 16).
  std::vector<ArgRecord> Args;
};

struct ParamLayout {
  size_t Offset = 0, Size = 0;
};

struct Kernel {
  std::string Name, Demangled;
  bool Selected = false;
  bool LayoutKnown = false;
  std::string LayoutError;
  std::vector<ParamLayout> Params;
  uint64_t Launches = 0, NotRecorded = 0, RuntimeLaunches = 0;
  std::unordered_map<std::string, size_t> ConfigIndex;
  /// A deque: a launch's exit callback holds a pointer to its configuration
  /// while other threads add configurations.
  std::deque<Config> Configs;
};

/// One launch as the callback sees it, whatever the entry point.
struct Launch {
  const char *Api = "";
  CUfunction F = nullptr;
  unsigned Grid[3] = {1, 1, 1}, Block[3] = {1, 1, 1}, Shmem = 0;
  unsigned Cluster[3] = {0, 0, 0};
  bool Cooperative = false;
  CUstream Stream = nullptr;
  bool PerThreadDefault = false; ///< A _ptsz entry point.
  void **KernelParams = nullptr;
  void **Extra = nullptr;
};

class Recorder {
public:
  /// Reads the settings and opens the driver and CUPTI; false (with
  /// Error set and written to the manifest) when the capture cannot run.
  bool start();
  /// Records \p L; returns its configuration (null: not recorded), which
  /// the launch's exit callback gets back through CUPTI's correlation data.
  Config *onLaunch(const Launch &L, const char *Symbol);
  void onLaunchExit(Config *C, CUresult R);
  void onRuntimeLaunch(const char *Symbol);
  void finish();
  /// Records why nothing can be captured, in the manifest.
  void fail(const std::string &Why);

  Cupti CuptiApi;
  std::mutex Mutex;

private:
  Kernel *kernelOf(CUfunction F, const char *Symbol);
  Kernel &kernelNamed(const std::string &Name);
  bool readLayout(Kernel &K, CUfunction F);
  bool resolvePointer(uint64_t Value, Allocation &A);
  void captureContents(Config &C, const Launch &L);
  bool reserveBudget(uint64_t Bytes);
  void releaseBudget(uint64_t Bytes);
  uint64_t streamId(CUstream S, bool PerThread);
  void noteDevice();
  void writeManifest(bool Final);
  std::string manifestJson(bool Final);

  Driver Drv;
  std::string Dir, ManifestPath, Error;
  std::vector<std::string> Selectors;
  uint64_t MaxBytes = 0, MaxLaunches = 0;
  uint64_t ContentsBytes = 0, ContentsSkipped = 0, Sequence = 0;
  std::vector<std::string> Program, Devices, Warnings;
  std::unordered_map<CUfunction, Kernel *> ByHandle;
  std::map<std::string, std::unique_ptr<Kernel>> ByName;
  /// The runtime's symbol names (stable pointers) to their kernels.
  std::unordered_map<const char *, Kernel *> BySymbol;
  std::unordered_map<CUstream, uint64_t> StreamIds;
  bool Dirty = false, Finished = false;
  double LastWrite = 0;
};

Recorder *TheRecorder = nullptr;
thread_local bool InCallback = false;

bool Recorder::start() {
  const char *D = getenv(EnvDir);
  if (!D || !*D)
    return false; // Not under `clang-astra capture`: do nothing at all.
  Dir = D;
  ManifestPath =
      Dir + "/" + ManifestPrefix + std::to_string(getpid()) + ".json";
  mkdir((Dir + "/" + BlobDir).c_str(), 0700);
  if (const char *K = getenv(EnvKernels)) {
    std::string S = K, Cur;
    for (char C : S + "\n") {
      if (C == '\n') {
        if (!Cur.empty())
          Selectors.push_back(Cur);
        Cur.clear();
      } else {
        Cur += C;
      }
    }
  }
  if (const char *B = getenv(EnvMaxBytes))
    MaxBytes = std::strtoull(B, nullptr, 10);
  if (const char *N = getenv(EnvMaxLaunches))
    MaxLaunches = std::strtoull(N, nullptr, 10);
  // The command line, for the report.
  if (FILE *F = std::fopen("/proc/self/cmdline", "rb")) {
    std::string Arg;
    int C;
    while ((C = std::fgetc(F)) != EOF) {
      if (C == 0) {
        Program.push_back(Arg);
        Arg.clear();
      } else {
        Arg += char(C);
      }
    }
    std::fclose(F);
  }
  Error = Drv.load();
  if (Error.empty())
    Error = CuptiApi.load(getenv(EnvCupti));
  writeManifest(false);
  return Error.empty();
}

uint64_t Recorder::streamId(CUstream S, bool PerThread) {
  if (!S && PerThread)
    S = CU_STREAM_PER_THREAD;
  auto It = StreamIds.find(S);
  if (It != StreamIds.end())
    return It->second;
  unsigned long long Id = 0;
  if (!Drv.StreamGetId || Drv.StreamGetId(S, &Id) != CUDA_SUCCESS)
    Id = uint64_t(reinterpret_cast<uintptr_t>(S));
  StreamIds[S] = Id;
  return Id;
}

bool Recorder::readLayout(Kernel &K, CUfunction F) {
  K.LayoutKnown = true;
  for (size_t I = 0;; ++I) {
    size_t Off = 0, Size = 0;
    CUresult R = Drv.FuncGetParamInfo(F, I, &Off, &Size);
    if (R != CUDA_SUCCESS && I == 0 && Drv.KernelGetParamInfo) {
      // A CUkernel handle passed where a CUfunction goes (cuLaunchKernel
      // takes both).
      R = Drv.KernelGetParamInfo(reinterpret_cast<CUkernel>(F), I, &Off,
                                 &Size);
      if (R == CUDA_SUCCESS) {
        K.Params.push_back({Off, Size});
        for (size_t J = 1;; ++J) {
          if (Drv.KernelGetParamInfo(reinterpret_cast<CUkernel>(F), J, &Off,
                                     &Size) != CUDA_SUCCESS)
            return true;
          K.Params.push_back({Off, Size});
        }
      }
    }
    if (R == CUDA_ERROR_INVALID_VALUE)
      return true; // Past the last parameter (or none at all).
    if (R != CUDA_SUCCESS) {
      K.LayoutError = "cuFuncGetParamInfo failed: " + Drv.errorName(R);
      K.Params.clear();
      return false;
    }
    K.Params.push_back({Off, Size});
  }
}

Kernel &Recorder::kernelNamed(const std::string &N) {
  std::unique_ptr<Kernel> &Slot = ByName[N];
  if (!Slot) {
    Slot = std::make_unique<Kernel>();
    Slot->Name = N;
    int Status = 0;
    char *Dm = abi::__cxa_demangle(N.c_str(), nullptr, nullptr, &Status);
    Slot->Demangled = Status == 0 && Dm ? Dm : N;
    std::free(Dm);
    std::string Plain = kernelNameOf(Slot->Demangled);
    Slot->Selected = Selectors.empty();
    for (const std::string &S : Selectors)
      Slot->Selected |= kernelSelected(S, N, Plain);
  }
  return *Slot;
}

Kernel *Recorder::kernelOf(CUfunction F, const char *Symbol) {
  auto It = ByHandle.find(F);
  if (It != ByHandle.end())
    return It->second;
  const char *Name = Symbol;
  if ((!Name || !*Name) && Drv.FuncGetName &&
      Drv.FuncGetName(&Name, F) != CUDA_SUCCESS)
    Name = nullptr;
  if ((!Name || !*Name) && Drv.KernelGetName &&
      Drv.KernelGetName(&Name, reinterpret_cast<CUkernel>(F)) != CUDA_SUCCESS)
    Name = nullptr;
  Kernel *K = &kernelNamed(Name && *Name ? Name : "<unnamed kernel>");
  if (K->Selected && !K->LayoutKnown)
    readLayout(*K, F);
  ByHandle[F] = K;
  return K;
}

bool Recorder::resolvePointer(uint64_t Value, Allocation &A) {
  if (Value == 0)
    return false;
  CUpointer_attribute Attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                 CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                 CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                 CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  // Eight zeroed bytes per answer, whatever width the driver writes.
  uint64_t Type = 0, Managed = 0, Start = 0, Size = 0;
  void *Data[] = {&Type, &Managed, &Start, &Size};
  if (Drv.PointerGetAttributes(4, Attrs, Data, CUdeviceptr(Value)) !=
      CUDA_SUCCESS)
    return false;
  unsigned MemType = unsigned(Type & 0xffffffffu);
  if (MemType == 0)
    return false; // Not memory CUDA knows: a scalar that looks like one.
  if (Size == 0 || Start == 0) {
    CUdeviceptr B = 0;
    size_t S = 0;
    if (Drv.MemGetAddressRange(&B, &S, CUdeviceptr(Value)) != CUDA_SUCCESS)
      return false;
    Start = B;
    Size = S;
  }
  if (Value < Start || Value >= Start + Size)
    return false;
  A.Base = Start;
  A.Size = Size;
  A.Offset = Value - Start;
  A.Memory = (Managed & 0xff) ? "managed"
             : MemType == CU_MEMORYTYPE_HOST ? "host"
                                             : "device";
  return true;
}

bool Recorder::reserveBudget(uint64_t Bytes) {
  // One counter for every process of the program, under an exclusive lock.
  std::string Path = Dir + "/" + BudgetFile;
  int Fd = open(Path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (Fd < 0)
    return false;
  bool Ok = false;
  if (flock(Fd, LOCK_EX) == 0) {
    uint64_t Used = 0;
    if (pread(Fd, &Used, sizeof Used, 0) != ssize_t(sizeof Used))
      Used = 0;
    if (Used + Bytes <= MaxBytes && Used + Bytes >= Used) {
      Used += Bytes;
      Ok = pwrite(Fd, &Used, sizeof Used, 0) == ssize_t(sizeof Used);
    }
    flock(Fd, LOCK_UN);
  }
  close(Fd);
  return Ok;
}

void Recorder::releaseBudget(uint64_t Bytes) {
  std::string Path = Dir + "/" + BudgetFile;
  int Fd = open(Path.c_str(), O_RDWR | O_CLOEXEC);
  if (Fd < 0)
    return;
  if (flock(Fd, LOCK_EX) == 0) {
    uint64_t Used = 0;
    if (pread(Fd, &Used, sizeof Used, 0) == ssize_t(sizeof Used)) {
      Used = Used >= Bytes ? Used - Bytes : 0;
      (void)!pwrite(Fd, &Used, sizeof Used, 0);
    }
    flock(Fd, LOCK_UN);
  }
  close(Fd);
}

void Recorder::captureContents(Config &C, const Launch &L) {
  std::vector<ArgRecord *> Pointers;
  for (ArgRecord &A : C.Args)
    if (A.IsPointer)
      Pointers.push_back(&A);
  if (Pointers.empty())
    return;
  CUstream S = L.Stream;
  if (!S && L.PerThreadDefault)
    S = CU_STREAM_PER_THREAD;
  CUstreamCaptureStatus Status = CU_STREAM_CAPTURE_STATUS_NONE;
  if (Drv.StreamIsCapturing(S, &Status) == CUDA_SUCCESS &&
      Status != CU_STREAM_CAPTURE_STATUS_NONE) {
    // The launch is recorded into a CUDA graph: it runs later, on contents
    // that do not exist yet, and a synchronization now would break the
    // program's capture.
    C.GraphCapture = true;
    for (ArgRecord *A : Pointers)
      A->ContentsMissing = "the launch was being captured into a CUDA graph";
    return;
  }
  if (MaxBytes == 0) {
    for (ArgRecord *A : Pointers)
      A->ContentsMissing = "contents not requested (--max-bytes 0)";
    return;
  }
  // Our copies are not part of any graph capture the thread may run.
  CUstreamCaptureMode Mode = CU_STREAM_CAPTURE_MODE_RELAXED;
  if (Drv.ExchangeCaptureMode)
    Drv.ExchangeCaptureMode(&Mode);
  bool Synced = false;
  std::map<uint64_t, std::pair<std::string, uint64_t>> SameBuffer;
  for (ArgRecord *A : Pointers) {
    uint64_t Ptr = A->Alloc.Base + A->Alloc.Offset, N = A->Alloc.extent();
    auto Same = SameBuffer.find(Ptr);
    if (Same != SameBuffer.end()) {
      A->Blob = Same->second.first;
      A->BlobHash = Same->second.second;
      continue;
    }
    if (!reserveBudget(N)) {
      A->ContentsMissing = "over the --max-bytes budget of " +
                           std::to_string(MaxBytes) + " bytes";
      ++ContentsSkipped;
      continue;
    }
    std::vector<unsigned char> Host;
    try {
      Host.resize(N);
    } catch (...) {
      releaseBudget(N);
      A->ContentsMissing = "no host memory for a copy of " +
                           std::to_string(N) + " bytes";
      ++ContentsSkipped;
      continue;
    }
    CUresult R = CUDA_SUCCESS;
    if (!Synced) {
      // The work queued before the launch on its stream (and what the
      // program ordered before it with events) writes what it reads.
      R = Drv.StreamSynchronize(S);
      Synced = R == CUDA_SUCCESS;
    }
    if (R == CUDA_SUCCESS) {
      if (std::strcmp(A->Alloc.Memory, "host") == 0) {
        std::memcpy(Host.data(), reinterpret_cast<const void *>(Ptr), N);
      } else {
        R = Drv.MemcpyDtoHAsync(Host.data(), CUdeviceptr(Ptr), N, S);
        if (R == CUDA_SUCCESS)
          R = Drv.StreamSynchronize(S);
      }
    }
    if (R != CUDA_SUCCESS) {
      releaseBudget(N);
      A->ContentsMissing = "copying the buffer failed: " + Drv.errorName(R);
      continue;
    }
    uint64_t H = contentHash(Host.data(), N);
    std::string Rel = blobPath(H), Path = Dir + "/" + Rel;
    struct stat St;
    if (stat(Path.c_str(), &St) == 0 && uint64_t(St.st_size) == N) {
      releaseBudget(N); // Already there (another launch, another process).
    } else if (!writeFileAtomically(Path, Host.data(), N)) {
      releaseBudget(N);
      A->ContentsMissing = "writing " + Path + " failed: " + strerror(errno);
      continue;
    } else {
      ContentsBytes += N;
    }
    A->Blob = Rel;
    A->BlobHash = H;
    SameBuffer[Ptr] = {Rel, H};
  }
  if (Drv.ExchangeCaptureMode)
    Drv.ExchangeCaptureMode(&Mode);
}

void Recorder::noteDevice() {
  if (!Devices.empty() || !Drv.CtxGetDevice || !Drv.DeviceGetName)
    return;
  CUdevice Dev;
  char Name[256] = {0};
  if (Drv.CtxGetDevice(&Dev) == CUDA_SUCCESS &&
      Drv.DeviceGetName(Name, sizeof Name - 1, Dev) == CUDA_SUCCESS)
    Devices.push_back(Name);
}

Config *Recorder::onLaunch(const Launch &L, const char *Symbol) {
  std::lock_guard<std::mutex> Lock(Mutex);
  if (Finished)
    return nullptr;
  Kernel *K = kernelOf(L.F, Symbol);
  if (!K->Selected)
    return nullptr;
  Config *Cfg = nullptr;
  ++K->Launches;
  uint64_t Recorded = K->Launches - K->NotRecorded;
  if (MaxLaunches && Recorded > MaxLaunches) {
    ++K->NotRecorded;
    Dirty = true;
  } else {
    // The parameters' bytes, from the array of pointers or the packed
    // buffer of `extra`.
    const unsigned char *Packed = nullptr;
    size_t PackedSize = 0;
    for (void **E = L.Extra; E && *E != CU_LAUNCH_PARAM_END; E += 2) {
      if (E[0] == CU_LAUNCH_PARAM_BUFFER_POINTER)
        Packed = static_cast<const unsigned char *>(E[1]);
      else if (E[0] == CU_LAUNCH_PARAM_BUFFER_SIZE && E[1])
        PackedSize = *static_cast<size_t *>(E[1]);
    }
    Config C;
    C.Api = L.Api;
    std::memcpy(C.Grid, L.Grid, sizeof C.Grid);
    std::memcpy(C.Block, L.Block, sizeof C.Block);
    std::memcpy(C.Cluster, L.Cluster, sizeof C.Cluster);
    C.Shmem = L.Shmem;
    C.Cooperative = L.Cooperative;
    std::string Key;
    auto AddKey = [&](const void *P, size_t N) {
      Key.append(static_cast<const char *>(P), N);
    };
    AddKey(C.Grid, sizeof C.Grid);
    AddKey(C.Block, sizeof C.Block);
    AddKey(&C.Shmem, sizeof C.Shmem);
    AddKey(C.Cluster, sizeof C.Cluster);
    AddKey(&C.Cooperative, 1);
    for (size_t I = 0; I < K->Params.size(); ++I) {
      const ParamLayout &P = K->Params[I];
      const unsigned char *Src = nullptr;
      if (L.KernelParams)
        Src = static_cast<const unsigned char *>(L.KernelParams[I]);
      else if (Packed && P.Offset + P.Size <= PackedSize)
        Src = Packed + P.Offset;
      ArgRecord A;
      if (Src)
        A.Bytes.assign(Src, Src + P.Size);
      if (Src && P.Size == 8) {
        uint64_t V;
        std::memcpy(&V, Src, 8);
        A.IsPointer = resolvePointer(V, A.Alloc);
      }
      // A buffer's identity is its extent, not its address (a program
      // that alternates between two buffers launches one configuration).
      if (A.IsPointer) {
        uint64_t E = A.Alloc.extent();
        Key += 'P';
        AddKey(&E, sizeof E);
      } else {
        Key += 'S';
        Key.append(A.Bytes.begin(), A.Bytes.end());
      }
      C.Args.push_back(std::move(A));
    }
    uint64_t Stream = streamId(L.Stream, L.PerThreadDefault);
    auto Found = K->ConfigIndex.find(Key);
    if (Found != K->ConfigIndex.end()) {
      Cfg = &K->Configs[Found->second];
      Dirty = true;
    } else {
      noteDevice();
      C.FirstLaunch = ++Sequence;
      captureContents(C, L);
      K->ConfigIndex[Key] = K->Configs.size();
      K->Configs.push_back(std::move(C));
      Cfg = &K->Configs.back();
      Dirty = true;
      LastWrite = 0; // A new configuration is written at once.
    }
    ++Cfg->Launches;
    bool Known = false;
    for (uint64_t X : Cfg->Streams)
      Known |= X == Stream;
    if (!Known && Cfg->Streams.size() < 16)
      Cfg->Streams.push_back(Stream);
  }
  double Now = monotonicSeconds();
  if (Dirty && Now - LastWrite >= 1.0) {
    writeManifest(false);
    LastWrite = Now;
  }
  return Cfg;
}

void Recorder::onLaunchExit(Config *C, CUresult R) {
  if (R == CUDA_SUCCESS || !C)
    return;
  std::lock_guard<std::mutex> Lock(Mutex);
  ++C->FailedLaunches;
  Dirty = true;
}

void Recorder::onRuntimeLaunch(const char *Symbol) {
  if (!Symbol || !*Symbol)
    return;
  std::lock_guard<std::mutex> Lock(Mutex);
  if (Finished)
    return;
  Kernel *&K = BySymbol[Symbol];
  if (!K)
    K = &kernelNamed(Symbol);
  ++K->RuntimeLaunches;
}

std::string Recorder::manifestJson(bool Final) {
  std::string J;
  J += "{\n  \"format\": " + jsonString(FormatName) + ",\n";
  J += "  \"version\": " + std::to_string(FormatVersion) + ",\n";
  J += "  \"pid\": " + std::to_string(getpid()) + ",\n";
  J += "  \"program\": [";
  for (size_t I = 0; I < Program.size(); ++I)
    J += (I ? ", " : "") + jsonString(Program[I]);
  J += "],\n";
  J += std::string("  \"state\": \"") + (Final ? "exited" : "running") +
       "\",\n";
  if (!Error.empty())
    J += "  \"error\": " + jsonString(Error) + ",\n";
  J += "  \"devices\": [";
  for (size_t I = 0; I < Devices.size(); ++I)
    J += (I ? ", " : "") + jsonString(Devices[I]);
  J += "],\n  \"selection\": [";
  for (size_t I = 0; I < Selectors.size(); ++I)
    J += (I ? ", " : "") + jsonString(Selectors[I]);
  J += "],\n";
  J += "  \"max_bytes\": " + std::to_string(MaxBytes) + ",\n";
  J += "  \"max_launches\": " + std::to_string(MaxLaunches) + ",\n";
  J += "  \"contents_bytes\": " + std::to_string(ContentsBytes) + ",\n";
  J += "  \"contents_skipped\": " + std::to_string(ContentsSkipped) + ",\n";
  J += "  \"kernels\": [";
  bool FirstKernel = true;
  for (auto &[Name, KP] : ByName) {
    const Kernel &K = *KP;
    if (!K.Selected || (K.Launches == 0 && K.RuntimeLaunches == 0))
      continue;
    J += FirstKernel ? "\n" : ",\n";
    FirstKernel = false;
    J += "    {\"name\": " + jsonString(K.Name) +
         ", \"demangled\": " + jsonString(K.Demangled) + ",\n";
    J += "     \"launches\": " + std::to_string(K.Launches) +
         ", \"launches_not_recorded\": " + std::to_string(K.NotRecorded);
    // More launches through the runtime than the driver's callbacks saw:
    // configurations may be missing from the capture.
    if (K.RuntimeLaunches > K.Launches)
      J += ", \"runtime_launches\": " + std::to_string(K.RuntimeLaunches);
    J += ",\n";
    if (!K.LayoutError.empty())
      J += "     \"error\": " + jsonString(K.LayoutError) + ",\n";
    J += "     \"params\": [";
    for (size_t I = 0; I < K.Params.size(); ++I)
      J += std::string(I ? ", " : "") + "{\"offset\": " +
           std::to_string(K.Params[I].Offset) +
           ", \"size\": " + std::to_string(K.Params[I].Size) + "}";
    J += "],\n     \"configs\": [";
    for (size_t CI = 0; CI < K.Configs.size(); ++CI) {
      const Config &C = K.Configs[CI];
      auto Dims = [](const unsigned (&D)[3]) {
        return "[" + std::to_string(D[0]) + ", " + std::to_string(D[1]) +
               ", " + std::to_string(D[2]) + "]";
      };
      J += CI ? ",\n" : "\n";
      J += "       {\"launches\": " + std::to_string(C.Launches);
      if (C.FailedLaunches)
        J += ", \"failed_launches\": " + std::to_string(C.FailedLaunches);
      J += ", \"first_launch\": " + std::to_string(C.FirstLaunch);
      J += ", \"api\": " + jsonString(C.Api) + ",\n";
      J += "        \"grid\": " + Dims(C.Grid) + ", \"block\": " +
           Dims(C.Block) + ", \"shmem\": " + std::to_string(C.Shmem);
      if (C.Cluster[0])
        J += ", \"cluster\": " + Dims(C.Cluster);
      if (C.Cooperative)
        J += ", \"cooperative\": true";
      if (C.GraphCapture)
        J += ", \"graph_capture\": true";
      J += ",\n        \"streams\": [";
      for (size_t I = 0; I < C.Streams.size(); ++I)
        J += (I ? ", " : "") + std::to_string(C.Streams[I]);
      J += "],\n        \"args\": [";
      for (size_t AI = 0; AI < C.Args.size(); ++AI) {
        const ArgRecord &A = C.Args[AI];
        J += AI ? ",\n          " : "\n          ";
        J += "{\"bytes\": \"" + hexBytes(A.Bytes.data(), A.Bytes.size()) +
             "\"";
        if (A.IsPointer) {
          J += ", \"pointer\": {\"base\": \"" + hexAddress(A.Alloc.Base) +
               "\", \"size\": " + std::to_string(A.Alloc.Size) +
               ", \"offset\": " + std::to_string(A.Alloc.Offset) +
               ", \"memory\": \"" + A.Alloc.Memory + "\"}";
          if (!A.Blob.empty())
            J += ", \"contents\": {\"blob\": " + jsonString(A.Blob) +
                 ", \"size\": " + std::to_string(A.Alloc.extent()) +
                 ", \"hash\": \"" + hashHex(A.BlobHash) + "\"}";
          else
            J += ", \"contents\": null, \"contents_missing\": " +
                 jsonString(A.ContentsMissing);
        }
        J += "}";
      }
      J += "]}";
    }
    J += "]}";
  }
  J += FirstKernel ? "]\n}\n" : "\n  ]\n}\n";
  return J;
}

void Recorder::writeManifest(bool Final) {
  std::string J = manifestJson(Final);
  if (writeFileAtomically(ManifestPath, J.data(), J.size()))
    Dirty = false;
}

void Recorder::fail(const std::string &Why) {
  std::lock_guard<std::mutex> Lock(Mutex);
  Error = Why;
  writeManifest(false);
}

void Recorder::finish() {
  std::lock_guard<std::mutex> Lock(Mutex);
  if (Finished)
    return;
  Finished = true;
  writeManifest(true);
}

//===----------------------------------------------------------------------===//
// The callback
//===----------------------------------------------------------------------===//

template <typename P> void fill(Launch &L, const P *Params) {
  L.F = Params->f;
  L.Grid[0] = Params->gridDimX;
  L.Grid[1] = Params->gridDimY;
  L.Grid[2] = Params->gridDimZ;
  L.Block[0] = Params->blockDimX;
  L.Block[1] = Params->blockDimY;
  L.Block[2] = Params->blockDimZ;
  L.Shmem = Params->sharedMemBytes;
  L.Stream = Params->hStream;
  L.KernelParams = Params->kernelParams;
}

template <typename P> void fillEx(Launch &L, const P *Params) {
  const CUlaunchConfig *C = Params->config;
  L.F = Params->f;
  L.KernelParams = Params->kernelParams;
  L.Extra = Params->extra;
  if (!C)
    return;
  L.Grid[0] = C->gridDimX;
  L.Grid[1] = C->gridDimY;
  L.Grid[2] = C->gridDimZ;
  L.Block[0] = C->blockDimX;
  L.Block[1] = C->blockDimY;
  L.Block[2] = C->blockDimZ;
  L.Shmem = C->sharedMemBytes;
  L.Stream = C->hStream;
  for (unsigned I = 0; C->attrs && I < C->numAttrs; ++I) {
    const CUlaunchAttribute &A = C->attrs[I];
    if (A.id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE)
      L.Cooperative = A.value.cooperative != 0;
    else if (A.id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
      L.Cluster[0] = A.value.clusterDim.x;
      L.Cluster[1] = A.value.clusterDim.y;
      L.Cluster[2] = A.value.clusterDim.z;
    }
  }
}

void CUPTIAPI callback(void *, CUpti_CallbackDomain Domain,
                       CUpti_CallbackId Id, const void *Data) {
  Recorder *R = TheRecorder;
  if (!R || InCallback)
    return;
  const auto *CB = static_cast<const CUpti_CallbackData *>(Data);
  InCallback = true;
  if (Domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    if (CB->callbackSite == CUPTI_API_ENTER)
      R->onRuntimeLaunch(CB->symbolName);
    InCallback = false;
    return;
  }
  if (CB->callbackSite == CUPTI_API_EXIT) {
    if (CB->functionReturnValue && CB->correlationData)
      R->onLaunchExit(reinterpret_cast<Config *>(uintptr_t(*CB->correlationData)),
                      *static_cast<const CUresult *>(CB->functionReturnValue));
    InCallback = false;
    return;
  }
  Launch L;
  L.Api = CB->functionName ? CB->functionName : "";
  switch (Id) {
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    fill(L, static_cast<const cuLaunchKernel_params *>(CB->functionParams));
    L.Extra =
        static_cast<const cuLaunchKernel_params *>(CB->functionParams)->extra;
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
    fill(L, static_cast<const cuLaunchKernel_ptsz_params *>(CB->functionParams));
    L.Extra = static_cast<const cuLaunchKernel_ptsz_params *>(
                  CB->functionParams)->extra;
    L.PerThreadDefault = true;
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    fill(L, static_cast<const cuLaunchCooperativeKernel_params *>(
                CB->functionParams));
    L.Cooperative = true;
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
    fill(L, static_cast<const cuLaunchCooperativeKernel_ptsz_params *>(
                CB->functionParams));
    L.Cooperative = true;
    L.PerThreadDefault = true;
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    fillEx(L, static_cast<const cuLaunchKernelEx_params *>(CB->functionParams));
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
    fillEx(L, static_cast<const cuLaunchKernelEx_ptsz_params *>(
                  CB->functionParams));
    L.PerThreadDefault = true;
    break;
  default:
    InCallback = false;
    return;
  }
  Config *C = R->onLaunch(L, CB->symbolName);
  if (CB->correlationData)
    *CB->correlationData = uint64_t(reinterpret_cast<uintptr_t>(C));
  InCallback = false;
}

void atExit() {
  if (TheRecorder)
    TheRecorder->finish();
}

} // namespace

/// Called by the CUDA driver, once, when it initializes in a process whose
/// CUDA_INJECTION64_PATH names this library. Returns 1 (success) even when
/// the capture cannot run: the program must run as it would without us; the
/// manifest says why nothing was recorded.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  if (TheRecorder)
    return 1;
  // Never destroyed: other threads may still launch while the process exits.
  Recorder &R = *new Recorder;
  if (!R.start())
    return 1;
  CUpti_SubscriberHandle Sub;
  CUptiResult Res = R.CuptiApi.Subscribe(&Sub, callback, nullptr);
  if (Res != CUPTI_SUCCESS) {
    // Another CUPTI client (a profiler) may hold the only subscription.
    R.fail("cuptiSubscribe failed: " + R.CuptiApi.resultName(Res));
    return 1;
  }
  const CUpti_CallbackId Driver[] = {
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz};
  for (CUpti_CallbackId Id : Driver) {
    CUptiResult E = R.CuptiApi.EnableCallback(1, Sub, CUPTI_CB_DOMAIN_DRIVER_API, Id);
    if (E != CUPTI_SUCCESS) {
      R.fail("cuptiEnableCallback failed: " + R.CuptiApi.resultName(E));
      return 1;
    }
  }
  // The runtime's launches are only counted, to tell a launch that reached
  // the driver some way the callbacks above do not see.
  const CUpti_CallbackId Runtime[] = {
      CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
      CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
      CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
      CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
      CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
      CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000};
  for (CUpti_CallbackId Id : Runtime)
    R.CuptiApi.EnableCallback(1, Sub, CUPTI_CB_DOMAIN_RUNTIME_API, Id);
  TheRecorder = &R;
  std::atexit(atExit);
  return 1;
}
