//===- Scoreboard.cpp -----------------------------------------------------===//
#include "astra/Bench/Scoreboard.h"
#include "astra/Spec/ShapeSplit.h"
#include "astra/Support/FileIO.h"
#include "astra/Support/Json.h"
#include "astra/Support/JsonMap.h"

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

static void writeSummary(JsonWriter &W, const ScoreSummary &S) {
  W.objectBegin();
  W.field("kernels", S.Kernels);
  W.field("geomean_speedup", S.GeomeanSpeedup);
  W.key("fast_p");
  W.objectBegin();
  for (const auto &[P, V] : S.FastP)
    W.field(f(P, "%.1f"), V);
  W.objectEnd();
  W.field("mean_roofline_after", S.MeanRooflineAfter);
  W.field("slower_anywhere", S.SlowerAnywhere);
  if (S.CompileCompared) {
    W.field("at_least_torch_compile", *S.AtLeastCompile);
    W.field("torch_compile_compared", *S.CompileCompared);
  }
  if (S.TimedFiles) {
    W.field("bench_seconds", S.BenchSeconds);
    W.field("timed_files", S.TimedFiles);
  }
  W.objectEnd();
}

static void mapJson(JsonIO &IO, KernelScore &K) {
  IO.object([&] {
    IO.required("suite", K.Suite);
    IO.required("file", K.File);
    IO.required("kernel", K.Kernel);
    IO.required("ok", K.Ok);
    IO.nonEmpty("error", K.Error);
    IO.required("speedup", K.Speedup);
    IO.required("min_speedup", K.MinSpeedup);
    IO.required("roofline_after", K.RooflineAfter);
    IO.optional("vs_torch_compile", K.VsCompile);
    IO.nonEmpty("weighted_speedup", K.WeightedSpeedup);
    if (IO.reading() || K.FileSeconds >= 0) // -1: not known.
      IO.optional("file_seconds", K.FileSeconds);
  });
}

static void mapJson(JsonIO &IO, ScoreRow &R) {
  IO.object([&] {
    IO.required("suite", R.Suite);
    IO.required("file", R.File);
    IO.required("kernel", R.Kernel);
    IO.required("shape", R.Shape);
    IO.required("baseline_us", R.BaselineUs);
    IO.required("optimized_us", R.OptimizedUs);
    IO.writeOnly("speedup", R.speedup());
    IO.required("baseline_roofline", R.BaselineRoofline);
    IO.required("optimized_roofline", R.OptimizedRoofline);
    IO.required("verified", R.Verified);
    IO.required("improved", R.Improved);
    IO.required("changes", R.Changes);
    IO.optional("eager_us", R.EagerUs);
    IO.optional("compile_us", R.CompileUs);
  });
}

/// scoreboard.json: the run, the summary (written for readers; computed
/// again from the kernels when read), the kernels and their shape sets.
static void mapJson(JsonIO &IO, StoredScoreboard &S) {
  IO.object([&] {
    mapRunInfoHeader(IO, S.Info);
    IO.writeOnlyWith("summary", [&](JsonWriter &W) {
      writeSummary(W, S.Board.Summary);
    });
    IO.required("kernels", S.Board.Kernels);
    IO.required("rows", S.Board.Rows);
  });
}

std::string scoreboardJson(const Scoreboard &SB, const RunInfo &Info) {
  return writeJson(StoredScoreboard{SB, Info});
}

Expected<StoredScoreboard> parseScoreboardJson(StringRef Text,
                                               StringRef Path) {
  auto NotAScoreboard = [&](const Twine &Why) {
    return createStringError(inconvertibleErrorCode(),
                             Path + ": <top>: " + Why);
  };
  if (Error E = checkJsonNesting(Text))
    return NotAScoreboard(toString(std::move(E)));
  rapidjson::Document D;
  D.Parse(Text.data(), Text.size());
  if (D.HasParseError() || !D.IsObject())
    return NotAScoreboard("not a scoreboard (invalid JSON or not an object)");
  StoredScoreboard Out;
  if (Error E = readJson(D, Path, Out))
    return E;
  summarizeScoreboard(Out.Board);
  return Out;
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
