//===- Ptxas.cpp - Resource use per kernel from `ptxas -v` ----------------===//
//
// Registers, spills and shared memory decide occupancy; the planner and the
// profiler read them from ptxas's own report rather than guessing from PTX.
//
//===----------------------------------------------------------------------===//
#include "CudaTools.h"
#include "astra/Compile/PtxCompiler.h"
#include "astra/Support/FileIO.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

using namespace llvm;

namespace astra {

namespace {
struct FrameInfo {
  unsigned Stack = 0, SpillStores = 0, SpillLoads = 0;
};
} // namespace

/// The number before \p Unit in a comma-separated item such as
/// "1024 bytes smem" or "Used 30 registers"; false if \p Item is not one.
static bool numberBefore(StringRef Item, StringRef Unit, unsigned &N) {
  Item = Item.trim();
  if (!Item.consume_back(Unit))
    return false;
  Item = Item.rtrim();
  StringRef Num = Item.substr(Item.rfind(' ') + 1);
  return !Num.getAsInteger(10, N);
}

std::vector<KernelResources> parsePtxasReport(StringRef Text) {
  std::vector<KernelResources> Out;
  StringMap<FrameInfo> Frames;
  std::string PropsFor;
  SmallVector<StringRef, 0> Lines;
  Text.split(Lines, '\n');
  for (StringRef L : Lines) {
    L = L.trim();
    StringRef Rest = L;
    if (Rest.consume_front("ptxas info")) {
      Rest = Rest.ltrim().drop_while([](char C) { return C == ':'; }).ltrim();
      if (Rest.consume_front("Compiling entry function '")) {
        KernelResources K;
        K.Entry = Rest.take_until([](char C) { return C == '\''; }).str();
        Out.push_back(std::move(K));
        PropsFor.clear();
      } else if (Rest.consume_front("Function properties for ")) {
        PropsFor = Rest.trim().str();
      } else if (Rest.starts_with("Used ") && !Out.empty()) {
        // "Used 30 registers, used 1 barriers, 256 bytes cumulative stack
        // size, 1024 bytes smem, 360 bytes cmem[0], 8 bytes cmem[2]"
        KernelResources &K = Out.back();
        SmallVector<StringRef, 8> Items;
        Rest.split(Items, ',');
        for (StringRef Item : Items) {
          unsigned N;
          Item = Item.trim();
          if (numberBefore(Item, "registers", N))
            K.Registers = N;
          else if (numberBefore(Item, "barriers", N))
            K.Barriers = N;
          else if (numberBefore(Item, "bytes smem", N))
            K.SharedBytes = N;
          else if (Item.contains("bytes cmem[")) {
            // Every constant bank the kernel uses: [0] holds its parameters,
            // the others __constant__ data.
            if (!Item.take_until([](char C) { return C == ' '; })
                     .getAsInteger(10, N))
              K.ConstantBytes += N;
          }
        }
      }
      continue;
    }
    // "256 bytes stack frame, 664 bytes spill stores, 672 bytes spill loads"
    // follows "Function properties for NAME" (kernels and called functions).
    if (!PropsFor.empty() && L.contains("bytes stack frame")) {
      FrameInfo &F = Frames[PropsFor];
      SmallVector<StringRef, 4> Items;
      L.split(Items, ',');
      for (StringRef Item : Items) {
        unsigned N;
        if (numberBefore(Item, "bytes stack frame", N))
          F.Stack = N;
        else if (numberBefore(Item, "bytes spill stores", N))
          F.SpillStores = N;
        else if (numberBefore(Item, "bytes spill loads", N))
          F.SpillLoads = N;
      }
      PropsFor.clear();
    }
  }
  for (KernelResources &K : Out) {
    auto It = Frames.find(K.Entry);
    if (It == Frames.end())
      continue;
    K.StackFrameBytes = It->second.Stack;
    K.SpillStoreBytes = It->second.SpillStores;
    K.SpillLoadBytes = It->second.SpillLoads;
  }
  return Out;
}

std::string ptxTargetArch(StringRef Ptx, StringRef Fallback) {
  size_t Pos = Ptx.find("\n.target ");
  if (Pos == StringRef::npos)
    return Fallback.str();
  StringRef Arch = Ptx.substr(Pos + 9).take_until(
      [](char C) { return C == ',' || C == '\n' || C == ' ' || C == '\r'; });
  return isValidGpuArch(Arch) ? Arch.str() : Fallback.str();
}

Expected<std::vector<KernelResources>>
ptxasResources(const CudaToolchain &TC, StringRef Ptx) {
  std::string Ptxas = TC.ptxasPath();
  if (Ptxas.empty())
    return createStringError(
        inconvertibleErrorCode(),
        "ptxas not found (looked in %s/bin and on PATH): resource reports need "
        "the CUDA toolkit's ptxas; install it or pass --cuda-path=DIR",
        TC.cudaPath().str().c_str());
  TempFiles Tmp;
  auto In = Tmp.file("astra", "ptx");
  if (!In)
    return In.takeError();
  auto Cubin = Tmp.file("astra", "cubin");
  if (!Cubin)
    return Cubin.takeError();
  if (Error E = writeFileAtomically(*In, Ptx))
    return E;
  std::string Arch = ptxTargetArch(Ptx, TC.gpuArch());
  auto Run = runTool(Ptxas, {Ptxas, "-v", "-arch=" + Arch, *In, "-o", *Cubin});
  if (!Run)
    return Run.takeError();
  if (Run->ExitCode != 0)
    return createStringError(inconvertibleErrorCode(),
                             "ptxas -arch=%s rejected the PTX (exit code "
                             "%d):\n%s",
                             Arch.c_str(), Run->ExitCode,
                             firstLines(Run->Output).c_str());
  std::vector<KernelResources> Report = parsePtxasReport(Run->Output);
  // ptxas reports kernels in its own order; give them in the PTX's.
  std::vector<std::string> Order = parsePtxEntries(Ptx);
  auto Rank = [&](const KernelResources &K) {
    return std::find(Order.begin(), Order.end(), K.Entry) - Order.begin();
  };
  std::stable_sort(Report.begin(), Report.end(),
                   [&](const KernelResources &A, const KernelResources &B) {
                     return Rank(A) < Rank(B);
                   });
  return Report;
}

} // namespace astra
