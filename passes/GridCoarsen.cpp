//===- GridCoarsen.cpp ----------------------------------------------------===//
//
// Safety argument. A grid-stride loop
//   for (T i = <start> + blockIdx.x * blockDim.x + threadIdx.x; i < <bound>;
//        i += blockDim.x * gridDim.x) <body>
// visits every index from <start> below <bound> exactly once under any grid
// size, and index i is always taken by the thread with
// threadIdx.x == (i - <start>) % blockDim.x (the step is a multiple of
// blockDim.x), whatever the grid. So a kernel computes the same results under
// a smaller grid x when, for each of its instantiations:
//  - every read of blockIdx.x and gridDim.x is in the start or step of such a
//    loop (the body sees its block only through i);
//  - the loops' bodies do not synchronize or use shared memory (threads of
//    one block would run different iteration counts, one block would see
//    data meant for another), do not leave the loop early (break, return,
//    goto), and change neither i nor what <bound> reads;
//  - outside those loops the kernel has no effect but on its own locals: no
//    stores through pointers, no atomics, no calls to user functions (with
//    fewer blocks, code that runs once per thread runs fewer times);
//  - every launch of the kernel is visible in the file, its grid argument is
//    an integer or a dim3 (a variable or `dim3(x, ...)`), and the spec marks
//    the launch as the kernel's own ("launch_tunable"), so the spec's grid is
//    divided the same way.
// blockDim is unchanged, and the grid's y and z are unchanged.
//
//===----------------------------------------------------------------------===//
#include "GridCoarsen.h"
#include "utils/CudaIdioms.h"
#include "utils/Mutation.h"
#include "utils/PassSupport.h"

#include "astra/Spec/Spec.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/StmtCXX.h"

#include <set>

using namespace clang;
using namespace llvm;

namespace astra {

using namespace cudaidiom;

namespace {

/// The loop variable of `for (T i = <start>; i < <bound>;
/// i += blockDim.x * gridDim.x)` whose start holds the global thread index
/// (alone or added to other terms); null for any other loop.
const VarDecl *gridStrideVar(const ForStmt *F) {
  const auto *DS = dyn_cast_or_null<DeclStmt>(F->getInit());
  if (!DS || !DS->isSingleDecl())
    return nullptr;
  const auto *V = dyn_cast<VarDecl>(DS->getSingleDecl());
  if (!V || !V->getInit() || !V->getType()->isIntegerType())
    return nullptr;
  // The start: the global thread index, or a sum with it as one term
  // (vectorize's tail loop starts at `n / astra_vec * astra_vec + <index>`).
  const Expr *Start = stripIntCasts(V->getInit());
  bool HasIndex = isGlobalThreadIndex(Start);
  if (!HasIndex)
    if (const auto *Add = dyn_cast<BinaryOperator>(Start))
      if (Add->getOpcode() == BO_Add)
        HasIndex = (isGlobalThreadIndex(Add->getRHS()) &&
                    !usesBuiltin(Add->getLHS(), Builtin::BlockIdx, 0) &&
                    !usesBuiltin(Add->getLHS(), Builtin::GridDim, 0)) ||
                   (isGlobalThreadIndex(Add->getLHS()) &&
                    !usesBuiltin(Add->getRHS(), Builtin::BlockIdx, 0) &&
                    !usesBuiltin(Add->getRHS(), Builtin::GridDim, 0));
  if (!HasIndex)
    return nullptr;
  const auto *Inc = dyn_cast_or_null<CompoundAssignOperator>(F->getInc());
  if (!Inc || Inc->getOpcode() != BO_AddAssign ||
      !isGridStrideStep(Inc->getRHS()))
    return nullptr;
  const auto *IncVar = dyn_cast<DeclRefExpr>(Inc->getLHS()->IgnoreParens());
  if (!IncVar || IncVar->getDecl() != V)
    return nullptr;
  return V;
}

/// Checks one body of the kernel against the safety argument.
class BodyCheck {
public:
  explicit BodyCheck(const PassContext &PC) : PC(PC) {}

  /// Empty when \p S meets the argument; else why not (At: where).
  std::string check(const Stmt *S) {
    visit(S, /*InLoop=*/false);
    if (Why.empty() && Loops == 0) {
      Why = "the kernel has no grid-stride loop `for (i = blockIdx.x * "
            "blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)` "
            "(grid-stride makes one)";
      At = SourceLocation();
    }
    return Why;
  }

  SourceLocation At;
  unsigned Loops = 0;

private:
  void fail(SourceLocation L, const Twine &Msg) {
    if (!Why.empty())
      return;
    At = L;
    Why = Msg.str();
  }

  void visitLoop(const ForStmt *F, const VarDecl *I) {
    ++Loops;
    const SourceManager &SM = PC.sourceManager();
    const Stmt *Body = F->getBody();
    // flat-vectorize's vector atomic adds are plain effects of an
    // iteration.
    std::string C = findCollective(Body, SM, /*AllowVectorRed=*/true);
    if (!C.empty())
      return fail(F->getBeginLoc(), "the grid-stride loop's body " + C +
                                        ": threads would run different "
                                        "iteration counts");
    std::string Sh = findSharedMemory(Body, SM);
    if (!Sh.empty())
      return fail(F->getBeginLoc(),
                  "the grid-stride loop's body " + Sh +
                      ": one block would see data meant for another");
    if (const Stmt *E = findEarlyExit(Body, /*ContinueExits=*/false))
      return fail(E->getBeginLoc(),
                  "this leaves the grid-stride loop early: under a smaller "
                  "grid a thread would skip elements the original gave to "
                  "other blocks");
    if (mayModify(Body, I))
      return fail(I->getLocation(),
                  "the loop's body changes its index '" + I->getName() + "'");
    const auto *Cond =
        dyn_cast_or_null<BinaryOperator>(F->getCond() ? F->getCond()
                                                            ->IgnoreParenImpCasts()
                                                      : nullptr);
    if (!Cond || Cond->getOpcode() != BO_LT ||
        !isa<DeclRefExpr>(stripIntCasts(Cond->getLHS())) ||
        cast<DeclRefExpr>(stripIntCasts(Cond->getLHS()))->getDecl() != I)
      return fail(F->getBeginLoc(), "the grid-stride loop's condition is not "
                                    "`" + I->getName() + " < <bound>`");
    if (Cond->getRHS()->HasSideEffects(PC.astContext()))
      return fail(Cond->getRHS()->getBeginLoc(),
                  "the loop's bound has side effects");
    for (const DeclRefExpr *R : referencesInBound(Cond->getRHS()))
      if (const auto *V = dyn_cast<VarDecl>(R->getDecl()))
        if (mayModify(Body, V))
          return fail(R->getBeginLoc(), "the loop's body changes '" +
                                            V->getName() +
                                            "', which its bound reads");
    // The start and the step read blockIdx.x and gridDim.x by design; the
    // condition and the body may not.
    visit(F->getCond(), true);
    visit(Body, true);
  }

  static std::vector<const DeclRefExpr *> referencesInBound(const Expr *E) {
    std::vector<const DeclRefExpr *> Out;
    std::vector<const Stmt *> Work = {E};
    while (!Work.empty()) {
      const Stmt *S = Work.back();
      Work.pop_back();
      if (!S)
        continue;
      if (const auto *D = dyn_cast<DeclRefExpr>(S))
        Out.push_back(D);
      for (const Stmt *C : S->children())
        Work.push_back(C);
    }
    return Out;
  }

  /// Whether \p E names a local variable of the kernel (not __shared__, not
  /// a reference), the only thing code outside the loops may change.
  static bool isOwnLocal(const Expr *E) {
    const auto *D = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts());
    const auto *V = D ? dyn_cast<VarDecl>(D->getDecl()) : nullptr;
    return V && V->isLocalVarDecl() && !V->isStaticLocal() &&
           !V->hasAttr<CUDASharedAttr>() && !V->getType()->isReferenceType();
  }

  void visit(const Stmt *S, bool InLoop) {
    if (!S || !Why.empty())
      return;
    if (const auto *F = dyn_cast<ForStmt>(S))
      if (const VarDecl *I = gridStrideVar(F))
        return visitLoop(F, I);
    if (const auto *E = dyn_cast<Expr>(S)) {
      std::string B = builtinRef(E->IgnoreParenImpCasts()).name();
      if (B == "blockIdx.x" || B == "gridDim.x")
        return fail(E->getBeginLoc(),
                    B + " is read outside the start and step of a "
                        "grid-stride loop: the code depends on the grid");
      // threadIdx.y and the like: their semantic form calls the builtin's
      // accessor, which is no effect.
      if (!B.empty() || isa<PseudoObjectExpr>(S))
        return;
    }
    if (isa<AsmStmt>(S) && !isVectorRedAsm(S))
      return fail(S->getBeginLoc(), "inline asm");
    if (const auto *V = dyn_cast<DeclStmt>(S))
      for (const Decl *D : V->decls())
        if (const auto *VD = dyn_cast<VarDecl>(D))
          if (VD->hasAttr<CUDASharedAttr>() || VD->isStaticLocal())
            return fail(VD->getLocation(),
                        "the kernel declares __shared__ or static '" +
                            VD->getName() + "'");
    if (!InLoop) {
      // Outside the loops, code runs once per thread: fewer threads must
      // not mean fewer effects.
      if (const auto *BO = dyn_cast<BinaryOperator>(S))
        if (BO->isAssignmentOp() && !isOwnLocal(BO->getLHS()))
          return fail(BO->getBeginLoc(),
                      "a store outside the grid-stride loops: with fewer "
                      "blocks it would run fewer times");
      if (const auto *UO = dyn_cast<UnaryOperator>(S))
        if (UO->isIncrementDecrementOp() && !isOwnLocal(UO->getSubExpr()))
          return fail(UO->getBeginLoc(),
                      "a store outside the grid-stride loops: with fewer "
                      "blocks it would run fewer times");
      if (const auto *CE = dyn_cast<CallExpr>(S)) {
        StringRef Name = systemCalleeName(PC.sourceManager(), CE);
        if (Name.empty() || systemCallHasEffect(Name))
          return fail(CE->getBeginLoc(),
                      "a call outside the grid-stride loops that may have "
                      "an effect: with fewer blocks it would run fewer "
                      "times");
      }
    }
    if (isa<LambdaExpr>(S))
      return fail(S->getBeginLoc(), "a lambda (not analyzed)");
    for (const Stmt *C : S->children())
      visit(C, InLoop);
  }

  const PassContext &PC;
  std::string Why;
};

} // namespace

void GridCoarsenPass::run(PassContext &PC) {
  const KernelInfo &K = PC.kernel();
  const FunctionDecl *FD = K.Decl;
  ASTContext &Ctx = PC.astContext();
  SourceLocation Loc = FD->getLocation();

  std::vector<const KernelSpec *> Specs = specsOf(PC.options(), K);
  if (refuseUnlessLaunchIsOwn(PC, Specs, Loc,
                              "the grid to divide is the spec's launch.grid "
                              "too"))
    return;

  std::vector<KernelBody> Bodies = kernelBodies(FD);
  if (neverInstantiated(Bodies))
    return PC.refused(Loc, "a template never instantiated: its code cannot "
                           "be checked");
  int64_t VecWidth = 0;
  for (const KernelBody &KB : Bodies) {
    const FunctionDecl *D = KB.FD;
    BodyCheck BC(PC);
    std::string Why = BC.check(D->getBody());
    if (!Why.empty())
      return PC.refused(
          BC.At.isValid() ? BC.At : Loc,
          Why + (D != FD ? " (in " + KB.Label + ")" : std::string()));
    int64_t W = vectorWidth(D, Ctx);
    if (W > 0)
      VecWidth = VecWidth ? std::min(VecWidth, W) : W;
  }
  // Without vectorize, fewer blocks only take parallelism away from small
  // grids (H100: sage_mean's 7 us shape set 0.51x, scatter_add's
  // 0.78x at factor 4), so the pass then waits to be asked for a factor.
  if (VecWidth < 2 && !PC.options().Params.count("grid-coarsen.factor"))
    return PC.refused(Loc, "no loop that vectorize wrote: fewer blocks would "
                           "only cut parallelism (run vectorize first, or "
                           "give --pass-opt=grid-coarsen.factor=F)");
  int64_t F = PC.options().intParam(name(), "factor", VecWidth);
  if (F < 2 || F > 16)
    return PC.refused(Loc, "--pass-opt=grid-coarsen.factor=" +
                               std::to_string(F) + " is not from 2 to 16");

  KernelLaunches KL = findLaunches(Ctx, FD);
  if (refuseUnlessAllLaunchesVisible(PC, KL, Loc))
    return;

  std::string Up = std::to_string(F - 1), By = std::to_string(F);
  std::set<unsigned> Seen;
  EditSet ES;
  unsigned Sites = 0;
  std::string Where;
  for (const CUDAKernelCallExpr *L : KL.chevrons()) {
    const CallExpr *Config = L->getConfig();
    SourceLocation At = L->getBeginLoc();
    if (!Config || Config->getNumArgs() < 1)
      return PC.refused(At, "the launch has no visible configuration");
    const Expr *G = writtenDim3(Config->getArg(0));
    // The expression whose value is the grid's x, and how to divide it.
    const Expr *X = nullptr;
    std::string Before, After;
    if (G->getType()->isIntegerType()) {
      X = G;
    } else if (const auto *TO = dyn_cast<CXXConstructExpr>(G);
               TO && (isa<CXXTemporaryObjectExpr>(TO) ||
                      isa<CXXFunctionalCastExpr>(G)) &&
               TO->getNumArgs() >= 1 &&
               !isa<CXXDefaultArgExpr>(TO->getArg(0))) {
      X = TO->getArg(0)->IgnoreImplicit();
    } else if (const auto *FC = dyn_cast<CXXFunctionalCastExpr>(G)) {
      const auto *CE = dyn_cast<CXXConstructExpr>(FC->getSubExpr());
      if (CE && CE->getNumArgs() >= 1 && !isa<CXXDefaultArgExpr>(CE->getArg(0)))
        X = CE->getArg(0)->IgnoreImplicit();
    } else if (const auto *D = dyn_cast<DeclRefExpr>(G->IgnoreParens())) {
      // A dim3 variable: its x divided, y and z kept.
      std::string N = D->getNameInfo().getAsString();
      auto E = makeTokenEdit(PC, D->getSourceRange(),
                             "dim3((" + N + ".x + " + Up + ") / " + By + ", " +
                                 N + ".y, " + N + ".z)");
      if (!E)
        return PC.refused(At, "the launch's grid is not editable file text");
      if (!Seen.insert(D->getBeginLoc().getRawEncoding()).second)
        continue;
      if (!ES.addSite(PC.sourceManager(), {*E}))
        return PC.refused(At, "the edits of this launch overlap another's");
      ++Sites;
      Where += (Where.empty() ? "" : ", ") + posText(PC, At);
      continue;
    }
    if (!X)
      return PC.refused(At, "the launch's grid is neither an integer nor a "
                            "dim3 variable or `dim3(x, ...)`");
    if (X->HasSideEffects(Ctx))
      return PC.refused(X->getBeginLoc(), "the launch's grid has side effects");
    if (!Seen.insert(X->getBeginLoc().getRawEncoding()).second)
      continue; // Another instantiation of this launch, already edited.
    auto E = makeTokenEdit(PC, X->getSourceRange(),
                           "((" + PC.text(X->getSourceRange()) + ") + " + Up +
                               ") / " + By);
    if (!E)
      return PC.refused(At, "the launch's grid is not editable file text");
    if (!ES.addSite(PC.sourceManager(), {*E}))
      return PC.refused(At, "the edits of this launch overlap another's");
    ++Sites;
    Where += (Where.empty() ? "" : ", ") + posText(PC, At);
  }
  if (ES.commit(PC)) {
    PC.setGridDivisor(F);
    PC.fired(Loc, "grid x divided by " + By + " at " + std::to_string(Sites) +
                      " launch site" + (Sites == 1 ? "" : "s") + " (" + Where +
                      "): each thread takes " + By +
                      " times the elements of the grid-stride loops");
  }
}

} // namespace astra
