//===- ExternalTools.cpp - compute-sanitizer and Nsight Compute -----------===//
#include "astra/Engine/ExternalTools.h"
#include "astra/Engine/JobRunner.h"
#include "astra/Engine/RunPlan.h"
#include "astra/Support/FileIO.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <algorithm>
#include <cstdlib>

using namespace llvm;

namespace astra {

std::string findCudaTool(StringRef Name) {
  if (auto P = sys::findProgramByName(Name))
    return *P;
  std::vector<std::string> Dirs;
  for (const char *Var : {"CUDA_PATH", "CUDA_HOME"})
    if (const char *V = std::getenv(Var); V && *V)
      Dirs.push_back((Twine(V) + "/bin").str());
  Dirs.push_back("/usr/local/cuda/bin");
  for (const std::string &D : Dirs) {
    SmallString<256> P(D);
    sys::path::append(P, Name);
    if (sys::fs::can_execute(P))
      return std::string(P);
  }
  return "";
}

int parseSanitizerOutput(StringRef Text, std::string *FirstError) {
  int Count = -1;
  size_t Pos = Text.rfind("ERROR SUMMARY:");
  if (Pos != StringRef::npos) {
    StringRef Rest = Text.drop_front(Pos + 14).ltrim();
    unsigned N = 0;
    if (!Rest.consumeInteger(10, N))
      Count = int(N);
  }
  // racecheck counts hazards it classifies as warnings outside the error
  // summary ("RACECHECK SUMMARY: 2 hazards displayed (0 errors, 2
  // warnings)"); a hazard is a race either way.
  size_t RPos = Text.rfind("RACECHECK SUMMARY:");
  if (RPos != StringRef::npos) {
    StringRef Rest = Text.drop_front(RPos + 18).ltrim();
    unsigned N = 0;
    if (!Rest.consumeInteger(10, N))
      Count = std::max(Count, int(N));
  }
  if (FirstError) {
    FirstError->clear();
    SmallVector<StringRef, 64> Lines;
    Text.split(Lines, '\n');
    bool In = false;
    unsigned Taken = 0;
    for (StringRef L : Lines) {
      if (!L.starts_with("========="))
        continue;
      StringRef Body = L.drop_front(9).trim();
      if (Body.empty()) {
        if (In)
          break;
        continue;
      }
      if (Body.starts_with("COMPUTE-SANITIZER") ||
          Body.starts_with("ERROR SUMMARY") ||
          Body.starts_with("RACECHECK SUMMARY"))
        continue;
      In = true;
      *FirstError += (Taken ? "\n  " : "") + Body.str();
      if (++Taken == 6)
        break;
    }
  }
  return Count;
}

static std::vector<std::string> splitCsvLine(StringRef Line) {
  std::vector<std::string> Out;
  std::string Cur;
  bool Quoted = false;
  for (size_t I = 0; I < Line.size(); ++I) {
    char C = Line[I];
    if (Quoted) {
      if (C == '"' && I + 1 < Line.size() && Line[I + 1] == '"') {
        Cur += '"';
        ++I;
      } else if (C == '"') {
        Quoted = false;
      } else {
        Cur += C;
      }
    } else if (C == '"') {
      Quoted = true;
    } else if (C == ',') {
      Out.push_back(Cur);
      Cur.clear();
    } else if (C != '\r') {
      Cur += C;
    }
  }
  Out.push_back(Cur);
  return Out;
}

std::map<std::string, std::string> parseNcuRawCsv(StringRef Text) {
  std::map<std::string, std::string> Out;
  SmallVector<StringRef, 64> Lines;
  Text.split(Lines, '\n');
  std::vector<std::string> Header;
  std::vector<std::string> Last;
  for (StringRef L : Lines) {
    if (L.starts_with("\"ID\"")) {
      Header = splitCsvLine(L);
      Last.clear();
      continue;
    }
    if (Header.empty() || !L.starts_with("\""))
      continue;
    std::vector<std::string> Row = splitCsvLine(L);
    // The units row has an empty ID.
    if (Row.size() == Header.size() && !Row[0].empty())
      Last = std::move(Row);
  }
  for (size_t I = 0; I < Last.size() && I < Header.size(); ++I)
    Out[Header[I]] = Last[I];
  return Out;
}

std::map<std::string, std::string>
summarizeNcuMetrics(const std::map<std::string, std::string> &Raw) {
  std::map<std::string, std::string> S;
  auto Take = [&](StringRef Metric, StringRef Key) {
    auto It = Raw.find(Metric.str());
    if (It != Raw.end() && !It->second.empty())
      S[Key.str()] = It->second;
  };
  Take("dram__throughput.avg.pct_of_peak_sustained_elapsed",
       "dram_throughput_pct");
  Take("sm__warps_active.avg.pct_of_peak_sustained_active",
       "achieved_occupancy_pct");
  Take("gpu__time_duration.sum", "duration");
  Take("Kernel Name", "kernel");
  // Stall reasons: smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio
  // (or the older warp_latency spelling), largest first.
  std::vector<std::pair<double, std::string>> Stalls;
  for (auto &[K, V] : Raw) {
    StringRef Name = K;
    StringRef Reason;
    for (StringRef Prefix : {"smsp__average_warps_issue_stalled_",
                             "smsp__average_warp_latency_issue_stalled_"})
      if (Name.starts_with(Prefix)) {
        Reason = Name.drop_front(Prefix.size());
        break;
      }
    if (Reason.empty())
      continue;
    Reason = Reason.take_until([](char C) { return C == '.'; });
    Reason.consume_back("_per_issue_active");
    double D = 0;
    std::string Clean = V;
    Clean.erase(std::remove(Clean.begin(), Clean.end(), ','), Clean.end());
    if (StringRef(Clean).trim().getAsDouble(D) || D <= 0)
      continue;
    Stalls.push_back({D, Reason.str()});
  }
  std::sort(Stalls.rbegin(), Stalls.rend());
  std::string Top;
  for (size_t I = 0; I < Stalls.size() && I < 3; ++I)
    Top += formatv("{0}{1} {2:f2}", I ? ", " : "", Stalls[I].second,
                   Stalls[I].first)
               .str();
  if (!Top.empty())
    S["top_stalls"] = Top;
  return S;
}

namespace {

struct ToolRun {
  int RC = 0;
  bool TimedOut = false;
  bool Failed = false;
  std::string Output;
  std::string ErrMsg;
};

/// Runs `<Tool...> <clang-astra> run-job <job> -o <result>` with \p Child.
ToolRun runUnderTool(const std::vector<std::string> &Tool,
                     const VerifyJob &Child, unsigned Timeout) {
  ToolRun Out;
  SmallString<128> JobPath, ResPath, LogPath;
  if (sys::fs::createTemporaryFile("astra-tool-job", "json", JobPath) ||
      sys::fs::createTemporaryFile("astra-tool-result", "json", ResPath) ||
      sys::fs::createTemporaryFile("astra-tool", "log", LogPath)) {
    Out.Failed = true;
    Out.ErrMsg = "cannot create temporary files";
    return Out;
  }
  if (Error E = writeFileAtomically(JobPath, writeJobJson(Child))) {
    Out.Failed = true;
    Out.ErrMsg = toString(std::move(E));
  } else {
    std::string Exe = jobRunnerExecutable();
    std::vector<StringRef> Args;
    for (const std::string &T : Tool)
      Args.push_back(T);
    for (StringRef A : {StringRef(Exe), StringRef("run-job"), StringRef(JobPath),
                        StringRef("-o"), StringRef(ResPath)})
      Args.push_back(A);
    std::optional<StringRef> Redirects[] = {std::nullopt, StringRef(LogPath),
                                            StringRef(LogPath)};
    Out.RC = sys::ExecuteAndWait(Tool.front(), Args, std::nullopt, Redirects,
                                 Timeout, 0, &Out.ErrMsg, &Out.Failed);
    Out.TimedOut = StringRef(Out.ErrMsg).contains("timed out");
    if (auto T = readFile(LogPath))
      Out.Output = *T;
    else
      consumeError(T.takeError());
  }
  sys::fs::remove(JobPath);
  sys::fs::remove(ResPath);
  sys::fs::remove(LogPath);
  return Out;
}

/// A copy of \p J that runs one kernel, once per planned run, and nothing
/// else.
VerifyJob childJob(const VerifyJob &J, bool KeepCandidate, bool Adversarial) {
  VerifyJob C = J;
  if (!KeepCandidate) {
    C.Candidate.reset();
    C.CandidateLaunch.reset();
  }
  JobOptions &O = C.Options;
  O.CandidateOnly = true;
  O.Verify = false;
  O.Profile = false;
  O.Sanitize = false;
  O.Ncu = false;
  O.Adversarial = Adversarial;
  if (!J.Seeds.empty())
    C.Seeds = {J.Seeds.front()};
  return C;
}

} // namespace

void runSanitizers(const VerifyJob &J, JobResult &R, raw_ostream *Log) {
  std::string Tool = findCudaTool("compute-sanitizer");
  if (Tool.empty()) {
    R.Warnings.push_back("--sanitize: compute-sanitizer not found (PATH, "
                         "$CUDA_PATH/bin, $CUDA_HOME/bin, /usr/local/cuda/bin); "
                         "the sanitizer runs were skipped");
    return;
  }
  VerifyJob Child = childJob(J, /*KeepCandidate=*/true, /*Adversarial=*/true);
  if (auto Small = smallestShapeSet(J.Spec))
    Child.Shapes = {(*Small)->Name};
  else
    consumeError(Small.takeError());
  for (StringRef Which : {"memcheck", "racecheck"}) {
    if (Log)
      *Log << "compute-sanitizer " << Which << "\n";
    ToolRun T = runUnderTool({Tool, "--tool", Which.str(), "--error-exitcode",
                              "99", "--print-limit", "10"},
                             Child, 600);
    if (T.Failed) {
      R.Warnings.push_back("--sanitize: could not run " + Tool + ": " +
                           T.ErrMsg);
      continue;
    }
    if (T.TimedOut) {
      R.Warnings.push_back(("--sanitize: compute-sanitizer " + Which +
                            " did not finish within 600 s; skipped")
                               .str());
      continue;
    }
    std::string First;
    int N = parseSanitizerOutput(T.Output, &First);
    if (N > 0 || T.RC == 99) {
      R.V = Verdict::Fail;
      R.Kind = "sanitizer";
      R.Reason = formatv("compute-sanitizer {0} found {1} error(s) in the "
                         "candidate: {2}",
                         Which, N > 0 ? N : 1, First)
                     .str();
      return;
    }
    if (N < 0)
      R.Warnings.push_back(
          ("--sanitize: compute-sanitizer " + Which +
           " printed no error summary (exit code " + Twine(T.RC) + ")")
              .str());
  }
}

void runNcu(const VerifyJob &J, JobResult &R, raw_ostream *Log) {
  std::string Tool = findCudaTool("ncu");
  if (Tool.empty()) {
    R.Warnings.push_back("--ncu: ncu (Nsight Compute) not found; no metrics");
    return;
  }
  std::string Shape = !J.Shapes.empty()        ? J.Shapes.front()
                      : !J.Spec.Shapes.empty() ? J.Spec.Shapes.front().Name
                                               : "";
  for (bool Cand : {false, true}) {
    if (Cand && !J.Candidate)
      continue;
    VerifyJob Child = childJob(J, Cand, /*Adversarial=*/false);
    Child.Shapes = {Shape};
    StringRef Which = Cand ? "candidate" : "baseline";
    if (Log)
      *Log << "ncu " << Which << "\n";
    ToolRun T = runUnderTool({Tool, "--csv", "--page", "raw", "--section",
                              "SpeedOfLight", "--section", "Occupancy",
                              "--section", "WarpStateStats"},
                             Child, 600);
    if (T.Failed || T.TimedOut || T.RC != 0) {
      R.Warnings.push_back(("--ncu: ncu failed for the " + Which + " (" +
                            (T.TimedOut ? std::string("timed out")
                                        : "exit code " + std::to_string(T.RC) +
                                              (T.ErrMsg.empty() ? "" : ": ") +
                                              T.ErrMsg) +
                            ")")
                               .str());
      continue;
    }
    auto M = summarizeNcuMetrics(parseNcuRawCsv(T.Output));
    if (M.empty()) {
      R.Warnings.push_back(("--ncu: no metrics in ncu's output for the " +
                            Which)
                               .str());
      continue;
    }
    R.NcuMetrics[Which.str()] = std::move(M);
  }
}

} // namespace astra
