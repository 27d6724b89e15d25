//===- RowsPerBlock.cpp ---------------------------------------------------===//
//
// Safety argument. Let the original kernel be launched with grid G and a
// 1-D block. The rewrite replaces every read of blockIdx.x in the kernel by
// `(blockIdx.x * blockDim.y + threadIdx.y)` (row); under the original launch
// (blockDim.y = 1, threadIdx.y = 0) that is blockIdx.x, so the kernel is
// the original one. The new launch, used only when rows R divides G, runs
// G / R blocks of (X, R) threads: the threads with threadIdx.y = y of block
// b do the work of the original block b * R + y (every row below G exactly
// once), with X threads instead of the original block's. That is invisible
// when the work of a row does not depend on how many threads it has, which
// the pass checks, in the kernel and in every function it calls:
//  - threadIdx.x is read only as the start of a block-stride loop
//    `for (j = [U +] threadIdx.x; j < N; j += blockDim.x)` (directly or
//    through a const local copy of it), and blockDim.x only as its step: such
//    a loop visits every j in [U, N) exactly once under any block width, if
//    U and N are the same for every thread of the row (nothing else in the
//    kernel reads the thread's position), the body changes neither j nor any
//    variable declared outside the loop (no per-thread partial results), and
//    does not leave the loop early (break, return, goto);
//  - or in `if (threadIdx.x == 0)` outside those loops: one thread of the
//    row, whatever the width; neither branch holds a block-stride loop (only
//    some threads would run it) or leaves early (fewer threads would reach
//    the loops after it), in the kernel or in what the branches call;
//  - outside the loops every thread of a row computes the same values, so
//    stores of them are repeated, not changed; effects that count
//    (atomics, printf) are allowed only in the loops or under
//    `threadIdx.x == 0`;
//  - no barrier, warp-collective operation, inline asm or shared memory
//    (rows would share them; a warp may span rows), and no read of
//    threadIdx/blockDim y and z, blockIdx y and z or gridDim (the new
//    launch changes them); called functions do not read blockIdx.x (their
//    text is not the kernel's to change).
// Every launch of the kernel must be visible in the file with a 1-D block,
// and the spec must mark the launch as the kernel's own ("launch_tunable"),
// so the spec's launch changes the same way.
//
//===----------------------------------------------------------------------===//
#include "RowsPerBlock.h"
#include "utils/CudaIdioms.h"
#include "utils/Mutation.h"
#include "utils/PassSupport.h"

#include "astra/Spec/LaunchTuning.h"
#include "astra/Spec/Spec.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMap.h"
#include "clang/AST/StmtCXX.h"

#include <set>

using namespace clang;
using namespace llvm;

namespace astra {

using namespace cudaidiom;

namespace {

/// `threadIdx.x == 0` or `0 == threadIdx.x` (threadIdx.x possibly through a
/// const local copy of it).
bool isThreadZeroTest(const Expr *E, const FunctionDecl *FD) {
  const auto *BO = dyn_cast_or_null<BinaryOperator>(E ? E->IgnoreParenImpCasts()
                                                      : nullptr);
  if (!BO || BO->getOpcode() != BO_EQ)
    return false;
  auto IsZero = [](const Expr *X) {
    const auto *IL = dyn_cast<IntegerLiteral>(X->IgnoreParenImpCasts());
    return IL && IL->getValue() == 0;
  };
  return (readsBuiltinIndex(BO->getLHS(), "threadIdx.x", FD) &&
          IsZero(BO->getRHS())) ||
         (readsBuiltinIndex(BO->getRHS(), "threadIdx.x", FD) &&
          IsZero(BO->getLHS()));
}

/// The parts of a block-stride loop `for (T j = [U +] threadIdx.x [+ U];
/// j < N; j += blockDim.x)`.
struct BlockStrideLoop {
  const VarDecl *Var = nullptr;
  const Expr *Offset = nullptr; ///< U, or null.
  const Expr *Bound = nullptr;  ///< N.
};

std::optional<BlockStrideLoop> matchBlockStride(const ForStmt *F,
                                                const FunctionDecl *FD) {
  const auto *DS = dyn_cast_or_null<DeclStmt>(F->getInit());
  if (!DS || !DS->isSingleDecl())
    return std::nullopt;
  const auto *V = dyn_cast<VarDecl>(DS->getSingleDecl());
  if (!V || !V->getInit() || !V->getType()->isIntegerType())
    return std::nullopt;
  BlockStrideLoop L;
  L.Var = V;
  const Expr *Start = stripIntCasts(V->getInit());
  if (!readsBuiltinIndex(Start, "threadIdx.x", FD)) {
    const auto *Add = dyn_cast<BinaryOperator>(Start);
    if (!Add || Add->getOpcode() != BO_Add)
      return std::nullopt;
    if (readsBuiltinIndex(stripIntCasts(Add->getRHS()), "threadIdx.x", FD))
      L.Offset = Add->getLHS();
    else if (readsBuiltinIndex(stripIntCasts(Add->getLHS()), "threadIdx.x",
                               FD))
      L.Offset = Add->getRHS();
    else
      return std::nullopt;
  }
  const auto *Inc = dyn_cast_or_null<CompoundAssignOperator>(F->getInc());
  if (!Inc || Inc->getOpcode() != BO_AddAssign || !refersTo(Inc->getLHS(), V) ||
      !builtinRef(stripIntCasts(Inc->getRHS())->IgnoreParenImpCasts())
           .is(Builtin::BlockDim, 'x'))
    return std::nullopt;
  const auto *Cond = dyn_cast_or_null<BinaryOperator>(
      F->getCond() ? F->getCond()->IgnoreParenImpCasts() : nullptr);
  if (!Cond || Cond->getOpcode() != BO_LT || !refersTo(Cond->getLHS(), V))
    return std::nullopt;
  L.Bound = Cond->getRHS();
  return L;
}

/// Checks the kernel (and what it calls) against the safety argument and
/// collects the kernel's reads of blockIdx.x.
class BodyCheck {
public:
  explicit BodyCheck(const PassContext &PC) : PC(PC) {}

  /// Empty when the kernel \p FD meets the argument; else why not (At).
  std::string check(const FunctionDecl *FD) {
    Kernel = FD;
    visitFunction(FD, /*InLoop=*/false);
    return Why;
  }

  SourceLocation At;
  /// The kernel's reads of blockIdx.x.
  std::vector<const Expr *> BlockIdxReads;

private:
  void fail(SourceLocation L, const Twine &Msg) {
    if (!Why.empty())
      return;
    At = L;
    Why = Msg.str();
  }

  void visitFunction(const FunctionDecl *FD, bool InLoop) {
    const FunctionDecl *Saved = Current;
    Current = FD;
    visit(FD->getBody(), InLoop, /*Thread0=*/false);
    Current = Saved;
  }

  /// A const local copy of threadIdx.x (`const int tid = threadIdx.x;`).
  bool isThreadXCopy(const VarDecl *V) const {
    return V && V->isLocalVarDecl() && V->getInit() &&
           builtinRef(V->getInit()->IgnoreParenImpCasts())
               .is(Builtin::ThreadIdx, 'x') &&
           V->getType()->isIntegerType() && !mayModify(Current->getBody(), V);
  }

  void visitLoop(const ForStmt *F, const BlockStrideLoop &L, bool InLoop) {
    if (InLoop)
      return fail(F->getBeginLoc(),
                  "a block-stride loop inside another: which elements it "
                  "visits depends on the number of threads of a row");
    if (Divergent)
      return fail(F->getBeginLoc(),
                  "a block-stride loop in a branch on `threadIdx.x == 0`: "
                  "only some threads of the row reach it");
    const Stmt *Body = F->getBody();
    if (const Stmt *E = findEarlyExit(Body, /*ContinueExits=*/false))
      return fail(E->getBeginLoc(),
                  "this leaves the block-stride loop early: which elements "
                  "are visited would depend on the number of threads of a "
                  "row");
    if (mayModify(Body, L.Var))
      return fail(L.Var->getLocation(), "the loop's body changes its index '" +
                                            L.Var->getName() + "'");
    // Variables declared outside the loop and changed in it hold per-thread
    // partial results, which depend on which thread takes which element.
    ParentMap PM(const_cast<Stmt *>(Current->getBody()));
    std::vector<const Stmt *> Work = {Body};
    while (!Work.empty()) {
      const Stmt *S = Work.back();
      Work.pop_back();
      if (!S)
        continue;
      if (const auto *DRE = dyn_cast<DeclRefExpr>(S))
        if (const auto *V = dyn_cast<VarDecl>(DRE->getDecl()))
          if (V->hasLocalStorage() &&
              !(Body->getBeginLoc() <= V->getLocation() &&
                V->getLocation() <= Body->getEndLoc()) &&
              isModifyingUse(DRE, PM))
            return fail(DRE->getBeginLoc(),
                        "the block-stride loop changes '" + V->getName() +
                            "', declared outside it: a per-thread value "
                            "that depends on which thread takes which "
                            "element");
      for (const Stmt *C : S->children())
        Work.push_back(C);
    }
    if (L.Offset)
      visit(L.Offset, InLoop, false);
    visit(L.Bound, InLoop, false);
    visit(Body, /*InLoop=*/true, false);
  }

  void visit(const Stmt *S, bool InLoop, bool Thread0) {
    if (!S || !Why.empty())
      return;
    if (const auto *F = dyn_cast<ForStmt>(S))
      if (auto L = matchBlockStride(F, Current))
        return visitLoop(F, *L, InLoop);
    if (const auto *If = dyn_cast<IfStmt>(S))
      if (!InLoop && !If->getInit() && !If->getConditionVariable() &&
          isThreadZeroTest(If->getCond(), Current)) {
        // Only some threads of the row run either branch: a block-stride
        // loop there would leave the elements of the others undone, and an
        // exit there would keep them from the loops that follow.
        for (const Stmt *Branch : {If->getThen(), If->getElse()})
          if (const Stmt *X = Branch ? findEarlyExit(Branch, true) : nullptr)
            return fail(X->getBeginLoc(),
                        "this leaves early in a branch on `threadIdx.x == "
                        "0`: the threads left to the loops that follow "
                        "depend on the number of threads of a row");
        ++Divergent;
        visit(If->getThen(), InLoop, /*Thread0=*/true);
        visit(If->getElse(), InLoop, Thread0);
        --Divergent;
        return;
      }
    if (const auto *E = dyn_cast<Expr>(S)) {
      std::string B = builtinRef(E->IgnoreParenImpCasts()).name();
      if (B == "blockIdx.x") {
        if (Current != Kernel)
          return fail(E->getBeginLoc(),
                      "a function the kernel calls reads blockIdx.x: its "
                      "text is not the kernel's to change");
        BlockIdxReads.push_back(E);
        return;
      }
      if (B == "threadIdx.x" || B == "blockDim.x")
        return fail(E->getBeginLoc(),
                    B + " is read other than in a block-stride loop's start "
                        "and step or in `threadIdx.x == 0`: the code depends "
                        "on the number of threads of a row");
      if (!B.empty())
        return fail(E->getBeginLoc(),
                    B + " is read: the kernel must use a 1-D block and "
                        "grid (the new launch changes " + B + ")");
      if (const auto *DRE = dyn_cast<DeclRefExpr>(E))
        if (isThreadXCopy(dyn_cast<VarDecl>(DRE->getDecl())))
          return fail(E->getBeginLoc(),
                      "'" + DRE->getDecl()->getName() +
                          "' (threadIdx.x) is read other than as a "
                          "block-stride loop's start or in `== 0`: the code "
                          "depends on the number of threads of a row");
      if (isa<PseudoObjectExpr>(S))
        return;
    }
    if (const auto *DS = dyn_cast<DeclStmt>(S)) {
      for (const Decl *D : DS->decls())
        if (const auto *V = dyn_cast<VarDecl>(D)) {
          if (V->hasAttr<CUDASharedAttr>() || V->isStaticLocal())
            return fail(V->getLocation(), "'" + V->getName() +
                                              "' is __shared__ or static: "
                                              "rows of one block would share "
                                              "it");
          if (!isThreadXCopy(V))
            visit(V->getInit(), InLoop, Thread0);
        }
      return;
    }
    if (isa<AsmStmt>(S))
      return fail(S->getBeginLoc(), "inline asm (not analyzed)");
    if (isa<LambdaExpr>(S))
      return fail(S->getBeginLoc(), "a lambda (not analyzed)");
    if (const auto *CE = dyn_cast<CallExpr>(S)) {
      const FunctionDecl *Callee = CE->getDirectCallee();
      if (Callee && isSystemFunction(PC.sourceManager(), Callee)) {
        // Library code (libdevice, the CUDA headers' __half operators)
        // reads no thread position; barriers and shuffles in it were
        // refused with the kernel. What counts is an effect.
        StringRef Sys = systemCalleeName(PC.sourceManager(), CE);
        if (!Sys.empty() && systemCallHasEffect(Sys) && !InLoop && !Thread0)
          return fail(CE->getBeginLoc(),
                      "'" + Sys +
                          "' outside the block-stride loops and not under "
                          "`threadIdx.x == 0`: it would run once per thread "
                          "of the row, as many times as a row has threads");
      } else {
        const FunctionDecl *Def = Callee ? Callee->getDefinition() : nullptr;
        if (!Def || !Def->hasBody())
          return fail(CE->getBeginLoc(),
                      "a call of a function whose body is not visible");
        if (Def != Current &&
            (Visited.insert(Def).second || InLoop || Divergent))
          visitFunction(Def, InLoop);
      }
    }
    for (const Stmt *C : S->children())
      visit(C, InLoop, Thread0);
  }

  const PassContext &PC;
  const FunctionDecl *Kernel = nullptr;
  const FunctionDecl *Current = nullptr;
  /// Inside a branch on `threadIdx.x == 0` (in a callee too).
  unsigned Divergent = 0;
  std::set<const FunctionDecl *> Visited;
  std::string Why;
};

} // namespace

void RowsPerBlockPass::run(PassContext &PC) {
  const KernelInfo &K = PC.kernel();
  const FunctionDecl *FD = K.Decl;
  ASTContext &Ctx = PC.astContext();
  SourceLocation Loc = FD->getLocation();

  int64_t Rows = PC.options().intParam(name(), "rows", 4);
  if (Rows < 2 || Rows > 64)
    return PC.refused(Loc, "--pass-opt=rows-per-block.rows=" +
                               std::to_string(Rows) + " is not from 2 to 64");

  std::vector<const KernelSpec *> Specs = specsOf(PC.options(), K);
  if (refuseUnlessLaunchIsOwn(PC, Specs, Loc,
                              "the launch to change is the spec's launch "
                              "too"))
    return;
  for (const KernelSpec *S : Specs) {
    for (unsigned Dim = 1; Dim < 3; ++Dim) {
      const SpecExpr &B = S->Launch.Block[Dim];
      auto V = B.empty() ? Expected<int64_t>(1) : B.evalInt(Env());
      if (!V || *V != 1) {
        if (!V)
          consumeError(V.takeError());
        return PC.refused(Loc, S->where("launch") +
                                   "the spec's block is not 1-D (" +
                                   B.text() + ")");
      }
    }
  }

  std::vector<KernelBody> Bodies = kernelBodies(FD);
  if (neverInstantiated(Bodies))
    return PC.refused(Loc, "a template never instantiated: its code cannot "
                           "be checked");
  const SourceManager &SM = PC.sourceManager();
  std::vector<const Expr *> Reads;
  int64_t VecWidth = 0;
  for (const KernelBody &KB : Bodies) {
    const FunctionDecl *D = KB.FD;
    auto Suffix = [&]() {
      return D != FD ? " (in " + KB.Label + ")" : std::string();
    };
    std::string C = findCollective(D->getBody(), SM);
    if (!C.empty())
      return PC.refused(Loc, "the kernel " + C +
                                 ": a block would hold several rows, a warp "
                                 "may span two" + Suffix());
    std::string Sh = findSharedMemory(D->getBody(), SM);
    if (!Sh.empty())
      return PC.refused(Loc, "the kernel " + Sh +
                                 ": rows of one block would share it" +
                                 Suffix());
    BodyCheck BC(PC);
    std::string Why = BC.check(D);
    if (!Why.empty())
      return PC.refused(BC.At.isValid() ? BC.At : Loc, Why + Suffix());
    if (BC.BlockIdxReads.empty())
      return PC.refused(Loc, "the kernel does not read blockIdx.x: it has no "
                             "row per block" + Suffix());
    Reads.insert(Reads.end(), BC.BlockIdxReads.begin(),
                 BC.BlockIdxReads.end());
    if (int64_t W = vectorWidth(D, Ctx); W > 1)
      VecWidth = VecWidth ? std::min(VecWidth, W) : W;
  }
  // After vectorize a thread moves astra_vec elements, so a row needs that
  // many times fewer threads: the block's x is divided by it by default.
  // Without vectorize the pass waits to be asked (H100,
  // merge_attn_states' prefill set: scalar rows of 128 threads, 4 rows per
  // block 0.93x, 8 rows 0.87x).
  if (!VecWidth && !PC.options().Params.count("rows-per-block.rows") &&
      !PC.options().Params.count("rows-per-block.thread-divisor"))
    return PC.refused(Loc, "no loop that vectorize wrote: rows of the "
                           "original width would only make blocks larger "
                           "(run vectorize first, or give "
                           "--pass-opt=rows-per-block.rows=R)");
  if (FD->hasAttr<CUDALaunchBoundsAttr>())
    return PC.refused(Loc, "the kernel has __launch_bounds__: a block of "
                           "several rows could exceed them");
  int64_t Div = PC.options().intParam(name(), "thread-divisor",
                                      VecWidth ? VecWidth : 1);
  if (Div < 1 || Div > 32)
    return PC.refused(Loc, "--pass-opt=rows-per-block.thread-divisor=" +
                               std::to_string(Div) + " is not from 1 to 32");

  KernelLaunches KL = findLaunches(Ctx, FD);
  if (refuseUnlessAllLaunchesVisible(PC, KL, Loc))
    return;

  EditSet ES;
  std::set<unsigned> Seen;
  std::vector<TextEdit> KernelEdits;
  for (const Expr *E : Reads) {
    if (!Seen.insert(E->getBeginLoc().getRawEncoding()).second)
      continue; // The same read in another instantiation.
    auto Edit = makeTokenEdit(PC, E->getSourceRange(),
                              "(blockIdx.x * blockDim.y + threadIdx.y)");
    if (!Edit)
      return PC.refused(E->getBeginLoc(),
                        "this blockIdx.x is not editable file text (a macro)");
    KernelEdits.push_back(*Edit);
  }
  if (!ES.addSite(SM, KernelEdits))
    return PC.refused(Loc, "the kernel's edits overlap");

  const std::string R = std::to_string(Rows), DivText = std::to_string(Div);
  Seen.clear();
  unsigned Sites = 0;
  std::string Where;
  for (const CUDAKernelCallExpr *L : KL.chevrons()) {
    const CallExpr *Config = L->getConfig();
    SourceLocation At = L->getBeginLoc();
    if (!Config || Config->getNumArgs() < 2)
      return PC.refused(At, "the launch has no visible configuration");
    if (!Seen.insert(Config->getArg(0)->getBeginLoc().getRawEncoding())
             .second)
      continue; // Another instantiation of this launch, already edited.
    const Expr *GArg = Config->getArg(0), *BArg = Config->getArg(1);
    auto G = readDim(PC, GArg);
    auto B = readDim(PC, BArg);
    if (!G || !B)
      return PC.refused(At, std::string("the launch's ") +
                                (!G ? "grid" : "block") +
                                " is neither an integer, `dim3(...)` nor a "
                                "dim3 local initialized once");
    if (!B->OneDim)
      return PC.refused(At, "the launch's block is not 1-D: the kernel must "
                            "be launched with block y = z = 1");
    if (launchDimHasSideEffects(GArg, Ctx) ||
        launchDimHasSideEffects(BArg, Ctx))
      return PC.refused(At, "the launch's grid or block has side effects "
                            "(the new launch reads the grid twice)");
    std::string GText = PC.text(writtenDim3(GArg)->getSourceRange());
    std::string BText = PC.text(writtenDim3(BArg)->getSourceRange());
    std::string Bx = "(" + B->X + ")";
    std::string Cond = rowsPerBlockCondition("(" + G->X + ")", Bx, Div, Rows);
    std::string NewGrid =
        G->IsInt ? "(" + Cond + " ? (" + G->X + ") / " + R + " : (" + GText +
                       "))"
                 : "(" + Cond + " ? dim3((" + G->X + ") / " + R + G->Rest +
                       ") : dim3(" + GText + "))";
    std::string NewBlock = "(" + Cond + " ? dim3(" +
                           (Div > 1 ? Bx + " / " + DivText : Bx) + ", " + R +
                           ") : dim3(" + BText + "))";
    auto GE = makeTokenEdit(PC, writtenDim3(GArg)->getSourceRange(), NewGrid);
    auto BE = makeTokenEdit(PC, writtenDim3(BArg)->getSourceRange(), NewBlock);
    if (!GE || !BE)
      return PC.refused(At, "the launch's grid or block is not editable file "
                            "text");
    if (!ES.addSite(SM, {*GE, *BE}))
      return PC.refused(At, "the edits of this launch overlap another's");
    ++Sites;
    Where += (Where.empty() ? "" : ", ") + posText(PC, At);
  }
  if (ES.commit(PC)) {
    PC.setBlockRows(Div, Rows);
    PC.fired(Loc, R + " rows per block at " + std::to_string(Sites) +
                      " launch site" + (Sites == 1 ? "" : "s") + " (" + Where +
                      "), each row with the block's x" +
                      (Div > 1 ? " / " + DivText : std::string()) +
                      " threads, where " + R +
                      " divides the grid and the block fits");
  }
}

} // namespace astra
