//===- CudaToolchain.h - Where CUDA and clang's headers live ---*- C++ -*-===//
//
// Every subcommand parses or compiles CUDA the same way; this class holds the
// answers found once at start-up (CUDA installation, GPU arch, clang resource
// headers) so that no later component guesses them again.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_FRONTEND_CUDATOOLCHAIN_H
#define ASTRA_FRONTEND_CUDATOOLCHAIN_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <string>
#include <vector>

namespace astra {

/// What the user asked for on the command line; empty means "find it".
struct CudaOptions {
  std::string CudaPath;
  std::string GpuArch;
  std::string ResourceDir;
  bool Verbose = false;
  /// Parse and compile as nvcc would (docs/nvcc-compat.md): CCCL's include
  /// folder, nvcc's macros, the compat header and in-memory repairs.
  bool NvccCompat = true;
  /// The arch of the GPU on this machine (sm_XX), when there is one; it
  /// replaces the default sm_90 when --cuda-gpu-arch is not given.
  std::string DetectedGpuArch;
};

/// The toolkit's version, as nvcc's __CUDACC_VER_MAJOR__/MINOR/BUILD.
struct CudaVersion {
  unsigned Major = 0, Minor = 0, Build = 0;
  /// Where it was read ("version.json", "cuda.h", ...).
  std::string Origin;
};

/// Reads the version of the CUDA installation at \p CudaPath: version.json's
/// cuda_nvcc entry, else the nvcc wheel's dist-info folder name, else
/// CUDA_VERSION in include/cuda.h (build 0). Zero when none says.
CudaVersion detectCudaVersion(llvm::StringRef CudaPath);

class CudaToolchain {
public:
  /// Resolves CUDA from --cuda-path, $CUDA_PATH, $CUDA_HOME, /usr/local/cuda
  /// (first that is set wins; a set one that is not a CUDA installation is an
  /// error rather than a silent fall-through), and clang's resource headers
  /// from beside \p Argv0 or the LLVM install this tool was built against.
  static llvm::Expected<CudaToolchain> detect(const CudaOptions &Opts,
                                              const char *Argv0);

  /// A toolchain with explicit paths, for unit tests and callers that already
  /// know them. No checks are made.
  CudaToolchain(std::string CudaPath, std::string GpuArch,
                std::string ResourceDir, bool Verbose = false);

  llvm::StringRef cudaPath() const { return CudaPath; }
  llvm::StringRef gpuArch() const { return GpuArch; }
  /// Whether the user chose the arch (--cuda-gpu-arch) rather than taking the
  /// GPU's or the default. A build's arch list (nvcc's -arch, -gencode) only
  /// adds its `a`/`f` suffix to an arch that is not explicit.
  bool gpuArchIsExplicit() const { return ArchExplicit; }
  void setGpuArchIsExplicit(bool E) {
    ArchExplicit = E;
    ArchOrigin = E ? "--cuda-gpu-arch" : "the default";
  }
  /// Where the arch came from: "--cuda-gpu-arch", "the GPU", "the default".
  llvm::StringRef gpuArchOrigin() const { return ArchOrigin; }

  /// nvcc compatibility (see CudaOptions::NvccCompat). \p CompatHeader is
  /// the header force-included into CUDA sources.
  bool nvccCompat() const { return NvccCompat; }
  void setNvccCompat(bool On, std::string CompatHeader = "",
                     CudaVersion Version = {});
  llvm::StringRef compatHeader() const { return CompatHeader; }
  const CudaVersion &cudaVersion() const { return Version; }
  /// The flags that make clang see what nvcc sees: CCCL's include folder,
  /// nvcc's macros and the compat header. Empty without nvcc compatibility.
  /// They go before the build's own flags, as nvcc's implicit ones do.
  std::vector<std::string> nvccCompatFlags() const;
  llvm::StringRef resourceDir() const { return ResourceDir; }
  bool verbose() const { return Verbose; }
  /// Where the CUDA path came from ("--cuda-path", "$CUDA_HOME", ...).
  llvm::StringRef cudaPathOrigin() const { return CudaOrigin; }

  /// Compute capability as a number: sm_90 -> 90, sm_90a -> 90.
  unsigned smVersion() const;

  /// Path of ptxas in this CUDA installation, or empty when there is none
  /// (the GPU machine may have a driver but no toolkit).
  std::string ptxasPath() const;
  /// Path of nvcc in this CUDA installation, or empty.
  std::string nvccPath() const;

  /// Flags appended to a compile command so that clang parses the device side
  /// of a CUDA translation unit for this arch. Host-side launch sites are
  /// still in the AST: Sema keeps host function bodies in device compiles.
  std::vector<std::string> deviceFlags() const;

private:
  std::string CudaPath;
  std::string GpuArch;
  std::string ResourceDir;
  std::string CudaOrigin;
  std::string ArchOrigin = "--cuda-gpu-arch";
  std::string CompatHeader;
  CudaVersion Version;
  bool Verbose = false;
  bool ArchExplicit = true;
  bool NvccCompat = false;
};

/// The file name of the compat header (lib/Frontend/nvcc-compat/), which
/// marks a device command as one made with nvcc compatibility.
constexpr const char *NvccCompatHeaderName = "__astra_nvcc_compat.h";

/// Whether \p DeviceCommand was made with nvcc compatibility: it
/// force-includes the compat header. Parsing and compiling then also repair,
/// in memory, what nvcc accepts and clang rejects (CompatRepair.h).
bool hasNvccCompat(const std::vector<std::string> &DeviceCommand);

/// True when \p Dir looks like a CUDA toolkit clang can use: it has
/// include/cuda.h and a libdevice bitcode file.
bool isCudaInstallation(llvm::StringRef Dir, std::string *WhyNot = nullptr);

/// Validates a GPU arch name such as sm_80, sm_90 or sm_90a.
bool isValidGpuArch(llvm::StringRef Arch);

} // namespace astra

#endif
