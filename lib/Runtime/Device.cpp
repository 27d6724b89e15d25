//===- Device.cpp - Contexts, memory, modules, launches, events -----------===//
#include "astra/Runtime/Device.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <thread>

using namespace llvm;

namespace astra {

char TimeoutError::ID = 0;

void TimeoutError::log(raw_ostream &OS) const {
  OS << What << " timed out after " << formatv("{0:g}", Seconds) << " s";
}

std::string DeviceInfo::driverString() const {
  return formatv("{0}.{1}", DriverVersion / 1000, (DriverVersion % 1000) / 10)
      .str();
}

Expected<int> GpuContext::deviceCount() {
  auto D = CudaDriver::get();
  if (!D)
    return D.takeError();
  int N = 0;
  if (Error E = D->check(D->api().DeviceGetCount(&N), "cuDeviceGetCount"))
    return E;
  return N;
}

Expected<DeviceInfo> GpuContext::queryDevice(int Ordinal) {
  auto DOr = CudaDriver::get();
  if (!DOr)
    return DOr.takeError();
  CudaDriver &D = *DOr;
  const cu::Api &A = D.api();
  int Count = 0;
  if (Error E = D.check(A.DeviceGetCount(&Count), "cuDeviceGetCount"))
    return E;
  if (Ordinal < 0 || Ordinal >= Count)
    return createStringError(inconvertibleErrorCode(),
                             "GPU %d does not exist (this machine has %d)",
                             Ordinal, Count);
  cu::Device Dev;
  if (Error E = D.check(A.DeviceGet(&Dev, Ordinal), "cuDeviceGet"))
    return E;
  DeviceInfo I;
  I.Ordinal = Ordinal;
  I.DriverVersion = D.version();
  char Name[256] = {0};
  if (Error E = D.check(A.DeviceGetName(Name, sizeof(Name) - 1, Dev),
                        "cuDeviceGetName"))
    return E;
  I.Name = Name;
  size_t Mem = 0;
  if (Error E = D.check(A.DeviceTotalMem(&Mem, Dev), "cuDeviceTotalMem"))
    return E;
  I.MemoryBytes = Mem;
  struct {
    int Attr;
    int *Out;
    const char *What;
  } Attrs[] = {
      {cu::DEV_ATTR_MULTIPROCESSOR_COUNT, &I.SmCount, "SM count"},
      {cu::DEV_ATTR_COMPUTE_CAPABILITY_MAJOR, &I.CcMajor, "compute capability"},
      {cu::DEV_ATTR_COMPUTE_CAPABILITY_MINOR, &I.CcMinor, "compute capability"},
      {cu::DEV_ATTR_MAX_THREADS_PER_BLOCK, &I.MaxThreadsPerBlock,
       "max threads per block"},
      {cu::DEV_ATTR_MAX_THREADS_PER_MULTIPROCESSOR, &I.MaxThreadsPerSm,
       "max threads per SM"},
      {cu::DEV_ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
       &I.MaxSharedPerBlockOptin, "max shared memory per block"},
      {cu::DEV_ATTR_CLOCK_RATE, &I.ClockKHz, "clock rate"},
      {cu::DEV_ATTR_MEMORY_CLOCK_RATE, &I.MemClockKHz, "memory clock rate"},
      {cu::DEV_ATTR_GLOBAL_MEMORY_BUS_WIDTH, &I.BusWidthBits, "bus width"},
  };
  for (auto &At : Attrs)
    if (Error E = D.check(A.DeviceGetAttribute(At.Out, At.Attr, Dev),
                          "cuDeviceGetAttribute", At.What))
      return E;
  int L2 = 0;
  if (Error E = D.check(A.DeviceGetAttribute(&L2, cu::DEV_ATTR_L2_CACHE_SIZE,
                                             Dev),
                        "cuDeviceGetAttribute", "L2 cache size"))
    return E;
  I.L2Bytes = uint64_t(L2);
  return I;
}

Expected<std::unique_ptr<GpuContext>> GpuContext::open(int Ordinal) {
  auto Info = queryDevice(Ordinal);
  if (!Info)
    return Info.takeError();
  std::unique_ptr<GpuContext> C(new GpuContext());
  C->Drv = &*CudaDriver::get();
  C->Info = std::move(*Info);
  const cu::Api &A = C->api();
  if (Error E = C->check(A.DeviceGet(&C->Dev, Ordinal), "cuDeviceGet"))
    return E;
  if (Error E = C->check(A.DevicePrimaryCtxRetain(&C->Ctx, C->Dev),
                         "cuDevicePrimaryCtxRetain"))
    return E;
  if (Error E = C->check(A.CtxSetCurrent(C->Ctx), "cuCtxSetCurrent"))
    return E;
  // Non-blocking: nothing another library queues on the legacy default
  // stream can serialize with (or hide inside) our timed work.
  if (Error E = C->check(A.StreamCreate(&C->Stream, cu::STREAM_NON_BLOCKING),
                         "cuStreamCreate"))
    return E;
  return C;
}

GpuContext::~GpuContext() {
  if (!Drv || Abandoned)
    return;
  const cu::Api &A = api();
  if (Stream)
    A.StreamDestroy(Stream);
  if (Ctx)
    A.DevicePrimaryCtxRelease(Dev);
}

Error GpuContext::wait(double TimeoutSeconds, StringRef What) {
  using Clock = std::chrono::steady_clock;
  auto Start = Clock::now();
  auto Deadline = Start + std::chrono::duration<double>(TimeoutSeconds);
  // Spin briefly (most verification kernels take microseconds), then back
  // off to sleeping so a long kernel does not burn a CPU core.
  unsigned Polls = 0;
  std::chrono::microseconds Sleep(10);
  while (true) {
    cu::Result R = api().StreamQuery(Stream);
    if (R == cu::SUCCESS)
      return Error::success();
    if (R != cu::ERROR_NOT_READY)
      return check(R, "cuStreamQuery", ("waiting for " + What).str());
    if (Clock::now() > Deadline) {
      Abandoned = true;
      return make_error<TimeoutError>(TimeoutSeconds, What.str());
    }
    if (++Polls > 1000) {
      std::this_thread::sleep_for(Sleep);
      Sleep = std::min(Sleep * 2, std::chrono::microseconds(2000));
    }
  }
}

Expected<DeviceAlloc> DeviceAlloc::allocate(GpuContext &C, size_t Bytes,
                                            StringRef What) {
  DeviceAlloc D;
  D.Ctx = &C;
  D.Bytes = Bytes;
  D.What = What.str();
  if (Error E = C.check(C.api().MemAlloc(&D.Ptr, Bytes ? Bytes : 1),
                        "cuMemAlloc",
                        formatv("{0} bytes for {1}", Bytes, What).str()))
    return E;
  return D;
}

DeviceAlloc &DeviceAlloc::operator=(DeviceAlloc &&O) noexcept {
  if (this != &O) {
    if (Ctx && Ptr && !Ctx->abandoned())
      Ctx->api().MemFree(Ptr);
    Ctx = O.Ctx;
    Ptr = O.Ptr;
    Bytes = O.Bytes;
    What = std::move(O.What);
    O.Ctx = nullptr;
    O.Ptr = 0;
    O.Bytes = 0;
  }
  return *this;
}

DeviceAlloc::~DeviceAlloc() {
  if (Ctx && Ptr && !Ctx->abandoned())
    Ctx->api().MemFree(Ptr);
}

Error DeviceAlloc::upload(size_t Offset, const void *Src, size_t N) const {
  if (Offset + N > Bytes)
    return createStringError(inconvertibleErrorCode(),
                             "internal error: upload of %zu bytes at %zu "
                             "overruns the %zu-byte allocation for %s",
                             N, Offset, Bytes, What.c_str());
  if (N == 0)
    return Error::success();
  if (Error E = Ctx->check(Ctx->api().MemcpyHtoD(Ptr + Offset, Src, N),
                           "cuMemcpyHtoD", What))
    return E;
  // From pageable memory cuMemcpyHtoD may return before its DMA lands, and
  // kernels run on a non-blocking stream that does not wait for it: without
  // this, the tail of an upload (the poison of an output) can overwrite what
  // a kernel already wrote.
  return Ctx->check(Ctx->api().CtxSynchronize(), "cuCtxSynchronize",
                    "waiting for the upload of " + What);
}

Error DeviceAlloc::download(size_t Offset, void *Dst, size_t N) const {
  if (Offset + N > Bytes)
    return createStringError(inconvertibleErrorCode(),
                             "internal error: download of %zu bytes at %zu "
                             "overruns the %zu-byte allocation for %s",
                             N, Offset, Bytes, What.c_str());
  if (N == 0)
    return Error::success();
  return Ctx->check(Ctx->api().MemcpyDtoH(Dst, Ptr + Offset, N), "cuMemcpyDtoH",
                    What);
}

std::vector<std::string> ptxEntries(StringRef Ptx) {
  std::vector<std::string> Out;
  size_t Pos = 0;
  while ((Pos = Ptx.find(".entry", Pos)) != StringRef::npos) {
    Pos += 6;
    StringRef Rest = Ptx.drop_front(Pos).ltrim();
    size_t End = Rest.find_first_of("( \t\n");
    Out.push_back(Rest.take_front(End).str());
  }
  return Out;
}

Expected<std::unique_ptr<GpuModule>>
GpuModule::load(GpuContext &C, StringRef Ptx, StringRef Label) {
  std::unique_ptr<GpuModule> M(new GpuModule());
  M->Ctx = &C;
  M->Label = Label.str();
  M->Ptx = Ptx.str(); // The driver wants a NUL-terminated image.
  std::vector<char> InfoLog(16384, 0), ErrorLog(16384, 0);
  int Opts[] = {cu::JIT_INFO_LOG_BUFFER, cu::JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                cu::JIT_ERROR_LOG_BUFFER, cu::JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                cu::JIT_LOG_VERBOSE};
  void *Vals[] = {InfoLog.data(),
                  reinterpret_cast<void *>(uintptr_t(InfoLog.size() - 1)),
                  ErrorLog.data(),
                  reinterpret_cast<void *>(uintptr_t(ErrorLog.size() - 1)),
                  reinterpret_cast<void *>(uintptr_t(1))};
  cu::Result R = C.api().ModuleLoadDataEx(&M->Mod, M->Ptx.c_str(), 5, Opts,
                                          Vals);
  M->InfoLog = StringRef(InfoLog.data()).trim().str();
  if (R != cu::SUCCESS) {
    std::string Log = StringRef(ErrorLog.data()).trim().str();
    M->Mod = nullptr;
    bool Cubin = StringRef(M->Ptx).starts_with("\x7f" "ELF");
    return C.check(R, "cuModuleLoadDataEx",
                   (Label + ": the driver could not load the " +
                    (Cubin ? "cubin" : "PTX") +
                    (Log.empty() ? "" : "\n" + Log))
                       .str());
  }
  return M;
}

GpuModule::~GpuModule() {
  if (Mod && !Ctx->abandoned())
    Ctx->api().ModuleUnload(Mod);
}

Expected<cu::Function> GpuModule::function(StringRef Entry) const {
  cu::Function F = nullptr;
  cu::Result R = Ctx->api().ModuleGetFunction(&F, Mod, Entry.str().c_str());
  if (R == cu::ERROR_NOT_FOUND) {
    std::vector<std::string> Have = ptxEntries(Ptx);
    return createStringError(
        inconvertibleErrorCode(), "%s: no kernel '%s' in the PTX (entries: %s)",
        Label.c_str(), Entry.str().c_str(),
        Have.empty() ? "none" : join(Have, ", ").c_str());
  }
  if (Error E = Ctx->check(R, "cuModuleGetFunction", (Label + ": " + Entry).str()))
    return E;
  return F;
}

Expected<KernelAttributes> kernelAttributes(GpuContext &C, cu::Function F) {
  KernelAttributes K;
  struct {
    int Attr;
    int *Out;
  } Attrs[] = {{cu::FUNC_ATTR_NUM_REGS, &K.NumRegs},
               {cu::FUNC_ATTR_LOCAL_SIZE_BYTES, &K.LocalBytes},
               {cu::FUNC_ATTR_SHARED_SIZE_BYTES, &K.SharedBytes},
               {cu::FUNC_ATTR_CONST_SIZE_BYTES, &K.ConstBytes},
               {cu::FUNC_ATTR_MAX_THREADS_PER_BLOCK, &K.MaxThreadsPerBlock},
               {cu::FUNC_ATTR_PTX_VERSION, &K.PtxVersion},
               {cu::FUNC_ATTR_BINARY_VERSION, &K.BinaryVersion}};
  for (auto &A : Attrs)
    if (Error E = C.check(C.api().FuncGetAttribute(A.Out, A.Attr, F),
                          "cuFuncGetAttribute"))
      return E;
  return K;
}

Error launchKernel(GpuContext &C, cu::Function F, Dim3 Grid, Dim3 Block,
                   unsigned Shmem, void **Params, StringRef What) {
  if (Shmem > 48 * 1024)
    if (Error E = C.check(
            C.api().FuncSetAttribute(F, cu::FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                     int(Shmem)),
            "cuFuncSetAttribute",
            formatv("{0}: {1} bytes of dynamic shared memory (the device "
                    "allows {2})",
                    What, Shmem, C.info().MaxSharedPerBlockOptin)
                .str()))
      return E;
  return C.check(C.api().LaunchKernel(F, Grid.X, Grid.Y, Grid.Z, Block.X,
                                      Block.Y, Block.Z, Shmem, C.stream(),
                                      Params, nullptr),
                 "cuLaunchKernel",
                 formatv("{0} (grid {1}x{2}x{3}, block {4}x{5}x{6}, {7} bytes "
                         "dynamic shared memory)",
                         What, Grid.X, Grid.Y, Grid.Z, Block.X, Block.Y,
                         Block.Z, Shmem)
                     .str());
}

Expected<GpuEvent> GpuEvent::create(GpuContext &C) {
  GpuEvent E;
  E.Ctx = &C;
  if (Error Err = C.check(C.api().EventCreate(&E.Ev, cu::EVENT_DEFAULT),
                          "cuEventCreate"))
    return Err;
  return E;
}

GpuEvent &GpuEvent::operator=(GpuEvent &&O) noexcept {
  if (this != &O) {
    if (Ctx && Ev)
      Ctx->api().EventDestroy(Ev);
    Ctx = O.Ctx;
    Ev = O.Ev;
    O.Ctx = nullptr;
    O.Ev = nullptr;
  }
  return *this;
}

GpuEvent::~GpuEvent() {
  if (Ctx && Ev)
    Ctx->api().EventDestroy(Ev);
}

Error GpuEvent::record() const {
  return Ctx->check(Ctx->api().EventRecord(Ev, Ctx->stream()), "cuEventRecord");
}

Expected<float> GpuEvent::elapsedMs(const GpuEvent &Start, const GpuEvent &End) {
  float Ms = 0;
  if (Error E = Start.Ctx->check(
          Start.Ctx->api().EventElapsedTime(&Ms, Start.Ev, End.Ev),
          "cuEventElapsedTime"))
    return E;
  return Ms;
}

} // namespace astra
