//===- Nvcc.cpp - The same file through nvcc, for timing builds -----------===//
//
// Users ship nvcc builds, so the profiler may time a candidate as nvcc
// compiles it. nvcc knows nothing of our in-memory candidates: overlay files
// are written under a temporary directory at their own absolute paths, and
// every include directory is searched there first, so nvcc sees the same
// sources clang did.
//
//===----------------------------------------------------------------------===//
#include "CudaTools.h"
#include "astra/Compile/PtxCompiler.h"
#include "astra/Support/FileIO.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace llvm;

namespace astra {

/// nvcc splits option values at commas (-DPAIR=a,b is two macros).
static std::string escapeCommas(StringRef V) {
  std::string S;
  for (char C : V) {
    if (C == ',')
      S += '\\';
    S += C;
  }
  return S;
}

/// nvcc takes -std=c++03/11/14/17/20 only; clang's GNU and draft spellings
/// map to the nearest. Empty: none nvcc knows (the flag is then left out and
/// nvcc uses its default).
static std::string nvccStd(StringRef Std) {
  Std.consume_front("gnu++");
  Std.consume_front("c++");
  if (Std == "2a")
    Std = "20";
  if (Std == "1z")
    Std = "17";
  if (Std == "03" || Std == "11" || Std == "14" || Std == "17" || Std == "20")
    return ("c++" + Std).str();
  return "";
}

/// The mirror of absolute path \p P under \p Root.
static std::string under(StringRef Root, StringRef P) {
  SmallString<256> S(Root);
  sys::path::append(S, sys::path::relative_path(P));
  return std::string(S);
}

/// Whether \p A (with \p Next after it) is one of the flags that make clang
/// see what nvcc sees (CudaToolchain::nvccCompatFlags): nvcc has them of its
/// own, and the compat header would clash with its declarations.
static bool isCompatFlag(const CudaToolchain &TC, StringRef A, StringRef Next) {
  if (A.starts_with("-D__NVCC__") || A.starts_with("-D__CUDACC_VER_"))
    return true;
  if (A == "-include")
    return sys::path::filename(Next) == NvccCompatHeaderName;
  if (A == "-isystem")
    return Next == (TC.cudaPath() + "/include/cccl").str();
  return false;
}

/// The arch the device command compiles for: the build's suffix may have
/// replaced the toolchain's (docs/compile-flags.md).
static std::string commandArch(const CudaToolchain &TC,
                               const std::vector<std::string> &Command) {
  for (StringRef A : Command)
    if (A.consume_front("--cuda-gpu-arch="))
      return A.str();
  return TC.gpuArch().str();
}

Expected<std::string> compileWithNvcc(const CudaToolchain &TC,
                                      const std::vector<std::string> &DeviceCommand,
                                      const FileOverlay &Overlay, bool Cubin,
                                      ArrayRef<std::string> NvccFlags) {
  std::string Nvcc = TC.nvccPath();
  if (Nvcc.empty())
    return createStringError(inconvertibleErrorCode(),
                             "nvcc not found in %s/bin: timing builds with "
                             "nvcc need the full CUDA toolkit",
                             TC.cudaPath().str().c_str());
  if (DeviceCommand.size() < 2)
    return createStringError(inconvertibleErrorCode(),
                             "compileWithNvcc: empty compile command");
  const std::string &Main = DeviceCommand.back();

  TempFiles Tmp;
  std::string Root;
  if (!Overlay.empty()) {
    auto Dir = Tmp.directory("astra-nvcc");
    if (!Dir)
      return Dir.takeError();
    Root = *Dir;
    for (const auto &[Path, Text] : Overlay) {
      if (!sys::path::is_absolute(Path))
        return createStringError(inconvertibleErrorCode(),
                                 "compileWithNvcc: overlay path '%s' is not "
                                 "absolute",
                                 Path.c_str());
      std::string Copy = under(Root, Path);
      if (std::error_code EC =
              sys::fs::create_directories(sys::path::parent_path(Copy)))
        return createStringError(EC, "cannot create '%s': %s",
                                 sys::path::parent_path(Copy).str().c_str(),
                                 EC.message().c_str());
      if (Error E = writeFileAtomically(Copy, Text))
        return E;
    }
  }
  auto Output = Tmp.file("astra-nvcc", Cubin ? "cubin" : "ptx");
  if (!Output)
    return Output.takeError();

  // Relative paths in the command are relative to -working-directory when
  // the compilation database gave one, else to ours.
  SmallString<256> WorkDir;
  for (const std::string &A : DeviceCommand)
    if (StringRef(A).starts_with("-working-directory="))
      WorkDir = StringRef(A).drop_front(strlen("-working-directory="));
  if (WorkDir.empty())
    sys::fs::current_path(WorkDir);
  auto Absolute = [&](StringRef P) {
    SmallString<256> S(P);
    if (!sys::path::is_absolute(S))
      sys::path::make_absolute(WorkDir, S);
    return std::string(S);
  };

  std::vector<std::string> Args = {Nvcc, "-arch=" + commandArch(TC, DeviceCommand),
                                   Cubin ? "-cubin" : "-ptx", "-O3"};
  // The build's own device flags (--use_fast_math, -Xptxas, -lineinfo, ...):
  // what is timed is what the build ships.
  Args.insert(Args.end(), NvccFlags.begin(), NvccFlags.end());
  // An include directory's overlay mirror comes before it; so does the
  // mirror's original directory for each overlay file, standing in for
  // "the directory of the including file" that quoted includes search first.
  auto AddDir = [&](StringRef Flag, StringRef Dir) {
    std::string Abs = Absolute(Dir);
    if (!Root.empty())
      Args.push_back(Flag.str() + escapeCommas(under(Root, Abs)));
    Args.push_back(Flag.str() + escapeCommas(Abs));
  };
  for (const auto &[Path, Text] : Overlay)
    Args.push_back("-I" + escapeCommas(sys::path::parent_path(Path)));

  for (size_t I = 1; I + 1 < DeviceCommand.size(); ++I) {
    StringRef A = DeviceCommand[I];
    if (isCompatFlag(TC, A, DeviceCommand[I + 1])) {
      if (A == "-include" || A == "-isystem")
        ++I;
      continue;
    }
    auto Value = [&](StringRef Flag) -> std::optional<std::string> {
      if (A == Flag && I + 2 < DeviceCommand.size())
        return DeviceCommand[++I];
      if (A.starts_with(Flag) && A.size() > Flag.size())
        return A.drop_front(Flag.size()).str();
      return std::nullopt;
    };
    if (auto V = Value("-D"))
      Args.push_back("-D" + escapeCommas(*V));
    else if (auto V = Value("-U"))
      Args.push_back("-U" + escapeCommas(*V));
    else if (auto V = Value("-isystem"))
      AddDir("-isystem", *V);
    else if (auto V = Value("-I"))
      AddDir("-I", *V);
    else if (auto V = Value("-iquote"))
      // nvcc has no -iquote; -I finds the same files, and more.
      AddDir("-I", *V);
    else if (auto V = Value("-include")) {
      std::string P = Absolute(*V);
      Args.push_back("-include");
      Args.push_back(escapeCommas(Overlay.count(P) ? under(Root, P) : *V));
    } else if (A.starts_with("-std=")) {
      std::string Std = nvccStd(A.drop_front(5));
      if (!Std.empty())
        Args.push_back("-std=" + Std);
    }
  }
  Args.push_back("-x");
  Args.push_back("cu");
  Args.push_back(Overlay.count(Main) ? under(Root, Main) : Main);
  Args.push_back("-o");
  Args.push_back(*Output);

  auto Run = runTool(Nvcc, Args);
  if (!Run)
    return Run.takeError();
  if (Run->ExitCode != 0)
    return createStringError(inconvertibleErrorCode(),
                             "%s: nvcc failed (exit code %d):\n%s",
                             Main.c_str(), Run->ExitCode,
                             firstLines(Run->Output).c_str());
  return readFile(*Output);
}

} // namespace astra
