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
#include "astra/Engine/JobRunner.h"
#include "astra/Exec/Executor.h"
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
#include <csignal>
#include <cstdlib>
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
/// Set by a bench that spreads files over workers, for each worker's
/// bench: the kernel summary lines also go to this file, which the parent
/// prints in the order a one-worker run prints them.
static cl::opt<std::string> WorkerSummary("worker-summary", cl::Hidden,
                                          cl::sub(BenchCmd));

/// Options of this bench that the parent handles, not a worker's bench.
static bool parentOnly(StringRef Name) {
  return Name == "gpus" || Name == "executor" || Name == "slurm-args" ||
         Name == "job-dir" || Name == "report" || Name == "resume" ||
         Name == "stop-after" || Name == "worker-summary";
}

/// The command that runs \p File's bench alone: this command's options,
/// less the inputs and what parentOnly names, on one GPU, reporting into
/// \p ReportDir.
static std::vector<std::string> workerCommand(const Session &S, StringRef File,
                                              StringRef ReportDir,
                                              StringRef Summary) {
  auto &Known = cl::getRegisteredOptions(BenchCmd);
  std::vector<std::string> Out = {jobRunnerExecutable(), "bench"};
  for (size_t I = 2; I < S.Args.size(); ++I) {
    StringRef A = S.Args[I];
    if (!A.starts_with("-") || A == "-")
      continue; // An input: the worker gets its own.
    StringRef Name = A.ltrim('-');
    bool Inline = Name.contains('=');
    Name = Name.split('=').first;
    auto It = Known.find(Name);
    bool TakesNext = It != Known.end() && !Inline &&
                     It->second->getValueExpectedFlag() == cl::ValueRequired;
    if (!parentOnly(Name)) {
      Out.push_back(A.str());
      if (TakesNext && I + 1 < S.Args.size())
        Out.push_back(S.Args[I + 1]);
    }
    if (TakesNext)
      ++I;
  }
  Out.insert(Out.end(), {File.str(), "--report", ReportDir.str(),
                         "--gpus", "1", "--worker-summary", Summary.str()});
  if (S.HasDashDash) {
    Out.push_back("--");
    Out.insert(Out.end(), S.ExtraFlags.begin(), S.ExtraFlags.end());
  }
  return Out;
}

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

/// bench with several workers: each file's whole bench runs in a process
/// of its own on one worker (a GPU, or a Slurm job), and the scoreboard
/// and report are merged from theirs in the files' order, the order a
/// one-worker run measures and prints them in.
static int benchOnWorkers(const Session &S, exec::Executor &E,
                          const std::vector<std::string> &Files,
                          StringRef Dir,
                          const std::optional<StoredScoreboard> &Earlier,
                          const std::map<std::string, std::pair<double, double>>
                              &Torch) {
  auto In = [](StringRef Parent, StringRef Name) {
    SmallString<256> P(Parent);
    sys::path::append(P, Name);
    return std::string(P);
  };
  std::vector<exec::Task> Tasks;
  for (size_t I = 0; I < Files.size(); ++I) {
    std::string Work = In(E.taskDirectory(), "file-" + std::to_string(I));
    if (std::error_code EC = sys::fs::create_directories(Work))
      return reportError(Work + ": " + EC.message());
    exec::Task T;
    T.Name = displayPath(Files[I]);
    T.Args = workerCommand(S, Files[I], Work, In(Work, "summary.txt"));
    T.ResultPath = In(Work, "scoreboard.json");
    T.LogPath = In(Work, "log.txt");
    // A file's bench bounds each of its own jobs (--job-timeout); the whole
    // of it has no limit of its own.
    T.TimeoutSeconds = 0;
    Tasks.push_back(std::move(T));
  }
  note(formatv("bench: {0} files on {1} workers", Files.size(), E.workers()));
  showExecutorProgress(E, "bench");

  std::optional<Scoreboard> Board;
  if (Earlier)
    Board = Earlier->Board;
  RunInfo Info;
  std::vector<std::string> Json, JsonNames, Md;
  std::string ScoreMd;
  Error Failed = Error::success();
  bool AnyFailed = false;
  auto Text = [](StringRef Path) -> std::string {
    auto T = readFile(Path);
    if (!T) {
      consumeError(T.takeError());
      return "";
    }
    return *T;
  };
  exec::InOrder Deliver(Files.size(), [&](size_t I,
                                          const exec::TaskOutcome &O) {
    if (Failed)
      return;
    const exec::Task &T = Tasks[I];
    std::string Work = sys::path::parent_path(T.ResultPath).str();
    Scoreboard Part;
    if (ProgressQuiet || !errs().is_displayed()) {
    } else {
      errs() << "\r\033[K";
    }
    std::optional<StoredScoreboard> Stored;
    if (O.S == exec::TaskOutcome::Finished) {
      auto P = parseScoreboardJson(Text(T.ResultPath), T.ResultPath);
      if (!P) {
        Failed = P.takeError();
        return;
      }
      Stored = std::move(*P);
    }
    if (Stored) {
      Part = Stored->Board;
      errs() << Text(In(Work, "summary.txt"));
      std::string ReportText = Text(In(Work, "report.json"));
      if (Info.Device.empty() || Info.Device == "unknown") {
        Info = Stored->Info;
        // What the scoreboard does not hold, the worker's report does.
        rapidjson::Document D;
        D.Parse(ReportText.data(), ReportText.size());
        if (!D.HasParseError() && D.IsObject()) {
          auto TC = D.FindMember("timed_compiler");
          if (TC != D.MemberEnd() && TC->value.IsString())
            Info.TimedCompiler = TC->value.GetString();
          auto BW = D.FindMember("copy_bandwidth_gbs");
          if (BW != D.MemberEnd() && BW->value.IsNumber())
            Info.CopyBandwidthGBs = BW->value.GetDouble();
        }
      }
      Json.push_back(ReportText);
      JsonNames.push_back(In(Work, "report.json"));
      Md.push_back(Text(In(Work, "report.md")));
    } else {
      // The file could not be measured for reasons outside it: a row that
      // says so, as a file the optimizer could not run gets.
      AnyFailed = true;
      KernelReport R;
      R.File = displayPath(Files[I]);
      R.Kernel = sys::path::stem(Files[I]).str();
      R.Error = O.describe() + " (its log: " + T.LogPath + ")";
      printKernelSummary(errs(), R);
      Part = buildScoreboard({R}, Torch, {{R.File, 0.0}});
      RunInfo None;
      Json.push_back(reportJson(None, {R}));
      JsonNames.push_back(T.Name);
      Md.push_back(reportMarkdown(None, {R}));
    }
    Board = Board ? mergeScoreboards(*Board, Part) : Part;
    RunInfo ThisRun = Info;
    fillRunInfo(ThisRun, Opts, S);
    RunInfo BoardInfo = ThisRun;
    if (Earlier) {
      BoardInfo.Date = Earlier->Info.Date;
      BoardInfo.Command = Earlier->Info.Command + "; resumed " +
                          ThisRun.Date + ": " + ThisRun.Command;
    }
    ScoreMd = scoreboardMarkdown(*Board, BoardInfo);
    auto Report = mergeReportJson(ThisRun, Json, JsonNames);
    if (!Report) {
      Failed = Report.takeError();
      return;
    }
    for (auto &[Name, Content] :
         std::vector<std::pair<std::string, std::string>>{
             {"scoreboard.md", ScoreMd},
             {"scoreboard.json", scoreboardJson(*Board, BoardInfo)},
             {"scoreboard.svg", scoreboardSvg(*Board)},
             {"report.json", *Report},
             {"report.md", mergeReportMarkdown(ThisRun, Md)}})
      if (Error Err = writeFileAtomically(In(Dir, Name), Content)) {
        Failed = std::move(Err);
        return;
      }
  });
  E.run(Tasks, [&](size_t I, const exec::TaskOutcome &O) {
    Deliver.arrived(I, O);
  });
  if (!ProgressQuiet && errs().is_displayed())
    errs() << "\r\033[K";
  if (Failed)
    return reportError(std::move(Failed));
  // The workers' files are kept only where one failed (its log says why).
  if (!AnyFailed)
    sys::fs::remove_directories(E.taskDirectory());
  outs() << ScoreMd;
  note("bench: scoreboard written to " + In(Dir, "scoreboard.md"));
  return 0;
}

/// A worker's bench that dies at once, for the tests of what happens then
/// (no GPU is needed to make a process die): ASTRA_TEST_KILL_WORKER names
/// the CUDA_VISIBLE_DEVICES value of the worker whose bench is killed, or
/// "all".
static void killWorkerForTests() {
  const char *Kill = std::getenv("ASTRA_TEST_KILL_WORKER");
  const char *Gpu = std::getenv("CUDA_VISIBLE_DEVICES");
  if (WorkerSummary.empty() || !Kill || !Gpu)
    return;
  if (StringRef(Kill) == "all" || StringRef(Kill) == Gpu)
    ::raise(SIGKILL);
}

static int runBench(const Session &S) {
  auto Started = std::chrono::steady_clock::now();
  killWorkerForTests();
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
  if (Error E = recoverInterruptedTests(*Files))
    return reportError(std::move(E));

  auto Exec = Opts.makeExecutor("bench");
  if (!Exec)
    return reportError(Exec.takeError());
  if (*Exec && !Files->empty()) {
    if (StopAfter > 0)
      return reportError("bench: --stop-after works with one worker only "
                         "(--gpus 1)");
    if (!Opts.TestCommand.empty())
      return reportError("bench: --test puts each winner into your files "
                         "while your command runs; with several workers two "
                         "files' tests could overlap: use --gpus 1");
  }
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
  if (!Files->empty() && !Req->Static) {
    auto Driver = CudaDriver::get();
    if (!Driver)
      return reportError(toString(Driver.takeError()) +
                         "; bench needs a GPU");
    if (Earlier)
      if (Error E = keepEarlierReport(Dir))
        return reportError(std::move(E));
  }

  if (*Exec && !Files->empty())
    return benchOnWorkers(S, **Exec, *Files, Dir, Earlier, Torch);

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
  // A kernel's summary line on stderr, and for a worker's bench also in
  // the file its parent prints from.
  std::string SummarySoFar;
  auto Summarize = [&](const KernelReport &R) -> Error {
    printKernelSummary(errs(), R);
    if (WorkerSummary.empty())
      return Error::success();
    raw_string_ostream OS(SummarySoFar);
    printKernelSummary(OS, R);
    return writeFileAtomically(WorkerSummary, SummarySoFar);
  };
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
      if (Error E = Summarize(R))
        return reportError(std::move(E));
      FileSeconds[R.File] = Took;
      All.push_back(R);
    }
    for (KernelReport &R : FO.Kernels) {
      if (Error E = Summarize(R))
        return reportError(std::move(E));
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
