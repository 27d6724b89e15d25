//===- RewriteCommand.cpp - clang-astra rewrite ---------------------------===//
//
// Runs passes from the pass library over kernels and shows or writes the
// result. Nothing is written unless asked (-i, -o), and then only through
// writeFileAtomically, which refuses a file that changed during the run.
// The command line follows clang-tidy's where the two overlap: `--passes`
// globs, a `.clang-astra` config file found upward from each source,
// `--header-filter`, `-p` without files, `-j`, `--export-fixes` in the
// Diagnostics format.
//
//===----------------------------------------------------------------------===//
#include "Common.h"
#include "ConfigFile.h"
#include "OptimizeOptions.h"
#include "Subcommands.h"
#include "astra/Frontend/KernelModel.h"
#include "astra/Rewrite/RewriteDriver.h"
#include "astra/Spec/LaunchTuning.h"
#include "astra/Spec/ShapeSplit.h"
#include "astra/Spec/Spec.h"
#include "astra/Support/Diff.h"
#include "astra/Support/FileIO.h"
#include "astra/Support/Hash.h"

#include "clang/Tooling/DiagnosticsYaml.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/YAMLTraits.h"
#include "llvm/Support/raw_ostream.h"

#include <condition_variable>
#include <mutex>
#include <thread>

using namespace llvm;
using namespace clang;

namespace astra {
namespace tool {

static cl::SubCommand RewriteCmd(
    "rewrite", "Apply deterministic passes to kernels (prints the result)");
static cl::list<std::string>
    Files(cl::Positional,
          cl::desc("<files> (none, with -p: every CUDA source of the "
                   "compilation database)"),
          cl::sub(RewriteCmd), cl::cat(AstraCategory));
static cl::list<std::string> PassNames(
    "passes",
    cl::desc("Passes to run, in order (comma-separated; globs such as "
             "'restrict-*' or '*', and '-<glob>' to remove; default: the "
             "config file's Passes)"),
    cl::CommaSeparated, cl::sub(RewriteCmd), cl::cat(AstraCategory));
static cl::opt<std::string> KernelName("kernel",
                                       cl::desc("Only rewrite this kernel"),
                                       cl::sub(RewriteCmd),
                                       cl::cat(AstraCategory));
static cl::opt<bool> InPlace("i", cl::desc("Rewrite the files in place"),
                             cl::sub(RewriteCmd), cl::cat(AstraCategory));
static cl::opt<bool> ShowDiff("diff", cl::desc("Print a unified diff"),
                              cl::sub(RewriteCmd), cl::cat(AstraCategory));
static cl::opt<bool>
    CheckOnly("check",
              cl::desc("Write nothing; print the diff of what would change "
                       "and exit with 3 when something would (0: nothing, "
                       "1: errors)"),
              cl::sub(RewriteCmd), cl::cat(AstraCategory));
static cl::opt<std::string>
    OutputFile("o", cl::desc("Write the result here ('-': standard output)"),
               cl::value_desc("file"), cl::sub(RewriteCmd),
               cl::cat(AstraCategory));
static cl::opt<std::string> ExportFixes(
    "export-fixes",
    cl::desc("Write every edit (source and spec) as clang-tidy Diagnostics "
             "YAML for clang-apply-replacements"),
    cl::value_desc("file.yaml"), cl::sub(RewriteCmd), cl::cat(AstraCategory));
static cl::opt<bool> ListPasses("list-passes",
                                cl::desc("List every pass and exit"),
                                cl::sub(RewriteCmd), cl::cat(AstraCategory));
static cl::opt<bool>
    ListPassOptions("list-pass-options",
                    cl::desc("List every pass parameter (--pass-opt) and "
                             "exit"),
                    cl::sub(RewriteCmd), cl::cat(AstraCategory));
static cl::opt<bool> Explain("explain",
                             cl::desc("Say, per site, why each pass did or "
                                      "did not fire"),
                             cl::sub(RewriteCmd), cl::cat(AstraCategory));
static cl::opt<bool> AllowDouble("allow-double",
                                 cl::desc("fast-math may rewrite double math"),
                                 cl::sub(RewriteCmd), cl::cat(AstraCategory));
static cl::opt<bool>
    FastMathOpt("fast-math",
                cl::desc("Allow reassociating float rewrites (hoist: "
                         "reciprocal multiply)"),
                cl::sub(RewriteCmd), cl::cat(AstraCategory));
static cl::opt<std::string> SpecOpt(
    "spec",
    cl::desc("Workload spec for passes that need one (index32, "
             "launch-bounds); default: <file>.astra.json when it exists"),
    cl::value_desc("file"), cl::sub(RewriteCmd), cl::cat(AstraCategory));
static cl::list<std::string> PassOpts(
    "pass-opt",
    cl::desc("Pass parameter, e.g. unroll.factor=4 (repeatable; "
             "--list-pass-options lists them)"),
    cl::value_desc("pass.key=value"), cl::sub(RewriteCmd),
    cl::cat(AstraCategory));
static cl::opt<std::string> HeaderFilter(
    "header-filter",
    cl::desc("Regular expression for the headers passes may edit (default "
             "'.*': every header that is not a system header; the main "
             "file is always editable)"),
    cl::value_desc("regex"), cl::sub(RewriteCmd), cl::cat(AstraCategory));
static cl::opt<std::string> ExcludeHeaderFilter(
    "exclude-header-filter",
    cl::desc("Regular expression for headers passes may not edit, even when "
             "--header-filter matches"),
    cl::value_desc("regex"), cl::sub(RewriteCmd), cl::cat(AstraCategory));
static cl::opt<std::string> ConfigFilePath(
    "config-file",
    cl::desc("Read the settings from this file instead of the nearest "
             ".clang-astra above each source"),
    cl::value_desc("file"), cl::sub(RewriteCmd), cl::cat(AstraCategory));
static cl::opt<bool>
    DumpConfig("dump-config",
               cl::desc("Print the settings in effect (for the first file, "
                        "or the current folder) as a config file and exit"),
               cl::sub(RewriteCmd), cl::cat(AstraCategory));
static cl::opt<unsigned>
    Jobs("j", cl::desc("Rewrite this many files at once (default 1)"),
         cl::value_desc("N"), cl::init(1), cl::sub(RewriteCmd),
         cl::cat(AstraCategory));

/// The exit code of --check when something would change (as optimize's).
static constexpr int CheckWouldChange = 3;

/// The text of the spec at \p SpecPath before and after it follows the
/// rewrite \p R: the entries of each kernel shape-split split are split at
/// its threshold, then each kernel's entries (the kernel's name, or an
/// instantiation of it: "scale<float>") get the launch its launch sites got.
static Expected<std::pair<std::string, std::string>>
followSpecEdits(StringRef SpecPath, const RewriteResult &R) {
  auto Text = readFile(SpecPath, MaxSpecBytes);
  if (!Text)
    return Text.takeError();
  std::string New = *Text;
  auto NamesOf = [&](const std::string &Kernel)
      -> Expected<std::vector<std::string>> {
    auto Specs = parseSpec(New, SpecPath);
    if (!Specs)
      return Specs.takeError();
    return entriesDescribing(*Specs, Kernel);
  };
  auto Split = followSplits(New, SpecPath, R.Splits);
  if (!Split)
    return Split.takeError();
  New = std::move(*Split);
  for (const auto &[Kernel, E] : R.LaunchEdits) {
    auto Names = NamesOf(Kernel);
    if (!Names)
      return Names.takeError();
    auto Next = retuneSpecText(New, SpecPath, *Names, E.change());
    if (!Next)
      return Next.takeError();
    New = std::move(*Next);
  }
  return std::make_pair(std::move(*Text), std::move(New));
}

static void printExplanations(MessageLog &Log,
                              const std::vector<Explanation> &Ex) {
  std::string S;
  raw_string_ostream OS(S);
  for (const Explanation &E : Ex)
    OS << E.Pos.str() << ": " << E.Pass << ": "
       << (E.Fired ? "fired: " : "not applied: ") << E.Message << "\n";
  Log.text(OS.str());
}

/// The settings one file is rewritten with: its config file under the
/// command line.
struct Settings {
  RewriteConfig Config;
  std::vector<std::string> Passes;
  PassOptions Options;
  std::string HeaderFilter = ".*", ExcludeHeaderFilter;
};

static Expected<Settings> settingsFor(StringRef File) {
  Settings S;
  auto C = configFor(File, ConfigFilePath);
  if (!C)
    return C.takeError();
  S.Config = std::move(*C);
  const RewriteConfig &Cfg = S.Config;
  std::vector<std::string> Items(PassNames.begin(), PassNames.end());
  if (Items.empty() && Cfg.Passes) {
    SmallVector<StringRef, 16> Parts;
    StringRef(*Cfg.Passes).split(Parts, ',');
    Items.assign(Parts.begin(), Parts.end());
  }
  if (Items.empty())
    return createStringError(inconvertibleErrorCode(),
                             "rewrite: no passes given (--passes=..., or "
                             "Passes: in a .clang-astra file; --list-passes "
                             "lists them)");
  auto Selected = selectPasses(Items);
  if (!Selected)
    return createStringError(
        inconvertibleErrorCode(),
        (PassNames.empty() ? Cfg.Source + ": Passes: " : std::string()) +
            toString(Selected.takeError()));
  S.Passes = std::move(*Selected);
  S.Options.FastMath = FastMathOpt.getNumOccurrences()
                           ? bool(FastMathOpt)
                           : Cfg.FastMath.value_or(false);
  S.Options.AllowDouble = AllowDouble.getNumOccurrences()
                              ? bool(AllowDouble)
                              : Cfg.AllowDouble.value_or(false);
  S.Options.Params = Cfg.PassOptions;
  for (const std::string &KV : PassOpts)
    if (Error E = addPassParam(KV, S.Options.Params))
      return E;
  if (HeaderFilter.getNumOccurrences())
    S.HeaderFilter = HeaderFilter;
  else if (Cfg.HeaderFilterRegex)
    S.HeaderFilter = *Cfg.HeaderFilterRegex;
  if (ExcludeHeaderFilter.getNumOccurrences())
    S.ExcludeHeaderFilter = ExcludeHeaderFilter;
  else if (Cfg.ExcludeHeaderFilterRegex)
    S.ExcludeHeaderFilter = *Cfg.ExcludeHeaderFilterRegex;
  for (auto [Opt, Re] : {std::pair{"--header-filter", &S.HeaderFilter},
                         {"--exclude-header-filter",
                          &S.ExcludeHeaderFilter}}) {
    std::string Why;
    // Empty means "no filter" (llvm::Regex calls an empty pattern invalid).
    if (!Re->empty() && !Regex(*Re).isValid(Why))
      return createStringError(inconvertibleErrorCode(),
                               "%s='%s' is not a regular expression: %s", Opt,
                               Re->c_str(), Why.c_str());
  }
  return S;
}

static int dumpSettings(StringRef File) {
  auto S = settingsFor(File);
  if (!S)
    return reportError(S.takeError());
  RewriteConfig Out;
  Out.Passes = join(S->Passes, ",");
  Out.PassOptions = S->Options.Params;
  Out.HeaderFilterRegex = S->HeaderFilter;
  Out.ExcludeHeaderFilterRegex = S->ExcludeHeaderFilter;
  Out.FastMath = S->Options.FastMath;
  Out.AllowDouble = S->Options.AllowDouble;
  if (!S->Config.Source.empty())
    outs() << "# from " << S->Config.Source << " and the command line\n";
  outs() << dumpConfig(Out);
  return 0;
}

/// One input file's rewrite, computed (possibly on another thread) before
/// anything is printed or written.
struct FileJob {
  std::string File;
  std::vector<std::string> Command;
  std::string RuntimePch;
  std::optional<RewriteResult> R;
  /// Absolute path of the spec when the rewrite changes it, and the passes
  /// that changed the launch (what the spec's change is owed to).
  std::string SpecAbs;
  std::vector<std::string> LaunchBy;
  MessageLog Log;
  int Status = 0;
};

static void computeRewrite(FileJob &J) {
  auto S = settingsFor(J.File);
  if (!S) {
    J.Status = J.Log.error(S.takeError());
    return;
  }
  RewriteRequest Req;
  Req.Command = J.Command;
  Req.RuntimePch = J.RuntimePch;
  Req.Preamble = true;
  Req.Passes = S->Passes;
  Req.Kernel = KernelName;
  Req.Options = S->Options;
  Regex Include(S->HeaderFilter), Exclude(S->ExcludeHeaderFilter);
  bool HasExclude = !S->ExcludeHeaderFilter.empty();
  if (S->HeaderFilter != ".*" || HasExclude)
    Req.MayEditHeader = [&](StringRef Path) {
      return Include.match(Path) && !(HasExclude && Exclude.match(Path));
    };
  // The spec is read when named or present beside the file; one that is
  // there but invalid is an error, not silently ignored.
  std::optional<SpecFile> Specs;
  if (!SpecOpt.empty() || sys::fs::exists(specPathFor(J.File))) {
    auto Loaded = loadSpecFor(J.File, SpecOpt);
    if (!Loaded) {
      J.Status = J.Log.error(Loaded.takeError());
      return;
    }
    Specs = std::move(*Loaded);
    Req.Options.Specs = &*Specs;
  }
  std::string Diags;
  raw_string_ostream DiagOS(Diags);
  auto R = runRewrite(Req, &DiagOS);
  J.Log.text(DiagOS.str());
  if (R && Verbose)
    for (const std::string &N : R->ParseNotes)
      J.Log.note(N);
  if (!R) {
    J.Status = J.Log.error(R.takeError());
    return;
  }
  if (Explain)
    printExplanations(J.Log, R->Explanations);
  for (const std::string &C : R->Conflicts)
    J.Log.warning(C);

  // Launch sites that block-size or grid-coarsen changed: the spec's
  // launch is changed the same way, so that verify, profile and optimize
  // keep launching what the code launches. Code whose spec cannot follow
  // is not written.
  for (const std::string &A : R->Applied)
    if (changesLaunch(A) || A == "shape-split")
      J.LaunchBy.push_back(A);
  if ((!R->LaunchEdits.empty() || !R->Splits.empty()) && Specs) {
    std::string SpecPath = SpecOpt.empty() ? specPathFor(J.File) : SpecOpt;
    auto NewSpec = followSpecEdits(SpecPath, *R);
    if (!NewSpec) {
      J.Status = J.Log.error(displayPath(J.File) +
                             ": nothing written: the spec cannot describe "
                             "the new launch: " +
                             toString(NewSpec.takeError()));
      return;
    }
    if (InPlace || ShowDiff || CheckOnly || !ExportFixes.empty()) {
      J.SpecAbs = absolutePath(SpecPath);
      R->Original[J.SpecAbs] = NewSpec->first;
      R->Rewritten[J.SpecAbs] = NewSpec->second;
    } else {
      J.Log.warning(displayPath(J.File) + ": the launch changed (" +
                    join(J.LaunchBy, ", ") + "); " + displayPath(SpecPath) +
                    " still describes the old launch (-i or --diff update it "
                    "too)");
    }
  }
  J.R = std::move(*R);
}

/// clang-tidy's export format: one diagnostic per changed file, named after
/// the passes that changed it, carrying every edit of that file.
static void addDiagnostics(tooling::TranslationUnitDiagnostics &TU,
                           const FileJob &J) {
  for (auto &[Path, Set] : diffAsReplacements(*J.R)) {
    if (Set.empty())
      continue;
    std::string Passes = join(Path == J.SpecAbs ? J.LaunchBy : J.R->Applied,
                              ",");
    tooling::DiagnosticMessage M;
    M.Message = Path == J.SpecAbs
                    ? "the spec's launch follows the rewritten launch sites (" +
                          Passes + ")"
                    : "rewritten by " + Passes;
    M.FilePath = Path;
    M.FileOffset = Set.begin()->getOffset();
    M.Fix[Path] = Set;
    // Where the tool runs, as clang-tidy writes it without a database.
    SmallString<256> Cwd;
    if (sys::fs::current_path(Cwd))
      Cwd.clear();
    TU.Diagnostics.emplace_back(
        "clang-astra-" +
            join(Path == J.SpecAbs ? J.LaunchBy : J.R->Applied, "+"),
        M, SmallVector<tooling::DiagnosticMessage, 1>(),
        tooling::Diagnostic::Warning, Cwd);
  }
}

static int runRewriteCmd(const Session &S) {
  if (ListPasses) {
    for (const PassInfo &P : allPasses())
      outs() << format("  %-16s", P.Name.c_str()) << P.Description << "\n";
    return 0;
  }
  if (ListPassOptions) {
    for (const PassInfo &P : allPasses())
      for (const PassParam &Prm : P.Params)
        outs() << "  " << P.Name << "." << Prm.Key << "=<" << Prm.accepted()
               << ">  " << Prm.Help << " (default: " << Prm.Default << ")\n";
    return 0;
  }
  if (int(InPlace) + int(!OutputFile.empty()) + int(ShowDiff) +
          int(CheckOnly) >
      1)
    return reportError("rewrite: -i, -o, --diff and --check exclude each "
                       "other");
  if (Jobs == 0)
    return reportError("rewrite: -j must be at least 1");

  auto CC = makeCompileCommands(S);
  if (!CC)
    return reportError(CC.takeError());
  std::vector<std::string> Inputs(Files.begin(), Files.end());
  if (Inputs.empty() && CC->hasDatabase() && !DumpConfig) {
    Inputs = CC->databaseSources();
    if (Inputs.empty())
      return reportError("rewrite: the compilation database lists no CUDA "
                         "source (.cu, or a file nvcc compiles)");
  }
  if (DumpConfig)
    return dumpSettings(Inputs.empty() ? ("./" + ConfigFileName).str()
                                       : Inputs.front());
  if (Inputs.empty())
    return reportError("rewrite: no input files (see --help)");
  if (!OutputFile.empty() && Inputs.size() != 1)
    return reportError("rewrite: -o needs exactly one input file");
  // A bad --pass-opt or --passes is said once, before any work (the first
  // file's settings; a file whose own config is bad fails on its own).
  if (auto First = settingsFor(Inputs.front()); !First)
    return reportError(First.takeError());

  auto TC = makeToolchain(S);
  if (!TC)
    return reportError(TC.takeError());

  int Status = 0;
  std::vector<FileJob> Work(Inputs.size());
  for (size_t I = 0; I < Inputs.size(); ++I) {
    FileJob &J = Work[I];
    J.File = Inputs[I];
    if (Error E = checkReadableFile(J.File)) {
      J.Status = J.Log.error(std::move(E));
      continue;
    }
    auto Cmd = CC->deviceCommand(J.File, *TC);
    if (!Cmd) {
      J.Status = J.Log.error(Cmd.takeError());
      continue;
    }
    J.Command = std::move(*Cmd);
    J.RuntimePch = runtimePchFor(*TC, J.Command);
  }

  // Files are rewritten in parallel with -j and reported in input order;
  // without -j each is reported as soon as it is done.
  std::mutex Mu;
  std::condition_variable Cv;
  std::vector<char> Done(Work.size(), 0);
  size_t Next = 0;
  auto Worker = [&] {
    for (;;) {
      size_t I;
      {
        std::lock_guard<std::mutex> L(Mu);
        if (Next == Work.size())
          return;
        I = Next++;
      }
      if (!Work[I].Command.empty())
        computeRewrite(Work[I]);
      {
        std::lock_guard<std::mutex> L(Mu);
        Done[I] = 1;
      }
      Cv.notify_all();
    }
  };
  std::vector<std::thread> Pool;
  unsigned Threads = std::min<size_t>(Jobs, Work.size());
  if (Threads > 1)
    for (unsigned T = 0; T < Threads; ++T)
      Pool.emplace_back(Worker);

  tooling::TranslationUnitDiagnostics Fixes;
  if (Inputs.size() == 1 && !Work.front().Command.empty())
    Fixes.MainSourceFile = Work.front().Command.back();
  bool WouldChange = false;
  for (size_t I = 0; I < Work.size(); ++I) {
    FileJob &J = Work[I];
    if (Pool.empty()) {
      if (!J.Command.empty())
        computeRewrite(J);
    } else {
      std::unique_lock<std::mutex> L(Mu);
      Cv.wait(L, [&] { return Done[I] != 0; });
    }
    J.Log.flush();
    Status |= J.Status;
    if (!J.R)
      continue;
    RewriteResult &R = *J.R;
    std::string Main = J.Command.back();
    bool Exported = true;

    if (InPlace) {
      for (auto &[Path, Text] : R.Rewritten) {
        if (Error E = writeFileAtomically(Path, Text,
                                          sha256Hex(R.Original[Path]))) {
          Status = reportError(std::move(E));
          Exported = false;
          continue;
        }
        note("rewrote " + displayPath(Path) + " (" +
             join(Path == J.SpecAbs ? J.LaunchBy : R.Applied, ", ") + ")");
      }
      if (R.Rewritten.empty())
        note(displayPath(J.File) + ": no pass changed anything");
    } else if (ShowDiff || CheckOnly) {
      WouldChange |= !R.Rewritten.empty();
      for (auto &[Path, Text] : R.Rewritten)
        outs() << unifiedDiff(R.Original[Path], Text, displayPath(Path),
                              displayPath(Path));
    } else {
      auto It = R.Rewritten.find(Main);
      std::string Text;
      if (It != R.Rewritten.end()) {
        Text = It->second;
      } else {
        auto Orig = readFile(J.File);
        if (!Orig) {
          Status = reportError(Orig.takeError());
          continue;
        }
        Text = *Orig;
      }
      for (auto &[Path, New] : R.Rewritten)
        if (Path != Main)
          warning("the rewrite also changes " + displayPath(Path) +
                  ", which is not shown here (use --diff or -i)");
      if (!OutputFile.empty()) {
        if (Error E = writeFileAtomically(OutputFile, Text))
          Status = reportError(std::move(E));
      } else {
        outs() << Text;
      }
    }
    if (Exported)
      addDiagnostics(Fixes, J);
  }
  for (std::thread &T : Pool)
    T.join();

  if (!ExportFixes.empty()) {
    std::string Yaml;
    raw_string_ostream OS(Yaml);
    yaml::Output YOut(OS);
    YOut << Fixes;
    OS.flush();
    if (Error E = writeFileAtomically(ExportFixes, Yaml))
      Status = reportError(std::move(E));
  }
  if (CheckOnly && Status == 0 && WouldChange) {
    note("the passes would change the code (--check); apply it with -i");
    return CheckWouldChange;
  }
  return Status;
}

static SubcommandRegistration Reg(RewriteCmd, runRewriteCmd);

} // namespace tool
} // namespace astra
