//===- Scoreboard.cpp -----------------------------------------------------===//
#include "astra/Bench/Scoreboard.h"
#include "astra/Spec/ShapeSplit.h"
#include "astra/Support/FileIO.h"
#include "astra/Support/Json.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <set>

using namespace llvm;

namespace astra {

/// kernels/<suite>/<file>: the suite is the folder under kernels/.
static std::string suiteOf(StringRef File) {
  SmallVector<StringRef, 8> Parts;
  File.split(Parts, '/');
  for (size_t I = 0; I + 1 < Parts.size(); ++I)
    if (Parts[I] == "kernels" && I + 2 < Parts.size())
      return Parts[I + 1].str();
  return Parts.size() >= 2 ? Parts[Parts.size() - 2].str() : "";
}

static double geomean(const std::vector<double> &V) {
  if (V.empty())
    return 0;
  double S = 0;
  for (double X : V)
    S += std::log(std::max(X, 1e-12));
  return std::exp(S / V.size());
}

Scoreboard buildScoreboard(
    const std::vector<KernelReport> &Reports,
    const std::map<std::string, std::pair<double, double>> &Torch,
    const std::map<std::string, double> &FileSeconds) {
  Scoreboard SB;
  // Per kernel: the speedup of each set, against torch.compile, roofline.
  struct Sums {
    std::vector<double> Speedups, VsCompile;
    double WeightedBefore = 0, WeightedAfter = 0;
    bool Weighted = false;
    double RoofSum = 0;
    unsigned RoofN = 0;
  };
  std::vector<Sums> Acc;
  for (const KernelReport &R : Reports) {
    // The two halves of a kernel shape-split split are one kernel of the
    // suite: the original's sets, each with the code its half kept.
    std::string Name = splitOriginName(R.Kernel);
    size_t Idx = 0;
    while (Idx < SB.Kernels.size() && !(SB.Kernels[Idx].File == R.File &&
                                        SB.Kernels[Idx].Kernel == Name))
      ++Idx;
    if (Idx == SB.Kernels.size()) {
      KernelScore New;
      New.Suite = suiteOf(R.File);
      New.File = R.File;
      New.Kernel = Name;
      New.Ok = true;
      auto T = FileSeconds.find(R.File);
      if (T != FileSeconds.end())
        New.FileSeconds = T->second;
      SB.Kernels.push_back(New);
      Acc.emplace_back();
    }
    KernelScore &K = SB.Kernels[Idx];
    Sums &A = Acc[Idx];
    if (!R.Error.empty() || !R.Outcome.Baseline.profiled()) {
      if (K.Error.empty())
        K.Error = !R.Error.empty() ? R.Error : R.Outcome.StopReason;
      K.Ok = false;
      continue;
    }
    const OptimizeOutcome &O = R.Outcome;
    bool Improved = O.Winner.has_value();
    // The kept version: the confirmed winner, or the original.
    bool Ok = !Improved || O.WinnerEval.verified();
    K.Ok = K.Ok && Ok;
    for (const ShapeTiming &B : O.Baseline.Timings) {
      ScoreRow Row;
      Row.Suite = K.Suite;
      Row.File = R.File;
      Row.Kernel = Name;
      Row.Shape = B.Shape;
      Row.BaselineUs = B.BaselineUs;
      Row.BaselineRoofline = B.BaselineRoofline;
      Row.OptimizedUs = B.BaselineUs;
      Row.OptimizedRoofline = B.BaselineRoofline;
      Row.Verified = Ok;
      Row.Improved = Improved;
      if (Improved) {
        Row.Changes = join(O.Winner->Lineage, "+");
        for (const ShapeTiming &W : O.WinnerEval.Timings)
          if (W.Shape == B.Shape) {
            // The winner's own timing run measured the baseline again; use
            // that pair, so the ratio comes from one process.
            Row.BaselineUs = W.BaselineUs;
            Row.OptimizedUs = W.CandidateUs;
            Row.OptimizedRoofline = W.CandidateRoofline;
            Row.BaselineRoofline = W.BaselineRoofline;
          }
      }
      // Shape sets of a template kernel are labelled "<T> decode"; the
      // PyTorch rows name the spec entry ("k<T>") and the set ("decode").
      std::string TorchKey = Name + "|" + B.Shape;
      StringRef Shape(B.Shape);
      if (Shape.starts_with("<")) {
        size_t Close = Shape.find("> ");
        if (Close != StringRef::npos)
          TorchKey = Name + Shape.substr(0, Close + 1).str() + "|" +
                     Shape.substr(Close + 2).str();
      }
      auto T = Torch.find(TorchKey);
      if (T != Torch.end()) {
        if (T->second.first > 0)
          Row.EagerUs = T->second.first;
        if (T->second.second > 0) {
          Row.CompileUs = T->second.second;
          A.VsCompile.push_back(*Row.CompileUs / Row.OptimizedUs);
        }
      }
      A.Speedups.push_back(Row.speedup());
      auto W = R.Weights.find(B.Shape);
      if (W != R.Weights.end()) {
        A.Weighted = true;
        A.WeightedBefore += W->second * Row.BaselineUs;
        A.WeightedAfter += W->second * Row.OptimizedUs;
      }
      if (Row.OptimizedRoofline >= 0) {
        A.RoofSum += Row.OptimizedRoofline;
        ++A.RoofN;
      }
      SB.Rows.push_back(Row);
    }
  }
  for (size_t I = 0; I < SB.Kernels.size(); ++I) {
    KernelScore &K = SB.Kernels[I];
    const Sums &A = Acc[I];
    if (!K.Error.empty())
      continue;
    K.Speedup = geomean(A.Speedups);
    K.MinSpeedup = A.Speedups.empty()
                       ? 0
                       : *std::min_element(A.Speedups.begin(), A.Speedups.end());
    if (A.RoofN)
      K.RooflineAfter = A.RoofSum / A.RoofN;
    if (!A.VsCompile.empty())
      K.VsCompile = geomean(A.VsCompile);
    if (A.Weighted && A.WeightedAfter > 0)
      K.WeightedSpeedup = A.WeightedBefore / A.WeightedAfter;
  }
  summarizeScoreboard(SB);
  return SB;
}

void summarizeScoreboard(Scoreboard &SB) {
  SB.Summary = ScoreSummary();
  ScoreSummary &S = SB.Summary;
  S.Kernels = SB.Kernels.size();
  std::vector<double> All;
  double RoofSum = 0;
  unsigned RoofN = 0, AtLeast = 0, Compared = 0;
  std::set<std::string> Timed;
  for (const KernelScore &K : SB.Kernels) {
    // A file's time once, however many kernels it holds.
    if (K.FileSeconds >= 0 && Timed.insert(K.File).second) {
      S.BenchSeconds += K.FileSeconds;
      ++S.TimedFiles;
    }
    // A kernel that could not be run keeps its original code: 1.0x, and it
    // counts against fast_p as a failure.
    All.push_back(K.Ok ? K.Speedup : 1.0);
    if (K.Ok && K.MinSpeedup > 0 && K.MinSpeedup < 1.0)
      ++S.SlowerAnywhere;
    if (K.Ok && K.MemoryBound && K.RooflineAfter >= 0) {
      RoofSum += K.RooflineAfter;
      ++RoofN;
    }
    if (K.VsCompile) {
      ++Compared;
      AtLeast += *K.VsCompile >= 1.0;
    }
  }
  S.GeomeanSpeedup = geomean(All);
  for (double P : {0.0, 1.0, 1.2, 1.5, 2.0}) {
    unsigned N = 0;
    for (const KernelScore &K : SB.Kernels)
      N += K.Ok && (P == 0.0 || K.Speedup > P);
    S.FastP[P] = S.Kernels ? double(N) / S.Kernels : 0;
  }
  if (RoofN)
    S.MeanRooflineAfter = RoofSum / RoofN;
  if (Compared) {
    S.AtLeastCompile = AtLeast;
    S.CompileCompared = Compared;
  }
}

Scoreboard mergeScoreboards(const Scoreboard &Earlier,
                            const Scoreboard &Later) {
  Scoreboard SB = Earlier;
  SB.Kernels.insert(SB.Kernels.end(), Later.Kernels.begin(),
                    Later.Kernels.end());
  SB.Rows.insert(SB.Rows.end(), Later.Rows.begin(), Later.Rows.end());
  summarizeScoreboard(SB);
  return SB;
}

Expected<StoredScoreboard> parseScoreboardJson(StringRef Text,
                                               StringRef Path) {
  JsonFieldReader R(Path);
  rapidjson::Document D;
  if (Error E = checkJsonNesting(Text))
    return R.fail("<top>", toString(std::move(E)));
  D.Parse(Text.data(), Text.size());
  if (D.HasParseError() || !D.IsObject())
    return R.fail("<top>", "not a scoreboard (invalid JSON or not an object)");
  StoredScoreboard Out;
  RunInfo &I = Out.Info;
  for (auto [Key, Into] :
       {std::pair<const char *, std::string *>{"tool", &I.ToolVersion},
        {"date", &I.Date},
        {"device", &I.Device},
        {"agents", &I.Agents},
        {"command", &I.Command}})
    if (Error E = R.str(D, "", Key, *Into))
      return E;
  auto Kernels = D.FindMember("kernels");
  auto Rows = D.FindMember("rows");
  if (Kernels == D.MemberEnd() || !Kernels->value.IsArray() ||
      Rows == D.MemberEnd() || !Rows->value.IsArray())
    return R.fail("<top>", "'kernels' and 'rows' must be arrays");
  for (const rapidjson::Value &K : Kernels->value.GetArray()) {
    std::string F = "kernels[" + std::to_string(Out.Board.Kernels.size()) + "]";
    KernelScore S;
    for (auto [Key, Into] :
         {std::pair<const char *, std::string *>{"suite", &S.Suite},
          {"file", &S.File},
          {"kernel", &S.Kernel}})
      if (Error E = R.str(K, F, Key, *Into))
        return E;
    if (Error E = R.str(K, F, "error", S.Error, /*Required=*/false))
      return E;
    if (Error E = R.boolean(K, F, "ok", S.Ok, /*Required=*/true))
      return E;
    for (auto [Key, Into] :
         {std::pair<const char *, double *>{"speedup", &S.Speedup},
          {"min_speedup", &S.MinSpeedup},
          {"roofline_after", &S.RooflineAfter}})
      if (Error E = R.number(K, F, Key, *Into, /*Required=*/true))
        return E;
    if (Error E = R.optionalNumber(K, F, "vs_torch_compile", S.VsCompile))
      return E;
    if (Error E = R.optionalNumber(K, F, "weighted_speedup", S.WeightedSpeedup))
      return E;
    if (Error E = R.number(K, F, "file_seconds", S.FileSeconds,
                           /*Required=*/false))
      return E;
    Out.Board.Kernels.push_back(std::move(S));
  }
  for (const rapidjson::Value &Row : Rows->value.GetArray()) {
    std::string F = "rows[" + std::to_string(Out.Board.Rows.size()) + "]";
    ScoreRow S;
    for (auto [Key, Into] :
         {std::pair<const char *, std::string *>{"suite", &S.Suite},
          {"file", &S.File},
          {"kernel", &S.Kernel},
          {"shape", &S.Shape},
          {"changes", &S.Changes}})
      if (Error E = R.str(Row, F, Key, *Into))
        return E;
    for (auto [Key, Into] :
         {std::pair<const char *, double *>{"baseline_us", &S.BaselineUs},
          {"optimized_us", &S.OptimizedUs},
          {"baseline_roofline", &S.BaselineRoofline},
          {"optimized_roofline", &S.OptimizedRoofline}})
      if (Error E = R.number(Row, F, Key, *Into, /*Required=*/true))
        return E;
    for (auto [Key, Into] :
         {std::pair<const char *, bool *>{"verified", &S.Verified},
          {"improved", &S.Improved}})
      if (Error E = R.boolean(Row, F, Key, *Into, /*Required=*/true))
        return E;
    for (auto [Key, Into] :
         {std::pair<const char *, std::optional<double> *>{"eager_us",
                                                           &S.EagerUs},
          {"compile_us", &S.CompileUs}})
      if (Error E = R.optionalNumber(Row, F, Key, *Into))
        return E;
    Out.Board.Rows.push_back(std::move(S));
  }
  summarizeScoreboard(Out.Board);
  return Out;
}

Expected<std::map<std::string, std::pair<double, double>>>
loadTorchBaselines(StringRef Path) {
  auto Text = readFile(Path);
  if (!Text)
    return Text.takeError();
  rapidjson::Document D;
  if (Error E = parseJsonWithComments(*Text, Path, D))
    return E;
  if (!D.IsArray())
    return createStringError(inconvertibleErrorCode(),
                             "%s: expected a JSON array of rows (as "
                             "bench/torch_baselines.py --out writes)",
                             Path.str().c_str());
  std::map<std::string, std::pair<double, double>> Out;
  for (const auto &Row : D.GetArray()) {
    if (!Row.IsObject() || !Row.HasMember("kernel") ||
        !Row.HasMember("shape_set"))
      continue;
    auto Num = [&](const char *K) {
      return Row.HasMember(K) && Row[K].IsNumber() ? Row[K].GetDouble() : -1.0;
    };
    Out[std::string(Row["kernel"].GetString()) + "|" +
        Row["shape_set"].GetString()] = {Num("eager_us"), Num("compile_us")};
  }
  return Out;
}

static std::string f(double V, const char *Fmt) {
  std::string S;
  raw_string_ostream(S) << format(Fmt, V);
  return S;
}
static std::string pct(double V) { return V < 0 ? "-" : f(V * 100, "%.0f%%"); }

std::string scoreboardMarkdown(const Scoreboard &SB, const RunInfo &Info) {
  std::string Out;
  raw_string_ostream OS(Out);
  const ScoreSummary &S = SB.Summary;
  OS << "# clang-astra benchmark\n\n- tool: " << Info.ToolVersion
     << "\n- date: " << Info.Date << "\n- device: " << Info.Device
     << "\n- agents: " << Info.Agents << "\n- command: `" << Info.Command
     << "`\n";
  if (Info.CopyBandwidthGBs > 0)
    OS << "- roofline: measured copy bandwidth "
       << f(Info.CopyBandwidthGBs, "%.0f") << " GB/s\n";
  OS << "\n## Summary\n\n| measure | value |\n|---|---|\n";
  OS << "| kernels | " << S.Kernels << " |\n";
  OS << "| geometric-mean speedup | " << f(S.GeomeanSpeedup, "%.3fx") << " |\n";
  for (const auto &[P, V] : S.FastP)
    OS << "| fast_" << f(P, P == 0 ? "%.0f" : "%.1f") << " | " << pct(V)
       << " |\n";
  OS << "| mean share of roofline after (memory-bound) | "
     << pct(S.MeanRooflineAfter) << " |\n";
  OS << "| kernels slower on some shape set | " << S.SlowerAnywhere << " |\n";
  if (S.CompileCompared)
    OS << "| at least as fast as torch.compile | " << *S.AtLeastCompile
       << " of " << *S.CompileCompared << " |\n";
  if (S.TimedFiles)
    OS << "| bench time | " << f(S.BenchSeconds, "%.0f") << " s over "
       << S.TimedFiles << (S.TimedFiles == 1 ? " file" : " files") << " |\n";

  // The file's bench time goes last, so a row's other columns read as they
  // did before it was recorded.
  OS << "\n## Kernels\n\n| suite | kernel | speedup | worst shape | roofline "
        "after | vs torch.compile | result | bench time (file) |\n"
        "|---|---|---|---|---|---|---|---|\n";
  for (const KernelScore &K : SB.Kernels) {
    std::string Time =
        K.FileSeconds >= 0 ? f(K.FileSeconds, "%.0f s") : std::string("-");
    OS << "| " << K.Suite << " | " << K.Kernel << " | ";
    if (!K.Error.empty()) {
      OS << "- | - | - | - | error: " << K.Error << " | " << Time << " |\n";
      continue;
    }
    OS << f(K.Speedup, "%.2fx") << " | " << f(K.MinSpeedup, "%.2fx") << " | "
       << pct(K.RooflineAfter) << " | "
       << (K.VsCompile ? f(*K.VsCompile, "%.2fx") : std::string("-")) << " | "
       << (K.Ok ? "verified" : "NOT verified") << " | " << Time << " |\n";
  }
  // Kernels whose spec came from a capture: what the program gains.
  bool AnyWeighted = false;
  for (const KernelScore &K : SB.Kernels)
    AnyWeighted |= K.Error.empty() && K.WeightedSpeedup.has_value();
  if (AnyWeighted) {
    OS << "\nWeighted by the program's launch counts (specs from `clang-astra "
          "capture`):\n\n";
    for (const KernelScore &K : SB.Kernels)
      if (K.Error.empty() && K.WeightedSpeedup)
        OS << "- " << K.Kernel << ": " << f(*K.WeightedSpeedup, "%.2fx")
           << "\n";
  }
  OS << "\n## Shape sets\n\n| kernel | shape | baseline us | optimized us | "
        "speedup | roofline before | roofline after | eager us | compile us | "
        "changes |\n|---|---|---|---|---|---|---|---|---|---|\n";
  for (const ScoreRow &R : SB.Rows)
    OS << "| " << R.Kernel << " | " << R.Shape << " | "
       << f(R.BaselineUs, "%.2f") << " | " << f(R.OptimizedUs, "%.2f") << " | "
       << f(R.speedup(), "%.2fx") << " | " << pct(R.BaselineRoofline) << " | "
       << pct(R.OptimizedRoofline) << " | "
       << (R.EagerUs ? f(*R.EagerUs, "%.2f") : std::string("-")) << " | "
       << (R.CompileUs ? f(*R.CompileUs, "%.2f") : std::string("-")) << " | "
       << (R.Changes.empty() ? "-" : R.Changes) << " |\n";
  return Out;
}

std::string scoreboardJson(const Scoreboard &SB, const RunInfo &Info) {
  JsonWriter W;
  W.objectBegin();
  W.field("tool", Info.ToolVersion);
  W.field("date", Info.Date);
  W.field("device", Info.Device);
  W.field("agents", Info.Agents);
  W.field("command", Info.Command);
  W.key("summary");
  W.objectBegin();
  W.field("kernels", SB.Summary.Kernels);
  W.field("geomean_speedup", SB.Summary.GeomeanSpeedup);
  W.key("fast_p");
  W.objectBegin();
  for (const auto &[P, V] : SB.Summary.FastP)
    W.field(f(P, "%.1f"), V);
  W.objectEnd();
  W.field("mean_roofline_after", SB.Summary.MeanRooflineAfter);
  W.field("slower_anywhere", SB.Summary.SlowerAnywhere);
  if (SB.Summary.CompileCompared) {
    W.field("at_least_torch_compile", *SB.Summary.AtLeastCompile);
    W.field("torch_compile_compared", *SB.Summary.CompileCompared);
  }
  if (SB.Summary.TimedFiles) {
    W.field("bench_seconds", SB.Summary.BenchSeconds);
    W.field("timed_files", SB.Summary.TimedFiles);
  }
  W.objectEnd();
  W.key("kernels");
  W.arrayBegin();
  for (const KernelScore &K : SB.Kernels) {
    W.objectBegin();
    W.field("suite", K.Suite);
    W.field("file", K.File);
    W.field("kernel", K.Kernel);
    W.field("ok", K.Ok);
    if (!K.Error.empty())
      W.field("error", K.Error);
    W.field("speedup", K.Speedup);
    W.field("min_speedup", K.MinSpeedup);
    W.field("roofline_after", K.RooflineAfter);
    W.field("vs_torch_compile", K.VsCompile);
    if (K.WeightedSpeedup)
      W.field("weighted_speedup", *K.WeightedSpeedup);
    if (K.FileSeconds >= 0)
      W.field("file_seconds", K.FileSeconds);
    W.objectEnd();
  }
  W.arrayEnd();
  W.key("rows");
  W.arrayBegin();
  for (const ScoreRow &R : SB.Rows) {
    W.objectBegin();
    W.field("suite", R.Suite);
    W.field("file", R.File);
    W.field("kernel", R.Kernel);
    W.field("shape", R.Shape);
    W.field("baseline_us", R.BaselineUs);
    W.field("optimized_us", R.OptimizedUs);
    W.field("speedup", R.speedup());
    W.field("baseline_roofline", R.BaselineRoofline);
    W.field("optimized_roofline", R.OptimizedRoofline);
    W.field("verified", R.Verified);
    W.field("improved", R.Improved);
    W.field("changes", R.Changes);
    W.field("eager_us", R.EagerUs);
    W.field("compile_us", R.CompileUs);
    W.objectEnd();
  }
  W.arrayEnd();
  W.objectEnd();
  return W.str();
}

static std::string xmlEscape(StringRef S) {
  std::string Out;
  for (char C : S) {
    switch (C) {
    case '<':
      Out += "&lt;";
      break;
    case '>':
      Out += "&gt;";
      break;
    case '&':
      Out += "&amp;";
      break;
    case '"':
      Out += "&quot;";
      break;
    default:
      Out += C;
    }
  }
  return Out;
}

std::string scoreboardSvg(const Scoreboard &SB) {
  // Log-scale bars from 0.5x to 4x; 1x is the baseline line.
  const double Lo = std::log(0.5), Hi = std::log(4.0);
  const int Left = 260, Width = 480, Row = 22, Top = 40;
  int H = Top + Row * int(SB.Kernels.size()) + 40;
  auto X = [&](double S) {
    double L = std::log(std::min(std::max(S, 0.5), 4.0));
    return Left + int((L - Lo) / (Hi - Lo) * Width);
  };
  std::string Out;
  raw_string_ostream OS(Out);
  OS << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << Left + Width + 40
     << "\" height=\"" << H << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  OS << "<text x=\"10\" y=\"20\" font-size=\"14\">clang-astra speedup over the "
        "baseline (log scale; | marks torch.compile)</text>\n";
  for (double T : {0.5, 1.0, 1.5, 2.0, 3.0, 4.0}) {
    OS << "<line x1=\"" << X(T) << "\" y1=\"" << Top - 5 << "\" x2=\"" << X(T)
       << "\" y2=\"" << H - 30 << "\" stroke=\"" << (T == 1.0 ? "#000" : "#ddd")
       << "\"/>\n<text x=\"" << X(T) - 10 << "\" y=\"" << H - 15 << "\">"
       << f(T, "%.1fx") << "</text>\n";
  }
  int Y = Top;
  for (const KernelScore &K : SB.Kernels) {
    OS << "<text x=\"" << Left - 6 << "\" y=\"" << Y + 14
       << "\" text-anchor=\"end\">" << xmlEscape(K.Kernel) << "</text>\n";
    if (K.Ok) {
      int X0 = X(1.0), X1 = X(K.Speedup);
      OS << "<rect x=\"" << std::min(X0, X1) << "\" y=\"" << Y + 3
         << "\" width=\"" << std::max(1, std::abs(X1 - X0)) << "\" height=\""
         << Row - 6 << "\" fill=\"" << (K.Speedup >= 1.0 ? "#3a7" : "#c44")
         << "\"><title>" << xmlEscape(K.Kernel) << ": "
         << f(K.Speedup, "%.2fx") << "</title></rect>\n";
      OS << "<text x=\"" << std::max(X0, X1) + 4 << "\" y=\"" << Y + 14 << "\">"
         << f(K.Speedup, "%.2fx") << "</text>\n";
      if (K.VsCompile) {
        // torch.compile's speedup over our baseline = ours / (ours vs it).
        int XC = X(K.Speedup / *K.VsCompile);
        OS << "<line x1=\"" << XC << "\" y1=\"" << Y + 1 << "\" x2=\"" << XC
           << "\" y2=\"" << Y + Row - 1
           << "\" stroke=\"#236\" stroke-width=\"2\"/>\n";
      }
    } else {
      OS << "<text x=\"" << X(1.0) + 4 << "\" y=\"" << Y + 14
         << "\" fill=\"#c44\">error</text>\n";
    }
    Y += Row;
  }
  OS << "</svg>\n";
  return Out;
}

} // namespace astra
