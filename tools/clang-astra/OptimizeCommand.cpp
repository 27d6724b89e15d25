//===- OptimizeCommand.cpp - clang-astra optimize -------------------------===//
//
// The main job: make the kernels of the given files faster and write back
// only verified winners. Without -i, -o or --diff nothing is written; the
// summary says what would change. --check is the CI form: the diff of every
// verified winner, and exit code 3 when there is one. --test runs the user's
// own command with each file's winner in place first; a winner it fails is
// not written (nor shown or counted).
//
//===----------------------------------------------------------------------===//
#include "Common.h"
#include "OptimizeOptions.h"
#include "astra/Exec/Executor.h"
#include "Subcommands.h"
#include "astra/Agents/OptimizeDriver.h"
#include "astra/Config.h"
#include "astra/Frontend/KernelModel.h"
#include "astra/Runtime/CudaDriver.h"
#include "astra/Runtime/Device.h"
#include "astra/Support/Diff.h"
#include "astra/Support/FileIO.h"
#include "astra/Support/Hash.h"

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

static cl::opt<bool>
    Check("check",
          cl::desc("Write nothing; print the diff of every verified faster "
                   "rewrite and exit with 3 when there is one (0: none, 1: "
                   "errors)"),
          cl::sub(OptimizeCmd), cl::cat(AstraCategory));

namespace {
/// What optimize does when there is no GPU to verify and time candidates.
enum class WithoutGpu { Error, Static, Skip };
} // namespace
static cl::opt<WithoutGpu> WithoutGpuMode(
    "without-gpu", cl::desc("When no GPU is usable:"),
    cl::values(clEnumValN(WithoutGpu::Error, "error",
                          "fail with the reason (default)"),
               clEnumValN(WithoutGpu::Static, "static",
                          "run as --static: passes and the NVPTX compile, "
                          "nothing written"),
               clEnumValN(WithoutGpu::Skip, "skip",
                          "skip every kernel with a note and exit 0")),
    cl::init(WithoutGpu::Error), cl::sub(OptimizeCmd), cl::cat(AstraCategory));

/// The exit code of --check when verified faster code exists. Distinct from 1
/// (errors) so that CI can tell "the tool failed" from "the code can be
/// faster".
static constexpr int CheckFoundFaster = 3;

static OptimizeOptions Opts(OptimizeCmd);

static int runOptimize(const Session &S) {
  if (Files.empty())
    return reportError("optimize: no input files (see --help)");
  if (int(InPlace) + int(!OutputFile.empty()) + int(ShowDiff) + int(Check) > 1)
    return reportError("optimize: -i, -o, --diff and --check exclude each other");
  if (!OutputFile.empty() && Files.size() != 1)
    return reportError("optimize: -o needs exactly one input file");
  if (!OutputFile.empty() && Opts.Kernels.size() > 1)
    return reportError("optimize: -o takes one --kernel (use -i or --diff for "
                       "several)");
  if (StaticWrite && !Opts.Static)
    return reportError("optimize: --static-write needs --static");
  if (StaticWrite && Check)
    return reportError("optimize: --check reports verified rewrites only; "
                       "--static-write writes unverified ones");

  auto TC = makeToolchain(S);
  if (!TC)
    return reportError(TC.takeError());
  auto CC = makeCompileCommands(S);
  if (!CC)
    return reportError(CC.takeError());
  auto Req = Opts.request(std::vector<std::string>(Files.begin(), Files.end()));
  if (!Req)
    return reportError(Req.takeError());
  // A file an interrupted --test run left with an untested rewrite gets its
  // original back before anything reads it.
  if (Error E = recoverInterruptedTests(Req->Files))
    return reportError(std::move(E));
  bool Static = Req->Static;
  auto Exec = Opts.makeExecutor("optimize");
  if (!Exec)
    return reportError(Exec.takeError());
  if (*Exec) {
    Req->Engine.Exec = Exec->get();
    showExecutorProgress(**Exec, "optimize");
  }
  // With workers the GPUs are theirs: a Slurm login node has none.
  if (!Static && *Exec) {
    if (auto Dev = GpuContext::queryDevice(0)) {
      Req->Gpu = Dev->Name;
    } else {
      // The result cache is kept per GPU model; without a name there is
      // nothing to look up or store under.
      consumeError(Dev.takeError());
      Req->UseResultCache = false;
    }
  } else if (!Static) {
    auto Driver = CudaDriver::get();
    if (!Driver) {
      std::string Why = toString(Driver.takeError());
      switch (WithoutGpuMode) {
      case WithoutGpu::Error:
        return reportError(Why +
                           "; optimize needs a GPU to verify and time "
                           "candidates (--static runs the passes and the NVPTX "
                           "compile without one; see also --without-gpu)");
      case WithoutGpu::Static:
        outcome("no GPU (" + Why +
                "): running as --static (--without-gpu=static); nothing "
                "is verified, timed or written");
        Static = Req->Static = true;
        break;
      case WithoutGpu::Skip:
        // Results a GPU machine verified still apply; the rest waits.
        if (!Req->UseResultCache) {
          outcome("no GPU (" + Why + "): the kernels of " +
                  Twine(Files.size()) +
                  (Files.size() == 1 ? " file" : " files") +
                  " were skipped (--without-gpu=skip)");
          return 0;
        }
        outcome("no GPU (" + Why + "): only cached results are applied "
                "(--without-gpu=skip)");
        Req->CacheOnly = true;
        break;
      }
    } else if (auto Dev = GpuContext::queryDevice(0)) {
      Req->Gpu = Dev->Name;
    } else {
      consumeError(Dev.takeError());
    }
  }

  // One driver run per --kernel (or one for every kernel). With -i each run
  // sees what the runs before it wrote.
  std::vector<std::string> KernelRuns(Opts.Kernels.begin(), Opts.Kernels.end());
  if (KernelRuns.empty())
    KernelRuns.push_back("");
  int Status = 0;
  bool FoundFaster = false;
  std::vector<KernelReport> All;
  RunInfo Info;
  // What each input held when the run began: a file edited during the
  // search (which takes minutes) is not overwritten with a result computed
  // from its old text. Updated after each write, which the next --kernel
  // run starts from.
  std::map<std::string, std::string> StartHash;
  for (const std::string &F : Files)
    if (auto T = readFile(F))
      StartHash[absolutePath(F)] = sha256Hex(*T);
    else
      consumeError(T.takeError()); // The driver reports it.
  for (const std::string &K : KernelRuns) {
    OptimizeRequest KReq = *Req;
    KReq.Kernel = K;
    OptimizeDriver Driver(*TC, *CC, KReq, progressPrinter());
    std::vector<FileOutcome> Results = Driver.run();
    Info = Driver.runInfo();
    bool KernelFound = false;
    std::vector<FileOutcome *> Missing;
    for (FileOutcome &FO : Results) {
      // With several --kernel, a file whose spec lacks this one is not an
      // error as long as some file has it.
      if (KernelRuns.size() > 1 && !FO.Error.empty() &&
          FO.Error == "no kernel named '" + K + "' in the spec") {
        Missing.push_back(&FO);
        continue;
      }
      KernelFound = true;
      if (FO.Skipped) {
        outcome(displayPath(FO.File) +
                ": skipped: no GPU and no cached result (--without-gpu=skip)");
        continue;
      }
      if (!FO.Error.empty()) {
        Status = reportError(FO.File + ": " + FO.Error);
        KernelReport R;
        R.File = displayPath(FO.File);
        R.Kernel = "(file)";
        R.Error = FO.Error;
        All.push_back(R);
        continue;
      }
      std::map<std::string, std::string> Final = FO.Final;
      // The kernels whose change is in Final.
      std::vector<size_t> Owners;
      for (size_t I = 0; I < FO.Kernels.size(); ++I)
        if (FO.Kernels[I].Outcome.Winner)
          Owners.push_back(I);
      std::vector<std::string> Unverified;
      if (Static && StaticWrite) {
        // The user asked for unverified code: the combined pipeline of the
        // first static attempt that compiled. One that launches differently
        // (block-size, grid-coarsen) is passed over: only a winner's spec
        // is rewritten to match its launch sites.
        for (size_t I = 0; I < FO.Kernels.size(); ++I) {
          KernelReport &R = FO.Kernels[I];
          for (const Attempt &A : R.Outcome.Attempts)
            if (A.Outcome.rfind("compiles", 0) == 0 &&
                A.C.launchChange().empty()) {
              for (auto &[Path, Text] : A.C.Files) {
                auto Orig = readFile(Path);
                if (Orig)
                  FO.Original[Path] = *Orig;
                else
                  consumeError(Orig.takeError());
                Final[Path] = Text;
              }
              Owners.push_back(I);
              Unverified.push_back(R.Kernel + ": writing '" + A.P.label() +
                                   "' unverified (--static-write)");
              break;
            }
        }
      }
      // --test: the rewrite is tried in place first; with -i it stays
      // there when the command passes (so it is written already).
      bool Tested = false;
      if (!Final.empty() && !Opts.TestCommand.empty()) {
        auto Passed = testRewrite(Opts, FO, Final, InPlace, Owners);
        if (!Passed) {
          Status = reportError(Passed.takeError());
          Final.clear();
        } else if (!*Passed) {
          Final.clear();
        } else {
          Tested = true;
        }
      }
      for (KernelReport &R : FO.Kernels) {
        printKernelSummary(errs(), R);
        // Where the time went (docs/optimize.md): the kernel, then each
        // evaluation in the order it ran.
        if (Verbose && !Static && R.Error.empty() &&
            R.Outcome.WallSeconds > 0) {
          note(R.Kernel + ": " + describeRunTime(R.Outcome));
          note(R.Kernel + ": baseline: " +
               describeStages(R.Outcome.Baseline.Stages));
          for (const Attempt &A : R.Outcome.Attempts)
            if (A.E.Stages.total() > 0)
              note(R.Kernel + ": " +
                   (!A.Round            ? "confirmation of " + A.C.Id
                    : A.C.isBaseline() ? "round " + std::to_string(A.Round) +
                                             " " + A.P.label()
                                       : A.C.Id) +
                   ": " + describeStages(A.E.Stages));
        }
        if (!FO.FromCache.empty())
          errs() << "  cached result, " << FO.FromCache
                 << " (--no-cache runs it again)\n";
        if (Static) // What would be tried, and whether it compiles.
          for (const Attempt &A : R.Outcome.Attempts)
            errs() << "  static: " << A.P.label() << ": " << A.Outcome << "\n";
        if (!R.Error.empty())
          Status = 1;
        All.push_back(R);
      }
      if (!Final.empty())
        for (const std::string &U : Unverified)
          warning(U);
      if (Final.empty())
        continue;
      // A change outside the file (warp-reduce's rewrite of a helper in a
      // shared header) reaches every file that includes it, and only this
      // file's kernels were verified with it.
      std::string MainPath = absolutePath(FO.File);
      if (OutputFile.empty())
        for (auto &[Path, Text] : Final)
          if (Path != MainPath)
            warning("the result also changes " + displayPath(Path) +
                    " (code that " + displayPath(FO.File) +
                    "'s kernels use): every file that includes it gets the "
                    "change, and none of their kernels was tested with it");
      if (InPlace) {
        for (auto &[Path, Text] : Final) {
          if (Tested) { // Kept in place by the test.
            StartHash[Path] = sha256Hex(Text);
            outcome("rewrote " + displayPath(Path));
            continue;
          }
          std::string Want = sha256Hex(FO.Original[Path]);
          auto Start = StartHash.find(Path);
          if (Start != StartHash.end() && Start->second != Want) {
            Status = reportError(displayPath(Path) +
                                 ": changed on disk while clang-astra ran; "
                                 "its new text was left alone and nothing "
                                 "was written (run again on the new text)");
            continue;
          }
          if (Error E = writeFileAtomically(Path, Text, Want)) {
            Status = reportError(std::move(E));
            continue;
          }
          StartHash[Path] = sha256Hex(Text);
          outcome("rewrote " + displayPath(Path));
        }
      } else if (ShowDiff || Check) {
        FoundFaster = true;
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
      } else if (Static) {
        note(displayPath(FO.File) +
             ": an unverified rewrite is ready (--static-write); use -i to "
             "apply it, --diff to see it, or -o FILE to write it elsewhere");
      } else {
        note(displayPath(FO.File) + ": verified faster code found" +
             (Tested ? " (it passed the --test command)" : "") +
             "; use -i to apply it, --diff to see it, or -o FILE to write it "
             "elsewhere");
      }
    }
    if (!KernelFound && !Missing.empty())
      Status = reportError("no kernel named '" + K + "' in the spec of any "
                           "input file");
  }
  if (!Opts.ReportDir.empty()) {
    fillRunInfo(Info, Opts, S);
    if (Static)
      Info.Device = "none (static mode)";
    if (Error E = writeReport(Opts.ReportDir, Info, All))
      Status = reportError(std::move(E));
    else
      note("report written to " + Opts.ReportDir + "/report.md");
  }
  if (Check && Status == 0 && FoundFaster) {
    outcome("verified faster code exists (--check); apply it with -i");
    return CheckFoundFaster;
  }
  return Status;
}

static SubcommandRegistration Reg(OptimizeCmd, runOptimize);

} // namespace tool
} // namespace astra
