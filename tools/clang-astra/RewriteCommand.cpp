//===- RewriteCommand.cpp - clang-astra rewrite ---------------------------===//
//
// Runs passes from the pass library over kernels and shows or writes the
// result. Nothing is written unless asked (-i, -o), and then only through a
// temporary file and a rename.
//
//===----------------------------------------------------------------------===//
#include "Common.h"
#include "OptimizeOptions.h"
#include "Subcommands.h"
#include "astra/Frontend/KernelModel.h"
#include "astra/Rewrite/RewriteDriver.h"
#include "astra/Spec/LaunchTuning.h"
#include "astra/Spec/ShapeSplit.h"
#include "astra/Spec/Spec.h"
#include "astra/Support/Diff.h"
#include "astra/Support/FileIO.h"

#include "clang/Tooling/ReplacementsYaml.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/YAMLTraits.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace clang;

namespace astra {
namespace tool {

static cl::SubCommand RewriteCmd(
    "rewrite", "Apply deterministic passes to kernels (prints the result)");
static cl::list<std::string> Files(cl::Positional, cl::desc("<files>"),
                                   cl::sub(RewriteCmd), cl::cat(AstraCategory));
static cl::list<std::string>
    PassNames("passes", cl::desc("Passes to run, in order (comma-separated)"),
              cl::CommaSeparated, cl::sub(RewriteCmd), cl::cat(AstraCategory));
static cl::opt<std::string> KernelName("kernel",
                                       cl::desc("Only rewrite this kernel"),
                                       cl::sub(RewriteCmd),
                                       cl::cat(AstraCategory));
/// The text of the spec at \p SpecPath before and after it follows the
/// rewrite \p R: the entries of each kernel shape-split split are split at
/// its threshold, then each kernel's entries (the kernel's name, or an
/// instantiation of it: "scale<float>") get the launch its launch sites got.
static Expected<std::pair<std::string, std::string>>
followSpecEdits(StringRef SpecPath, const RewriteResult &R) {
  auto Text = readFile(SpecPath);
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

static cl::opt<bool> InPlace("i", cl::desc("Rewrite the files in place"),
                             cl::sub(RewriteCmd), cl::cat(AstraCategory));
static cl::opt<bool> ShowDiff("diff", cl::desc("Print a unified diff"),
                              cl::sub(RewriteCmd), cl::cat(AstraCategory));
static cl::opt<std::string> OutputFile("o", cl::desc("Write the result here"),
                                       cl::value_desc("file"),
                                       cl::sub(RewriteCmd),
                                       cl::cat(AstraCategory));
static cl::opt<std::string>
    ExportFixes("export-fixes",
                cl::desc("Write the edits as YAML for clang-apply-replacements"),
                cl::value_desc("file.yaml"), cl::sub(RewriteCmd),
                cl::cat(AstraCategory));
static cl::opt<bool> ListPasses("list-passes",
                                cl::desc("List every pass and exit"),
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
static cl::list<std::string>
    PassOpts("pass-opt",
             cl::desc("Pass parameter, e.g. unroll.factor=4 (repeatable)"),
             cl::value_desc("pass.key=value"), cl::sub(RewriteCmd),
             cl::cat(AstraCategory));

static void printExplanations(raw_ostream &OS,
                              const std::vector<Explanation> &Ex) {
  for (const Explanation &E : Ex)
    OS << E.Pos.str() << ": " << E.Pass << ": "
       << (E.Fired ? "fired: " : "not applied: ") << E.Message << "\n";
}

static int runRewriteCmd(const Session &S) {
  if (ListPasses) {
    for (const PassInfo &P : allPasses())
      outs() << format("  %-16s", P.Name.c_str()) << P.Description << "\n";
    return 0;
  }
  if (Files.empty())
    return reportError("rewrite: no input files (see --help)");
  if (PassNames.empty())
    return reportError("rewrite: no passes given (--passes=...; "
                       "--list-passes lists them)");
  for (const std::string &P : PassNames)
    if (!createPass(P))
      return reportError("rewrite: unknown pass '" + P +
                         "' (--list-passes lists them)");
  if (int(InPlace) + int(!OutputFile.empty()) + int(ShowDiff) > 1)
    return reportError("rewrite: -i, -o and --diff exclude each other");
  if (!OutputFile.empty() && Files.size() != 1)
    return reportError("rewrite: -o needs exactly one input file");

  PassOptions PO;
  PO.AllowDouble = AllowDouble;
  PO.FastMath = FastMathOpt;
  for (const std::string &KV : PassOpts) {
    auto [K, V] = StringRef(KV).split('=');
    if (!K.contains('.') || V.empty())
      return reportError("rewrite: --pass-opt='" + KV +
                         "' is not of the form pass.key=value");
    PO.Params[K.str()] = V.str();
  }

  auto TC = makeToolchain(S);
  if (!TC)
    return reportError(TC.takeError());
  auto CC = makeCompileCommands(S);
  if (!CC)
    return reportError(CC.takeError());

  int Status = 0;
  tooling::TranslationUnitReplacements Fixes;
  for (const std::string &File : Files) {
    if (Error E = checkReadableFile(File)) {
      Status = reportError(std::move(E));
      continue;
    }
    auto Cmd = CC->deviceCommand(File, *TC);
    if (!Cmd) {
      Status = reportError(Cmd.takeError());
      continue;
    }
    RewriteRequest Req;
    Req.Command = *Cmd;
    Req.Passes = PassNames;
    Req.Kernel = KernelName;
    Req.Options = PO;
    // The spec is read when named or present beside the file; one that is
    // there but invalid is an error, not silently ignored.
    std::optional<SpecFile> Specs;
    if (!SpecOpt.empty() || sys::fs::exists(specPathFor(File))) {
      auto Loaded = loadSpecFor(File, SpecOpt);
      if (!Loaded) {
        Status = reportError(Loaded.takeError());
        continue;
      }
      Specs = std::move(*Loaded);
      Req.Options.Specs = &*Specs;
    }
    auto R = runRewrite(Req, &errs());
    if (!R) {
      Status = reportError(R.takeError());
      continue;
    }
    if (Explain)
      printExplanations(errs(), R->Explanations);
    for (const std::string &C : R->Conflicts)
      warning(C);

    // Launch sites that block-size or grid-coarsen changed: the spec's
    // launch is changed the same way, so that verify, profile and optimize
    // keep launching what the code launches. Code whose spec cannot follow
    // is not written.
    // The passes that changed the launch (what a rewritten spec is owed to).
    std::vector<std::string> LaunchBy;
    for (const std::string &A : R->Applied)
      if (changesLaunch(A) || A == "shape-split")
        LaunchBy.push_back(A);
    std::string SpecAbs;
    if ((!R->LaunchEdits.empty() || !R->Splits.empty()) && Specs) {
      std::string SpecPath = SpecOpt.empty() ? specPathFor(File) : SpecOpt;
      SpecAbs = absolutePath(SpecPath);
      auto NewSpec = followSpecEdits(SpecPath, *R);
      if (!NewSpec) {
        Status = reportError(displayPath(File) +
                             ": nothing written: the spec cannot describe "
                             "the new launch: " +
                             toString(NewSpec.takeError()));
        continue;
      }
      if (InPlace || ShowDiff) {
        R->Original[absolutePath(SpecPath)] = NewSpec->first;
        R->Rewritten[absolutePath(SpecPath)] = NewSpec->second;
      } else {
        warning(displayPath(File) + ": the launch changed (" +
                join(LaunchBy, ", ") + "); " + displayPath(SpecPath) +
                " still describes the old launch (-i or --diff update it "
                "too)");
      }
    }

    std::string Main = Cmd->back();
    if (Fixes.MainSourceFile.empty())
      Fixes.MainSourceFile = Main;
    for (auto &[Path, Set] : diffAsReplacements(*R))
      for (const tooling::Replacement &Rep : Set)
        Fixes.Replacements.push_back(Rep);

    if (InPlace) {
      for (auto &[Path, Text] : R->Rewritten) {
        if (Error E = writeFileAtomically(Path, Text)) {
          Status = reportError(std::move(E));
          continue;
        }
        note("rewrote " + displayPath(Path) + " (" +
             join(Path == SpecAbs ? LaunchBy : R->Applied, ", ") + ")");
      }
      if (R->Rewritten.empty())
        note(displayPath(File) + ": no pass changed anything");
    } else if (ShowDiff) {
      for (auto &[Path, Text] : R->Rewritten)
        outs() << unifiedDiff(R->Original[Path], Text, displayPath(Path),
                              displayPath(Path));
    } else {
      auto It = R->Rewritten.find(Main);
      std::string Text;
      if (It != R->Rewritten.end()) {
        Text = It->second;
      } else {
        auto Orig = readFile(File);
        if (!Orig) {
          Status = reportError(Orig.takeError());
          continue;
        }
        Text = *Orig;
      }
      for (auto &[Path, New] : R->Rewritten)
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
  }

  if (!ExportFixes.empty()) {
    std::string Yaml;
    raw_string_ostream OS(Yaml);
    yaml::Output YOut(OS);
    YOut << Fixes;
    OS.flush();
    if (Error E = writeFileAtomically(ExportFixes, Yaml))
      Status = reportError(std::move(E));
  }
  return Status;
}

static SubcommandRegistration Reg(RewriteCmd, runRewriteCmd);

} // namespace tool
} // namespace astra
