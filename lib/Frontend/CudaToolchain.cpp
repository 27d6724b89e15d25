//===- CudaToolchain.cpp --------------------------------------------------===//
#include "astra/Frontend/CudaToolchain.h"
#include "astra/Config.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
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

/// The compat header travels like the resource headers: beside the binary
/// as <prefix>/share/clang-astra/include (install, tarball and the build
/// tree's bin/), else where the build put it.
static std::string findCompatHeader(const char *Argv0) {
  SmallVector<std::string, 2> Candidates;
  if (Argv0) {
    std::string Exe =
        sys::fs::getMainExecutable(Argv0, (void *)&findCompatHeader);
    if (!Exe.empty()) {
      SmallString<256> P(sys::path::parent_path(Exe));
      sys::path::append(P, "..", "share", "clang-astra");
      sys::path::append(P, "include", NvccCompatHeaderName);
      Candidates.push_back(std::string(P));
    }
  }
  Candidates.push_back(std::string(ASTRA_BUILD_COMPAT_DIR) + "/" +
                       NvccCompatHeaderName);
  for (const std::string &C : Candidates) {
    SmallString<256> Real;
    if (!sys::fs::real_path(C, Real))
      return std::string(Real);
  }
  return "";
}

/// "13.0.88" -> {13, 0, 88}; false unless it has at least major.minor.
static bool parseVersion(StringRef V, CudaVersion &Out) {
  SmallVector<StringRef, 4> Parts;
  V.trim().split(Parts, '.');
  if (Parts.size() < 2 || Parts[0].getAsInteger(10, Out.Major) ||
      Parts[1].getAsInteger(10, Out.Minor))
    return false;
  Out.Build = 0;
  if (Parts.size() > 2)
    (void)Parts[2].getAsInteger(10, Out.Build);
  return true;
}

CudaVersion detectCudaVersion(StringRef CudaPath) {
  CudaVersion V;
  // A toolkit from NVIDIA's installers: version.json names each component.
  if (auto Buf = MemoryBuffer::getFile(CudaPath + "/version.json")) {
    if (auto J = json::parse((*Buf)->getBuffer()))
      if (const json::Object *O = J->getAsObject())
        for (const char *Key : {"cuda_nvcc", "cuda"})
          if (const json::Object *C = O->getObject(Key))
            if (auto S = C->getString("version"))
              if (parseVersion(*S, V)) {
                V.Origin = "version.json";
                return V;
              }
  }
  // A toolkit assembled from NVIDIA's wheels: nvidia_cuda_nvcc-X.Y.Z.dist-info.
  std::error_code EC;
  for (sys::fs::directory_iterator It(CudaPath + "/dist-info", EC), End;
       !EC && It != End; It.increment(EC)) {
    StringRef Name = sys::path::filename(It->path());
    if (Name.consume_front("nvidia_cuda_nvcc-") &&
        Name.consume_back(".dist-info") && parseVersion(Name, V)) {
      V.Origin = "dist-info";
      return V;
    }
  }
  // Every toolkit: CUDA_VERSION in cuda.h (no build number).
  if (auto Buf = MemoryBuffer::getFile(CudaPath + "/include/cuda.h")) {
    StringRef Text = (*Buf)->getBuffer();
    size_t At = Text.find("#define CUDA_VERSION ");
    unsigned N = 0;
    if (At != StringRef::npos &&
        !Text.substr(At + 21).take_while(isDigit).getAsInteger(10, N) && N) {
      V.Major = N / 1000;
      V.Minor = N % 1000 / 10;
      V.Origin = "cuda.h";
    }
  }
  return V;
}

void CudaToolchain::setNvccCompat(bool On, std::string Header,
                                  CudaVersion V) {
  NvccCompat = On;
  CompatHeader = std::move(Header);
  Version = std::move(V);
}

bool hasNvccCompat(const std::vector<std::string> &DeviceCommand) {
  for (size_t I = 0; I + 1 < DeviceCommand.size(); ++I)
    if (DeviceCommand[I] == "-include" &&
        sys::path::filename(DeviceCommand[I + 1]) == NvccCompatHeaderName)
      return true;
  return false;
}

std::vector<std::string> CudaToolchain::nvccCompatFlags() const {
  std::vector<std::string> F;
  if (!NvccCompat)
    return F;
  // CUDA 13 moved CCCL (cuda/std, thrust, cub, cuda/pipeline) here; nvcc's
  // nvcc.profile adds it as a system folder.
  std::string Cccl = CudaPath + "/include/cccl";
  if (sys::fs::is_directory(Cccl)) {
    F.push_back("-isystem");
    F.push_back(Cccl);
  }
  // nvcc's own macros: libraries choose their code paths by them (CUTLASS's
  // SM90 builders, MSCCL++'s device API). CCCL and nv/target pick the same
  // code for clang with __NVCC__ set (checked: equal PTX for thrust, cub and
  // cooperative groups).
  F.push_back("-D__NVCC__=1");
  if (Version.Major) {
    F.push_back("-D__CUDACC_VER_MAJOR__=" + std::to_string(Version.Major));
    F.push_back("-D__CUDACC_VER_MINOR__=" + std::to_string(Version.Minor));
    F.push_back("-D__CUDACC_VER_BUILD__=" + std::to_string(Version.Build));
  }
  if (!CompatHeader.empty()) {
    F.push_back("-include");
    F.push_back(CompatHeader);
  }
  return F;
}

Expected<CudaToolchain> CudaToolchain::detect(const CudaOptions &Opts,
                                              const char *Argv0) {
  std::string Arch = Opts.GpuArch;
  const char *Origin = "--cuda-gpu-arch";
  if (Arch.empty() && isValidGpuArch(Opts.DetectedGpuArch)) {
    Arch = Opts.DetectedGpuArch;
    Origin = "the GPU";
  }
  if (Arch.empty()) {
    Arch = "sm_90";
    Origin = "the default";
  }
  CudaToolchain TC("", Arch, "", Opts.Verbose);
  TC.ArchExplicit = !Opts.GpuArch.empty();
  TC.ArchOrigin = Origin;
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

  if (Opts.NvccCompat) {
    std::string Header = findCompatHeader(Argv0);
    if (Header.empty())
      return createStringError(
          inconvertibleErrorCode(),
          "the nvcc compat header %s was not found beside the clang-astra "
          "binary (../share/clang-astra/include) nor at %s; reinstall "
          "clang-astra or pass --no-nvcc-compat",
          NvccCompatHeaderName, ASTRA_BUILD_COMPAT_DIR);
    TC.setNvccCompat(true, std::move(Header), detectCudaVersion(TC.CudaPath));
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
