//===- ThreadCoarsen.cpp --------------------------------------------------===//
//
// Safety argument. Let B be the block's size along dimension d (y or x) at
// every launch and F a factor that divides it. The rewritten kernel is
// launched with B / F along d, and each of its threads runs F copies
// c = 0 .. F-1 of a thread of the original block: copy c sees threadIdx.d as
// `threadIdx.d + c * blockDim.d` (over a block, every value 0 .. B-1 once)
// and blockDim.d as `blockDim.d * F` (B); every other built-in is unchanged.
// The statements of the body are of two kinds:
//  - per-copy statements run once for each copy, in copy order, with the
//    copy's threadIdx.d and the copy's own instance of every privatized
//    local (a local that a per-copy statement changes, or whose initializer
//    reads threadIdx.d or a privatized local);
//  - uniform statements run once for all copies: they read neither
//    threadIdx.d nor a privatized local and change nothing but the
//    thread's own locals, so every copy would do exactly the same.
// Barriers (__syncthreads) are uniform statements, never inside a per-copy
// statement, and the control flow around them (loops, ifs) is uniform.
// Between two barriers the threads of the original block may run in any
// interleaving; the rewritten kernel runs one of them (each copy's
// statements in its own program order), so a kernel whose result does not
// depend on the interleaving computes the same result. Kernels that rely on
// the threads of a warp running in lockstep do, and are refused: warp
// shuffles and votes, __syncwarp, barriers with a result, cooperative
// groups, inline asm, volatile accesses. A per-copy statement of the
// kernel's body that returns (a guard `if (i >= n) return;`) ends that copy
// alone: it and every statement after it, to the end of the kernel, become
// one per-copy block in which `return` is `continue` of the copy loop; the
// block may hold no barrier (only some copies reach it) and no return inside
// a loop or switch (where `continue` means something else), and the kernel
// returns void. Also refused: per-copy statements that leave the copy early
// otherwise (goto, a break or continue of a loop around them, a return
// under uniform control), per-copy changes of a parameter, calls of user functions
// that read built-in indices or synchronize (the copy's threadIdx would not
// reach them), static locals, lambdas, and template kernels (not analyzed).
// Every launch of the kernel is visible and its block's size along d is a
// compile-time constant that F divides; the spec marks the launch as the
// kernel's own ("launch_tunable") with a constant launch.block along d, and
// the optimizer divides it the same way.
//
//===----------------------------------------------------------------------===//
#include "ThreadCoarsen.h"
#include "astra/Support/TextSplice.h"
#include "utils/CudaIdioms.h"
#include "utils/Mutation.h"
#include "utils/PassSupport.h"
#include "utils/SourceText.h"

#include "astra/Spec/LaunchTuning.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"

#include <algorithm>
#include <set>

using namespace clang;
using namespace llvm;

namespace astra {

using namespace cudaidiom;

namespace {

/// Whether \p S may change \p V (an element of a local array included).
bool modifies(const Stmt *S, const VarDecl *V) {
  if (!S)
    return false;
  if (mayModify(S, V))
    return true;
  std::vector<const Stmt *> Work = {S};
  while (!Work.empty()) {
    const Stmt *T = Work.back();
    Work.pop_back();
    if (!T)
      continue;
    if (const auto *BO = dyn_cast<BinaryOperator>(T))
      if (BO->isAssignmentOp() && lvalueVar(BO->getLHS(), /*ThroughLocalArrays=*/true) == V)
        return true;
    if (const auto *UO = dyn_cast<UnaryOperator>(T))
      if ((UO->isIncrementDecrementOp() || UO->getOpcode() == UO_AddrOf) &&
          lvalueVar(UO->getSubExpr(), /*ThroughLocalArrays=*/true) == V)
        return true;
    if (const auto *CE = dyn_cast<CallExpr>(T))
      for (const Expr *A : CE->arguments())
        if (lvalueVar(A, /*ThroughLocalArrays=*/true) == V && V->getType()->isArrayType())
          return true; // The array decays to a pointer the callee may write.
    for (const Stmt *C : T->children())
      Work.push_back(C);
  }
  return false;
}

StringRef calleeName(const CallExpr *CE) {
  if (const FunctionDecl *F = CE->getDirectCallee())
    if (F->getDeclName().isIdentifier())
      return F->getName();
  return "";
}

/// Splits a kernel body into uniform and per-copy statements (see the
/// safety argument) and finds the locals to privatize.
class Coarsening {
public:
  Coarsening(const PassContext &PC, const FunctionDecl *FD, std::string Dims)
      : PC(PC), FD(FD), Dims(std::move(Dims)) {}

  /// False, with Why and At, when the kernel is refused.
  bool analyze();

  std::string Why;
  SourceLocation At;
  /// Per-copy statements, in source order.
  std::vector<const Stmt *> Leaves;
  /// Where the tail starts: a per-copy statement of the kernel's body that
  /// returns early, and everything after it, run as one per-copy block in
  /// which `return` ends the copy (`continue` of the copy loop). Index into
  /// Leaves; SIZE_MAX when there is no tail.
  size_t Tail = SIZE_MAX;
  std::vector<const ReturnStmt *> TailReturns;
  /// Declarations outside per-copy statements.
  std::vector<const DeclStmt *> Decls;
  std::set<const VarDecl *> Priv;

private:
  void fail(SourceLocation L, const Twine &Msg) {
    if (!Why.empty())
      return;
    At = L;
    Why = Msg.str();
  }
  bool isPlainBarrier(const Stmt *S) const {
    const auto *CE = dyn_cast<CallExpr>(S);
    return CE && calleeName(CE) == "__syncthreads" &&
           isBarrierCall(PC.sourceManager(), CE);
  }
  bool containsBarrier(const Stmt *S) const {
    if (!S)
      return false;
    if (isBarrierCall(PC.sourceManager(), S))
      return true;
    for (const Stmt *C : S->children())
      if (containsBarrier(C))
        return true;
    return false;
  }
  /// Reads threadIdx.d or mentions a privatized local.
  bool tainted(const Stmt *S) const {
    if (!S)
      return false;
    for (char D : Dims)
      if (usesBuiltin(S, Builtin::ThreadIdx, D))
        return true;
    std::vector<const Stmt *> Work = {S};
    while (!Work.empty()) {
      const Stmt *T = Work.back();
      Work.pop_back();
      if (!T)
        continue;
      if (const auto *DRE = dyn_cast<DeclRefExpr>(T))
        if (const auto *V = dyn_cast<VarDecl>(DRE->getDecl()))
          if (Priv.count(V))
            return true;
      for (const Stmt *C : T->children())
        Work.push_back(C);
    }
    return false;
  }
  bool hasEffect(const Stmt *S) const {
    return hasNonLocalEffect(S, PC.sourceManager());
  }
  bool uniform(const Stmt *S) const { return !tainted(S) && !hasEffect(S); }
  bool uniformDecl(const DeclStmt *DS) const {
    for (const Decl *D : DS->decls()) {
      const auto *V = dyn_cast<VarDecl>(D);
      if (!V || !isOwnLocal(V) || Priv.count(V) ||
          (V->getInit() && !uniform(V->getInit())))
        return false;
    }
    return true;
  }

  void walk(const Stmt *S);
  bool walkControl(const Stmt *S);
  void leaf(const Stmt *S, bool Top);
  bool tailReturns(const Stmt *S);
  std::string checkCallees(const Stmt *S, unsigned Depth) const;

  const PassContext &PC;
  const FunctionDecl *FD;
  std::string Dims; ///< The coarsened dimensions ("y", "x", "yx").
  std::set<const Stmt *> ForcedLeaf;
  bool Changed = false;
  bool TopLevel = false; ///< The statement walked is a child of the body.
};

void Coarsening::walk(const Stmt *S) {
  if (!S || !Why.empty())
    return;
  if (isa<CompoundStmt>(S)) {
    bool Body = S == FD->getBody();
    for (const Stmt *C : S->children()) {
      if (Body && Tail < Leaves.size()) {
        // After an early return of one copy: per copy, whatever it is.
        if (containsBarrier(C))
          return fail(C->getBeginLoc(),
                      "a barrier after a return that only some copies take");
        if (!tailReturns(C))
          return;
        Leaves.push_back(C);
        continue;
      }
      TopLevel = Body;
      walk(C);
    }
    return;
  }
  bool Top = TopLevel;
  TopLevel = false;
  if (isa<NullStmt>(S) || isPlainBarrier(S))
    return;
  if (const auto *DS = dyn_cast<DeclStmt>(S)) {
    Decls.push_back(DS);
    return;
  }
  if (isa<LabelStmt>(S) || isa<GotoStmt>(S) || isa<IndirectGotoStmt>(S))
    return fail(S->getBeginLoc(), "goto and labels are not analyzed");
  if (!ForcedLeaf.count(S) && walkControl(S))
    return;
  leaf(S, Top);
}

/// Walks into a loop or if whose header is uniform; false when \p S is not
/// one.
bool Coarsening::walkControl(const Stmt *S) {
  const Stmt *C = S;
  if (const auto *AS = dyn_cast<AttributedStmt>(C))
    C = AS->getSubStmt();
  if (const auto *F = dyn_cast<ForStmt>(C)) {
    if (F->getConditionVariable())
      return false;
    if (const auto *DS = dyn_cast_or_null<DeclStmt>(F->getInit())) {
      if (!uniformDecl(DS))
        return false;
    } else if (F->getInit() && !uniform(F->getInit())) {
      return false;
    }
    if ((F->getCond() && !uniform(F->getCond())) ||
        (F->getInc() && !uniform(F->getInc())))
      return false;
    size_t First = Leaves.size();
    walk(F->getBody());
    // A loop variable that a per-copy statement changes belongs to each
    // copy: then the whole loop is per-copy.
    if (const auto *DS = dyn_cast_or_null<DeclStmt>(F->getInit()))
      for (const Decl *D : DS->decls())
        if (const auto *V = dyn_cast<VarDecl>(D))
          for (size_t I = First; I < Leaves.size(); ++I)
            if (modifies(Leaves[I], V) && ForcedLeaf.insert(S).second)
              Changed = true;
    return true;
  }
  if (const auto *W = dyn_cast<WhileStmt>(C)) {
    if (W->getConditionVariable() || !uniform(W->getCond()))
      return false;
    walk(W->getBody());
    return true;
  }
  if (const auto *D = dyn_cast<DoStmt>(C)) {
    if (!uniform(D->getCond()))
      return false;
    walk(D->getBody());
    return true;
  }
  if (const auto *I = dyn_cast<IfStmt>(C)) {
    if (I->getInit() || I->getConditionVariable() || I->isConsteval() ||
        !uniform(I->getCond()))
      return false;
    walk(I->getThen());
    walk(I->getElse());
    return true;
  }
  return false;
}

void Coarsening::leaf(const Stmt *S, bool Top) {
  if (isa<AttributedStmt>(S) && (tainted(S) || hasEffect(S)))
    return fail(S->getBeginLoc(),
                "a statement with attributes (a loop pragma?) that each copy "
                "runs separately: the copy loop cannot go around it");
  if (containsBarrier(S))
    return fail(S->getBeginLoc(),
                std::string("a barrier under control flow that depends on "
                            "threadIdx.") +
                    Dims.substr(0, 1) +
                    " (or on what threads compute separately)");
  if (!tainted(S) && !hasEffect(S))
    return; // Uniform: runs once for all copies.
  if (const Stmt *E = findEarlyExit(S, /*ContinueExits=*/true)) {
    // A return at the kernel's top level ends the copy: with the rest of
    // the body it becomes one per-copy block whose returns continue the
    // copy loop.
    if (!Top || !FD->getReturnType()->isVoidType() || !tailReturns(S))
      return fail(E->getBeginLoc(),
                  "this leaves code that each copy runs separately early: "
                  "one copy's exit would end the others");
    Tail = Leaves.size();
  }
  Leaves.push_back(S);
}

/// Collects the returns of \p S for the tail; false (with Why) when \p S
/// leaves otherwise, or returns from inside a loop or switch (where
/// `continue` would mean something else).
bool Coarsening::tailReturns(const Stmt *S) {
  std::vector<std::pair<const Stmt *, bool>> Work = {{S, false}};
  while (!Work.empty()) {
    auto [T, Nested] = Work.back();
    Work.pop_back();
    if (!T || isa<LambdaExpr>(T))
      continue;
    if (const auto *RS = dyn_cast<ReturnStmt>(T)) {
      if (Nested || RS->getRetValue()) {
        fail(RS->getBeginLoc(), "a return inside a loop or switch of code "
                                "that each copy runs separately");
        return false;
      }
      TailReturns.push_back(RS);
      continue;
    }
    if (isa<GotoStmt>(T) || isa<IndirectGotoStmt>(T) ||
        ((isa<BreakStmt>(T) || isa<ContinueStmt>(T)) && !Nested)) {
      fail(T->getBeginLoc(), "this leaves code that each copy runs "
                             "separately early");
      return false;
    }
    bool In = Nested || isa<ForStmt>(T) || isa<WhileStmt>(T) ||
              isa<DoStmt>(T) || isa<SwitchStmt>(T) || isa<CXXForRangeStmt>(T);
    for (const Stmt *C : T->children())
      Work.push_back({C, In});
  }
  return true;
}

/// Why a function called from \p S cannot run on behalf of one copy (it
/// reads built-in indices or synchronizes); empty when none.
std::string Coarsening::checkCallees(const Stmt *S, unsigned Depth) const {
  if (!S || Depth > 4)
    return "";
  if (const auto *CE = dyn_cast<CallExpr>(S))
    if (const FunctionDecl *Callee = CE->getDirectCallee())
      if (!isSystemFunction(PC.sourceManager(), Callee)) {
        const FunctionDecl *Def = nullptr;
        if (!Callee->hasBody(Def))
          return "calls '" + Callee->getNameAsString() +
                 "', whose body is not in this file";
        const Stmt *Body = Def->getBody();
        if (usesBuiltin(Body, Builtin::ThreadIdx, 0) ||
            usesBuiltin(Body, Builtin::BlockDim, 0) ||
            !findCollective(Body, PC.sourceManager()).empty())
          return "calls '" + Callee->getNameAsString() +
                 "', which reads threadIdx or blockDim or synchronizes";
        std::string W = checkCallees(Body, Depth + 1);
        if (!W.empty())
          return W;
      }
  for (const Stmt *C : S->children()) {
    std::string W = checkCallees(C, Depth);
    if (!W.empty())
      return W;
  }
  return "";
}

bool Coarsening::analyze() {
  const Stmt *Body = FD->getBody();
  // What the interleaving argument cannot cover.
  std::vector<const Stmt *> Work = {Body};
  while (!Work.empty()) {
    const Stmt *S = Work.back();
    Work.pop_back();
    if (!S)
      continue;
    if (isa<AsmStmt>(S)) {
      fail(S->getBeginLoc(), "inline asm (not analyzed)");
      return false;
    }
    if (isa<LambdaExpr>(S)) {
      fail(S->getBeginLoc(), "a lambda (not analyzed)");
      return false;
    }
    if (const auto *CE = dyn_cast<CallExpr>(S)) {
      StringRef Name = calleeName(CE);
      if ((isBarrierCall(PC.sourceManager(), CE) || isCollectiveName(Name)) &&
          !isPlainBarrier(CE)) {
        fail(CE->getBeginLoc(),
             "'" + Name + "' works on threads as the hardware groups them "
             "(warps, barrier results): coarsened threads are grouped "
             "differently");
        return false;
      }
    }
    if (const auto *E = dyn_cast<Expr>(S))
      if (E->getType().isVolatileQualified()) {
        fail(E->getBeginLoc(), "a volatile access (warp-synchronous code "
                               "relies on lockstep threads)");
        return false;
      }
    if (const auto *DS = dyn_cast<DeclStmt>(S))
      for (const Decl *D : DS->decls())
        if (const auto *V = dyn_cast<VarDecl>(D))
          if (V->isStaticLocal() && !V->hasAttr<CUDASharedAttr>()) {
            fail(V->getLocation(), "the static local '" + V->getName() +
                                       "' (not analyzed)");
            return false;
          }
    for (const Stmt *C : S->children())
      Work.push_back(C);
  }
  std::string W = checkCallees(Body, 0);
  if (!W.empty()) {
    fail(FD->getLocation(), "the kernel " + W);
    return false;
  }

  for (unsigned Round = 0; Round < 64; ++Round) {
    Leaves.clear();
    Decls.clear();
    TailReturns.clear();
    Tail = SIZE_MAX;
    Changed = false;
    walk(Body);
    if (!Why.empty())
      return false;
    for (const DeclStmt *DS : Decls)
      for (const Decl *D : DS->decls()) {
        const auto *V = dyn_cast<VarDecl>(D);
        if (!V || V->hasAttr<CUDASharedAttr>() || Priv.count(V))
          continue;
        bool P = V->getInit() &&
                 (tainted(V->getInit()) || hasEffect(V->getInit()));
        for (const Stmt *L : Leaves)
          P = P || modifies(L, V);
        if (P) {
          Priv.insert(V);
          Changed = true;
        }
      }
    for (const Stmt *L : Leaves)
      for (const ParmVarDecl *P : FD->parameters())
        if (modifies(L, P)) {
          fail(L->getBeginLoc(),
               "code that each copy runs separately changes the parameter '" +
                   P->getName() + "'");
          return false;
        }
    if (!Changed) {
      // A local whose declaration ended up inside per-copy code (a loop
      // that became per-copy, the tail after a return) is the copy's own
      // already: only locals declared outside per-copy code get arrays.
      std::set<const VarDecl *> Outside;
      for (const DeclStmt *DS : Decls)
        for (const Decl *D : DS->decls())
          if (const auto *V = dyn_cast<VarDecl>(D))
            Outside.insert(V);
      for (auto It = Priv.begin(); It != Priv.end();)
        It = Outside.count(*It) ? std::next(It) : Priv.erase(It);
      return true;
    }
  }
  fail(FD->getLocation(), "the analysis did not settle");
  return false;
}

/// One replacement inside the kernel, by file offset.
struct Edit {
  unsigned Offset = 0, Length = 0;
  std::string Text;
  SourceLocation Loc;
  int Order = 2; ///< At one offset: closing (0), opening (1), others (2).
};

/// The expression of a launch's block argument that sets dimension \p D,
/// following a dim3 local to its initializer; null when there is none to
/// edit. \p Var: the local followed, if any.
const Expr *blockDimExpr(const Expr *Arg, unsigned D, const VarDecl *&Var,
                         unsigned Depth = 0) {
  if (!Arg || Depth > 4)
    return nullptr;
  const Expr *E = writtenDim3(Arg);
  if (E->getType()->isIntegerType())
    return D == 0 ? E : nullptr;
  if (const auto *FC = dyn_cast<CXXFunctionalCastExpr>(E))
    E = FC->getSubExpr()->IgnoreImplicit();
  if (const auto *CE = dyn_cast<CXXConstructExpr>(E)) {
    if (CE->getConstructor()->isCopyOrMoveConstructor() && CE->getNumArgs())
      return blockDimExpr(CE->getArg(0), D, Var, Depth + 1);
    if (D < CE->getNumArgs() && !isa<CXXDefaultArgExpr>(CE->getArg(D)))
      return CE->getArg(D)->IgnoreImplicit();
    return nullptr;
  }
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E->IgnoreParens())) {
    const auto *V = dyn_cast<VarDecl>(DRE->getDecl());
    if (!V || !V->isLocalVarDecl() || !V->getInit() || Var)
      return nullptr;
    Var = V;
    return blockDimExpr(V->getInit(), D, Var, Depth + 1);
  }
  return nullptr;
}

} // namespace

void ThreadCoarsenPass::run(PassContext &PC) {
  const KernelInfo &K = PC.kernel();
  const FunctionDecl *FD = K.Decl;
  ASTContext &Ctx = PC.astContext();
  const SourceManager &SM = PC.sourceManager();
  SourceLocation Loc = FD->getLocation();

  // The coarsened dimensions, y before x: copy (cy, cx) of a thread.
  struct CDim {
    char Dim;
    unsigned Idx;
    int64_t F;
    std::string Var, By;
  };
  std::vector<CDim> CDims;
  bool Asked = PC.options().Params.count("thread-coarsen.y") ||
               PC.options().Params.count("thread-coarsen.x");
  for (char D : {'y', 'x'}) {
    int64_t F = PC.options().intParam(name(), std::string(1, D),
                                      D == 'y' && !Asked ? 4 : 1);
    if (F == 1)
      continue;
    if (F < 2 || F > 16)
      return PC.refused(Loc, "--pass-opt=thread-coarsen." + std::string(1, D) +
                                 "=" + std::to_string(F) +
                                 " is not from 1 to 16");
    CDims.push_back({D, D == 'x' ? 0u : 1u, F,
                     std::string("astra_c") + D, std::to_string(F)});
  }
  if (CDims.empty())
    return PC.refused(Loc, "no dimension to coarsen (thread-coarsen.y and "
                           ".x are 1)");
  int64_t Copies = 1;
  std::string Dims, Factors, Index, Extent;
  for (const CDim &D : CDims) {
    Copies *= D.F;
    Dims += D.Dim;
    Factors += (Factors.empty() ? "" : ", ") + std::string(1, D.Dim) + " by " +
               D.By;
    Index += "[" + D.Var + "]";
    Extent += "[" + D.By + "]";
  }
  if (Copies > 32)
    return PC.refused(Loc, "more than 32 copies per thread (" +
                               std::to_string(Copies) + ")");

  if (FD->isTemplateInstantiation() || FD->getDescribedFunctionTemplate() ||
      FD->isDependentContext())
    return PC.refused(Loc, "a template kernel (not analyzed yet)");
  if (!FD->getBody())
    return PC.refused(Loc, "the kernel has no body here");

  for (const CDim &D : CDims)
    if (!usesBuiltin(FD->getBody(), Builtin::ThreadIdx, D.Dim))
      return PC.refused(Loc, std::string("the kernel does not read "
                                         "threadIdx.") +
                                 D.Dim);
  std::vector<const KernelSpec *> Specs = specsOf(PC.options(), K);
  if (Specs.empty())
    return PC.refused(Loc, "no workload spec: the block to divide is the "
                           "spec's launch.block too (--spec)");
  // The spec's launch must follow: the same check the optimizer makes.
  LaunchChange Change;
  for (const CDim &D : CDims)
    (D.Idx ? Change.BlockYDivisor : Change.BlockXDivisor) = D.F;
  for (const KernelSpec *S : Specs)
    if (auto L = changedLaunch(*S, Change); !L)
      return PC.refused(Loc, toString(L.takeError()));

  Coarsening C(PC, FD, Dims);
  if (!C.analyze())
    return PC.refused(C.At.isValid() ? C.At : Loc, C.Why);
  if (C.Leaves.empty())
    return PC.refused(Loc, "nothing runs per copy");

  // Privatized locals become arrays with one element per copy.
  for (const VarDecl *V : C.Priv) {
    QualType T = V->getType();
    if (T->isReferenceType() || !isOwnLocal(V))
      return PC.refused(V->getLocation(), "'" + V->getName() +
                                              "' is not a plain local");
    if (const ArrayType *AT = Ctx.getAsArrayType(T)) {
      if (V->getInit() || AT->getElementType().isConstQualified() ||
          !isa<ConstantArrayType>(AT))
        return PC.refused(V->getLocation(),
                          "the local array '" + V->getName() +
                              "' has an initializer or a const or variable "
                              "size");
    } else if (V->getInit() && V->getInitStyle() != VarDecl::CInit) {
      return PC.refused(V->getLocation(),
                        "'" + V->getName() +
                            "' is initialized with () or {}: only `= value` "
                            "is rewritten");
    }
  }

  // Where each copy's code is: the per-copy statements and the
  // initializers of privatized locals (file offsets [begin, end)).
  std::vector<std::pair<unsigned, unsigned>> CopyRanges;
  auto Offset = [&](SourceLocation L) -> std::optional<unsigned> {
    if (!L.isValid() || !L.isFileID() || !PC.isEditable(SourceRange(L, L)))
      return std::nullopt;
    return SM.getFileOffset(L);
  };
  std::string Open = "{ ";
  for (const CDim &D : CDims)
    Open += "_Pragma(\"unroll\") for (int " + D.Var + " = 0; " + D.Var +
            " < " + D.By + "; ++" + D.Var + ") ";
  Open += "{ ";
  std::vector<Edit> Edits;
  for (size_t I = 0; I < C.Leaves.size(); ++I) {
    // The tail is one block: from its first statement to the body's last.
    const Stmt *L = C.Leaves[I];
    const Stmt *Last = I == C.Tail ? C.Leaves.back() : L;
    SourceLocation E = endOfStatement(Last, SM, PC.langOpts());
    auto B = Offset(L->getBeginLoc()), End = Offset(E);
    if (!B || !End)
      return PC.refused(L->getBeginLoc(),
                        "this statement is not editable file text (a macro?)");
    CopyRanges.push_back({*B, *End});
    Edits.push_back({*B, 0, Open, L->getBeginLoc(), 1});
    Edits.push_back({*End, 0, " } }", E, 0});
    if (I == C.Tail)
      break;
  }
  // In the tail a return ends the copy, not the thread.
  for (const ReturnStmt *RS : C.TailReturns) {
    auto B = Offset(RS->getBeginLoc());
    auto E = makeTokenEdit(PC, SourceRange(RS->getBeginLoc()), "continue");
    if (!B || !E)
      return PC.refused(RS->getBeginLoc(),
                        "this return is not editable file text (a macro?)");
    Edits.push_back({*B, E->Length, "continue", RS->getBeginLoc(), 2});
  }
  std::map<const DeclStmt *, std::pair<unsigned, unsigned>> DeclRanges;
  for (const DeclStmt *DS : C.Decls) {
    bool Has = llvm::any_of(DS->decls(), [&](const Decl *D) {
      const auto *V = dyn_cast<VarDecl>(D);
      return V && C.Priv.count(V);
    });
    if (!Has)
      continue;
    SourceLocation E = endOfStatement(DS, SM, PC.langOpts());
    auto B = Offset(DS->getBeginLoc()), End = Offset(E);
    if (!B || !End)
      return PC.refused(DS->getBeginLoc(), "this declaration is not "
                                           "editable file text (a macro?)");
    DeclRanges[DS] = {*B, *End};
    for (const Decl *D : DS->decls())
      if (const auto *V = dyn_cast<VarDecl>(D); V && V->getInit()) {
        auto IB = Offset(V->getInit()->getBeginLoc());
        auto IE = Offset(Lexer::getLocForEndOfToken(V->getInit()->getEndLoc(),
                                                    0, SM, PC.langOpts()));
        if (!IB || !IE)
          return PC.refused(V->getLocation(), "the initializer of '" +
                                                  V->getName() +
                                                  "' is not editable text");
        if (C.Priv.count(V))
          CopyRanges.push_back({*IB, *IE});
      }
  }
  auto InCopy = [&](unsigned O) {
    return llvm::any_of(CopyRanges, [&](const std::pair<unsigned, unsigned> &R) {
      return O >= R.first && O < R.second;
    });
  };

  // The edits inside the code: threadIdx.d of a copy, blockDim.d, and the
  // copy's element of each privatized local.
  std::string Fail;
  SourceLocation FailAt;
  std::vector<const Stmt *> Work = {FD->getBody()};
  while (!Work.empty() && Fail.empty()) {
    const Stmt *S = Work.back();
    Work.pop_back();
    if (!S)
      continue;
    if (const auto *POE = dyn_cast<PseudoObjectExpr>(S)) {
      BuiltinRef R = matchBuiltin(POE);
      auto CD = llvm::find_if(CDims, [&](const CDim &D) { return D.Dim == R.Dim; });
      if (CD == CDims.end() ||
          (R.Var != Builtin::ThreadIdx && R.Var != Builtin::BlockDim))
        continue;
      auto B = Offset(POE->getBeginLoc());
      auto E = makeTokenEdit(PC, POE->getSourceRange(), "");
      if (!B || !E) {
        Fail = "a built-in index spelled inside a macro";
        FailAt = POE->getBeginLoc();
        break;
      }
      std::string D(1, CD->Dim);
      if (R.Var == Builtin::BlockDim) {
        Edits.push_back({*B, E->Length, "(blockDim." + D + " * " + CD->By + ")",
                         POE->getBeginLoc(), 2});
      } else {
        if (!InCopy(*B)) {
          Fail = "threadIdx." + D + " outside the code each copy runs (an "
                 "internal error of the analysis)";
          FailAt = POE->getBeginLoc();
          break;
        }
        Edits.push_back({*B, E->Length,
                         "(threadIdx." + D + " + " + CD->Var + " * blockDim." +
                             D + ")",
                         POE->getBeginLoc(), 2});
      }
      continue;
    }
    if (const auto *DRE = dyn_cast<DeclRefExpr>(S)) {
      const auto *V = dyn_cast<VarDecl>(DRE->getDecl());
      if (V && C.Priv.count(V)) {
        SourceLocation End = Lexer::getLocForEndOfToken(DRE->getEndLoc(), 0,
                                                        SM, PC.langOpts());
        auto O = Offset(End);
        if (!O || !InCopy(*O - 1)) {
          Fail = "'" + V->getName().str() +
                 "' is used outside the code each copy runs (an internal "
                 "error of the analysis)";
          FailAt = DRE->getBeginLoc();
          break;
        }
        Edits.push_back({*O, 0, Index, End, 3});
      }
    }
    for (const Stmt *Ch : S->children())
      Work.push_back(Ch);
  }
  if (!Fail.empty())
    return PC.refused(FailAt, Fail);

  std::stable_sort(Edits.begin(), Edits.end(), [](const Edit &A, const Edit &B) {
    return A.Offset != B.Offset ? A.Offset < B.Offset : A.Order < B.Order;
  });
  FileID File = SM.getFileID(SM.getFileLoc(FD->getLocation()));
  StringRef Buf = SM.getBufferData(File);
  // \p [B, E) of the file with the edits inside it applied (not the
  // braces around the copies, which enclose statements).
  std::vector<Splice> Inner;
  for (const Edit &Ed : Edits)
    if (Ed.Order >= 2)
      Inner.push_back({Ed.Offset, Ed.Length, Ed.Text});
  auto Render = [&](unsigned B, unsigned E) {
    return spliceText(Buf, B, E, Inner);
  };
  PrintingPolicy Policy = Ctx.getPrintingPolicy();
  Policy.SuppressTagKeyword = true;
  auto Declarator = [&](QualType T, const std::string &Name) {
    if (const auto *AT = T->getContainedAutoType())
      if (!AT->getDeducedType().isNull() && T->getAs<AutoType>())
        T = AT->getDeducedType();
    std::string S;
    raw_string_ostream OS(S);
    T.print(OS, Policy, Name);
    return S;
  };

  std::vector<TextEdit> Out;
  for (const auto &[DS, Range] : DeclRanges) {
    std::string Text;
    for (const Decl *D : DS->decls()) {
      const auto *V = dyn_cast<VarDecl>(D);
      if (!V)
        return PC.refused(D->getLocation(),
                          "a declaration beside a privatized local that is "
                          "not a variable");
      std::string Name = V->getName().str();
      const Expr *Init = V->getInit();
      std::string InitText;
      if (Init) {
        unsigned IB = SM.getFileOffset(Init->getBeginLoc());
        unsigned IE = SM.getFileOffset(Lexer::getLocForEndOfToken(
            Init->getEndLoc(), 0, SM, PC.langOpts()));
        std::optional<std::string> R = Render(IB, IE);
        if (!R)
          return PC.refused(V->getLocation(), "two rewrites in the "
                                              "initializer of '" +
                                                  Name + "' overlap");
        InitText = std::move(*R);
      }
      if (!Text.empty())
        Text += " ";
      if (C.Priv.count(V)) {
        Text += Declarator(V->getType().getUnqualifiedType(),
                           Name + Extent) +
                ";";
        if (Init)
          Text += " " + Open + Name + Index + " = " + InitText + "; } }";
      } else {
        if (Init && V->getInitStyle() != VarDecl::CInit)
          return PC.refused(V->getLocation(),
                            "'" + Name + "' is declared beside a privatized "
                            "local and initialized with () or {}");
        Text += Declarator(V->getType(), Name) +
                (Init ? " = " + InitText : std::string()) + ";";
      }
    }
    Out.push_back({SM.getComposedLoc(File, Range.first),
                   Range.second - Range.first, Text});
  }
  for (const Edit &Ed : Edits) {
    bool InDecl = llvm::any_of(DeclRanges, [&](const auto &D) {
      return Ed.Offset >= D.second.first && Ed.Offset < D.second.second;
    });
    if (!InDecl)
      Out.push_back({Ed.Loc, Ed.Length, Ed.Text});
  }

  // The launch sites: block dimension d divided by F.
  KernelLaunches KL = findLaunches(Ctx, FD);
  if (refuseUnlessAllLaunchesVisible(PC, KL, Loc))
    return;
  std::set<unsigned> Seen;
  std::map<const VarDecl *, unsigned> VarLaunches;
  unsigned Sites = 0;
  std::string Where;
  std::set<unsigned> SeenLaunch;
  // A local dim3 block variable is edited in its declaration only where that
  // changes nothing but this kernel's launches and the declaration spells
  // the dimensions itself. Where macros spell them (`dim3 block(BLOCK_X,
  // BLOCK_Y)`) or the variable also serves other kernels or the grid's
  // arithmetic (`ceil(n / block.x)`), every launch of this kernel with it
  // takes `dim3(block.x, block.y / F, block.z)` and the variable stays.
  std::map<const VarDecl *, unsigned> ThisKernelUses;
  std::set<const VarDecl *> ArgRoute;
  for (const CUDAKernelCallExpr *L : KL.chevrons()) {
    const CallExpr *Config = L->getConfig();
    const VarDecl *V = nullptr;
    if (!Config || Config->getNumArgs() < 2 ||
        !blockDimExpr(Config->getArg(1), 0, V) || !V)
      continue;
    ++ThisKernelUses[V];
    for (const CDim &D : CDims) {
      const VarDecl *W = nullptr;
      const Expr *X = blockDimExpr(Config->getArg(1), D.Idx, W);
      if (!X || !makeTokenEdit(PC, X->getSourceRange(), ""))
        ArgRoute.insert(V);
    }
  }
  for (const auto &[V, N] : ThisKernelUses) {
    const auto *Fn = dyn_cast<FunctionDecl>(V->getDeclContext());
    if (Fn && Fn->getBody() && referencesTo(Fn->getBody(), V).size() != N)
      ArgRoute.insert(V);
  }
  for (const CUDAKernelCallExpr *L : KL.chevrons()) {
    const CallExpr *Config = L->getConfig();
    SourceLocation LAt = L->getBeginLoc();
    if (!Config || Config->getNumArgs() < 2)
      return PC.refused(LAt, "the launch has no visible configuration");
    auto BDims = launchBlockDims(Config->getArg(1), Ctx);
    if (!BDims)
      return PC.refused(LAt, "the launch's block is not a compile-time "
                             "constant");
    for (const CDim &D : CDims)
      if ((*BDims)[D.Idx] % D.F)
        return PC.refused(LAt, std::string("the launch's block ") + D.Dim +
                                   " = " + std::to_string((*BDims)[D.Idx]) +
                                   " is not a multiple of " + D.By);
    const VarDecl *ArgVar = nullptr;
    if (blockDimExpr(Config->getArg(1), 0, ArgVar) && ArgVar &&
        ArgRoute.count(ArgVar)) {
      const auto *Fn = dyn_cast<FunctionDecl>(ArgVar->getDeclContext());
      if (!Fn || !Fn->getBody() || mayModify(Fn->getBody(), ArgVar))
        return PC.refused(ArgVar->getLocation(),
                          "the block variable '" + ArgVar->getName() +
                              "' may change");
      const Expr *A = writtenDim3(Config->getArg(1))->IgnoreParens();
      if (!isa<DeclRefExpr>(A))
        return PC.refused(LAt, "the launch's block is not the variable '" +
                                   ArgVar->getName() + "' itself");
      if (Seen.insert(A->getBeginLoc().getRawEncoding()).second) {
        std::string N = PC.text(A->getSourceRange()), Dims3[3];
        for (unsigned I = 0; I < 3; ++I)
          Dims3[I] = N + "." + "xyz"[I];
        for (const CDim &D : CDims)
          Dims3[D.Idx] += " / " + D.By;
        auto E = makeTokenEdit(PC, A->getSourceRange(),
                               "dim3(" + Dims3[0] + ", " + Dims3[1] + ", " +
                                   Dims3[2] + ")");
        if (!E)
          return PC.refused(LAt,
                            "the launch's block is not editable file text");
        Out.push_back(*E);
      }
      if (SeenLaunch.insert(LAt.getRawEncoding()).second) {
        ++Sites;
        Where += (Where.empty() ? "" : ", ") + posText(PC, LAt);
      }
      continue;
    }
    for (const CDim &D : CDims) {
      const VarDecl *BlockVar = nullptr;
      const Expr *X = blockDimExpr(Config->getArg(1), D.Idx, BlockVar);
      if (!X)
        return PC.refused(LAt, std::string("the launch's block ") + D.Dim +
                                   " is not written as an argument to edit");
      if (BlockVar) {
        const auto *Fn = dyn_cast<FunctionDecl>(BlockVar->getDeclContext());
        if (!Fn || !Fn->getBody() || mayModify(Fn->getBody(), BlockVar))
          return PC.refused(BlockVar->getLocation(),
                            "the block variable '" + BlockVar->getName() +
                                "' may change");
        if (D.Dim == CDims.front().Dim)
          ++VarLaunches[BlockVar];
      }
      if (!Seen.insert(X->getBeginLoc().getRawEncoding()).second)
        continue; // Another instantiation of this launch, already edited.
      auto E = makeTokenEdit(PC, X->getSourceRange(),
                             "(" + PC.text(X->getSourceRange()) + ") / " +
                                 D.By);
      if (!E)
        return PC.refused(LAt, "the launch's block is not editable file text");
      Out.push_back(*E);
    }
    // Launches, not edits: two launches may share one block variable, and
    // a template's instantiations share one launch.
    if (SeenLaunch.insert(LAt.getRawEncoding()).second) {
      ++Sites;
      Where += (Where.empty() ? "" : ", ") + posText(PC, LAt);
    }
  }
  // A block variable edited for this kernel must serve nothing else.
  for (const auto &[V, N] : VarLaunches) {
    const auto *Fn = cast<FunctionDecl>(V->getDeclContext());
    if (referencesTo(Fn->getBody(), V).size() != N)
      return PC.refused(V->getLocation(),
                        "the block variable '" + V->getName() +
                            "' is used for more than this kernel's launches");
  }

  EditSet ES;
  if (!ES.addSite(SM, Out))
    return PC.refused(Loc, "the edits overlap (an internal error)");
  if (ES.commit(PC)) {
    for (const CDim &D : CDims)
      PC.setBlockDivisor(D.Idx, D.F);
    PC.fired(Loc, "block divided (" + Factors + ") at " +
                      std::to_string(Sites) + " launch site" +
                      (Sites == 1 ? "" : "s") + " (" + Where +
                      "): each thread runs " + std::to_string(Copies) +
                      " copies of " +
                      std::to_string(C.Leaves.size()) + " statement" +
                      (C.Leaves.size() == 1 ? "" : "s") + ", " +
                      std::to_string(C.Priv.size()) + " local" +
                      (C.Priv.size() == 1 ? "" : "s") + " per copy");
  }
}

} // namespace astra
