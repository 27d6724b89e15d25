//===- RunCommand.cpp - clang-astra run -----------------------------------===//
//
// Runs a kernel once on one shape set and seed and dumps its inputs and
// outputs (docs/engine.md, "Dump format"), so a reference implementation
// in another language can check the kernel itself.
//
//===----------------------------------------------------------------------===//
#include "Common.h"
#include "Subcommands.h"
#include "astra/Engine/Dump.h"
#include "astra/Engine/KernelSource.h"
#include "astra/Support/FileIO.h"

#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace astra {
namespace tool {

static cl::SubCommand RunCmd("run",
                             "Run a kernel once and dump its inputs and "
                             "outputs");
static cl::list<std::string> Files(cl::Positional, cl::desc("<file>"),
                                   cl::sub(RunCmd), cl::cat(AstraCategory));
static cl::opt<std::string>
    KernelName("kernel",
               cl::desc("The kernel (as `list` names it; default: the only "
                        "kernel of the spec)"),
               cl::sub(RunCmd), cl::cat(AstraCategory));
static cl::opt<std::string>
    SpecFileOpt("spec", cl::desc("Spec file (default: <file>.astra.json)"),
                cl::value_desc("file"), cl::sub(RunCmd), cl::cat(AstraCategory));
static cl::opt<std::string>
    ShapeName("shape", cl::desc("Shape set (default: the spec's first)"),
              cl::sub(RunCmd), cl::cat(AstraCategory));
static cl::opt<uint64_t> SeedOpt("seed",
                                 cl::desc("Seed of the inputs (default 1)"),
                                 cl::init(1), cl::sub(RunCmd),
                                 cl::cat(AstraCategory));
static cl::opt<std::string>
    DumpDir("dump", cl::desc("Write manifest.json and the binaries here"),
            cl::value_desc("dir"), cl::sub(RunCmd), cl::cat(AstraCategory));
static cl::opt<double>
    KernelTimeout("kernel-timeout",
                  cl::desc("Seconds after which the kernel counts as hung "
                           "(default 10)"),
                  cl::init(10), cl::sub(RunCmd), cl::cat(AstraCategory));
static cl::opt<int> DeviceOpt("device", cl::desc("GPU ordinal (default 0)"),
                              cl::init(0), cl::sub(RunCmd),
                              cl::cat(AstraCategory));

static int runRun(const Session &S) {
  if (Files.size() != 1)
    return reportError("run: expected exactly one file (see --help)");
  if (DumpDir.empty())
    return reportError("run: --dump <dir> is required (where the inputs and "
                       "outputs are written)");
  const std::string &File = Files.front();
  if (Error E = checkReadableFile(File))
    return reportError(std::move(E));
  auto TC = makeToolchain(S);
  if (!TC)
    return reportError(TC.takeError());
  auto CC = makeCompileCommands(S);
  if (!CC)
    return reportError(CC.takeError());
  auto Specs = loadSpecFor(File, SpecFileOpt);
  if (!Specs)
    return reportError(Specs.takeError());
  auto Kernel = chooseKernel(*Specs, KernelName);
  if (!Kernel)
    return reportError(Kernel.takeError());
  VerifyJob Job;
  Job.Spec = *Specs->find(*Kernel);
  if (Job.Spec.Shapes.empty())
    return reportError(Job.Spec.SpecPath + ": kernel '" + *Kernel +
                       "' has no shape sets");
  Job.Shapes = {ShapeName.empty() ? Job.Spec.Shapes.front().Name
                                  : ShapeName.getValue()};
  Job.Seeds = {SeedOpt};
  Job.Options.KernelTimeout = KernelTimeout;
  Job.Options.Device = DeviceOpt;
  KernelSourceRequest Req;
  Req.Kernel = *Kernel;
  Req.ShowWarnings = Verbose;
  Req.Spec = &Job.Spec;
  auto Cmd = CC->deviceCommand(File, *TC);
  if (!Cmd)
    return reportError(Cmd.takeError());
  Req.DeviceCommand = *Cmd;
  auto Img = prepareKernelImage(*TC, Req);
  if (!Img)
    return reportError(Img.takeError());
  Job.Baseline = std::move(*Img);
  if (Error E = dumpBaselineRun(Job, DumpDir))
    return reportError(std::move(E));
  outs() << "ran '" << *Kernel << "' on shape set '" << Job.Shapes.front()
         << "' with seed " << SeedOpt << "; wrote " << DumpDir
         << "/manifest.json\n";
  return 0;
}

static SubcommandRegistration Reg(RunCmd, runRun);

} // namespace tool
} // namespace astra
