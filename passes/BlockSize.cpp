//===- BlockSize.cpp ------------------------------------------------------===//
//
// Safety argument. A kernel's meaning may depend on its block size (shared
// arrays sized for it, `threadIdx.x < 128`), so this pass is never safe on
// its own: it exists for the optimizer, which verifies every candidate
// against the original on the GPU. What the pass guarantees is that the
// rewritten file launches exactly what the spec now says:
//  - the spec marks the launch as the kernel's own ("launch_tunable") and its
//    launch.block holds one block size literal L (LaunchTuning.h);
//  - every launch of the kernel in the file is visible (the kernel's address
//    is not taken, no launch hides in a template never instantiated) and
//    there is at least one;
//  - at each launch the block argument spells L (directly, or in the
//    initializer of a local that never changes), as plain file text; the
//    grid and the shared memory arguments spell L exactly when the spec's
//    grid and shmem do, so both are rewritten together or not at all;
//  - the kernel's body does not use the literal L itself (a sign that it
//    was written for that block size), and the new size fits its
//    __launch_bounds__.
//
//===----------------------------------------------------------------------===//
#include "BlockSize.h"
#include "astra/Spec/LaunchTuning.h"
#include "utils/Mutation.h"
#include "utils/PassSupport.h"

#include "clang/AST/Attr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"

#include <map>
#include <set>

using namespace clang;
using namespace llvm;

namespace astra {

namespace {

/// The integer literals with a value in \p Vs that \p S spells, following
/// locals initialized once and never changed to their initializers.
void collectLiterals(const Stmt *S, const std::map<int64_t, int64_t> &Vs,
                     unsigned Depth, std::vector<const IntegerLiteral *> &Out) {
  if (!S || Depth > 6)
    return;
  if (isa<CXXDefaultArgExpr>(S) || isa<SubstNonTypeTemplateParmExpr>(S) ||
      isa<LambdaExpr>(S))
    return;
  if (const auto *IL = dyn_cast<IntegerLiteral>(S)) {
    if (IL->getValue().getSignificantBits() <= 63 &&
        Vs.count(IL->getValue().getSExtValue()))
      Out.push_back(IL);
    return;
  }
  if (const auto *DRE = dyn_cast<DeclRefExpr>(S)) {
    const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
    if (VD && VD->isLocalVarDecl() && VD->getInit())
      if (const auto *FD = dyn_cast<FunctionDecl>(VD->getDeclContext()))
        if (FD->getBody() && !mayModify(FD->getBody(), VD))
          collectLiterals(VD->getInit(), Vs, Depth + 1, Out);
    return;
  }
  for (const Stmt *C : S->children())
    collectLiterals(C, Vs, Depth, Out);
}

/// The first integer literal equal to \p V in \p S, array sizes of its
/// declarations included (`__shared__ float s[256]`).
class LiteralFinder : public RecursiveASTVisitor<LiteralFinder> {
public:
  explicit LiteralFinder(int64_t V) : V(V) {}
  bool VisitIntegerLiteral(IntegerLiteral *IL) {
    if (IL->getValue().getSignificantBits() <= 63 &&
        IL->getValue().getSExtValue() == V) {
      Found = IL;
      return false;
    }
    return true;
  }
  int64_t V;
  const IntegerLiteral *Found = nullptr;
};

const IntegerLiteral *firstLiteral(const Stmt *S, int64_t V) {
  LiteralFinder F(V);
  F.TraverseStmt(const_cast<Stmt *>(S));
  return F.Found;
}

} // namespace

void BlockSizePass::run(PassContext &PC) {
  const KernelInfo &K = PC.kernel();
  const FunctionDecl *FD = K.Decl;
  ASTContext &Ctx = PC.astContext();
  SourceLocation Loc = FD->getLocation();

  std::vector<const KernelSpec *> Specs = specsOf(PC.options(), K);
  if (Specs.empty()) {
    PC.refused(Loc, "no workload spec: the block size to change is the "
                    "spec's launch.block (--spec)");
    return;
  }
  int64_t From = 0;
  bool MentionGrid = false, MentionShmem = false;
  for (const KernelSpec *S : Specs) {
    auto L = tunableBlockLiteral(*S);
    if (!L) {
      PC.refused(Loc, toString(L.takeError()));
      return;
    }
    if (From && *L != From) {
      PC.refused(Loc, "the spec's instantiations use different block sizes (" +
                          std::to_string(From) + " and " + std::to_string(*L) +
                          ")");
      return;
    }
    From = *L;
    for (unsigned I = 0; I < 3; ++I)
      MentionGrid |= mentionsLiteral(S->Launch.Grid[I].text(), From);
    MentionShmem |= mentionsLiteral(S->Launch.Shmem.text(), From);
  }

  int64_t To = PC.options().intParam(name(), "threads",
                                     defaultRetunedBlock(From));
  if (To < 32 || To > 1024 || To % 32) {
    PC.refused(Loc, "--pass-opt=block-size.threads=" + std::to_string(To) +
                        " is not a multiple of 32 from 32 to 1024");
    return;
  }
  if (To == From) {
    PC.refused(Loc, "the kernel is launched with " + std::to_string(From) +
                        " threads already");
    return;
  }
  for (const FunctionDecl *R : FD->redecls())
    if (const auto *LB = R->getAttr<CUDALaunchBoundsAttr>()) {
      Expr::EvalResult Max;
      if (!LB->getMaxThreads() ||
          !LB->getMaxThreads()->EvaluateAsInt(Max, Ctx) ||
          Max.Val.getInt().getExtValue() < To) {
        PC.refused(Loc, "the kernel's __launch_bounds__ do not allow " +
                            std::to_string(To) + " threads");
        return;
      }
    }
  if (const IntegerLiteral *IL = firstLiteral(FD->getBody(), From)) {
    PC.refused(IL->getBeginLoc(),
               "the kernel's body uses the literal " + std::to_string(From) +
                   ", the block size it is launched with: it may be written "
                   "for that block size (a shared array, a thread bound)");
    return;
  }

  KernelLaunches KL = findLaunches(Ctx, FD);
  if (refuseUnlessAllLaunchesVisible(PC, KL, Loc))
    return;

  // Instantiations of one launching template share their literals: each
  // literal is edited once.
  std::set<unsigned> Seen;
  EditSet ES;
  unsigned Sites = 0;
  std::string Where;
  for (const CUDAKernelCallExpr *L : KL.chevrons()) {
    const CallExpr *Config = L->getConfig();
    SourceLocation At = L->getBeginLoc();
    if (!Config || Config->getNumArgs() < 2) {
      PC.refused(At, "the launch has no visible configuration");
      return;
    }
    // The grid may round up with the block size minus one, too.
    std::map<int64_t, int64_t> Block = {{From, To}};
    std::map<int64_t, int64_t> Grid = gridLiterals(From, To);
    struct Arg {
      const char *Name;
      bool Required;
      const Expr *E;
      const std::map<int64_t, int64_t> &Map;
    } Args[3] = {
        {"grid", MentionGrid, Config->getArg(0), MentionGrid ? Grid : Block},
        {"block", true, Config->getArg(1), Block},
        {"shared memory", MentionShmem,
         Config->getNumArgs() > 2 ? Config->getArg(2) : nullptr, Block}};
    std::vector<TextEdit> Edits;
    for (const Arg &A : Args) {
      // A local the configuration reads that other code reads too (another
      // kernel's launch of the same `threads`): editing it would change
      // that code's launch or values as well.
      const VarDecl *Shared = nullptr;
      if (A.E)
        if (const DeclRefExpr *R =
                configLocalReadElsewhere(Ctx, A.E, KL.chevrons(), Shared)) {
          PC.refused(R->getLocation(),
                     std::string("the launch's ") + A.Name + " reads '" +
                         Shared->getName().str() +
                         "', which is read here too (not by a launch of "
                         "this kernel): changing it would change this too");
          return;
        }
      std::vector<const IntegerLiteral *> Lits;
      collectLiterals(A.E, A.Map, 0, Lits);
      bool HasFrom = llvm::any_of(Lits, [&](const IntegerLiteral *IL) {
        return IL->getValue().getSExtValue() == From;
      });
      if (A.Required && !HasFrom) {
        PC.refused(At, std::string("the launch's ") + A.Name +
                           " does not spell the block size " +
                           std::to_string(From) +
                           " that the spec's launch uses");
        return;
      }
      if (!A.Required && !Lits.empty()) {
        PC.refused(Lits.front()->getBeginLoc(),
                   std::string("the launch's ") + A.Name + " uses " +
                       std::to_string(From) +
                       " but the spec's does not: which is the block size "
                       "is unclear");
        return;
      }
      for (const IntegerLiteral *IL : Lits) {
        SourceLocation B = IL->getBeginLoc();
        if (B.isMacroID()) {
          PC.refused(B, "the block size is spelled inside a macro");
          return;
        }
        if (!Seen.insert(B.getRawEncoding()).second)
          continue;
        auto E = makeTokenEdit(
            PC, IL->getSourceRange(),
            std::to_string(A.Map.at(IL->getValue().getSExtValue())));
        if (!E) {
          PC.refused(B, "the block size is not editable file text");
          return;
        }
        Edits.push_back(*E);
      }
    }
    if (Edits.empty())
      continue; // Another instantiation of a launch already edited.
    if (!ES.addSite(PC.sourceManager(), Edits)) {
      PC.refused(At, "the edits of this launch overlap another's");
      return;
    }
    ++Sites;
    Where += (Where.empty() ? "" : ", ") + posText(PC, At);
  }
  if (ES.commit(PC)) {
    PC.setBlockThreads(To);
    PC.fired(Loc, "block size " + std::to_string(From) + " -> " +
                      std::to_string(To) + " at " + std::to_string(Sites) +
                      " launch site" + (Sites == 1 ? "" : "s") + " (" + Where +
                      ")");
  }
}

} // namespace astra
