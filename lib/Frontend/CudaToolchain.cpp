//===- CudaToolchain.cpp --------------------------------------------------===//
#include "astra/Frontend/CudaToolchain.h"
#include "astra/Config.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"

#include <cstdlib>

using namespace llvm;

namespace astra {

static bool exists(const Twine &P) { return sys::fs::exists(P); }

bool isCudaInstallation(StringRef Dir, std::string *WhyNot) {
  auto Fail = [&](std::string Msg) {
    if (WhyNot)
      *WhyNot = std::move(Msg);
    return false;
  };
  if (!sys::fs::is_directory(Dir))
    return Fail("'" + Dir.str() + "' is not a directory");
  if (!exists(Dir + "/include/cuda.h"))
    return Fail("'" + Dir.str() + "/include/cuda.h' does not exist");
  bool HasLibdevice = exists(Dir + "/nvvm/libdevice/libdevice.10.bc");
  if (!HasLibdevice) {
    std::error_code EC;
    for (sys::fs::directory_iterator It(Dir + "/nvvm/libdevice", EC), End;
         !EC && It != End; It.increment(EC))
      if (StringRef(It->path()).ends_with(".bc"))
        HasLibdevice = true;
  }
  if (!HasLibdevice)
    return Fail("no libdevice bitcode under '" + Dir.str() + "/nvvm/libdevice'");
  return true;
}

bool isValidGpuArch(StringRef Arch) {
  if (!Arch.consume_front("sm_"))
    return false;
  Arch.consume_back("a");
  Arch.consume_back("f");
  unsigned V;
  return !Arch.getAsInteger(10, V) && V >= 50 && V < 200;
}

CudaToolchain::CudaToolchain(std::string CudaPath, std::string GpuArch,
                             std::string ResourceDir, bool Verbose)
    : CudaPath(std::move(CudaPath)), GpuArch(std::move(GpuArch)),
      ResourceDir(std::move(ResourceDir)), CudaOrigin("explicit"),
      Verbose(Verbose) {}

/// The resource dir travels beside the binary in the portable tarball and in
/// `cmake --install` trees as <prefix>/lib/clang/<major>; a development build
/// uses the LLVM install it was built against.
static std::string findResourceDir(const char *Argv0) {
  SmallVector<std::string, 3> Candidates;
  if (Argv0) {
    std::string Exe =
        sys::fs::getMainExecutable(Argv0, (void *)&findResourceDir);
    if (!Exe.empty()) {
      SmallString<256> Dir(sys::path::parent_path(Exe));
      sys::path::append(Dir, "..", "lib", "clang", ASTRA_CLANG_MAJOR);
      Candidates.push_back(std::string(Dir));
    }
  }
  Candidates.push_back(ASTRA_BUILD_RESOURCE_DIR);
  for (const std::string &C : Candidates)
    if (exists(C + "/include/__clang_cuda_runtime_wrapper.h")) {
      SmallString<256> Real;
      if (!sys::fs::real_path(C, Real))
        return std::string(Real);
      return C;
    }
  return "";
}

Expected<CudaToolchain> CudaToolchain::detect(const CudaOptions &Opts,
                                              const char *Argv0) {
  CudaToolchain TC("", Opts.GpuArch.empty() ? "sm_90" : Opts.GpuArch, "",
                   Opts.Verbose);
  TC.ArchExplicit = !Opts.GpuArch.empty();
  if (!isValidGpuArch(TC.GpuArch))
    return createStringError(inconvertibleErrorCode(),
                             "invalid GPU arch '%s' (expected a name such as "
                             "sm_80, sm_90 or sm_90a)",
                             TC.GpuArch.c_str());

  struct Source {
    const char *Origin;
    std::string Value;
  };
  SmallVector<Source, 4> Sources;
  Sources.push_back({"--cuda-path", Opts.CudaPath});
  if (const char *E = std::getenv("CUDA_PATH"))
    Sources.push_back({"$CUDA_PATH", E});
  if (const char *E = std::getenv("CUDA_HOME"))
    Sources.push_back({"$CUDA_HOME", E});
  for (const Source &S : Sources) {
    if (S.Value.empty())
      continue;
    std::string Why;
    if (!isCudaInstallation(S.Value, &Why))
      return createStringError(inconvertibleErrorCode(),
                               "no CUDA installation at %s ('%s'): %s",
                               S.Origin, S.Value.c_str(), Why.c_str());
    TC.CudaPath = S.Value;
    TC.CudaOrigin = S.Origin;
    break;
  }
  if (TC.CudaPath.empty()) {
    std::string Why;
    if (!isCudaInstallation("/usr/local/cuda", &Why))
      return createStringError(
          inconvertibleErrorCode(),
          "no CUDA installation found: tried --cuda-path, $CUDA_PATH, "
          "$CUDA_HOME and /usr/local/cuda (%s); install the CUDA toolkit or "
          "pass --cuda-path=DIR",
          Why.c_str());
    TC.CudaPath = "/usr/local/cuda";
    TC.CudaOrigin = "/usr/local/cuda";
  }

  if (!Opts.ResourceDir.empty()) {
    if (!exists(Opts.ResourceDir + "/include/__clang_cuda_runtime_wrapper.h"))
      return createStringError(inconvertibleErrorCode(),
                               "'%s' is not a clang resource directory (no "
                               "include/__clang_cuda_runtime_wrapper.h)",
                               Opts.ResourceDir.c_str());
    TC.ResourceDir = Opts.ResourceDir;
  } else {
    TC.ResourceDir = findResourceDir(Argv0);
    if (TC.ResourceDir.empty())
      return createStringError(
          inconvertibleErrorCode(),
          "clang's resource headers were not found beside the clang-astra "
          "binary (../lib/clang/%s) nor at %s; pass --resource-dir=DIR",
          ASTRA_CLANG_MAJOR, ASTRA_BUILD_RESOURCE_DIR);
  }
  return TC;
}

unsigned CudaToolchain::smVersion() const {
  StringRef A(GpuArch);
  A.consume_front("sm_");
  A.consume_back("a");
  A.consume_back("f");
  unsigned V = 0;
  (void)A.getAsInteger(10, V);
  return V;
}

std::string CudaToolchain::ptxasPath() const {
  std::string P = CudaPath + "/bin/ptxas";
  if (sys::fs::can_execute(P))
    return P;
  if (auto Found = sys::findProgramByName("ptxas"))
    return *Found;
  return "";
}

std::string CudaToolchain::nvccPath() const {
  std::string P = CudaPath + "/bin/nvcc";
  if (sys::fs::can_execute(P))
    return P;
  return "";
}

std::vector<std::string> CudaToolchain::deviceFlags() const {
  std::vector<std::string> F = {
      "--cuda-device-only",
      "--cuda-gpu-arch=" + GpuArch,
      "--cuda-path=" + CudaPath,
      "-resource-dir=" + ResourceDir,
      // A CUDA newer than this clang knows parses fine (checked with 13.0);
      // the warning only says so and is noise unless asked for.
      Verbose ? "-Wunknown-cuda-version" : "-Wno-unknown-cuda-version",
  };
  return F;
}

} // namespace astra
