//===- ListCommand.cpp - clang-astra list ---------------------------------===//
//
// Lists the __global__ kernels of each file with everything the optimizer
// later relies on, so a user can check what the tool sees before it rewrites.
//
//===----------------------------------------------------------------------===//
#include "Common.h"
#include "Subcommands.h"
#include "astra/Frontend/KernelJson.h"
#include "astra/Frontend/KernelModel.h"
#include "astra/Support/Json.h"

#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace astra {
namespace tool {

static cl::SubCommand ListCmd("list", "List the __global__ kernels in CUDA files");
static cl::list<std::string> Files(cl::Positional, cl::desc("<files>"),
                                   cl::OneOrMore, cl::sub(ListCmd),
                                   cl::cat(AstraCategory));
enum class Format { Text, Json };
static cl::opt<Format> OutFormat(
    "format", cl::desc("Output format"),
    cl::values(clEnumValN(Format::Text, "text", "human-readable (default)"),
               clEnumValN(Format::Json, "json", "JSON")),
    cl::init(Format::Text), cl::sub(ListCmd), cl::cat(AstraCategory));

static void printText(raw_ostream &OS, const KernelInfo &K) {
  OS << K.Pos.str() << ": kernel " << K.QualifiedName;
  if (K.isTemplate()) {
    OS << "<";
    for (size_t I = 0; I < K.TemplateParams.size(); ++I)
      OS << (I ? ", " : "") << K.TemplateParams[I].Name;
    OS << ">";
  }
  OS << "\n";
  if (!K.isTemplate())
    OS << "  mangled: " << K.MangledName << "\n";
  if (!K.Macro.empty())
    OS << "  from macro: " << K.Macro << "\n";
  if (!K.LaunchBounds.empty())
    OS << "  launch bounds: " << K.LaunchBounds << "\n";
  OS << "  parameters:";
  if (K.Params.empty())
    OS << " none";
  OS << "\n";
  for (const KernelParam &P : K.Params) {
    OS << "    " << P.Index << " " << P.Name << ": " << P.Type;
    if (P.IsPointer) {
      OS << "  [pointee " << P.PointeeType;
      if (P.PointeeConst)
        OS << ", const";
      if (P.Restrict)
        OS << ", restrict";
      OS << (P.Written ? ", written" : ", read-only") << "]";
    }
    OS << "\n";
  }
  if (K.isTemplate()) {
    OS << "  template parameters:";
    for (size_t I = 0; I < K.TemplateParams.size(); ++I)
      OS << (I ? ", " : " ") << K.TemplateParams[I].Text;
    OS << "\n  instantiations:";
    if (K.Instantiations.empty())
      OS << " none";
    OS << "\n";
    for (const Instantiation &I : K.Instantiations)
      OS << "    " << I.Name << "  " << I.MangledName
         << (I.Explicit ? "  (explicit)" : "") << "\n";
  }
  OS << "  calls:";
  if (K.Callees.empty())
    OS << " none";
  OS << "\n";
  for (const DeviceCallee &C : K.Callees)
    OS << "    " << C.Name << "  " << C.Pos.str() << "\n";
  OS << "  launch sites:";
  if (K.LaunchSites.empty())
    OS << " none in this file";
  OS << "\n";
  for (const LaunchSite &L : K.LaunchSites) {
    OS << "    " << L.Pos.str();
    if (!L.Caller.empty())
      OS << " in " << L.Caller << "()";
    if (L.Api != "<<<>>>") {
      OS << ": " << L.Api << "(" << K.QualifiedName;
      for (const std::string *A : {&L.Grid, &L.Block})
        if (!A->empty())
          OS << ", " << *A;
      for (const std::string &A : L.Args)
        OS << ", " << A;
      OS << ")\n";
      continue;
    }
    OS << ": " << K.QualifiedName << L.TemplateArgs << "<<<" << L.Grid << ", "
       << L.Block;
    if (L.Shmem || L.Stream)
      OS << ", " << L.Shmem.value_or("0");
    if (L.Stream)
      OS << ", " << *L.Stream;
    OS << ">>>(";
    for (size_t I = 0; I < L.Args.size(); ++I)
      OS << (I ? ", " : "") << L.Args[I];
    OS << ")\n";
  }
}

static int runListImpl(const Session &S) {
  auto TC = makeToolchain(S);
  if (!TC)
    return reportError(TC.takeError());
  auto CC = makeCompileCommands(S);
  if (!CC)
    return reportError(CC.takeError());

  int Status = 0;
  JsonWriter W;
  W.objectBegin();
  W.key("files");
  W.arrayBegin();
  for (const std::string &File : Files) {
    auto PF = parseUserFile(File, *TC, *CC);
    if (!PF) {
      Status = reportError(PF.takeError());
      W.objectBegin();
      W.field("file", displayPath(File));
      W.field("error", "could not be parsed");
      W.objectEnd();
      continue;
    }
    std::vector<KernelInfo> Kernels = collectKernels((*PF)->context());
    if (OutFormat == Format::Json) {
      W.objectBegin();
      W.field("file", displayPath(File));
      W.key("kernels");
      W.arrayBegin();
      for (const KernelInfo &K : Kernels)
        writeKernelJson(W, K);
      W.arrayEnd();
      W.objectEnd();
      continue;
    }
    if (Kernels.empty()) {
      outs() << displayPath(File) << ": no __global__ kernels\n";
      continue;
    }
    for (const KernelInfo &K : Kernels)
      printText(outs(), K);
  }
  W.arrayEnd();
  W.objectEnd();
  if (OutFormat == Format::Json)
    outs() << W.str();
  return Status;
}

int runList(const Session &S) { return runListImpl(S); }

static SubcommandRegistration Reg(ListCmd, runList);

} // namespace tool
} // namespace astra
