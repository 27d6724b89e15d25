//===- LaunchBounds.cpp ---------------------------------------------------===//
//
// Safety argument. `__launch_bounds__(M)` makes every launch with more than M
// threads per block fail, so M must cover every launch the program makes:
//  - from the file: every launch site of the kernel (or of its
//    instantiations, in instantiated callers too) passes a block whose
//    dimensions evaluate to constants (literals, constexpr and const values,
//    template arguments, locals initialized once and never changed, dim3
//    built from those), no launch hides in a template that is never
//    instantiated, and the kernel's address is not taken (cudaLaunchKernel
//    and function pointers launch without a visible configuration);
//  - or from the workload spec, which states how the kernel is launched:
//    launch.block evaluated for every shape set.
// M is the largest block of all of them; a block over 1024 threads (or a
// dimension over the hardware limits) is a launch that fails already, and
// the pass refuses. A kernel that already has launch bounds keeps them, and
// a kernel declared more than once is refused (the attribute would have to
// match on every declaration). The kernel may still be launched from other
// translation units; docs/passes.md says so, and the spec is how a user
// states the contract.
//
//===----------------------------------------------------------------------===//
#include "LaunchBounds.h"
#include "PassSupport.h"
#include "astra/Spec/Spec.h"

#include "clang/AST/Attr.h"
#include "clang/AST/ExprCXX.h"

#include <array>

using namespace clang;
using namespace llvm;

namespace astra {

namespace {

/// Dimension limits of a block (x, y, z) and of their product.
constexpr int64_t MaxBlockDim[3] = {1024, 1024, 64};
constexpr int64_t MaxBlockThreads = 1024;

/// Checks one block against the hardware limits; returns the threads per
/// block or an error message.
Expected<int64_t> blockThreads(const std::array<int64_t, 3> &D,
                               const std::string &Where) {
  static const char *Axis[3] = {"x", "y", "z"};
  int64_t Threads = 1;
  for (unsigned I = 0; I < 3; ++I) {
    if (D[I] < 1 || D[I] > MaxBlockDim[I])
      return createStringError(
          inconvertibleErrorCode(),
          "%s uses block dimension %s = %lld, outside 1..%lld (the launch "
          "fails already)",
          Where.c_str(), Axis[I], (long long)D[I],
          (long long)MaxBlockDim[I]);
    Threads *= D[I];
  }
  if (Threads > MaxBlockThreads)
    return createStringError(inconvertibleErrorCode(),
                             "%s uses %lld threads per block, more than the "
                             "%lld a block may have (the launch fails already)",
                             Where.c_str(), (long long)Threads,
                             (long long)MaxBlockThreads);
  return Threads;
}

} // namespace

void LaunchBoundsPass::run(PassContext &PC) {
  const KernelInfo &K = PC.kernel();
  const FunctionDecl *FD = K.Decl;
  ASTContext &Ctx = PC.astContext();
  SourceLocation Loc = FD->getLocation();

  for (const FunctionDecl *R : FD->redecls())
    if (R->hasAttr<CUDALaunchBoundsAttr>() || !K.LaunchBounds.empty()) {
      PC.refused(Loc, "the kernel already has __launch_bounds__(" +
                          (K.LaunchBounds.empty() ? std::string("...")
                                                  : K.LaunchBounds) +
                          ")");
      return;
    }
  for (const FunctionDecl *R : FD->redecls())
    if (R != FD) {
      PC.refused(Loc, "the kernel is declared again at " +
                          posText(PC, R->getLocation()) +
                          "; __launch_bounds__ would have to be added to "
                          "every declaration");
      return;
    }

  std::string MinText = PC.options().strParam(name(), "min-blocks", "");
  int64_t MinBlocks = 0;
  if (!MinText.empty() &&
      (StringRef(MinText).getAsInteger(10, MinBlocks) || MinBlocks < 1 ||
       MinBlocks > 32)) {
    PC.refused(Loc, "--pass-opt=launch-bounds.min-blocks=" + MinText +
                        " is not an integer from 1 to 32");
    return;
  }

  // Evidence from the launch sites in the file.
  KernelLaunches KL = findLaunches(Ctx, FD);
  int64_t FileMax = 0;
  std::string FileWhere, FileProblem;
  if (KL.AddressTaken)
    FileProblem = "the kernel's address is taken at " +
                  posText(PC, KL.AddressTaken->getBeginLoc()) +
                  ", so some launches are not visible";
  else if (KL.Unresolved)
    FileProblem = "the launch at " + posText(PC, KL.Unresolved->getBeginLoc()) +
                  " is in a template never instantiated here";
  else if (KL.Launches.empty())
    FileProblem = "no launch site in this file";
  for (const CUDAKernelCallExpr *L : KL.Launches) {
    std::string Where = "the launch at " + posText(PC, L->getBeginLoc());
    const CallExpr *Config = L->getConfig();
    auto Dims = Config && Config->getNumArgs() >= 2
                    ? launchBlockDims(Config->getArg(1), Ctx)
                    : std::nullopt;
    if (!Dims) {
      if (FileProblem.empty())
        FileProblem = Where + " passes a block size that is not a "
                      "compile-time constant";
      continue;
    }
    auto T = blockThreads(*Dims, Where);
    if (!T) {
      PC.refused(Loc, toString(T.takeError()));
      return;
    }
    if (*T > FileMax) {
      FileMax = *T;
      FileWhere = Where;
    }
  }

  // Evidence from the workload spec.
  int64_t SpecMax = 0;
  std::string SpecWhere;
  std::vector<const KernelSpec *> Specs = specsOf(PC.options(), K);
  for (const KernelSpec *S : Specs) {
    for (const ShapeSet &Shape : S->Shapes) {
      std::array<int64_t, 3> D = {1, 1, 1};
      std::string Where = "the spec " + displayPath(S->SpecPath) +
                          " (kernel '" + S->Kernel + "', shape set '" +
                          Shape.Name + "')";
      for (unsigned I = 0; I < 3; ++I) {
        if (S->Launch.Block[I].empty())
          continue;
        auto V = S->Launch.Block[I].evalInt(Shape.Vars);
        if (!V) {
          PC.refused(Loc, Where + ": launch.block: " +
                              toString(V.takeError()));
          return;
        }
        D[I] = *V;
      }
      auto T = blockThreads(D, Where);
      if (!T) {
        PC.refused(Loc, toString(T.takeError()));
        return;
      }
      if (*T > SpecMax) {
        SpecMax = *T;
        SpecWhere = Where;
      }
    }
  }

  int64_t Max = 0;
  std::string Why;
  if (FileProblem.empty()) {
    Max = std::max(FileMax, SpecMax);
    Why = "the largest block of any launch: " +
          (FileMax >= SpecMax ? FileWhere : SpecWhere) + " uses " +
          std::to_string(Max) + " threads";
  } else if (SpecMax > 0) {
    Max = std::max(FileMax, SpecMax);
    Why = "the largest block in the spec's shape sets (" +
          (SpecMax >= FileMax ? SpecWhere : FileWhere) + ": " +
          std::to_string(Max) + " threads); the file alone does not show "
          "it: " + FileProblem;
  } else {
    PC.refused(Loc, "block sizes are unknown: " + FileProblem +
                        (Specs.empty() ? "; no spec gives launch.block "
                                         "(--spec)"
                                       : "; the spec has no shape sets"));
    return;
  }

  std::string Attr = "__launch_bounds__(" + std::to_string(Max) +
                     (MinBlocks ? ", " + std::to_string(MinBlocks) : "") + ")";
  // Before the declarator: `__global__ void __launch_bounds__(256) k(...)`.
  SourceLocation At = FD->getQualifierLoc()
                          ? FD->getQualifierLoc().getBeginLoc()
                          : FD->getLocation();
  auto E = makeInsertBefore(PC, At, Attr + " ");
  if (!E) {
    PC.refused(Loc, "the kernel's name is spelled inside a macro expansion");
    return;
  }
  EditSet ES;
  ES.addSite(PC.sourceManager(), {*E});
  if (ES.commit(PC))
    PC.fired(Loc, Attr + ": " + Why);
}

} // namespace astra
