//===- InitSpecCommand.cpp - clang-astra init-spec ------------------------===//
//
// Drafts a workload spec from the AST: what the kernel shows (dtypes, roles,
// integer parameters, a launch site) is filled in, what it cannot show is
// left as "TODO" for a person, and check-spec refuses the spec until every
// TODO is gone.
//
//===----------------------------------------------------------------------===//
#include "Common.h"
#include "Subcommands.h"
#include "astra/Capture/Capture.h"
#include "astra/Frontend/KernelModel.h"
#include "astra/Spec/Spec.h"
#include "astra/Spec/SpecDraft.h"
#include "astra/Support/FileIO.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace astra {
namespace tool {

static cl::SubCommand InitSpecCmd(
    "init-spec", "Draft a workload spec (<file>.astra.json) for kernels");
static cl::opt<std::string> File(cl::Positional, cl::desc("<file>"),
                                 cl::Required, cl::sub(InitSpecCmd),
                                 cl::cat(AstraCategory));
static cl::list<std::string>
    KernelNames("kernel",
                cl::desc("Kernel to draft, as `list` prints it (for a "
                         "template, an instantiation: 'scale<float, 2>'); "
                         "repeatable"),
                cl::value_desc("name"), cl::sub(InitSpecCmd),
                cl::cat(AstraCategory));
static cl::opt<std::string>
    Output("o", cl::desc("Write the draft here ('-': standard output; "
                         "default: <file>.astra.json)"),
           cl::value_desc("file"), cl::sub(InitSpecCmd),
           cl::cat(AstraCategory));
static cl::opt<bool> Force("force",
                           cl::desc("Overwrite an existing spec file"),
                           cl::sub(InitSpecCmd), cl::cat(AstraCategory));

static cl::opt<std::string> FromCapture(
    "from-capture",
    cl::desc("Draft from a capture folder (`clang-astra capture`): the "
             "program's own launches, sizes and values; no TODO for "
             "anything the capture saw"),
    cl::value_desc("dir"), cl::sub(InitSpecCmd), cl::cat(AstraCategory));
static cl::opt<unsigned> MaxSets(
    "max-sets",
    cl::desc("With --from-capture: keep the N most launched configurations "
             "as shape sets (0: all)"),
    cl::value_desc("n"), cl::init(0), cl::sub(InitSpecCmd),
    cl::cat(AstraCategory));

/// The capture folder as the spec at \p SpecPath names it: relative to the
/// spec's folder when inside it, else absolute.
static std::string captureDirInSpec(StringRef Dir, StringRef SpecPath) {
  SmallString<256> D(Dir), S(SpecPath);
  sys::fs::make_absolute(D);
  sys::fs::make_absolute(S);
  sys::path::remove_dots(D, true);
  sys::path::remove_dots(S, true);
  StringRef SpecDir = sys::path::parent_path(S);
  StringRef Rel = D;
  if (Rel.consume_front(SpecDir) && Rel.consume_front("/") && !Rel.empty())
    return Rel.str();
  return std::string(D);
}

static int runInitSpec(const Session &S) {
  std::string OutPath = Output.empty() ? specPathFor(File) : Output.getValue();
  // Refuse before parsing: an existing spec is someone's work.
  if (OutPath != "-" && sys::fs::exists(OutPath) && !Force)
    return reportError(
        "init-spec: " + OutPath +
        " already exists; pass --force to overwrite it, or -o - to print "
        "the draft");

  auto TC = makeToolchain(S);
  if (!TC)
    return reportError(TC.takeError());
  auto CC = makeCompileCommands(S);
  if (!CC)
    return reportError(CC.takeError());
  auto PF = parseUserFile(File, *TC, *CC);
  if (!PF)
    return reportError(PF.takeError());
  std::vector<KernelInfo> Kernels = collectKernels((*PF)->context());
  std::string Shown = displayPath(File);

  std::optional<Capture> Cap;
  if (!FromCapture.empty()) {
    auto C = readCapture(FromCapture);
    if (!C)
      return reportError(C.takeError());
    Cap = std::move(*C);
    for (const std::string &N : Cap->Notes)
      warning(N);
  }
  std::vector<std::string> Names(KernelNames.begin(), KernelNames.end());
  if (Names.empty() && Cap) {
    // The file's kernels that the capture recorded.
    std::vector<std::string> All = specKernelNames(Kernels);
    for (const std::string &N : All) {
      auto T = findSpecTarget(Kernels, N, Shown);
      if (!T) {
        consumeError(T.takeError());
        continue;
      }
      if (findCapturedKernel((*PF)->context(), *T, *Cap))
        Names.push_back(N);
    }
    if (Names.empty()) {
      std::vector<std::string> Have;
      for (const CapturedKernel &K : Cap->Kernels)
        Have.push_back(K.Name);
      return reportError("init-spec: " + FromCapture +
                         ": the capture has no kernel of " + Shown +
                         " (it recorded: " +
                         (Have.empty() ? std::string("none")
                                       : join(Have, ", ")) +
                         "; the file has: " +
                         (All.empty() ? std::string("none") : join(All, ", ")) +
                         ")");
    }
  }
  if (Names.empty()) {
    std::vector<std::string> All = specKernelNames(Kernels);
    if (All.size() != 1)
      return reportError(
          "init-spec: " + Shown + ": name the kernel with --kernel (" +
          (All.empty() ? std::string("the file has no __global__ kernels")
                       : "kernels: " + join(All, ", ")) +
          ")");
    Names = All;
  }
  std::vector<SpecTarget> Targets;
  for (const std::string &N : Names) {
    auto T = findSpecTarget(Kernels, N, Shown);
    if (!T)
      return reportError(T.takeError());
    if (any_of(Targets, [&](const SpecTarget &X) { return X.Name == T->Name; }))
      return reportError("init-spec: kernel '" + T->Name +
                         "' is named twice");
    Targets.push_back(*T);
  }

  std::string Draft;
  if (Cap) {
    std::vector<std::string> Notes;
    std::string SpecFile = OutPath == "-" ? specPathFor(File) : OutPath;
    auto D = draftSpecFileFromCapture((*PF)->context(), Targets, Shown, *Cap,
                                      captureDirInSpec(FromCapture, SpecFile),
                                      MaxSets, Notes);
    if (!D)
      return reportError(D.takeError());
    for (const std::string &N : Notes)
      warning(N);
    Draft = std::move(*D);
  } else {
    Draft = draftSpecFile((*PF)->context(), Targets, Shown);
  }
  if (OutPath == "-") {
    outs() << Draft;
    return 0;
  }
  if (Error E = writeFileAtomically(OutPath, Draft))
    return reportError(std::move(E));
  std::vector<std::string> Drafted;
  for (const SpecTarget &T : Targets)
    Drafted.push_back("'" + T.Name + "'");
  if (Cap && !StringRef(Draft).contains("TODO"))
    note("wrote a spec for " + join(Drafted, ", ") + " to " + OutPath +
         " from the capture " + FromCapture + "; check it with `clang-astra "
         "check-spec " + Shown + "`");
  else
    note("wrote a draft spec for " + join(Drafted, ", ") + " to " + OutPath +
         "; fill in every TODO, then run `clang-astra check-spec " + Shown +
         "`");
  return 0;
}

static SubcommandRegistration Reg(InitSpecCmd, runInitSpec);

} // namespace tool
} // namespace astra
