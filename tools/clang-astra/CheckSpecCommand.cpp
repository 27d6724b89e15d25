//===- CheckSpecCommand.cpp - clang-astra check-spec ----------------------===//
//
// Validates a workload spec and checks it against the kernels of its file,
// then prints what every shape set resolves to (launch, buffer sizes, bytes
// moved), so a user sees what the verifier and profiler will run before
// anything runs.
//
//===----------------------------------------------------------------------===//
#include "Common.h"
#include "Subcommands.h"
#include "astra/Frontend/KernelModel.h"
#include "astra/Runtime/CudaDriver.h"
#include "astra/Runtime/Device.h"
#include "astra/Spec/Spec.h"
#include "astra/Spec/SpecCheck.h"

#include "clang/AST/DeclTemplate.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace astra {
namespace tool {

static cl::SubCommand CheckSpecCmd(
    "check-spec", "Validate a workload spec against its kernels");
static cl::opt<std::string> File(cl::Positional, cl::desc("<file>"),
                                 cl::Required, cl::sub(CheckSpecCmd),
                                 cl::cat(AstraCategory));
static cl::opt<std::string>
    SpecOpt("spec", cl::desc("Spec file (default: <file>.astra.json)"),
            cl::value_desc("file"), cl::sub(CheckSpecCmd),
            cl::cat(AstraCategory));
static cl::opt<std::string>
    KernelName("kernel", cl::desc("Only check this kernel's entry"),
               cl::value_desc("name"), cl::sub(CheckSpecCmd),
               cl::cat(AstraCategory));

static std::string fmtReal(double D) { return Value::ofReal(D).str(); }

static void printArgs(raw_ostream &OS, const KernelSpec &K) {
  OS << "  args:\n";
  for (const ArgSpec &A : K.Args) {
    OS << "    " << A.Index << " " << A.Name << ": ";
    if (!A.IsBuffer) {
      OS << dtypeName(A.ScalarType) << " = " << A.ScalarValue.text() << "\n";
      continue;
    }
    OS << dtypeName(A.Type) << "[" << A.Count.text() << "] "
       << roleName(A.R);
    if (A.R == Role::Input || A.R == Role::InOut)
      OS << ", init " << A.Init.Text;
    if (A.R == Role::Output || A.R == Role::InOut)
      OS << ", compared with rtol " << fmtReal(K.rtolFor(A)) << ", atol "
         << fmtReal(K.atolFor(A));
    if (A.Align)
      OS << ", align " << A.Align;
    OS << "\n";
  }
}

static std::string dims(const int64_t (&D)[3]) {
  return formatv("({0}, {1}, {2})", D[0], D[1], D[2]).str();
}

/// Prints one shape set; the spec was validated, so evaluation succeeds.
static Error printShape(raw_ostream &OS, const KernelSpec &K,
                        const ShapeSet &S) {
  std::vector<std::string> Vars;
  for (auto &[Name, V] : S.Vars)
    Vars.push_back(Name + "=" + V.str());
  OS << "  shape set '" << S.Name << "'"
     << (Vars.empty() ? "" : ": " + join(Vars, ", ")) << "\n";
  auto L = K.Launch.resolve(S.Vars);
  if (!L)
    return L.takeError();
  OS << "    launch: grid " << dims(L->Grid) << ", block " << dims(L->Block)
     << ", shmem " << L->Shmem << " B\n";
  std::vector<std::string> Sizes;
  for (const ArgSpec &A : K.Args) {
    if (!A.IsBuffer)
      continue;
    auto B = A.bytes(S.Vars);
    if (!B)
      return B.takeError();
    Sizes.push_back(A.Name + " " + std::to_string(*B) + " B");
  }
  if (!Sizes.empty())
    OS << "    buffers: " << join(Sizes, ", ") << "\n";
  auto Bytes = K.bytesMoved(S.Vars);
  if (!Bytes)
    return Bytes.takeError();
  OS << "    bytes moved: " << *Bytes << (K.Bytes ? "" : " (auto)");
  if (K.Flops) {
    auto F = K.Flops->eval(S.Vars);
    if (!F)
      return F.takeError();
    OS << ", flops: " << F->str();
  }
  OS << "\n";
  return Error::success();
}

/// This machine's GPU 0, when it has a driver and a GPU: a shape set whose
/// buffers do not fit its memory could never run here. (Without a GPU only
/// the limit of any GPU applies, when the spec is read.)
static std::optional<DeviceInfo> localGpu() {
  auto Driver = CudaDriver::get();
  if (!Driver) {
    consumeError(Driver.takeError());
    return std::nullopt;
  }
  auto Dev = GpuContext::queryDevice(0);
  if (!Dev) {
    consumeError(Dev.takeError());
    return std::nullopt;
  }
  return *Dev;
}

/// The shape sets of \p K whose buffers need more than \p Gpu's memory.
static Error checkFitsGpu(const KernelSpec &K, const DeviceInfo &Gpu) {
  for (const ShapeSet &Set : K.Shapes) {
    auto Bytes = bufferBytes(K, Set);
    if (!Bytes)
      return Bytes.takeError();
    if (*Bytes > Gpu.MemoryBytes)
      return createStringError(
          inconvertibleErrorCode(),
          K.where("args") + "the buffers of shape set '" + Set.Name +
              "' take " + byteSizeText(*Bytes) + ", more than GPU " +
              std::to_string(Gpu.Ordinal) + " (" + Gpu.Name + ") has (" +
              byteSizeText(Gpu.MemoryBytes) + ")");
  }
  return Error::success();
}

static int runCheckSpec(const Session &S) {
  auto Spec = loadSpecFor(File, SpecOpt);
  if (!Spec)
    return reportError(Spec.takeError());
  std::vector<KernelSpec *> Entries;
  if (!KernelName.empty()) {
    KernelSpec *K = Spec->find(KernelName);
    if (!K) {
      std::vector<std::string> Names;
      for (const KernelSpec &X : Spec->Kernels)
        Names.push_back(X.Kernel);
      return reportError(Spec->Path + ": no entry for kernel '" + KernelName +
                         "' (entries: " + join(Names, ", ") + ")");
    }
    Entries.push_back(K);
  } else {
    for (KernelSpec &K : Spec->Kernels)
      Entries.push_back(&K);
  }

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

  int Status = 0;
  std::optional<DeviceInfo> Gpu = localGpu();
  // What the entries name: a kernel, or one instantiation of a template.
  std::vector<std::pair<const KernelInfo *, const clang::FunctionDecl *>>
      Covered;
  for (KernelSpec *K : Entries) {
    auto T = findSpecTarget(Kernels, K->Kernel, Shown);
    if (!T) {
      Status = reportError(K->where("") + toString(T.takeError()));
      continue;
    }
    Covered.push_back({T->Kernel, T->Function});
    if (Error E = checkSpecAgainstKernel(*K, *T->Kernel)) {
      Status = reportError(std::move(E));
      continue;
    }
    if (Gpu)
      if (Error E = checkFitsGpu(*K, *Gpu)) {
        Status = reportError(std::move(E));
        continue;
      }
    std::string Out;
    raw_string_ostream OS(Out);
    OS << Spec->Path << ": kernel '" << K->Kernel << "' (" << T->Kernel->Pos.str()
       << "): ok\n";
    printArgs(OS, *K);
    bool Printed = true;
    for (const ShapeSet &Set : K->Shapes)
      if (Error E = printShape(OS, *K, Set)) {
        Status = reportError(K->where("") + toString(std::move(E)));
        Printed = false;
        break;
      }
    if (Printed)
      outs() << Out;
  }
  // Kernels without an entry; a template needs one per instantiation, so
  // each instantiation without one is noted by its name.
  if (KernelName.empty())
    for (const KernelInfo &KI : Kernels) {
      if (!KI.InMainFile)
        continue;
      std::vector<std::pair<const clang::FunctionDecl *, std::string>> Units;
      if (const clang::FunctionTemplateDecl *FTD =
              KI.Decl ? KI.Decl->getDescribedFunctionTemplate() : nullptr) {
        clang::PrintingPolicy PP(KI.Decl->getASTContext().getLangOpts());
        PP.SuppressTagKeyword = true;
        for (const clang::FunctionDecl *FD : FTD->specializations()) {
          std::string Name;
          raw_string_ostream OS(Name);
          FD->getNameForDiagnostic(OS, PP, /*Qualified=*/false);
          Units.push_back({FD, Name});
        }
      }
      if (Units.empty())
        Units.push_back({KI.Decl, KI.QualifiedName});
      for (auto &[FD, Name] : Units)
        if (!any_of(Covered, [&, FD = FD](const auto &C) {
              return C.first == &KI && (!KI.isTemplate() || C.second == FD);
            }))
          note(Shown + ": kernel '" + Name +
               "' has no spec entry; it cannot be verified or profiled");
    }
  return Status;
}

static SubcommandRegistration Reg(CheckSpecCmd, runCheckSpec);

} // namespace tool
} // namespace astra
