//===- WarpPerRow.cpp -----------------------------------------------------===//
//
// Safety argument. The original kernel is PRE; `R r = <global thread
// index>;` REST, with REST a guard on r (`if (r < N) { ... }` around all of
// it, or `if (r >= N) return;` first, only declarations without effect
// before it), N a parameter never changed. Every launch is a `<<<>>>` in
// the files (none hidden) with a 1-D block of x size B and grid x
// `(n + B - 1) / B` (or a call of a function whose body is that), n the
// argument the launch passes for N: the launch has a thread for each row
// in [0, n) and more, and the guard keeps exactly the rows in [0, n).
// Under the new launch, where B % 32 == 0, the grid is
// `(n + B / 32 - 1) / (B / 32)` blocks of B / 32 warps: a warp for each
// row in [0, n) and fewer than B / 32 more. The kernel computes
// `r = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32`, the global warp
// index, the same on the 32 lanes of a warp (a 1-D block whose x is a
// multiple of 32 has its warps at consecutive x, each a whole one), so the
// guard keeps the rows [0, n), each run by exactly one warp. That warp runs
// REST as row-cooperative's rewrite of one of its rows (RowCooperative.cpp:
// same analysis, loops strided over the lanes, reductions combined by
// shuffles, stores outside the loops made by lane 0 between __syncwarp()),
// which computes what the row's thread computed. The analysis also refuses
// reads of blockIdx, blockDim and gridDim outside the index (the new launch
// changes them) and returns stay returns (the warp has one row; control flow
// outside the row loops is uniform, so the lanes leave together).
// Where a launch's B is not proven a multiple of 32, its grid is
// `B % 32 == 0 ? <new> : <old>` and the kernel tests `blockDim.x % 32 == 0`
// (the same value: the block is 1-D) and runs the original code otherwise.
// The spec's launch changes the same way (warpPerRowLaunch), so the spec
// must mark it as the kernel's own.
//
//===----------------------------------------------------------------------===//
#include "WarpPerRow.h"

#include "utils/CudaIdioms.h"
#include "utils/PassSupport.h"
#include "utils/RowBody.h"
#include "utils/SourceText.h"

#include "astra/Spec/LaunchTuning.h"
#include "astra/Spec/Spec.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"

#include <set>

using namespace clang;
using namespace llvm;

namespace astra {

using namespace cudaidiom;

namespace {

/// Whether \p A and \p B have the same value: the same expression, or
/// integers the code fixes to the same constant.
bool sameValue(const ASTContext &Ctx, const Expr *A, const Expr *B) {
  if (sameExpr(Ctx, stripIntCasts(A), stripIntCasts(B)))
    return true;
  auto VA = evalLaunchValue(A, Ctx), VB = evalLaunchValue(B, Ctx);
  return VA && VB && *VA == *VB;
}

/// Matches a rounded-up division `(n + b - 1) / b` (also `(b + n) - 1`,
/// `n + (b - 1)`, and a literal b with `n + (b - 1)` folded: `(n + 255) /
/// 256`), or a call of a function of two integer parameters whose body is
/// `return <that of its parameters>;` (`ceil_div(n, b)`), setting \p N and
/// \p B.
bool matchCeilDiv(const ASTContext &Ctx, const Expr *E, const Expr *&N,
                  const Expr *&B, bool InCallee = false) {
  E = stripIntCasts(E);
  if (const auto *Div = dyn_cast<BinaryOperator>(E);
      Div && Div->getOpcode() == BO_Div) {
    const Expr *D = stripIntCasts(Div->getRHS());
    const auto *Num = dyn_cast<BinaryOperator>(stripIntCasts(Div->getLHS()));
    if (!Num)
      return false;
    auto IsOne = [&](const Expr *X) {
      auto V = constInt(Ctx, X);
      return V && *V == 1;
    };
    auto IsD = [&](const Expr *X) {
      return sameExpr(Ctx, stripIntCasts(X), D);
    };
    auto IsDMinusOne = [&](const Expr *X) {
      const auto *S = dyn_cast<BinaryOperator>(stripIntCasts(X));
      if (S && S->getOpcode() == BO_Sub && IsD(S->getLHS()) &&
          IsOne(S->getRHS()))
        return true;
      auto VX = constInt(Ctx, X), VD = constInt(Ctx, D);
      return VX && VD && *VX == *VD - 1;
    };
    if (Num->getOpcode() == BO_Sub && IsOne(Num->getRHS())) {
      const auto *Add = dyn_cast<BinaryOperator>(stripIntCasts(Num->getLHS()));
      if (!Add || Add->getOpcode() != BO_Add)
        return false;
      if (IsD(Add->getRHS()))
        N = Add->getLHS();
      else if (IsD(Add->getLHS()))
        N = Add->getRHS();
      else
        return false;
      B = D;
      return true;
    }
    if (Num->getOpcode() != BO_Add)
      return false;
    if (IsDMinusOne(Num->getRHS()))
      N = Num->getLHS();
    else if (IsDMinusOne(Num->getLHS()))
      N = Num->getRHS();
    else
      return false;
    B = D;
    return true;
  }
  const auto *CE = dyn_cast<CallExpr>(E);
  if (InCallee || !CE || isa<CUDAKernelCallExpr>(CE) || CE->getNumArgs() != 2)
    return false;
  const FunctionDecl *F = CE->getDirectCallee();
  const FunctionDecl *Def = F ? F->getDefinition() : nullptr;
  const auto *Body = Def ? dyn_cast_or_null<CompoundStmt>(Def->getBody())
                         : nullptr;
  if (!Body || Body->size() != 1 || Def->getNumParams() != 2)
    return false;
  const auto *Ret = dyn_cast<ReturnStmt>(Body->body_front());
  const Expr *FN = nullptr, *FB = nullptr;
  if (!Ret || !Ret->getRetValue() ||
      !matchCeilDiv(Ctx, Ret->getRetValue(), FN, FB, /*InCallee=*/true))
    return false;
  for (unsigned I = 0; I < 2; ++I) {
    const ParmVarDecl *P = Def->getParamDecl(I);
    if (!P->getType()->isIntegerType() || !refersTo(I ? FB : FN, P))
      return false;
  }
  N = CE->getArg(0);
  B = CE->getArg(1);
  return true;
}

/// The expression of a launch's block x: the integer, or the first
/// argument of `dim3(x, ...)`; for a dim3 variable, null with \p Var set.
const Expr *blockX(const Expr *Arg, const VarDecl *&Var) {
  const Expr *W = writtenDim3(Arg);
  Var = nullptr;
  if (W->getType()->isIntegerType())
    return W;
  const Expr *I = W->IgnoreParens();
  if (const auto *FC = dyn_cast<CXXFunctionalCastExpr>(I))
    I = FC->getSubExpr()->IgnoreImplicit();
  if (const auto *CE = dyn_cast<CXXConstructExpr>(I);
      CE && CE->getNumArgs() >= 1 && !isa<CXXDefaultArgExpr>(CE->getArg(0)))
    return CE->getArg(0)->IgnoreImplicit();
  if (const auto *D = dyn_cast<DeclRefExpr>(I))
    Var = dyn_cast<VarDecl>(D->getDecl());
  return nullptr;
}

/// Whether \p E is the block size of a launch whose block argument is
/// \p BArg.
bool isBlockSize(const ASTContext &Ctx, const Expr *E, const Expr *BArg) {
  const VarDecl *Var = nullptr;
  if (const Expr *X = blockX(BArg, Var))
    return sameValue(Ctx, E, X);
  // `block.x` of the dim3 variable the launch passes.
  const auto *ME = dyn_cast<MemberExpr>(stripIntCasts(E));
  const auto *Base =
      ME ? dyn_cast<DeclRefExpr>(ME->getBase()->IgnoreParenImpCasts())
         : nullptr;
  return Var && Base && Base->getDecl() == Var &&
         ME->getMemberNameInfo().getAsString() == "x";
}

} // namespace

std::vector<PassParam> WarpPerRowPass::params() const {
  return {rowReductionsParam()};
}

void WarpPerRowPass::run(PassContext &PC) {
  const KernelInfo &K = PC.kernel();
  const FunctionDecl *FD = K.Decl;
  if (!FD || !FD->hasBody())
    return;
  ASTContext &Ctx = PC.astContext();
  SourceLocation Loc = FD->getLocation();

  std::optional<RowBody> RB = rewriteRowBody(PC, RowLaunch::WarpEach);
  if (!RB)
    return;
  std::string Rows = RB->Bound->getNameAsString();

  std::vector<const KernelSpec *> Specs = specsOf(PC.options(), K);
  if (refuseUnlessLaunchIsOwn(PC, Specs, Loc,
                              "the grid to change is the spec's launch too"))
    return;
  for (const KernelSpec *S : Specs)
    if (auto L = warpPerRowLaunch(*S, S->Launch, Rows); !L)
      return PC.refused(Loc, toString(L.takeError()));

  KernelLaunches KL = findLaunches(Ctx, FD);
  if (refuseUnlessAllLaunchesVisible(PC, KL, Loc))
    return;

  unsigned ParamIdx = RB->Bound->getFunctionScopeIndex();
  EditSet ES;
  std::set<unsigned> Seen;
  std::vector<TextEdit> SiteEdits;
  unsigned Sites = 0, Guarded = 0;
  std::string Where;
  for (const LaunchFact &LF : KL.Launches) {
    const CUDAKernelCallExpr *L = LF.Chevron;
    SourceLocation At = L->getBeginLoc();
    const CallExpr *Config = L->getConfig();
    if (!Config || Config->getNumArgs() < 2)
      return PC.refused(At, "the launch has no visible configuration");
    const Expr *GArg = Config->getArg(0), *BArg = Config->getArg(1);
    if (!Seen.insert(GArg->getBeginLoc().getRawEncoding()).second)
      continue; // Another instantiation of this launch, already edited.
    auto BD = readDim(PC, BArg);
    if (!BD || !BD->OneDim)
      return PC.refused(At, "the launch's block is not known to be 1-D: a "
                            "warp of a 2-D block would not be 32 "
                            "consecutive x");
    // The new grid reads n and the block size again (the grid's own side
    // effects are n's and b's: it is their rounded-up division).
    if (launchDimHasSideEffects(BArg, Ctx))
      return PC.refused(At, "the launch's block has side effects (the new "
                            "grid reads the block size again)");
    // The grid's x, as written at the launch.
    const Expr *G = writtenDim3(GArg), *GX = nullptr;
    if (G->getType()->isIntegerType()) {
      GX = G;
    } else {
      const VarDecl *Var = nullptr;
      GX = blockX(GArg, Var);
      auto GD = readDim(PC, GArg);
      if (GX && (!GD || !GD->OneDim))
        return PC.refused(At, "the launch's grid is not 1-D");
    }
    if (!GX)
      return PC.refused(At, "the launch's grid x is not written at the "
                            "launch (an integer or `dim3(x)`), where the "
                            "new grid would go");
    const Expr *N = nullptr, *Div = nullptr;
    if (!matchCeilDiv(Ctx, GX, N, Div))
      return PC.refused(GX->getBeginLoc(),
                        "the launch's grid `" + PC.text(GX->getSourceRange()) +
                            "` is not a rounded-up division `(n + b - 1) / "
                            "b` (or a function returning one) of the row "
                            "count by the block size");
    if (!isBlockSize(Ctx, Div, BArg))
      return PC.refused(GX->getBeginLoc(),
                        "the launch's grid divides by `" +
                            PC.text(Div->getSourceRange()) +
                            "`, which is not its block size `" +
                            PC.text(writtenDim3(BArg)->getSourceRange()) + "`");
    const Expr *Arg = L->getArg(ParamIdx);
    if (!sameValue(Ctx, N, Arg))
      return PC.refused(GX->getBeginLoc(),
                        "the launch's grid covers `" +
                            PC.text(N->getSourceRange()) +
                            "` rows, but passes `" +
                            PC.text(Arg->getSourceRange()) + "` for '" + Rows +
                            "', the row count of the kernel's guard");
    if (N->HasSideEffects(Ctx) || Div->HasSideEffects(Ctx))
      return PC.refused(GX->getBeginLoc(),
                        "the launch's grid has side effects (the new grid "
                        "reads its operands twice)");
    const IntFacts &BX = LF.Block.Dim[0];
    bool Multiple = BX.Constant ? *BX.Constant % 32 == 0
                                : BX.MultipleOf % 32 == 0;
    std::string NT = operand(PC.text(N->getSourceRange()));
    std::string BT = operand(PC.text(Div->getSourceRange()));
    std::string Warp =
        "(" + NT + " + " + BT + " / 32 - 1) / (" + BT + " / 32)";
    std::string New =
        Multiple ? Warp
                 : "(" + BT + " % 32 == 0 ? " + Warp + " : " +
                       operand(PC.text(GX->getSourceRange())) + ")";
    auto E = makeTokenEdit(PC, GX->getSourceRange(), New);
    if (!E)
      return PC.refused(At, "the launch's grid is not editable file text");
    SiteEdits.push_back(*E);
    ++Sites;
    Guarded += !Multiple;
    Where += (Where.empty() ? "" : ", ") + posText(PC, At);
  }
  if (!Sites)
    return PC.refused(Loc, "no launch to change");

  const std::string &In = RB->Indent;
  std::string Text;
  if (!Guarded) {
    Text = "// warp-per-row: every launch gives each row a warp.\n" + In +
           "const unsigned astra_lane = threadIdx.x % 32;\n" + In +
           RB->Cooperative;
  } else {
    Text = "if (blockDim.x % 32 == 0) {\n" + In +
           "  // warp-per-row: the launch gives each row a warp.\n" + In +
           "  const unsigned astra_lane = threadIdx.x % 32;\n" + In + "  " +
           reindent(RB->Cooperative, "  ") + "\n" + In + "} else {\n" + In +
           "  " + reindent(RB->Original, "  ") + "\n" + In + "}";
  }
  auto KE = makeEdit(PC, RB->Range, Text);
  if (!KE)
    return PC.refused(Loc, "the kernel body is not editable file text");
  if (!ES.addSite(PC.sourceManager(), {*KE}))
    return PC.refused(Loc, "the kernel's edits overlap");
  for (const TextEdit &E : SiteEdits)
    if (!ES.addSite(PC.sourceManager(), {E}))
      return PC.refused(Loc, "the edits of two launches overlap");
  if (!ES.commit(PC))
    return;
  PC.setWarpRows(Rows);
  std::string Msg =
      "each row of '" + RB->Row->getNameAsString() + "' below '" + Rows +
      "' gets its own warp: the grid x of " + std::to_string(Sites) +
      " launch site" + (Sites == 1 ? "" : "s") + " (" + Where +
      ") becomes cdiv(rows, block / 32)";
  Msg += Guarded ? std::string(" where the block size is a multiple of 32 "
                               "(tested at run time; otherwise the original "
                               "grid and code)")
                 : std::string(" (every block size a multiple of 32)");
  PC.fired(RB->Range.getBegin(), Msg + "; " + RB->Detail);
}

} // namespace astra
