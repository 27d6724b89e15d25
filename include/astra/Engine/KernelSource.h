//===- KernelSource.h - From a .cu file to a job's kernel image -*- C++ -*-===//
//
// verify, profile and run all start the same way: parse the file, find the
// kernel the spec names (a rewrite may change its mangled name, e.g. when a
// parameter became const, so it is found by name, not by symbol), check the
// spec against it, compile the file through the NVPTX gate and take the
// kernel's .entry from the PTX.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_ENGINE_KERNELSOURCE_H
#define ASTRA_ENGINE_KERNELSOURCE_H

#include "astra/Compile/PtxCompiler.h"
#include "astra/Engine/Job.h"
#include "astra/Frontend/CudaToolchain.h"
#include "astra/Frontend/LaunchFacts.h"
#include "astra/Spec/Spec.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace astra {

struct KernelSourceRequest {
  /// The clang device command whose last element is the file
  /// (CompileCommands::deviceCommand).
  std::vector<std::string> DeviceCommand;
  /// In-memory contents over the disk (a candidate).
  FileOverlay Overlay;
  /// The kernel as `list` names it ("silu", "scale<float, 2>").
  std::string Kernel;
  /// When set, checked against the kernel's parameters (and completed:
  /// argument order, scalar types).
  KernelSpec *Spec = nullptr;
  CompileOptions Compile;
  bool ShowWarnings = false;
  /// When set, receives what the code shows of the kernel's launches
  /// (astra/Frontend/LaunchFacts.h), from the same parse.
  KernelLaunchFacts *Facts = nullptr;
};

/// Parses, checks and compiles; the image's Source is the display path.
llvm::Expected<KernelImage> prepareKernelImage(const CudaToolchain &TC,
                                               const KernelSourceRequest &R);

/// The kernel a command should work on: \p Requested when given, else the
/// only kernel of \p Specs. The error lists the choices.
llvm::Expected<std::string> chooseKernel(const SpecFile &Specs,
                                         llvm::StringRef Requested);

/// \p N fresh seeds (32-bit, so they are easy to type for --seed), from the
/// system's random device.
std::vector<uint64_t> freshSeeds(unsigned N);

} // namespace astra

#endif
