//===- BenchCommand.cpp - clang-astra bench -------------------------------===//
//
// Runs the optimizer over a benchmark suite (never writing the kernels) and
// prints the scoreboard: per kernel and shape set baseline and optimized
// time, speedup, share of roofline and whether it was verified; then the
// geometric-mean speedup, fast_p and the mean share of roofline.
//
//===----------------------------------------------------------------------===//
#include "Common.h"
#include "OptimizeOptions.h"
#include "Subcommands.h"
#include "astra/Bench/Scoreboard.h"
#include "astra/Frontend/KernelModel.h"
#include "astra/Runtime/CudaDriver.h"
#include "astra/Spec/Spec.h"
#include "astra/Support/FileIO.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace llvm;

namespace astra {
namespace tool {

static cl::SubCommand BenchCmd(
    "bench", "Optimize a kernel suite and print the scoreboard (writes no "
             "kernel)");
static cl::list<std::string> Inputs(cl::Positional,
                                    cl::desc("<directories or files>"),
                                    cl::sub(BenchCmd), cl::cat(AstraCategory));
static cl::opt<std::string>
    TorchJson("torch",
              cl::desc("PyTorch eager and torch.compile timings "
                       "(bench/torch_baselines.py --out FILE)"),
              cl::value_desc("file.json"), cl::sub(BenchCmd),
              cl::cat(AstraCategory));
static OptimizeOptions Opts(BenchCmd);

/// Every .cu file with a spec beside it, in a stable order.
static Expected<std::vector<std::string>> collectSuite() {
  std::vector<std::string> Out;
  for (const std::string &In : Inputs) {
    if (!sys::fs::is_directory(In)) {
      if (Error E = checkReadableFile(In))
        return E;
      Out.push_back(In);
      continue;
    }
    std::error_code EC;
    for (sys::fs::recursive_directory_iterator It(In, EC), End;
         !EC && It != End; It.increment(EC)) {
      StringRef P = It->path();
      if (P.ends_with(".cu") && sys::fs::exists(specPathFor(P)))
        Out.push_back(P.str());
    }
    if (EC)
      return createStringError(EC, "%s: %s", In.c_str(), EC.message().c_str());
  }
  std::sort(Out.begin(), Out.end());
  Out.erase(std::unique(Out.begin(), Out.end()), Out.end());
  if (Out.empty())
    return createStringError(inconvertibleErrorCode(),
                             "bench: no .cu files with a spec "
                             "(<file>.astra.json) under the given inputs");
  return Out;
}

static int runBench(const Session &S) {
  if (Inputs.empty())
    return reportError("bench: give a suite directory (e.g. kernels/) or files");
  auto Files = collectSuite();
  if (!Files)
    return reportError(Files.takeError());
  std::map<std::string, std::pair<double, double>> Torch;
  if (!TorchJson.empty()) {
    auto T = loadTorchBaselines(TorchJson);
    if (!T)
      return reportError(T.takeError());
    Torch = std::move(*T);
  }
  auto TC = makeToolchain(S);
  if (!TC)
    return reportError(TC.takeError());
  auto CC = makeCompileCommands(S);
  if (!CC)
    return reportError(CC.takeError());
  if (Opts.Kernels.size() > 1)
    return reportError("bench: --kernel may be given once");
  auto Req = Opts.request(*Files);
  if (!Req)
    return reportError(Req.takeError());
  // A scoreboard reports what this run measured: never an earlier run's
  // outcome from the result cache.
  Req->UseResultCache = false;
  if (!Req->Static) {
    auto Driver = CudaDriver::get();
    if (!Driver)
      return reportError(toString(Driver.takeError()) +
                         "; bench needs a GPU");
  }
  if (Req->Static)
    return reportError("bench: --static cannot measure anything; bench needs "
                       "a GPU");

  note("bench: " + std::to_string(Files->size()) + " files");
  std::string Dir = Opts.ReportDir.empty() ? std::string("bench-report")
                                           : Opts.ReportDir.getValue();
  if (std::error_code EC = sys::fs::create_directories(Dir))
    return reportError(Dir + ": " + EC.message());
  auto Path = [&](StringRef Name) {
    SmallString<256> P(Dir);
    sys::path::append(P, Name);
    return std::string(P);
  };
  OptimizeDriver Driver(*TC, *CC, *Req, progressPrinter());
  std::vector<KernelReport> All;
  std::string Md;
  // The scoreboard is rewritten after every file: a run cut short (a GPU
  // reservation ending) keeps what it measured.
  auto WriteScoreboard = [&]() -> Error {
    Scoreboard SB = buildScoreboard(All, Torch);
    RunInfo Info = Driver.runInfo();
    fillRunInfo(Info, Opts, S);
    Md = scoreboardMarkdown(SB, Info);
    for (auto &[Name, Text] :
         std::vector<std::pair<std::string, std::string>>{
             {"scoreboard.md", Md},
             {"scoreboard.json", scoreboardJson(SB, Info)},
             {"scoreboard.svg", scoreboardSvg(SB)}})
      if (Error E = writeFileAtomically(Path(Name), Text))
        return E;
    return writeReport(Dir, Info, All);
  };
  for (const std::string &File : *Files) {
    FileOutcome FO = Driver.runFile(File);
    if (!FO.Error.empty()) {
      KernelReport R;
      R.File = displayPath(FO.File);
      R.Kernel = sys::path::stem(FO.File).str();
      R.Error = FO.Error;
      printKernelSummary(errs(), R);
      All.push_back(R);
    }
    for (KernelReport &R : FO.Kernels) {
      printKernelSummary(errs(), R);
      All.push_back(R);
    }
    if (Error E = WriteScoreboard())
      return reportError(std::move(E));
  }
  outs() << Md;
  note("bench: scoreboard written to " + Path("scoreboard.md"));
  return 0;
}

static SubcommandRegistration Reg(BenchCmd, runBench);

} // namespace tool
} // namespace astra
