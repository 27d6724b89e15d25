//===- KernelSource.cpp - From a .cu file to a job's kernel image ---------===//
#include "astra/Engine/KernelSource.h"
#include "astra/Frontend/CudaParser.h"
#include "astra/Frontend/KernelModel.h"
#include "astra/Spec/SpecCheck.h"

#include "llvm/ADT/StringExtras.h"

#include <random>

using namespace llvm;

namespace astra {

Expected<KernelImage> prepareKernelImage(const CudaToolchain &TC,
                                         const KernelSourceRequest &R) {
  if (R.DeviceCommand.empty())
    return createStringError(inconvertibleErrorCode(),
                             "internal error: empty device command");
  std::string File = displayPath(R.DeviceCommand.back());
  ParseOptions PO;
  PO.Overlay = R.Overlay;
  PO.ShowWarnings = R.ShowWarnings;
  auto PF = parseCuda(R.DeviceCommand, PO);
  if (!PF)
    return PF.takeError();
  std::vector<KernelInfo> Kernels = collectKernels((*PF)->context());
  auto Target = findSpecTarget(Kernels, R.Kernel, File);
  if (!Target)
    return Target.takeError();
  if (R.Spec)
    if (Error E = checkSpecAgainstKernel(*R.Spec, *Target->Kernel))
      return E;
  if (R.Facts)
    *R.Facts = plainFacts(
        analyzeLaunches((*PF)->context(), Target->Kernel->Decl));
  KernelImage Img;
  Img.Source = File;
  Img.Entry = mangledName((*PF)->context(), Target->Function);

  CompileOptions CO = R.Compile;
  CO.Overlay = R.Overlay;
  auto Ptx = compileToPtx(TC, R.DeviceCommand, CO);
  if (!Ptx)
    return createStringError(inconvertibleErrorCode(),
                             File + ": device compile failed: " +
                                 toString(Ptx.takeError()));
  if (!is_contained(Ptx->Entries, Img.Entry))
    return createStringError(
        inconvertibleErrorCode(),
        "%s: kernel '%s' (%s) is not in the compiled PTX (entries: %s)",
        File.c_str(), R.Kernel.c_str(), Img.Entry.c_str(),
        Ptx->Entries.empty() ? "none" : join(Ptx->Entries, ", ").c_str());
  Img.Ptx = std::move(Ptx->Ptx);
  return Img;
}

Expected<std::string> chooseKernel(const SpecFile &Specs, StringRef Requested) {
  if (!Requested.empty()) {
    if (const KernelSpec *K = Specs.find(Requested))
      return K->Kernel;
    std::vector<std::string> Names;
    for (const KernelSpec &K : Specs.Kernels)
      Names.push_back("'" + K.Kernel + "'");
    return createStringError(inconvertibleErrorCode(),
                             "%s: no spec for kernel '%s' (the spec has %s); "
                             "`clang-astra init-spec` drafts one",
                             Specs.Path.c_str(), Requested.str().c_str(),
                             Names.empty() ? "no kernels"
                                           : join(Names, ", ").c_str());
  }
  if (Specs.Kernels.size() == 1)
    return Specs.Kernels.front().Kernel;
  std::vector<std::string> Names;
  for (const KernelSpec &K : Specs.Kernels)
    Names.push_back("'" + K.Kernel + "'");
  return createStringError(inconvertibleErrorCode(),
                           "%s describes %zu kernels (%s): choose one with "
                           "--kernel",
                           Specs.Path.c_str(), Specs.Kernels.size(),
                           join(Names, ", ").c_str());
}

std::vector<uint64_t> freshSeeds(unsigned N) {
  std::random_device RD;
  std::vector<uint64_t> Seeds;
  while (Seeds.size() < N) {
    uint64_t S = RD();
    if (!is_contained(Seeds, S))
      Seeds.push_back(S);
  }
  return Seeds;
}

} // namespace astra
