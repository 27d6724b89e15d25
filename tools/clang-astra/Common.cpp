//===- Common.cpp ---------------------------------------------------------===//
#include "Common.h"
#include "astra/Support/FileIO.h"

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

} // namespace tool
} // namespace astra
