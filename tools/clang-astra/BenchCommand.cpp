//===- BenchCommand.cpp - clang-astra bench -------------------------------===//
//
// Runs the optimizer over a benchmark suite (never writing the kernels; with
// --test, a winner counts only when the user's command passes with it in
// place, and the file is put back either way) and prints the scoreboard:
// per kernel and shape set baseline and optimized time, speedup, share of
// roofline and whether it was verified; then the geometric-mean speedup,
// fast_p and the mean share of roofline.
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
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <set>

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
static cl::opt<bool> Resume(
    "resume",
    cl::desc("Continue the scoreboard in the report directory: files it "
             "already has are not run again, and this run's kernels are "
             "added to it (the same clang-astra build only)"),
    cl::sub(BenchCmd), cl::cat(AstraCategory));
static cl::opt<double> StopAfter(
    "stop-after",
    cl::desc("Start no new file once this many seconds have passed since "
             "bench started (the file under way finishes); the scoreboard "
             "keeps what was measured and --resume continues it. For runs "
             "inside a time-limited GPU reservation (default 0: no limit)"),
    cl::init(0), cl::value_desc("seconds"), cl::sub(BenchCmd),
    cl::cat(AstraCategory));
static OptimizeOptions Opts(BenchCmd);

/// Moves DIR/report.{json,md} of an earlier run to report.<k>.{json,md}
/// (the first free k), so that resuming keeps every run's full report.
static Error keepEarlierReport(StringRef Dir) {
  SmallString<256> Json(Dir), Md(Dir);
  sys::path::append(Json, "report.json");
  sys::path::append(Md, "report.md");
  if (!sys::fs::exists(Json))
    return Error::success();
  for (unsigned K = 1;; ++K) {
    SmallString<256> ToJson(Dir), ToMd(Dir);
    sys::path::append(ToJson, "report." + std::to_string(K) + ".json");
    sys::path::append(ToMd, "report." + std::to_string(K) + ".md");
    if (sys::fs::exists(ToJson) || sys::fs::exists(ToMd))
      continue;
    if (std::error_code EC = sys::fs::rename(Json, ToJson))
      return createStringError(EC, "%s: %s", Json.c_str(),
                               EC.message().c_str());
    if (sys::fs::exists(Md))
      if (std::error_code EC = sys::fs::rename(Md, ToMd))
        return createStringError(EC, "%s: %s", Md.c_str(),
                                 EC.message().c_str());
    return Error::success();
  }
}

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
  auto Started = std::chrono::steady_clock::now();
  if (Inputs.empty())
    return reportError("bench: give a suite directory (e.g. kernels/) or files");
  if (StopAfter < 0)
    return reportError("bench: --stop-after must not be negative");
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
  if (Req->Static)
    return reportError("bench: --static cannot measure anything; bench needs "
                       "a GPU");
  if (Error E = recoverInterruptedTests(*Files))
    return reportError(std::move(E));

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
  // --resume: the scoreboard so far, and only the files it does not have.
  std::optional<StoredScoreboard> Earlier;
  if (Resume && sys::fs::exists(Path("scoreboard.json"))) {
    auto Text = readFile(Path("scoreboard.json"));
    if (!Text)
      return reportError(Text.takeError());
    auto P = parseScoreboardJson(*Text, Path("scoreboard.json"));
    if (!P)
      return reportError(P.takeError());
    RunInfo Now;
    fillRunInfo(Now, Opts, S);
    if (P->Info.ToolVersion != Now.ToolVersion)
      return reportError(
          "bench --resume: " + Path("scoreboard.json") + " was made by " +
          P->Info.ToolVersion + ", this is " + Now.ToolVersion +
          ": one scoreboard holds one build's measurements (use a new "
          "--report directory)");
    std::set<std::string> Done;
    for (const KernelScore &K : P->Board.Kernels)
      Done.insert(K.File);
    size_t Before = Files->size();
    Files->erase(std::remove_if(Files->begin(), Files->end(),
                                [&](const std::string &F) {
                                  return Done.count(displayPath(F)) != 0;
                                }),
                 Files->end());
    outcome("bench: resuming " + Path("scoreboard.json") + ": " +
            std::to_string(Before - Files->size()) + " of " +
            std::to_string(Before) + " files already measured");
    Earlier = std::move(*P);
  } else if (Resume) {
    note("bench: --resume: no scoreboard in " + Dir + " yet; starting one");
  }

  // A resumed scoreboard with nothing left to run is only printed again.
  if (!Files->empty()) {
    auto Driver = CudaDriver::get();
    if (!Driver)
      return reportError(toString(Driver.takeError()) +
                         "; bench needs a GPU");
    if (Earlier)
      if (Error E = keepEarlierReport(Dir))
        return reportError(std::move(E));
  }

  OptimizeDriver Driver(*TC, *CC, *Req, progressPrinter());
  std::vector<KernelReport> All;
  std::map<std::string, double> FileSeconds;
  std::string Md;
  // The scoreboard is rewritten after every file: a run cut short (a GPU
  // reservation ending) keeps what it measured.
  auto WriteScoreboard = [&](bool Write) -> Error {
    Scoreboard SB = buildScoreboard(All, Torch, FileSeconds);
    RunInfo Info = Driver.runInfo();
    fillRunInfo(Info, Opts, S);
    RunInfo ThisRun = Info;
    if (Earlier) {
      // Speedups are ratios measured on one GPU: never mix devices.
      auto Known = [](StringRef D) {
        return !D.empty() && D != "unknown" && !D.starts_with("none");
      };
      if (Known(Info.Device) && Known(Earlier->Info.Device) &&
          Info.Device != Earlier->Info.Device)
        return createStringError(
            inconvertibleErrorCode(),
            "bench --resume: the scoreboard was measured on %s, this run on "
            "%s: one scoreboard holds one GPU's measurements",
            Earlier->Info.Device.c_str(), Info.Device.c_str());
      SB = mergeScoreboards(Earlier->Board, SB);
      Info.Date = Earlier->Info.Date;
      Info.Command = Earlier->Info.Command + "; resumed " + ThisRun.Date +
                     ": " + ThisRun.Command;
      if (!Known(Info.Device))
        Info.Device = Earlier->Info.Device;
    }
    Md = scoreboardMarkdown(SB, Info);
    if (!Write)
      return Error::success();
    for (auto &[Name, Text] :
         std::vector<std::pair<std::string, std::string>>{
             {"scoreboard.md", Md},
             {"scoreboard.json", scoreboardJson(SB, Info)},
             {"scoreboard.svg", scoreboardSvg(SB)}})
      if (Error E = writeFileAtomically(Path(Name), Text))
        return E;
    return writeReport(Dir, ThisRun, All);
  };
  if (Files->empty())
    if (Error E = WriteScoreboard(/*Write=*/false))
      return reportError(std::move(E));
  auto SecondsSince = [](std::chrono::steady_clock::time_point T) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - T)
        .count();
  };
  for (size_t I = 0; I < Files->size(); ++I) {
    const std::string &File = (*Files)[I];
    double Elapsed = SecondsSince(Started);
    if (StopAfter > 0 && Elapsed >= StopAfter) {
      std::vector<std::string> Left;
      for (size_t J = I; J < Files->size(); ++J)
        Left.push_back(displayPath((*Files)[J]));
      bool One = Left.size() == 1;
      std::string Limit;
      raw_string_ostream(Limit) << format("%g", StopAfter.getValue());
      outcome(formatv("bench: --stop-after {0}: {1:f0} s passed; {2} {3} not "
                      "started ({4}); `bench --resume` with the same --report "
                      "measures {5}",
                      Limit, Elapsed, Left.size(), One ? "file" : "files",
                      join(Left, ", "), One ? "it" : "them")
                  .str());
      break;
    }
    auto FileStart = std::chrono::steady_clock::now();
    FileOutcome FO = Driver.runFile(File);
    // --test: a winner counts only when the user's command passes with it
    // in place; bench puts every file back either way.
    if (!Opts.TestCommand.empty() && FO.Error.empty() && !FO.Final.empty()) {
      std::vector<size_t> Owners;
      for (size_t K = 0; K < FO.Kernels.size(); ++K)
        if (FO.Kernels[K].Outcome.Winner)
          Owners.push_back(K);
      auto Passed = testRewrite(Opts, FO, FO.Final, /*KeepOnPass=*/false,
                                Owners);
      if (!Passed)
        return reportError(Passed.takeError());
    }
    double Took = SecondsSince(FileStart);
    if (!FO.Error.empty()) {
      KernelReport R;
      R.File = displayPath(FO.File);
      R.Kernel = sys::path::stem(FO.File).str();
      R.Error = FO.Error;
      printKernelSummary(errs(), R);
      FileSeconds[R.File] = Took;
      All.push_back(R);
    }
    for (KernelReport &R : FO.Kernels) {
      printKernelSummary(errs(), R);
      FileSeconds[R.File] = Took;
      All.push_back(R);
    }
    if (Error E = WriteScoreboard(/*Write=*/true))
      return reportError(std::move(E));
  }
  outs() << Md;
  if (!Files->empty())
    note("bench: scoreboard written to " + Path("scoreboard.md"));
  return 0;
}

static SubcommandRegistration Reg(BenchCmd, runBench);

} // namespace tool
} // namespace astra
