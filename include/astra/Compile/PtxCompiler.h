//===- PtxCompiler.h - CUDA device code to PTX, in process -----*- C++ -*-===//
//
// Every candidate must pass this gate: the device side of its translation
// unit compiled through Clang's CodeGen and LLVM's NVPTX backend, with
// libdevice linked for math. PTX is cached on disk under a hash of the
// source (with every file it includes), the flags, the arch and the tool
// version, so a rerun on unchanged code compiles nothing.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_COMPILE_PTXCOMPILER_H
#define ASTRA_COMPILE_PTXCOMPILER_H

#include "astra/Frontend/CudaParser.h"
#include "astra/Frontend/CudaToolchain.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace astra {

struct CompileOptions {
  /// In-memory file contents (a candidate) over the disk.
  FileOverlay Overlay;
  /// Read and write the on-disk PTX cache.
  bool UseCache = true;
  /// Cache directory; empty: $ASTRA_CACHE_DIR, else $XDG_CACHE_HOME/clang-astra,
  /// else ~/.cache/clang-astra.
  std::string CacheDir;
  /// Optimization level of the device compile.
  unsigned OptLevel = 3;
  /// Where Clang's diagnostics go (file:line:col); null drops them.
  llvm::raw_ostream *DiagOS = &llvm::errs();
};

struct PtxResult {
  std::string Ptx;
  /// The .entry names (mangled kernel names) in the PTX.
  std::vector<std::string> Entries;
  bool FromCache = false;
  /// Wall time of the compile in seconds (0 when from the cache).
  double Seconds = 0;
};

/// Compiles the file named last in \p DeviceCommand (as
/// CompileCommands::deviceCommand makes it) to PTX for \p TC's arch. A
/// compile error comes back as an Error whose message holds the first
/// diagnostic with file:line:col; all diagnostics also go to DiagOS.
llvm::Expected<PtxResult>
compileToPtx(const CudaToolchain &TC,
             const std::vector<std::string> &DeviceCommand,
             const CompileOptions &Opts = {});

/// Per-kernel resource use as ptxas reports it.
struct KernelResources {
  std::string Entry;
  unsigned Registers = 0;
  unsigned SpillStoreBytes = 0, SpillLoadBytes = 0;
  unsigned StackFrameBytes = 0;
  unsigned SharedBytes = 0; ///< Static shared memory.
  unsigned ConstantBytes = 0;
  unsigned Barriers = 0;
};

/// Runs `ptxas -v` from \p TC's CUDA on \p Ptx and parses its report.
/// Fails with a clear message when there is no ptxas.
llvm::Expected<std::vector<KernelResources>>
ptxasResources(const CudaToolchain &TC, llvm::StringRef Ptx);

/// Parses the text `ptxas -v` prints (exposed for unit tests).
std::vector<KernelResources> parsePtxasReport(llvm::StringRef Text);

} // namespace astra

#endif
