//===- DevicesCommand.cpp - clang-astra devices ---------------------------===//
//
// Lists the GPUs the driver sees with what the profiler uses about them:
// SMs, L2 size (the flush buffer is twice that), memory, and the measured
// device-to-device copy bandwidth that is the memory roofline. Exit 1 with
// the reason when there is no driver or no GPU.
//
//===----------------------------------------------------------------------===//
#include "Common.h"
#include "Subcommands.h"
#include "astra/Engine/Profiler.h"
#include "astra/Runtime/Device.h"
#include "astra/Support/Json.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace astra {
namespace tool {

static cl::SubCommand DevicesCmd("devices",
                                 "List the GPUs with their copy bandwidth");
static cl::opt<bool>
    NoBandwidth("no-bandwidth",
                cl::desc("Do not measure (or read the cached) copy bandwidth"),
                cl::sub(DevicesCmd), cl::cat(AstraCategory));
static cl::opt<std::string>
    CacheDirOpt("cache-dir",
                cl::desc("Where the measured bandwidth is cached (default: "
                         "the clang-astra cache directory)"),
                cl::value_desc("dir"), cl::sub(DevicesCmd),
                cl::cat(AstraCategory));
enum class Format { Text, Json };
static cl::opt<Format> OutFormat(
    "format", cl::desc("Output format"),
    cl::values(clEnumValN(Format::Text, "text", "a list (default)"),
               clEnumValN(Format::Json, "json", "JSON")),
    cl::init(Format::Text), cl::sub(DevicesCmd), cl::cat(AstraCategory));

static int runDevices(const Session &S) {
  auto Count = GpuContext::deviceCount();
  if (!Count)
    return reportError(Count.takeError());
  JsonWriter W;
  W.objectBegin();
  W.key("devices");
  W.arrayBegin();
  int Status = 0;
  for (int I = 0; I < *Count; ++I) {
    auto Info = GpuContext::queryDevice(I);
    if (!Info) {
      Status = reportError(Info.takeError());
      continue;
    }
    double GBps = 0;
    bool Cached = false;
    std::string BwError;
    if (!NoBandwidth) {
      auto Ctx = GpuContext::open(I);
      if (!Ctx) {
        BwError = toString(Ctx.takeError());
      } else if (auto BW = deviceCopyBandwidth(**Ctx, CacheDirOpt, &Cached)) {
        GBps = *BW;
      } else {
        BwError = toString(BW.takeError());
      }
    }
    const DeviceInfo &D = *Info;
    if (OutFormat == Format::Json) {
      W.objectBegin();
      W.field("ordinal", I);
      W.field("name", D.Name);
      W.field("compute_capability",
              formatv("{0}.{1}", D.CcMajor, D.CcMinor).str());
      W.field("sm_count", D.SmCount);
      W.field("l2_bytes", (unsigned long long)D.L2Bytes);
      W.field("memory_bytes", (unsigned long long)D.MemoryBytes);
      W.field("driver", D.driverString());
      W.key("copy_bandwidth_gbps");
      if (GBps > 0)
        W.value(GBps);
      else
        W.null();
      W.field("bandwidth_cached", Cached);
      if (!BwError.empty())
        W.field("bandwidth_error", BwError);
      W.objectEnd();
      continue;
    }
    outs() << formatv("GPU {0}: {1}\n", I, D.Name);
    outs() << formatv("  compute capability {0}.{1}, {2} SMs, L2 {3:f1} MiB, "
                      "memory {4:f1} GiB, driver {5}\n",
                      D.CcMajor, D.CcMinor, D.SmCount,
                      double(D.L2Bytes) / (1 << 20),
                      double(D.MemoryBytes) / (1 << 30), D.driverString());
    if (GBps > 0)
      outs() << formatv("  copy bandwidth {0:f1} GB/s (device-to-device, "
                        "read + write{1})\n",
                        GBps, Cached ? ", cached" : ", measured now");
    else if (!BwError.empty())
      outs() << "  copy bandwidth unknown: " << BwError << "\n";
  }
  W.arrayEnd();
  W.objectEnd();
  if (OutFormat == Format::Json)
    outs() << W.str();
  return Status;
}

static SubcommandRegistration Reg(DevicesCmd, runDevices);

} // namespace tool
} // namespace astra
