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
};

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
  /// default. A build's own arch (nvcc's -arch, -gencode) replaces only the
  /// default: what the user typed wins over what the build says.
  bool gpuArchIsExplicit() const { return ArchExplicit; }
  void setGpuArchIsExplicit(bool E) { ArchExplicit = E; }
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
  bool Verbose = false;
  bool ArchExplicit = true;
};

/// True when \p Dir looks like a CUDA toolkit clang can use: it has
/// include/cuda.h and a libdevice bitcode file.
bool isCudaInstallation(llvm::StringRef Dir, std::string *WhyNot = nullptr);

/// Validates a GPU arch name such as sm_80, sm_90 or sm_90a.
bool isValidGpuArch(llvm::StringRef Arch);

} // namespace astra

#endif
