//===- OptimizeOptions.cpp ------------------------------------------------===//
#include "OptimizeOptions.h"
#include "astra/Exec/GpuSelection.h"
#include "astra/Exec/LocalBackend.h"
#include "astra/Exec/SlurmBackend.h"
#include "astra/Runtime/Device.h"
#include "astra/Config.h"
#include "astra/Rewrite/Pass.h"
#include "astra/Support/Clock.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace llvm;

namespace astra {
namespace tool {

bool ProgressQuiet = false;

OptimizeOptions::OptimizeOptions(cl::SubCommand &Cmd)
    : Kernels("kernel",
              cl::desc("Only this kernel (spec name or base name); "
                       "repeatable"),
              cl::value_desc("name"), cl::sub(Cmd), cl::cat(AstraCategory)),
      SpecPath("spec", cl::desc("Workload spec (default: <file>.astra.json)"),
               cl::value_desc("file"), cl::sub(Cmd), cl::cat(AstraCategory)),
      ReportDir("report",
                cl::desc("Write report.json and report.md (and LLM "
                         "transcripts) to this directory"),
                cl::value_desc("dir"), cl::sub(Cmd), cl::cat(AstraCategory)),
      Rounds("rounds", cl::desc("Rounds of planning (default 5)"),
             cl::init(5), cl::sub(Cmd), cl::cat(AstraCategory)),
      Candidates("candidates", cl::desc("Candidates per round (default 4)"),
                 cl::init(4), cl::sub(Cmd), cl::cat(AstraCategory)),
      Beam("beam", cl::desc("Best candidates kept as parents (default 2)"),
           cl::init(2), cl::sub(Cmd), cl::cat(AstraCategory)),
      Seeds("seeds", cl::desc("Random seeds per shape set (default 5, min 5)"),
            cl::init(5), cl::sub(Cmd), cl::cat(AstraCategory)),
      Runs("runs", cl::desc("Timed runs per kernel and shape set (default 50)"),
           cl::init(50), cl::sub(Cmd), cl::cat(AstraCategory)),
      JobTimeout("job-timeout",
                 cl::desc("Seconds one verify/profile job may take (default "
                          "600)"),
                 cl::init(600), cl::sub(Cmd), cl::cat(AstraCategory)),
      MinSpeedup("min-speedup",
                 cl::desc("Speedup a candidate needs on every shape set to "
                          "count as faster (default 1.02)"),
                 cl::init(1.02), cl::sub(Cmd), cl::cat(AstraCategory)),
      MinShapeSpeedup(
          "min-shape-speedup",
          cl::desc("Speedup every shape set needs, --min-speedup then "
                   "applying to the geometric mean (default: --min-speedup "
                   "on every shape set; 1.0: not slower on any shape set and "
                   "faster overall)"),
          cl::init(0), cl::sub(Cmd), cl::cat(AstraCategory)),
      TimeBudget("time-budget",
                 cl::desc("Seconds per kernel after which no new candidate "
                          "is tried; the best so far is still confirmed "
                          "(default 0: no limit)"),
                 cl::init(0), cl::value_desc("seconds"), cl::sub(Cmd),
                 cl::cat(AstraCategory)),
      AllowShapeRegression(
          "allow-shape-regression",
          cl::desc("Accept candidates slower on some shape set if faster on "
                   "geometric mean"),
          cl::sub(Cmd), cl::cat(AstraCategory)),
      SplitShapes(
          "split-shapes",
          cl::desc("Also try each kernel whose shape sets span sizes 4x apart "
                   "or more as two kernels (shape-split: small and large "
                   "launches), each optimized on its own sets; keep the split "
                   "when it is 2% faster or more over all sets"),
          cl::sub(Cmd), cl::cat(AstraCategory)),
      Static("static",
             cl::desc("No GPU: run the passes and the NVPTX compile only; "
                      "write nothing"),
             cl::sub(Cmd), cl::cat(AstraCategory)),
      Sanitize("sanitize",
               cl::desc("Also run candidates under compute-sanitizer"),
               cl::sub(Cmd), cl::cat(AstraCategory)),
      NoCache("no-cache", cl::desc("Bypass the result, PTX and LLM reply caches"),
              cl::sub(Cmd), cl::cat(AstraCategory)),
      Passes("passes", cl::desc("Passes the agents may use (default: all)"),
             cl::CommaSeparated, cl::sub(Cmd), cl::cat(AstraCategory)),
      Agents("agents",
             cl::desc("offline (rule-based planner over the pass library) or "
                      "llm (default: llm when --llm-model or $ASTRA_LLM_MODEL "
                      "is set, else offline)"),
             cl::sub(Cmd), cl::cat(AstraCategory)),
      LLMBaseUrl("llm-base-url",
                 cl::desc("OpenAI-compatible API base URL (default "
                          "https://api.openai.com/v1)"),
                 cl::init("https://api.openai.com/v1"), cl::sub(Cmd),
                 cl::cat(AstraCategory)),
      LLMModel("llm-model", cl::desc("Model for planner and coder"),
               cl::sub(Cmd), cl::cat(AstraCategory)),
      LLMPlannerModel("llm-planner-model",
                      cl::desc("Model for the planner (default --llm-model)"),
                      cl::sub(Cmd), cl::cat(AstraCategory)),
      LLMCoderModel("llm-coder-model",
                    cl::desc("Model for the coder (default --llm-model)"),
                    cl::sub(Cmd), cl::cat(AstraCategory)),
      LLMTimeout("llm-timeout",
                 cl::desc("Seconds one LLM request may take (default 300)"),
                 cl::init(300), cl::sub(Cmd), cl::cat(AstraCategory)),
      LLMRetries("llm-retries",
                 cl::desc("Retries on 429, 5xx and network errors (default 4)"),
                 cl::init(4), cl::sub(Cmd), cl::cat(AstraCategory)),
      NoLLMCache("no-llm-cache", cl::desc("Bypass the LLM reply cache"),
                 cl::sub(Cmd), cl::cat(AstraCategory)),
      Seed("seed", cl::desc("Seed of the run: seeds of the inputs and the "
                            "planner's order derive from it (default 1)"),
           cl::init(1), cl::sub(Cmd), cl::cat(AstraCategory)),
      TimingCompiler(
          "timing-compiler",
          cl::desc("Which compiler makes the code that is verified and "
                   "timed: auto (nvcc with the build's device flags when the "
                   "build compiles the file with nvcc, else clang; the "
                   "default), clang or nvcc; clang's NVPTX compile is always "
                   "the gate"),
          cl::init("auto"), cl::sub(Cmd), cl::cat(AstraCategory)),
      TestCommand(
          "test",
          cl::desc("Your own test: after a winner is chosen, run this command "
                   "(/bin/sh -c, $ASTRA_TEST_FILE names the file) with the "
                   "rewrite in place; it is kept only when the command exits "
                   "0, else every file is put back byte for byte"),
          cl::value_desc("command"), cl::sub(Cmd), cl::cat(AstraCategory)),
      TestDir("test-dir",
              cl::desc("Directory the --test command runs in (default: the "
                       "current one)"),
              cl::value_desc("dir"), cl::sub(Cmd), cl::cat(AstraCategory)),
      TestTimeout("test-timeout",
                  cl::desc("Seconds the --test command may take; then its "
                           "process group is killed and it counts as failed "
                           "(default 600; 0: no limit)"),
                  cl::init(600), cl::value_desc("seconds"), cl::sub(Cmd),
                  cl::cat(AstraCategory)),
      Gpus("gpus",
           cl::desc("Local GPUs to spread the work over, one worker process "
                    "each: all (the default), a count N (the first N) or a "
                    "list 0,2 (docs/scale-out.md); with --executor=slurm, how "
                    "many jobs may be in Slurm at once (default 8)"),
           cl::value_desc("all|N|0,2"), cl::sub(Cmd), cl::cat(AstraCategory)),
      ExecutorKind("executor",
                   cl::desc("Where jobs run: local (this machine's GPUs, the "
                            "default) or slurm (sbatch jobs)"),
                   cl::init("local"), cl::value_desc("local|slurm"),
                   cl::sub(Cmd), cl::cat(AstraCategory)),
      SlurmArgs("slurm-args",
                cl::desc("Options for every sbatch, as a shell would split "
                         "them (partition, account, gres, time)"),
                cl::value_desc("'-p gpu --gres=gpu:1 ...'"), cl::sub(Cmd),
                cl::cat(AstraCategory)),
      JobDir("job-dir",
             cl::desc("With --executor=slurm: a directory every node sees "
                      "(job files, results, logs; default .astra-jobs in the "
                      "current directory)"),
             cl::value_desc("dir"), cl::sub(Cmd), cl::cat(AstraCategory)),
      Jobs("j",
           cl::desc("Candidates of a round coded and compiled at once, on "
                    "the CPU while the GPU verifies the ones before them "
                    "(default 0: one per core); results do not depend on it"),
           cl::init(0), cl::value_desc("N"), cl::sub(Cmd),
           cl::cat(AstraCategory)) {}

Expected<OptimizeRequest>
OptimizeOptions::request(std::vector<std::string> Files) const {
  OptimizeRequest R;
  R.Files = std::move(Files);
  // One kernel per driver run; the caller loops over the others.
  if (!Kernels.empty())
    R.Kernel = Kernels.front();
  R.SpecPath = SpecPath;
  if (Rounds == 0 || Candidates == 0 || Beam == 0)
    return createStringError(inconvertibleErrorCode(),
                             "--rounds, --candidates and --beam must be at "
                             "least 1");
  if (Seeds < 5)
    return createStringError(inconvertibleErrorCode(),
                             "--seeds must be at least 5 (a candidate is "
                             "verified on at least 5 fresh seeds per shape "
                             "set)");
  if (Runs < 50)
    return createStringError(inconvertibleErrorCode(),
                             "--runs must be at least 50");
  if (MinSpeedup < 1.0)
    return createStringError(inconvertibleErrorCode(),
                             "--min-speedup must be at least 1.0");
  if (TestCommand.getNumOccurrences() && StringRef(TestCommand).trim().empty())
    return createStringError(inconvertibleErrorCode(),
                             "--test: the command is empty");
  if (TestCommand.empty() &&
      (TestDir.getNumOccurrences() || TestTimeout.getNumOccurrences()))
    return createStringError(inconvertibleErrorCode(),
                             "--test-dir and --test-timeout need --test");
  if (!TestDir.empty() && !sys::fs::is_directory(TestDir))
    return createStringError(inconvertibleErrorCode(),
                             "--test-dir: '%s' is not a directory",
                             TestDir.c_str());
  R.Orchestrator.Rounds = Rounds;
  R.Orchestrator.CandidatesPerRound = Candidates;
  R.Orchestrator.BeamWidth = Beam;
  R.Orchestrator.MinSpeedup = MinSpeedup;
  if (MinShapeSpeedup.getNumOccurrences()) {
    if (MinShapeSpeedup < 1.0)
      return createStringError(inconvertibleErrorCode(),
                               "--min-shape-speedup must be at least 1.0 "
                               "(--allow-shape-regression accepts slower "
                               "shape sets)");
    R.Orchestrator.MinShapeSpeedup = MinShapeSpeedup;
  }
  if (TimeBudget < 0)
    return createStringError(inconvertibleErrorCode(),
                             "--time-budget must not be negative");
  R.Orchestrator.TimeBudgetSeconds = TimeBudget;
  R.Orchestrator.AllowShapeRegression = AllowShapeRegression;
  R.Engine.Seed = Seed;
  R.Engine.SeedsPerShape = Seeds;
  R.Engine.Runs = Runs;
  R.Engine.Sanitize = Sanitize;
  R.Engine.JobTimeoutSeconds = JobTimeout;
  R.Engine.UseCache = !NoCache;
  R.Engine.CompileThreads = R.Orchestrator.CodingThreads = Jobs;
  R.Static = Static;
  if (TimingCompiler != "auto" && TimingCompiler != "clang" &&
      TimingCompiler != "nvcc")
    return createStringError(inconvertibleErrorCode(),
                             "--timing-compiler=%s: expected auto, clang or "
                             "nvcc",
                             TimingCompiler.getValue().c_str());
  R.TimingCompiler = TimingCompiler;
  R.SplitShapes = SplitShapes;
  if (!Passes.empty()) {
    auto Selected = selectPasses(Passes);
    if (!Selected)
      return Selected.takeError();
    R.AllowedPasses = std::move(*Selected);
  }

  std::string Model = LLMModel;
  if (Model.empty())
    if (const char *E = std::getenv("ASTRA_LLM_MODEL"))
      Model = E;
  std::string Mode = Agents;
  if (Mode.empty())
    Mode = Model.empty() && LLMPlannerModel.empty() && LLMCoderModel.empty()
               ? "offline"
               : "llm";
  if (Mode != "offline" && Mode != "llm")
    return createStringError(inconvertibleErrorCode(),
                             "--agents must be 'offline' or 'llm', not '%s'",
                             Mode.c_str());
  R.Agents = Mode;
  if (SplitShapes && Mode != "offline")
    return createStringError(inconvertibleErrorCode(),
                             "--split-shapes works with the offline agents "
                             "only (the LLM coder rewrites the file the "
                             "split is not part of)");
  if (Mode == "llm") {
    std::string PM = LLMPlannerModel.empty() ? Model : LLMPlannerModel.getValue();
    std::string CM = LLMCoderModel.empty() ? Model : LLMCoderModel.getValue();
    if (PM.empty() || CM.empty())
      return createStringError(inconvertibleErrorCode(),
                               "--agents=llm needs a model: --llm-model (or "
                               "--llm-planner-model and --llm-coder-model, "
                               "or $ASTRA_LLM_MODEL)");
    for (LLMConfig *C : {&R.PlannerLLM, &R.CoderLLM}) {
      C->BaseUrl = LLMBaseUrl;
      C->TimeoutSeconds = LLMTimeout;
      C->MaxRetries = LLMRetries;
      C->UseCache = !NoLLMCache && !NoCache;
    }
    R.PlannerLLM.Name = "planner";
    R.PlannerLLM.Model = PM;
    R.CoderLLM.Name = "coder";
    R.CoderLLM.Model = CM;
    if (!ReportDir.empty()) {
      SmallString<256> T(ReportDir.getValue());
      sys::path::append(T, "transcripts");
      R.TranscriptDir = std::string(T);
    }
  }
  // Everything here that can change an outcome is part of the result
  // cache's key (the kernel selection is added per driver run).
  R.UseResultCache = !NoCache && !Static;
  std::string O;
  raw_string_ostream OS(O);
  OS << "tool=" << ASTRA_VERSION << " " << ASTRA_GIT_REVISION
     << "\nagents=" << R.Agents << " " << R.PlannerLLM.BaseUrl << " "
     << R.PlannerLLM.Model << " " << R.CoderLLM.Model
     << "\npasses=" << join(R.AllowedPasses, ",") << "\nrounds=" << Rounds
     << " candidates=" << Candidates << " beam=" << Beam
     << " min-speedup=" << MinSpeedup
     << " min-shape-speedup=" << R.Orchestrator.MinShapeSpeedup.value_or(0)
     << " time-budget=" << TimeBudget
     << " allow-shape-regression=" << AllowShapeRegression
     << " split-shapes=" << SplitShapes
     << "\nseed=" << Seed << " seeds=" << Seeds << " runs=" << Runs
     << " sanitize=" << Sanitize << "\nspec=" << SpecPath;
  R.CacheOptions = OS.str();
  ProgressQuiet = Quiet;
  return R;
}

Expected<std::unique_ptr<exec::Executor>>
OptimizeOptions::makeExecutor(StringRef What) const {
  auto Fail = [&](const Twine &Why) {
    return createStringError(inconvertibleErrorCode(), "%s: %s",
                             What.str().c_str(), Why.str().c_str());
  };
  if (ExecutorKind != "local" && ExecutorKind != "slurm")
    return Fail("--executor=" + ExecutorKind +
                ": expected local or slurm");
  if (ExecutorKind == "local" &&
      (SlurmArgs.getNumOccurrences() || JobDir.getNumOccurrences()))
    return Fail("--slurm-args and --job-dir need --executor=slurm");
  if (Static && (Gpus.getNumOccurrences() || ExecutorKind == "slurm") &&
      What == "optimize")
    return Fail("--static runs nothing on a GPU: --gpus and --executor do "
                "not apply");
  // One process per job: every job the executor runs writes its files in a
  // directory of this run's own.
  auto TaskDir = [&](StringRef Parent) -> Expected<std::string> {
    SmallString<256> Base(Parent);
    if (Base.empty()) {
      if (std::error_code EC =
              sys::fs::createUniqueDirectory("astra-exec", Base))
        return Fail("cannot create a directory for the jobs: " +
                    EC.message());
      return std::string(Base);
    }
    if (std::error_code EC = sys::fs::make_absolute(Base))
      return Fail(Base + ": " + EC.message());
    if (std::error_code EC = sys::fs::create_directories(Base))
      return Fail(Base + ": cannot create the job directory: " +
                  EC.message());
    sys::path::append(Base, "run-%%%%%%%%");
    SmallString<256> Dir;
    if (std::error_code EC = sys::fs::createUniqueDirectory(Base, Dir))
      return Fail(Base + ": " + EC.message());
    return std::string(Dir);
  };
  if (ExecutorKind == "slurm") {
    unsigned Slots = 8;
    if (Gpus.getNumOccurrences() && Gpus != "all" &&
        (StringRef(Gpus).getAsInteger(10, Slots) || Slots == 0))
      return Fail("--gpus " + Gpus +
                  ": with --executor=slurm, a number of jobs (at least 1)");
    auto Args = exec::SlurmBackend::splitArgs(SlurmArgs);
    if (!Args)
      return Args.takeError();
    if (!sys::findProgramByName("sbatch"))
      return Fail("--executor=slurm: sbatch is not on PATH");
    auto Dir = TaskDir(JobDir.empty() ? ".astra-jobs" : JobDir.getValue());
    if (!Dir)
      return Dir.takeError();
    std::string Run = "astra-" + sys::path::filename(*Dir).str();
    return std::make_unique<exec::Executor>(
        std::make_unique<exec::SlurmBackend>(Slots, std::move(*Args), *Dir,
                                             Run));
  }
  // The GPUs this process sees. ASTRA_EXEC_FAKE_GPUS, for tests on machines
  // without one, makes that number up: the workers then run only jobs
  // that need no GPU (bench --static), or lose their worker at once.
  unsigned Visible = 0;
  if (const char *Fake = std::getenv("ASTRA_EXEC_FAKE_GPUS")) {
    if (StringRef(Fake).getAsInteger(10, Visible))
      return Fail(Twine("ASTRA_EXEC_FAKE_GPUS=") + Fake + ": not a number");
  } else if (auto N = GpuContext::deviceCount()) {
    Visible = *N;
  } else {
    consumeError(N.takeError());
  }
  // Without a GPU, each command does what it does without one.
  if (Visible == 0)
    return nullptr;
  const char *Parent = std::getenv("CUDA_VISIBLE_DEVICES");
  auto Selected = exec::selectGpus(Gpus.empty() ? "all" : Gpus.getValue(),
                                   Visible, Parent ? Parent : "");
  if (!Selected)
    return Selected.takeError();
  if (Selected->size() < 2)
    return nullptr;
  auto Dir = TaskDir("");
  if (!Dir)
    return Dir.takeError();
  return std::make_unique<exec::Executor>(
      std::make_unique<exec::LocalBackend>(std::move(*Selected), *Dir));
}

void showExecutorProgress(exec::Executor &E, StringRef What) {
  bool Tty = errs().is_displayed();
  std::string Prefix = "[" + What.str() + "] ";
  E.setStatusCallback([Tty, Prefix](const exec::ExecStatus &S) {
    if (ProgressQuiet)
      return;
    if (Tty) {
      errs() << "\r\033[K" << Prefix << S.line();
      errs().flush();
    } else {
      errs() << Prefix << S.line() << "\n";
    }
  });
}

ProgressFn progressPrinter() {
  bool Tty = errs().is_displayed();
  return [Tty](const ProgressEvent &E) {
    if (ProgressQuiet)
      return;
    std::string Line;
    raw_string_ostream OS(Line);
    OS << "[optimize] " << E.Kernel << ": ";
    if (E.Candidate)
      OS << "round " << E.Round << "/" << E.Rounds << ", candidate "
         << E.Candidate << "/" << E.Candidates << " (" << E.Label << "): ";
    OS << E.Status << format(" [best %.2fx]", E.BestSpeedup);
    if (Tty) {
      if (Line.size() > 150)
        Line = Line.substr(0, 147) + "...";
      errs() << "\r\033[K" << Line;
      errs().flush();
    } else {
      errs() << Line << "\n";
    }
  };
}

void printKernelSummary(raw_ostream &OS, const KernelReport &R) {
  if (!ProgressQuiet && OS.is_displayed())
    OS << "\r\033[K";
  OS << R.File << ": " << R.Kernel << ": ";
  if (!R.Error.empty()) {
    OS << "not optimized: " << R.Error << "\n";
    return;
  }
  const OptimizeOutcome &O = R.Outcome;
  if (O.Winner)
    OS << format("%.2fx faster", O.WinnerEval.geomeanSpeedup())
       << format(" (worst shape set %.2fx", O.WinnerEval.minSpeedup())
       << (R.weightedSpeedup()
               ? formatv(", weighted by the program's launches {0:F2}x",
                         *R.weightedSpeedup())
                     .str()
               : std::string())
       << ") with " << join(O.Winner->Lineage, " + ") << "\n";
  else
    OS << "unchanged: " << O.NoWinnerReason << "\n";
}

std::string absolutePath(StringRef P) {
  SmallString<256> S(P);
  sys::fs::make_absolute(S);
  sys::path::remove_dots(S, true);
  return std::string(S);
}

void fillRunInfo(RunInfo &Info, const OptimizeOptions &O, const Session &S) {
  Info.ToolVersion = std::string("clang-astra ") + ASTRA_VERSION + " (" +
                     ASTRA_GIT_REVISION + ")";
  Info.Date = utcTimestamp();
  if (Info.Device.empty())
    Info.Device = O.Static ? "none (static mode)" : "unknown";
  auto R = O.request({});
  if (R) {
    Info.Agents = R->Agents == "llm" ? "llm (planner " + R->PlannerLLM.Model +
                                           ", coder " + R->CoderLLM.Model + ")"
                                     : "offline";
  } else {
    consumeError(R.takeError());
  }
  Info.Command = S.CommandLine;
}

} // namespace tool
} // namespace astra
