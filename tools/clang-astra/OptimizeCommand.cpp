//===- OptimizeCommand.cpp - clang-astra optimize -------------------------===//
//
// The main job: make the kernels of the given files faster and write back
// only verified winners. Without -i, -o or --diff nothing is written; the
// summary says what would change.
//
//===----------------------------------------------------------------------===//
#include "Common.h"
#include "OptimizeOptions.h"
#include "Subcommands.h"
#include "astra/Agents/OptimizeDriver.h"
#include "astra/Config.h"
#include "astra/Frontend/KernelModel.h"
#include "astra/Runtime/CudaDriver.h"
#include "astra/Support/Diff.h"
#include "astra/Support/FileIO.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace astra {
namespace tool {

static cl::SubCommand OptimizeCmd(
    "optimize", "Make kernels faster; write back only verified winners");
static cl::list<std::string> Files(cl::Positional, cl::desc("<files>"),
                                   cl::sub(OptimizeCmd), cl::cat(AstraCategory));
static cl::opt<bool> InPlace("i", cl::desc("Rewrite the files in place"),
                             cl::sub(OptimizeCmd), cl::cat(AstraCategory));
static cl::opt<bool> ShowDiff("diff", cl::desc("Print a unified diff"),
                              cl::sub(OptimizeCmd), cl::cat(AstraCategory));
static cl::opt<std::string> OutputFile("o", cl::desc("Write the result here"),
                                       cl::value_desc("file"),
                                       cl::sub(OptimizeCmd),
                                       cl::cat(AstraCategory));
static cl::opt<bool>
    StaticWrite("static-write",
                cl::desc("With --static: write the rewrite of every applicable "
                         "pass although it was neither verified nor timed"),
                cl::sub(OptimizeCmd), cl::cat(AstraCategory));

static OptimizeOptions Opts(OptimizeCmd);

static int runOptimize(const Session &S) {
  if (Files.empty())
    return reportError("optimize: no input files (see --help)");
  if (int(InPlace) + int(!OutputFile.empty()) + int(ShowDiff) > 1)
    return reportError("optimize: -i, -o and --diff exclude each other");
  if (!OutputFile.empty() && Files.size() != 1)
    return reportError("optimize: -o needs exactly one input file");
  if (StaticWrite && !Opts.Static)
    return reportError("optimize: --static-write needs --static");

  auto TC = makeToolchain(S);
  if (!TC)
    return reportError(TC.takeError());
  auto CC = makeCompileCommands(S);
  if (!CC)
    return reportError(CC.takeError());
  auto Req = Opts.request(std::vector<std::string>(Files.begin(), Files.end()));
  if (!Req)
    return reportError(Req.takeError());
  if (!Req->Static) {
    auto Driver = CudaDriver::get();
    if (!Driver)
      return reportError(toString(Driver.takeError()) +
                         "; optimize needs a GPU to verify and time candidates "
                         "(--static runs the passes and the NVPTX compile "
                         "without one)");
  }

  OptimizeDriver Driver(*TC, *CC, *Req, progressPrinter());
  std::vector<FileOutcome> Results = Driver.run();

  int Status = 0;
  std::vector<KernelReport> All;
  for (FileOutcome &FO : Results) {
    if (!FO.Error.empty()) {
      Status = reportError(FO.File + ": " + FO.Error);
      KernelReport R;
      R.File = displayPath(FO.File);
      R.Kernel = "(file)";
      R.Error = FO.Error;
      All.push_back(R);
      continue;
    }
    for (KernelReport &R : FO.Kernels) {
      printKernelSummary(errs(), R);
      if (Opts.Static) // What would be tried, and whether it compiles.
        for (const Attempt &A : R.Outcome.Attempts)
          errs() << "  static: " << A.P.label() << ": " << A.Outcome << "\n";
      if (!R.Error.empty())
        Status = 1;
      All.push_back(R);
    }
    std::map<std::string, std::string> Final = FO.Final;
    if (Opts.Static && StaticWrite) {
      // The user asked for unverified code: the combined pipeline of the
      // first static attempt that compiled.
      for (KernelReport &R : FO.Kernels)
        for (const Attempt &A : R.Outcome.Attempts)
          if (A.Outcome.rfind("compiles", 0) == 0) {
            for (auto &[Path, Text] : A.C.Files) {
              auto Orig = readFile(Path);
              if (Orig)
                FO.Original[Path] = *Orig;
              else
                consumeError(Orig.takeError());
              Final[Path] = Text;
            }
            warning(R.Kernel + ": writing '" + A.P.label() +
                    "' unverified (--static-write)");
            break;
          }
    }
    if (Final.empty())
      continue;
    if (InPlace) {
      for (auto &[Path, Text] : Final) {
        if (Error E = writeFileAtomically(Path, Text)) {
          Status = reportError(std::move(E));
          continue;
        }
        note("rewrote " + displayPath(Path));
      }
    } else if (ShowDiff) {
      for (auto &[Path, Text] : Final)
        outs() << unifiedDiff(FO.Original[Path], Text, displayPath(Path),
                              displayPath(Path));
    } else if (!OutputFile.empty()) {
      std::string Main = absolutePath(FO.File);
      auto It = Final.find(Main);
      if (It != Final.end()) {
        if (Error E = writeFileAtomically(OutputFile, It->second))
          Status = reportError(std::move(E));
      }
      for (auto &[Path, Text] : Final)
        if (Path != Main)
          warning("the result also changes " + displayPath(Path) +
                  ", which -o does not write (use -i or --diff)");
    } else {
      note(displayPath(FO.File) +
           ": verified faster code found; use -i to apply it, --diff to see "
           "it, or -o FILE to write it elsewhere");
    }
  }
  if (!Opts.ReportDir.empty()) {
    RunInfo Info = Driver.runInfo();
    fillRunInfo(Info, Opts, S);
    if (Error E = writeReport(Opts.ReportDir, Info, All))
      Status = reportError(std::move(E));
    else
      note("report written to " + Opts.ReportDir + "/report.md");
  }
  return Status;
}

static SubcommandRegistration Reg(OptimizeCmd, runOptimize);

} // namespace tool
} // namespace astra
