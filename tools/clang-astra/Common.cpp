//===- Common.cpp ---------------------------------------------------------===//
#include "Common.h"
#include "astra/Compile/PtxCompiler.h"
#include "astra/Engine/KernelSource.h"
#include "astra/Frontend/KernelModel.h"
#include "astra/Runtime/Device.h"
#include "astra/Engine/RunPlan.h"
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
static cl::opt<bool> NoNvccCompat(
    "no-nvcc-compat",
    cl::desc("Parse and compile as plain clang: no CCCL include folder, nvcc "
             "macros, compat header or in-memory repairs of code nvcc "
             "accepts (docs/nvcc-compat.md)"),
    cl::sub(cl::SubCommand::getAll()), cl::cat(AstraCategory));
cl::opt<bool> Verbose("verbose",
                      cl::desc("Show notes, warnings and dropped flags"),
                      cl::sub(cl::SubCommand::getAll()), cl::cat(AstraCategory));
cl::opt<bool> Quiet("quiet",
                    cl::desc("No progress lines and no informational notes; "
                             "warnings, errors and notes of what was written "
                             "or left undone still show"),
                    cl::sub(cl::SubCommand::getAll()), cl::cat(AstraCategory));

/// The arch of this machine's first GPU (what the optimizer times on and
/// verify and profile run on), or empty without a driver or a GPU.
static std::string gpuArchOfThisMachine() {
  auto Info = GpuContext::queryDevice(0);
  if (!Info) {
    consumeError(Info.takeError());
    return "";
  }
  return "sm_" + std::to_string(Info->CcMajor * 10 + Info->CcMinor);
}

Expected<CudaToolchain> makeToolchain(const Session &S) {
  CudaOptions O;
  O.CudaPath = CudaPath;
  O.GpuArch = GpuArch;
  O.ResourceDir = ResourceDir;
  O.Verbose = Verbose;
  O.NvccCompat = !NoNvccCompat;
  if (O.GpuArch.empty())
    O.DetectedGpuArch = gpuArchOfThisMachine();
  auto TC = CudaToolchain::detect(O, S.Argv0);
  if (TC && Verbose) {
    note("GPU arch " + TC->gpuArch() + " (" + TC->gpuArchOrigin() + ")");
    if (TC->nvccCompat()) {
      const CudaVersion &V = TC->cudaVersion();
      note("nvcc compatibility on: CUDA " + std::to_string(V.Major) + "." +
           std::to_string(V.Minor) + "." + std::to_string(V.Build) +
           " (from " + (V.Origin.empty() ? "nowhere" : V.Origin) +
           "), compat header " + TC->compatHeader());
    }
  }
  return TC;
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
  if (!Quiet)
    outcome(Msg);
}

void outcome(const Twine &Msg) {
  WithColor::note(errs(), "clang-astra") << Msg << "\n";
}

int MessageLog::error(llvm::Error E) {
  handleAllErrors(std::move(E), [&](const ErrorInfoBase &EI) {
    add(Error, EI.message());
  });
  return 1;
}

void MessageLog::flush() {
  for (auto &[K, S] : Items)
    switch (K) {
    case Text:
      errs() << S;
      break;
    case Note:
      tool::note(S);
      break;
    case Warning:
      tool::warning(S);
      break;
    case Error:
      reportError(S);
      break;
    }
  Items.clear();
}

void warning(const Twine &Msg) {
  WithColor::warning(errs(), "clang-astra") << Msg << "\n";
}

std::string runtimePchFor(const CudaToolchain &TC,
                          const std::vector<std::string> &DeviceCommand) {
  std::vector<std::string> Notes;
  std::string Pch = parsePch(TC, DeviceCommand, CompileOptions(), Notes);
  if (Verbose)
    for (const std::string &N : Notes)
      note(N);
  return Pch;
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
  PO.RuntimePch = runtimePchFor(TC, *Cmd);
  PO.UsePreamble = PO.BuildPreamble = true;
  auto PF = parseCuda(*Cmd, PO);
  if (PF) {
    if (Verbose) {
      for (const std::string &N : (*PF)->notes())
        note(N);
      note("parsed " + displayPath(File) + " in " +
           std::to_string((*PF)->seconds()).substr(0, 4) + " s" +
           ((*PF)->usedPreamble()    ? " (preamble PCH)"
            : (*PF)->usedRuntimePch() ? " (runtime PCH)"
                                      : ""));
    }
    reportView(File, (*PF)->view());
  }
  return PF;
}

void reportView(StringRef File, const DeviceView &View) {
  for (const SkippedHostCode &S : View.Skipped)
    warning(describeSkipped(displayPath(File), S));
  if (Verbose)
    for (const CompatRepair &R : View.Repairs)
      note("repaired in memory: " + R.Where + ": " + R.What);
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

Expected<VerifyJob> jobFromFiles(const Session &S, const JobFiles &F) {
  bool HasCandidate = !F.CandidateFile.empty();
  auto Prefixed = [&](StringRef Who, Error E) -> Error {
    if (!HasCandidate)
      return E;
    return createStringError(inconvertibleErrorCode(),
                             Who + ": " + toString(std::move(E)));
  };
  if (Error E = checkReadableFile(F.File))
    return E;
  if (HasCandidate)
    if (Error E = checkReadableFile(F.CandidateFile))
      return E;
  auto TC = makeToolchain(S);
  if (!TC)
    return TC.takeError();
  auto CC = makeCompileCommands(S);
  if (!CC)
    return CC.takeError();
  auto Specs = loadSpecFor(F.File, F.SpecFile);
  if (!Specs)
    return Specs.takeError();
  auto Kernel = chooseKernel(*Specs, F.KernelName);
  if (!Kernel)
    return Kernel.takeError();

  VerifyJob Job;
  Job.Spec = *Specs->find(*Kernel);
  KernelSourceRequest Req;
  Req.Kernel = *Kernel;
  Req.ShowWarnings = Verbose;
  auto BaseCmd = CC->deviceCommand(F.File, *TC);
  if (!BaseCmd)
    return BaseCmd.takeError();
  Req.DeviceCommand = *BaseCmd;
  Req.Spec = &Job.Spec;
  KernelLaunchFacts Facts;
  Req.Facts = &Facts;
  auto Base = prepareKernelImage(*TC, Req);
  if (!Base)
    return Prefixed("baseline", Base.takeError());
  Req.Facts = nullptr;
  Job.Baseline = std::move(*Base);
  if (!HasCandidate)
    return Job;

  auto CandCmd = CC->deviceCommand(F.CandidateFile, *TC);
  if (!CandCmd)
    return CandCmd.takeError();
  Req.DeviceCommand = *CandCmd;
  Req.Spec = nullptr;
  auto Cand = prepareKernelImage(*TC, Req);
  if (!Cand)
    return Prefixed("candidate", Cand.takeError());
  Job.Candidate = std::move(*Cand);
  auto CL = candidateLaunch(F.CandidateFile, F.CandidateSpec, Job.Spec);
  if (!CL)
    return Prefixed("candidate", CL.takeError());
  Job.CandidateLaunch = std::move(*CL);
  // The other launches the baseline's code makes. A candidate spec with a
  // launch of its own says how the candidate runs at the spec's launch
  // only, not at the others.
  if (Job.CandidateLaunch) {
    Job.Notes.push_back("the launch space of the code is not verified: the "
                        "candidate's spec changes the launch, and how the "
                        "candidate launches at the code's other "
                        "configurations is unknown");
    return Job;
  }
  auto Small = smallestShapeSet(Job.Spec);
  if (!Small)
    return Small.takeError();
  auto Space = jobLaunchSpace(Job.Spec, Facts, *Small, nullptr);
  if (!Space)
    return Prefixed("baseline", Space.takeError());
  Job.LaunchSpace = std::move(Space->Variants);
  Job.Notes = std::move(Space->Notes);
  return Job;
}

} // namespace tool
} // namespace astra
