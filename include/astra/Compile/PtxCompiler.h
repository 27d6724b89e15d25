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
  /// Optimization level of the device compile. It replaces any -O in the
  /// command: nvcc also optimizes device code at -O3 whatever the host -O is,
  /// and the gate must compile what the profiler times.
  unsigned OptLevel = 3;
  /// Where Clang's diagnostics go (file:line:col); null drops them.
  llvm::raw_ostream *DiagOS = &llvm::errs();
  /// Print warnings too; errors are always printed.
  bool ShowWarnings = false;
  /// Parse clang's CUDA runtime wrapper from a precompiled header kept in
  /// the cache directory (built on first use). Any PCH problem falls back to
  /// the plain compile, so this only ever changes the speed. Needs the cache
  /// directory; off when UseCache is off.
  bool UsePch = true;
};

struct PtxResult {
  std::string Ptx;
  /// The .entry names (mangled kernel names) in the PTX.
  std::vector<std::string> Entries;
  bool FromCache = false;
  /// Wall time of the compile in seconds (0 when from the cache).
  double Seconds = 0;
  /// The cache entry read or written; empty when the cache was off.
  std::string CacheEntry;
  /// The compile used the runtime-wrapper PCH.
  bool UsedPch = false;
  /// Things a --verbose user wants to know: a cache entry that could not be
  /// written or was corrupt, a PCH that was built or could not be used, the
  /// in-memory repairs of code nvcc accepts.
  std::vector<std::string> Notes;
  /// What every user should know: host code clang rejects that the device
  /// compile left out (CudaParser.h); kept with a cached entry.
  std::vector<std::string> Warnings;
};

/// Compiles the file named last in \p DeviceCommand (as
/// CompileCommands::deviceCommand makes it) to PTX for \p TC's arch. A
/// compile error comes back as an Error whose message holds the first
/// diagnostic with file:line:col; all diagnostics also go to DiagOS.
/// A compile that fails is tried once more through the device view
/// (parseCuda's repairs and host stubs); a candidate (\p Opts.Overlay) may
/// not skip host code that its original compiles.
llvm::Expected<PtxResult>
compileToPtx(const CudaToolchain &TC,
             const std::vector<std::string> &DeviceCommand,
             const CompileOptions &Opts = {});

/// A precompiled header of clang's CUDA runtime wrapper for parsing with
/// \p DeviceCommand (ParseOptions::RuntimePch): the compile gate's kind of
/// PCH, keyed by the parse's flags (the gate's adds -O3, which defines
/// __OPTIMIZE__), built in the cache directory on first use. Empty when
/// Opts.UseCache or Opts.UsePch is off, there is no cache directory, or it
/// cannot be built (a ".failed" file says why); a parse then reads the
/// headers, only slower. What happened goes to \p Notes.
std::string parsePch(const CudaToolchain &TC,
                     const std::vector<std::string> &DeviceCommand,
                     const CompileOptions &Opts,
                     std::vector<std::string> &Notes);

/// The cache directory \p Opts selects (see CompileOptions::CacheDir); empty
/// when none can be determined (no $HOME).
std::string ptxCacheDirectory(const CompileOptions &Opts);

/// The .entry names in \p Ptx, in order.
std::vector<std::string> parsePtxEntries(llvm::StringRef Ptx);

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

/// The arch of \p Ptx's `.target` line (sm_XX), or \p Fallback when it has
/// none. An nvcc build's own arch may have replaced the toolchain's default
/// (docs/compile-flags.md), so reports name the arch the PTX is for.
std::string ptxTargetArch(llvm::StringRef Ptx, llvm::StringRef Fallback);

/// Parses the text `ptxas -v` prints (exposed for unit tests).
std::vector<KernelResources> parsePtxasReport(llvm::StringRef Text);

/// Compiles the file named last in \p DeviceCommand with nvcc from \p TC's
/// CUDA for the command's arch (`-ptx`, or `-cubin` when \p Cubin), keeping
/// the command's -D, -U, -I, -iquote, -isystem, -include and -std flags (not
/// the nvcc compat flags: nvcc has its own) and adding \p NvccFlags, the
/// build's device flags (CompileCommands::nvccFlags), and returns the output. Users ship nvcc builds, so the profiler can time a
/// candidate as nvcc compiles it; the NVPTX compile stays the gate. nvcc
/// cannot read memory: overlay files are written under a temporary directory
/// at their absolute paths, searched before each include directory, so nvcc
/// sees what clang saw. Fails with a clear message when there is no nvcc or
/// nvcc rejects the file (its output is in the message).
llvm::Expected<std::string>
compileWithNvcc(const CudaToolchain &TC,
                const std::vector<std::string> &DeviceCommand,
                const FileOverlay &Overlay, bool Cubin,
                llvm::ArrayRef<std::string> NvccFlags = {});

} // namespace astra

#endif
