//===- Report.cpp ---------------------------------------------------------===//
#include "astra/Agents/Report.h"
#include "astra/Support/FileIO.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace astra {

static void writeTimings(JsonWriter &W, const std::vector<ShapeTiming> &Ts) {
  W.arrayBegin();
  for (const ShapeTiming &T : Ts) {
    W.objectBegin();
    W.field("shape", T.Shape);
    W.field("baseline_us", T.BaselineUs);
    W.field("candidate_us", T.CandidateUs);
    W.field("baseline_spread_us", T.BaselineSpreadUs);
    W.field("candidate_spread_us", T.CandidateSpreadUs);
    W.field("speedup", T.speedup());
    W.field("bytes", T.Bytes);
    if (T.BaselineRoofline >= 0)
      W.field("baseline_roofline", T.BaselineRoofline);
    if (T.CandidateRoofline >= 0)
      W.field("candidate_roofline", T.CandidateRoofline);
    W.objectEnd();
  }
  W.arrayEnd();
}

static std::string secs(double V) {
  std::string S;
  raw_string_ostream(S) << format("%.1f s", V);
  return S;
}

std::string describeStages(const StageTimes &S) {
  std::string Out;
  auto Add = [&](std::string &To, const char *What, double V) {
    if (V > 0)
      To += (To.empty() ? "" : ", ") + std::string(What) + " " + secs(V);
  };
  Add(Out, "coding", S.Coding);
  Add(Out, "compile", S.Compile);
  if (S.Jobs > 0) {
    std::string Parts;
    Add(Parts, "start-up", S.startup());
    Add(Parts, "CUDA context", S.Context);
    Add(Parts, "module load", S.Load);
    Add(Parts, "verify", S.Verify);
    Add(Parts, "profile", S.Profile);
    Out += (Out.empty() ? "" : ", ") + std::string("GPU jobs ") + secs(S.Jobs) +
           (Parts.empty() ? "" : " (" + Parts + ")");
  }
  return Out.empty() ? "no time recorded" : Out;
}

std::string describeRunTime(const OptimizeOutcome &O) {
  std::string Out = secs(O.WallSeconds) + " (set-up " + secs(O.SetupSeconds) +
                    ", baseline " + secs(O.BaselineSeconds) + ", rounds " +
                    secs(O.RoundsSeconds) + ", confirmation " +
                    secs(O.ConfirmSeconds) + "); summed over its " +
                    std::to_string(O.Attempts.size() + 1) +
                    " evaluations: " + describeStages(O.Stages);
  return Out;
}

void writeStagesJson(JsonWriter &W, const StageTimes &S) {
  W.objectBegin();
  W.field("coding", S.Coding);
  W.field("compile", S.Compile);
  W.field("jobs", S.Jobs);
  W.field("startup", S.startup());
  W.field("context", S.Context);
  W.field("load", S.Load);
  W.field("verify", S.Verify);
  W.field("profile", S.Profile);
  W.objectEnd();
}

void writeEvaluationJson(JsonWriter &W, const Evaluation &E) {
  W.objectBegin();
  W.field("status", Evaluation::statusName(E.S));
  if (!E.Detail.empty())
    W.field("detail", E.Detail);
  W.key("seeds");
  W.arrayBegin();
  for (uint64_t S : E.Seeds)
    W.value((unsigned long long)S);
  W.arrayEnd();
  W.field("max_abs_error", E.MaxAbsError);
  W.field("max_rel_error", E.MaxRelError);
  if (!E.LaunchConfigs.empty()) {
    W.key("launch_space");
    W.arrayBegin();
    for (const std::string &L : E.LaunchConfigs)
      W.value(L);
    W.arrayEnd();
  }
  if (!E.Warnings.empty()) {
    W.key("warnings");
    W.arrayBegin();
    for (const std::string &S : E.Warnings)
      W.value(S);
    W.arrayEnd();
  }
  if (E.Registers)
    W.field("registers", *E.Registers);
  if (E.SpillBytes)
    W.field("spill_bytes", *E.SpillBytes);
  W.key("timings");
  writeTimings(W, E.Timings);
  if (E.profiled()) {
    W.field("geomean_speedup", E.geomeanSpeedup());
    W.field("min_speedup", E.minSpeedup());
  }
  W.objectEnd();
}

std::optional<double> KernelReport::weightedSpeedup() const {
  if (Weights.empty() || !Error.empty())
    return std::nullopt;
  if (!Outcome.Winner)
    return 1.0;
  return Outcome.WinnerEval.weightedSpeedup(Weights);
}

void writeKernelReportJson(JsonWriter &W, const KernelReport &R) {
  const OptimizeOutcome &O = R.Outcome;
  W.objectBegin();
  W.field("file", R.File);
  W.field("kernel", R.Kernel);
  if (!R.Error.empty()) {
    W.field("error", R.Error);
    W.objectEnd();
    return;
  }
  W.field("improved", O.Winner.has_value());
  W.field("stop_reason", O.StopReason);
  if (!O.Winner)
    W.field("no_winner_reason", O.NoWinnerReason);
  if (auto WS = R.weightedSpeedup()) {
    W.field("weighted_speedup", *WS);
    W.key("weights");
    W.objectBegin();
    for (auto &[Set, Weight] : R.Weights)
      W.field(Set, Weight);
    W.objectEnd();
  }
  W.key("seconds");
  W.objectBegin();
  W.field("wall", O.WallSeconds);
  W.field("setup", O.SetupSeconds);
  W.field("baseline", O.BaselineSeconds);
  W.field("rounds", O.RoundsSeconds);
  W.field("confirmation", O.ConfirmSeconds);
  W.objectEnd();
  W.key("stages");
  writeStagesJson(W, O.Stages);
  W.key("baseline");
  writeEvaluationJson(W, O.Baseline);
  W.key("baseline_stages");
  writeStagesJson(W, O.Baseline.Stages);
  if (O.Winner) {
    W.key("winner");
    W.objectBegin();
    W.field("id", O.Winner->Id);
    W.field("origin", O.Winner->Origin);
    W.field("changes", join(O.Winner->Lineage, "+"));
    W.field("rationale", O.Winner->Rationale);
    W.key("evaluation");
    writeEvaluationJson(W, O.WinnerEval);
    W.field("diff", R.Diff);
    W.objectEnd();
  }
  if (R.Test) {
    W.key("user_test");
    writeUserTestJson(W, *R.Test);
  }
  if (R.PromptTokens || R.CompletionTokens) {
    W.key("tokens");
    W.objectBegin();
    W.field("prompt", (unsigned long long)R.PromptTokens);
    W.field("completion", (unsigned long long)R.CompletionTokens);
    W.objectEnd();
  }
  W.key("attempts");
  W.arrayBegin();
  for (const Attempt &A : O.Attempts) {
    W.objectBegin();
    W.field("round", A.Round);
    W.field("id", A.C.Id);
    W.field("plan", A.P.label());
    W.field("parent", A.P.ParentId);
    W.field("rationale", A.P.Rationale);
    W.field("outcome", A.Outcome);
    W.key("evaluation");
    writeEvaluationJson(W, A.E);
    W.key("stages");
    writeStagesJson(W, A.E.Stages);
    W.objectEnd();
  }
  W.arrayEnd();
  W.objectEnd();
}

void mapRunInfoHeader(JsonIO &IO, RunInfo &Info) {
  IO.required("tool", Info.ToolVersion);
  IO.required("date", Info.Date);
  IO.required("device", Info.Device);
  IO.required("agents", Info.Agents);
  IO.required("command", Info.Command);
}

std::string reportJson(const RunInfo &Info, const std::vector<KernelReport> &Rs) {
  JsonWriter W;
  W.objectBegin();
  JsonIO IO(W);
  RunInfo Header = Info;
  mapRunInfoHeader(IO, Header);
  if (!Info.TimedCompiler.empty())
    W.field("timed_compiler", Info.TimedCompiler);
  if (Info.CopyBandwidthGBs > 0)
    W.field("copy_bandwidth_gbs", Info.CopyBandwidthGBs);
  W.key("kernels");
  W.arrayBegin();
  for (const KernelReport &R : Rs)
    writeKernelReportJson(W, R);
  W.arrayEnd();
  W.objectEnd();
  return W.str();
}

static std::string pct(double V) {
  if (V < 0)
    return "-";
  std::string S;
  raw_string_ostream(S) << format("%.0f%%", V * 100);
  return S;
}

static std::string num(double V, const char *Fmt = "%.1f") {
  std::string S;
  raw_string_ostream(S) << format(Fmt, V);
  return S;
}

/// Markdown table cells must not contain '|' or newlines.
static std::string cell(StringRef S) {
  std::string Out;
  for (char C : S)
    Out += C == '|' ? '/' : C == '\n' ? ' ' : C;
  return Out;
}

std::string reportMarkdown(const RunInfo &Info,
                           const std::vector<KernelReport> &Rs) {
  std::string Out;
  raw_string_ostream OS(Out);
  OS << "# clang-astra optimize report\n\n";
  OS << "- tool: " << Info.ToolVersion << "\n- date: " << Info.Date
     << "\n- device: " << Info.Device << "\n- agents: " << Info.Agents
     << "\n- command: `" << Info.Command << "`\n";
  if (!Info.TimedCompiler.empty())
    OS << "- timed as compiled by: " << Info.TimedCompiler << "\n";
  if (Info.CopyBandwidthGBs > 0)
    OS << "- measured copy bandwidth (roofline): "
       << num(Info.CopyBandwidthGBs, "%.0f") << " GB/s\n";
  OS << "\n## Summary\n\n| kernel | file | result | geomean speedup | "
        "changes |\n|---|---|---|---|---|\n";
  for (const KernelReport &R : Rs) {
    OS << "| " << cell(R.Kernel) << " | " << cell(R.File) << " | ";
    if (!R.Error.empty()) {
      OS << "error: " << cell(R.Error) << " | - | - |\n";
      continue;
    }
    if (R.Outcome.Winner)
      OS << "improved | " << num(R.Outcome.WinnerEval.geomeanSpeedup(), "%.2fx")
         << " | " << cell(join(R.Outcome.Winner->Lineage, " + ")) << " |\n";
    else
      OS << "unchanged: " << cell(R.Outcome.NoWinnerReason) << " | 1.00x | - |\n";
  }

  for (const KernelReport &R : Rs) {
    OS << "\n## " << R.Kernel << " (" << R.File << ")\n\n";
    if (!R.Error.empty()) {
      OS << "Not optimized: " << R.Error << "\n";
      continue;
    }
    const OptimizeOutcome &O = R.Outcome;
    const Evaluation &Best = O.Winner ? O.WinnerEval : O.Baseline;
    OS << "| shape set | baseline us | best us | speedup | roofline before "
          "| roofline after |\n|---|---|---|---|---|---|\n";
    for (size_t I = 0; I < O.Baseline.Timings.size(); ++I) {
      const ShapeTiming &B = O.Baseline.Timings[I];
      const ShapeTiming *W = nullptr;
      for (const ShapeTiming &T : Best.Timings)
        if (T.Shape == B.Shape)
          W = &T;
      // With a winner, the baseline of the winner's own run: the speedup is
      // the one the acceptance judged (and the scoreboard shows), not a
      // ratio of timings from two runs.
      const ShapeTiming &Base = O.Winner && W ? *W : B;
      double BestUs = O.Winner && W ? W->CandidateUs : B.BaselineUs;
      OS << "| " << B.Shape << " | " << num(Base.BaselineUs, "%.2f") << " | "
         << num(BestUs, "%.2f") << " | "
         << num(BestUs > 0 ? Base.BaselineUs / BestUs : 0, "%.2fx") << " | "
         << pct(Base.BaselineRoofline) << " | "
         << pct(O.Winner && W ? W->CandidateRoofline : B.BaselineRoofline)
         << " |\n";
    }
    if (auto WS = R.weightedSpeedup())
      OS << "\nWeighted by the program's launch counts (the spec's "
            "\"weights\", from a capture): **"
         << num(*WS, "%.2fx") << "**, what the program's time in this kernel "
            "gains.\n";
    OS << "\nStopped: " << O.StopReason << ".\n";
    if (O.WallSeconds > 0)
      OS << "\nTime: " << describeRunTime(O) << ".\n";
    if (O.Winner) {
      OS << "\nAccepted: **" << join(O.Winner->Lineage, " + ") << "** ("
         << O.Winner->Id << "): " << O.Winner->Rationale << "\n";
      // The launches besides the spec's own the winner was verified under.
      for (const Attempt &A : O.Attempts)
        if (A.C.Id == O.Winner->Id && !A.E.LaunchConfigs.empty()) {
          OS << "\nVerified also at the launches the code can make: "
             << join(A.E.LaunchConfigs, ", ") << ".\n";
          break;
        }
      if (!R.Diff.empty())
        OS << "\n```diff\n" << R.Diff << "```\n";
    } else {
      OS << "\nNo change was accepted: " << O.NoWinnerReason << ".\n";
    }
    if (const std::optional<UserTestRecord> &T = R.Test) {
      OS << "\nUser test (`--test`): `" << T->Command << "` in `"
         << T->Directory << "`: " << T->summary() << "; "
         << (T->Kept ? "the rewrite is kept"
                     : "every file is as it was before the test")
         << ".\n";
      if (!T->OutputFile.empty())
        OS << "\nIts whole output: `" << T->OutputFile << "`.\n";
      if (!T->passed() && !T->OutputTail.empty())
        OS << "\nIts last lines of output:\n\n```\n" << T->OutputTail
           << "\n```\n";
    }
    OS << "\n| round | id | plan | outcome | evidence |\n|---|---|---|---|---|\n";
    for (const Attempt &A : O.Attempts) {
      std::string Evidence;
      if (!A.E.Seeds.empty())
        Evidence += "seeds " + std::to_string(A.E.Seeds.size());
      if (A.E.verified())
        Evidence += (Evidence.empty() ? "" : ", ") + std::string("max rel err ") +
                    num(A.E.MaxRelError, "%.2g");
      OS << "| " << (A.Round ? std::to_string(A.Round) : "confirm") << " | "
         << A.C.Id << " | " << cell(A.P.label()) << " | " << cell(A.Outcome)
         << " | " << cell(Evidence) << " |\n";
    }
    if (R.PromptTokens || R.CompletionTokens)
      OS << "\nLLM tokens: " << R.PromptTokens << " prompt, "
         << R.CompletionTokens << " completion.\n";
  }
  return Out;
}

/// Where the text inside the brackets of the array under \p Key of the top
/// object of \p Json starts and ends.
static std::optional<std::pair<size_t, size_t>>
topLevelArraySpan(StringRef Json, StringRef Key) {
  unsigned Depth = 0;
  bool WantArray = false;
  size_t Open = 0;
  for (size_t I = 0; I < Json.size(); ++I) {
    char C = Json[I];
    if (C == '"') {
      size_t End = I + 1;
      while (End < Json.size() && Json[End] != '"')
        End += Json[End] == '\\' ? 2 : 1;
      if (Depth == 1 && Json.slice(I + 1, End) == Key)
        WantArray = true;
      I = End;
      continue;
    }
    if (C == '[' || C == '{') {
      if (++Depth == 2 && WantArray && C == '[')
        Open = I + 1;
    } else if (C == ']' || C == '}') {
      if (Depth-- == 2 && Open)
        return std::make_pair(Open, I);
      if (Depth == 1)
        WantArray = false;
    } else if (C == ',' && Depth == 1) {
      WantArray = false;
    }
  }
  return std::nullopt;
}

Expected<std::string> mergeReportJson(const RunInfo &Info,
                                      const std::vector<std::string> &Parts,
                                      const std::vector<std::string> &Names) {
  // Each kernel is written again as JsonWriter writes it at its depth (two
  // levels in: the top object, the kernels array), so the merged text is
  // what one run over all the files writes.
  std::string Head = reportJson(Info, {});
  size_t Cut = Head.rfind("\"kernels\": []");
  if (Cut == std::string::npos)
    return createStringError(inconvertibleErrorCode(),
                             "internal error: no kernels array in a report");
  std::string Out = Head.substr(0, Cut) + "\"kernels\": [";
  bool First = true;
  for (size_t P = 0; P < Parts.size(); ++P) {
    StringRef Name = P < Names.size() ? StringRef(Names[P]) : "report.json";
    if (Error E = checkJsonNesting(Parts[P]))
      return createStringError(inconvertibleErrorCode(), "%s: %s",
                               Name.str().c_str(),
                               toString(std::move(E)).c_str());
    rapidjson::Document D;
    D.Parse(Parts[P].data(), Parts[P].size());
    auto K = D.IsObject() ? D.FindMember("kernels") : D.MemberEnd();
    if (D.HasParseError() || !D.IsObject() || K == D.MemberEnd() ||
        !K->value.IsArray())
      return createStringError(inconvertibleErrorCode(),
                               "%s: not a report (no kernels array)",
                               Name.str().c_str());
    if (K->value.Empty())
      continue;
    // The array's text between its brackets: the elements as JsonWriter
    // wrote them, numbers spelled as it spells them.
    std::optional<std::pair<size_t, size_t>> Span = topLevelArraySpan(
        Parts[P], "kernels");
    if (!Span)
      return createStringError(inconvertibleErrorCode(),
                               "%s: not a report (no kernels array)",
                               Name.str().c_str());
    Out += (First ? "\n    " : ",\n    ") +
           StringRef(Parts[P]).slice(Span->first, Span->second).trim().str();
    First = false;
  }
  Out += First ? "]" : "\n  ]";
  Out += Head.substr(Cut + std::string("\"kernels\": []").size());
  return Out;
}

std::string mergeReportMarkdown(const RunInfo &Info,
                                const std::vector<std::string> &Parts) {
  // A part is its header, "## Summary" with the table's head and one row
  // per kernel, then a "## <kernel>" section per kernel.
  std::string Head = reportMarkdown(Info, {});
  std::string Rows, Sections;
  for (const std::string &P : Parts) {
    StringRef T(P);
    size_t Table = T.find("\n|---|");
    if (Table == StringRef::npos)
      continue;
    T = T.drop_front(Table + 1);
    T = T.drop_front(std::min(T.size(), T.find('\n') + 1));
    size_t Sec = T.find("\n## ");
    Rows += T.take_front(Sec).str();
    if (Sec != StringRef::npos)
      Sections += T.drop_front(Sec).str();
  }
  return Head + Rows + Sections;
}

Error writeReport(StringRef Dir, const RunInfo &Info,
                  const std::vector<KernelReport> &Rs) {
  if (std::error_code EC = sys::fs::create_directories(Dir))
    return createStringError(EC, "%s: cannot create the report directory: %s",
                             Dir.str().c_str(), EC.message().c_str());
  SmallString<256> J(Dir), M(Dir);
  sys::path::append(J, "report.json");
  sys::path::append(M, "report.md");
  if (Error E = writeFileAtomically(J, reportJson(Info, Rs)))
    return E;
  return writeFileAtomically(M, reportMarkdown(Info, Rs));
}

} // namespace astra
