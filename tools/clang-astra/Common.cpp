//===- Common.cpp ---------------------------------------------------------===//
#include "Common.h"
#include "astra/Support/FileIO.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace astra {
namespace tool {

cl::OptionCategory AstraCategory("clang-astra options");

static cl::opt<std::string>
    CudaPath("cuda-path",
             cl::desc("CUDA installation (default: $CUDA_PATH, $CUDA_HOME, "
                      "/usr/local/cuda)"),
             cl::value_desc("dir"), cl::sub(cl::SubCommand::getAll()),
             cl::cat(AstraCategory));
static cl::opt<std::string>
    GpuArch("cuda-gpu-arch",
            cl::desc("GPU architecture (default: the newest arch of an nvcc "
                     "build command from -p, else sm_90)"),
            cl::value_desc("sm_XX"), cl::sub(cl::SubCommand::getAll()),
            cl::cat(AstraCategory));
static cl::opt<std::string>
    ResourceDir("resource-dir",
                cl::desc("clang resource directory (default: beside the "
                         "binary, then the LLVM install)"),
                cl::value_desc("dir"), cl::sub(cl::SubCommand::getAll()),
                cl::cat(AstraCategory));
static cl::opt<std::string>
    BuildPath("p", cl::desc("Build directory holding compile_commands.json"),
              cl::value_desc("build-dir"), cl::sub(cl::SubCommand::getAll()),
              cl::cat(AstraCategory));
cl::opt<bool> Verbose("verbose",
                      cl::desc("Show notes, warnings and dropped flags"),
                      cl::sub(cl::SubCommand::getAll()), cl::cat(AstraCategory));

Expected<CudaToolchain> makeToolchain(const Session &S) {
  CudaOptions O;
  O.CudaPath = CudaPath;
  O.GpuArch = GpuArch;
  O.ResourceDir = ResourceDir;
  O.Verbose = Verbose;
  return CudaToolchain::detect(O, S.Argv0);
}

Expected<CompileCommands> makeCompileCommands(const Session &S) {
  auto CC = CompileCommands::create(BuildPath, S.ExtraFlags);
  // What the translation of the build's command dropped or chose is noise
  // unless asked for; with --verbose it explains a parse that differs from
  // the build's.
  if (CC && Verbose)
    CC->setNoteHandler([](StringRef File, StringRef Msg) {
      note(File + ": " + Msg);
    });
  return CC;
}

int reportError(Error E) {
  handleAllErrors(std::move(E), [](const ErrorInfoBase &EI) {
    WithColor::error(errs(), "clang-astra") << EI.message() << "\n";
  });
  return 1;
}

int reportError(const Twine &Msg) {
  WithColor::error(errs(), "clang-astra") << Msg << "\n";
  return 1;
}

void note(const Twine &Msg) {
  WithColor::note(errs(), "clang-astra") << Msg << "\n";
}

void warning(const Twine &Msg) {
  WithColor::warning(errs(), "clang-astra") << Msg << "\n";
}

Expected<std::unique_ptr<ParsedFile>>
parseUserFile(StringRef File, const CudaToolchain &TC,
              const CompileCommands &CC, const FileOverlay &Overlay) {
  if (Overlay.empty())
    if (Error E = checkReadableFile(File))
      return E;
  auto Cmd = CC.deviceCommand(File, TC);
  if (!Cmd)
    return Cmd.takeError();
  if (Verbose) {
    std::string Line;
    for (const std::string &A : *Cmd)
      Line += (Line.empty() ? "" : " ") + A;
    note("device command: " + Line);
  }
  ParseOptions PO;
  PO.Overlay = Overlay;
  PO.ShowWarnings = Verbose;
  return parseCuda(*Cmd, PO);
}

Expected<std::optional<LaunchSpec>>
candidateLaunch(StringRef CandidateFile, StringRef Explicit,
                const KernelSpec &Base) {
  std::string Path = Explicit.empty() ? (CandidateFile + ".astra.json").str()
                                      : Explicit.str();
  if (Explicit.empty() && !sys::fs::exists(Path))
    return std::nullopt;
  auto Specs = loadSpecFor(CandidateFile, Path);
  if (!Specs)
    return Specs.takeError();
  const KernelSpec *K = Specs->find(Base.Kernel);
  if (!K)
    return createStringError(inconvertibleErrorCode(),
                             "%s has no entry for kernel '%s'", Path.c_str(),
                             Base.Kernel.c_str());
  bool Same = K->Launch.Shmem.text() == Base.Launch.Shmem.text();
  for (unsigned I = 0; Same && I < 3; ++I)
    Same = K->Launch.Grid[I].text() == Base.Launch.Grid[I].text() &&
           K->Launch.Block[I].text() == Base.Launch.Block[I].text();
  if (Same)
    return std::nullopt;
  return K->Launch;
}

} // namespace tool
} // namespace astra
