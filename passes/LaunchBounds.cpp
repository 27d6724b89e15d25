//===- LaunchBounds.cpp ---------------------------------------------------===//
//
// Safety argument. `__launch_bounds__(M)` makes every launch with more than M
// threads per block fail, so M must cover every launch the program makes,
// and only the code shows those (astra/Frontend/LaunchFacts.h): every launch
// of the kernel (or of its instantiations, in instantiated callers too) is
// in this file, none hides behind a function pointer, a template never
// instantiated, a declaration in a header or C linkage, and each passes a
// block the code bounds: constants (literals, constexpr and const values,
// template arguments, locals initialized once and never changed, dim3 built
// from those) or a `min` with one (`std::min(d, 1024)`). cudaLaunchKernel's
// block is read like a `<<<>>>`'s; cudaLaunchKernelEx keeps it in a struct,
// and the pass refuses. M is the largest bound; a constant block over 1024
// threads (or a dimension over the hardware limits) is a launch that fails
// already, and the pass refuses. The workload spec is not evidence: it says
// which workloads to run, not which launches exist. A kernel that already
// has launch bounds keeps them, and a kernel declared more than once is
// refused (the attribute would have to match on every declaration).
//
//===----------------------------------------------------------------------===//
#include "LaunchBounds.h"
#include "utils/PassSupport.h"

#include "clang/AST/Attr.h"
#include "clang/AST/ExprCXX.h"

#include <array>

using namespace clang;
using namespace llvm;

namespace astra {

namespace {

/// Checks one block against the hardware limits; returns the threads per
/// block or an error message.
Expected<int64_t> blockThreads(const std::array<int64_t, 3> &D,
                               const std::string &Where) {
  static const char *Axis[3] = {"x", "y", "z"};
  int64_t Threads = 1;
  for (unsigned I = 0; I < 3; ++I) {
    if (D[I] < 1 || D[I] > MaxBlockDims[I])
      return createStringError(
          inconvertibleErrorCode(),
          "%s uses block dimension %s = %lld, outside 1..%lld (the launch "
          "fails already)",
          Where.c_str(), Axis[I], (long long)D[I],
          (long long)MaxBlockDims[I]);
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

  // Only the code says which launches exist: a spec describes workloads to
  // run and never licenses a bound the launch sites do not show.
  KernelLaunches KL = findLaunches(Ctx, FD);
  std::string Unknown;
  if (!KL.maxThreads(&Unknown)) {
    PC.refused(Loc, "the code does not bound every launch's block size: " +
                        Unknown);
    return;
  }
  int64_t Max = 0;
  std::string MaxWhere;
  for (const LaunchFact &L : KL.Launches) {
    if (auto C = L.Block.constant()) {
      auto T = blockThreads(*C, L.where());
      if (!T) {
        PC.refused(Loc, toString(T.takeError()));
        return;
      }
    }
    if (L.Block.maxThreads() > Max) {
      Max = L.Block.maxThreads();
      MaxWhere = L.where();
    }
  }
  std::string Why = "the largest block of any launch: " + MaxWhere + " uses " +
                    (KL.constantBlocks() ? "" : "at most ") +
                    std::to_string(Max) + " threads";

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
