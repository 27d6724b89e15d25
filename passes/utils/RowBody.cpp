//===- RowBody.cpp - A thread-per-row body rewritten for warps ----------===//
//
// The analysis and rewrite row-cooperative and warp-per-row share.
//
// Safety argument.
//  The kernel body is PRE; `R r = blockIdx.x * blockDim.x + threadIdx.x;`
//  REST, where PRE declares values every thread computes alike and
//  threadIdx appears nowhere else. The rewrite runs, for a warp whose 32
//  lanes are in the block (the condition is the same for all of them, see
//  below), `for (row = 0; row < 32; ++row) { R r = <lane row's index>; REST' }`
//  and for any other thread the original `R r = ...; REST`. So the rows the
//  warp's lanes had are the rows it does, each once, and under the same
//  guard: REST is copied, its returns become `continue` (to the next row).
//  In REST' r is the same on all lanes, and so is every value outside the
//  row loops, provided:
//   - a row loop `for (j = 0; j < C; j++)` becomes `for (j = lane; j < C;
//     j += 32)`: the lanes split the iterations. That keeps meaning when the
//     iterations do not depend on each other: the body changes no variable
//     declared outside it except reductions, each updated in one place
//     (`s += e`, `s = s + e`, `m = fmaxf(m, e)`, fmax/max/fminf/fmin/min)
//     and not otherwise read in the loop; a sum starts at zero, so that the
//     32 partial sums add up to the row's. After the loop each reduction is
//     combined with __shfl_xor_sync over the full warp and lane 0's value is
//     broadcast: every lane holds the same value (a float sum is
//     reassociated, which the verifier's tolerance must accept);
//   - memory: a buffer written in a row loop is accessed only in row loops
//     (not in a loop nested in one), always at `E + j`, E the same
//     expression of unchanged values, so element E + j is touched only by
//     lane j % 32 (every row loop starts at 0 with step 1), in program
//     order. Any other written buffer is accessed at one index i of
//     unchanged values: outside the row loops it is written only by
//     statements `p[i] = e;` (or `op=`), which lane 0 alone runs between two
//     __syncwarp() (so every lane's earlier reads are done and its later
//     reads see the store); in a row loop only as a sum `p[i] += e`, which
//     goes to a local over the loop, is combined like a local sum, and is
//     then added to p[i] by lane 0 between two __syncwarp(). Two different
//     buffers, one written, do not overlap: both `__restrict__`, or every
//     launch passes them arguments from different variables;
//   - no barrier, warp collective, shared memory, atomic, inline asm, call
//     of a user function or other loop; control flow outside row loops
//     depends only on uniform values, so all 32 lanes reach every shuffle
//     and __syncwarp(); nothing declared before the row index (nor a
//     parameter) is changed after it, since a thread now runs 32 rows.
//
//===----------------------------------------------------------------------===//
#include "utils/RowBody.h"
#include "astra/Support/TextSplice.h"
#include "utils/CudaIdioms.h"
#include "utils/Mutation.h"
#include "utils/PassSupport.h"
#include "utils/SourceText.h"


#include "clang/AST/ASTContext.h"
#include "clang/AST/ParentMap.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"

#include <algorithm>

using namespace clang;
using namespace llvm;
using namespace astra::cudaidiom;

namespace astra {
namespace {

enum class RedKind { Sum, Max, Min };

struct Reduction {
  const VarDecl *Var = nullptr;
  RedKind Kind = RedKind::Sum;
  std::string Fn; ///< The max/min function as written (`fmaxf`).
};

/// `p[i] += e` in a row loop, i the same for every iteration: a sum into
/// memory, kept in a local over the loop.
struct MemReduction {
  const CompoundAssignOperator *Upd = nullptr;
  const ArraySubscriptExpr *ASE = nullptr;
};

struct RowLoop {
  const ForStmt *F = nullptr;
  const VarDecl *J = nullptr;
  bool Declared = true;        ///< `for (int j = 0; ...)`, not `j = 0`.
  const Expr *Init = nullptr;  ///< The literal 0.
  const Expr *Inc = nullptr;
  std::vector<Reduction> Reds;
  std::vector<MemReduction> MemReds;
};

struct Access {
  const ArraySubscriptExpr *ASE = nullptr;
  const VarDecl *Base = nullptr;
  Use U = Use::Read;
  RowLoop *Loop = nullptr; ///< The row loop it is directly in.
  bool Nested = false;           ///< In a loop nested in a row loop.
};

std::string varName(const VarDecl *V) { return "'" + V->getNameAsString() + "'"; }

const char *kindName(RedKind K) {
  return K == RedKind::Sum ? "+" : K == RedKind::Max ? "max" : "min";
}

/// The first assignment, increment or decrement under \p S.
const Stmt *findLocalChange(const Stmt *S) {
  if (!S)
    return nullptr;
  if (const auto *B = dyn_cast<BinaryOperator>(S); B && B->isAssignmentOp())
    return S;
  if (const auto *U = dyn_cast<UnaryOperator>(S);
      U && U->isIncrementDecrementOp())
    return S;
  for (const Stmt *C : S->children())
    if (const Stmt *X = findLocalChange(C))
      return X;
  return nullptr;
}

/// The analysis of one kernel; Why is set at the first refusal.
class RowAnalysis {
public:
  RowAnalysis(PassContext &PC, const FunctionDecl *FD)
      : PC(PC), Ctx(PC.astContext()), SM(PC.sourceManager()), FD(FD),
        PM(FD->getBody()) {}

  bool fail(SourceLocation Loc, const Twine &Msg) {
    if (Why.empty()) {
      Why = Msg.str();
      WhyLoc = Loc;
    }
    return false;
  }

  bool run();

  PassContext &PC;
  ASTContext &Ctx;
  const SourceManager &SM;
  const FunctionDecl *FD;
  ParentMap PM;

  std::string Why;
  SourceLocation WhyLoc;

  const DeclStmt *IndexDecl = nullptr;
  const VarDecl *Row = nullptr;
  std::vector<const Stmt *> Rest;
  std::vector<std::unique_ptr<RowLoop>> Loops;
  std::vector<Access> Accesses;
  std::vector<const ReturnStmt *> Returns;
  /// Statements outside the row loops that store to memory: lane 0 runs
  /// them, between two __syncwarp().
  std::vector<const Expr *> Stores;

private:
  bool walkUniform(const Stmt *S);
  bool checkEffects(const Stmt *S, RowLoop *Loop, bool Nested);
  bool matchRowLoop(const ForStmt *F);
  bool matchReduction(RowLoop &L, const VarDecl *V);
  bool checkMemory();
  bool modifiedInRest(const VarDecl *V) const {
    for (const Stmt *S : Rest)
      if (mayModify(S, V))
        return true;
    return false;
  }
  const VarDecl *rootParam(const VarDecl *Base);
  bool indexOffset(const Access &A, const Expr *&E);
};

/// Every reference under \p S to a variable declared outside \p Inside
/// (null: any), with whether the use may modify it.
class OuterRefs : public RecursiveASTVisitor<OuterRefs> {
public:
  OuterRefs(const Stmt *Inside, const ParentMap &PM) : Inside(Inside), PM(PM) {}
  bool VisitDeclRefExpr(DeclRefExpr *E) {
    const auto *V = dyn_cast<VarDecl>(E->getDecl());
    if (!V)
      return true;
    if (Inside) {
      SourceRange R = Inside->getSourceRange();
      SourceLocation L = V->getLocation();
      if (!(L < R.getBegin()) && !(R.getEnd() < L))
        return true; // Declared in the loop.
    }
    Refs.push_back({E, V, isModifyingUse(E, PM)});
    return true;
  }
  struct Ref {
    const DeclRefExpr *E;
    const VarDecl *V;
    bool Modifies;
  };
  const Stmt *Inside;
  const ParentMap &PM;
  std::vector<Ref> Refs;
};

bool RowAnalysis::run() {
  const auto *Body = dyn_cast_or_null<CompoundStmt>(FD->getBody());
  if (!Body)
    return fail(FD->getLocation(), "the kernel has no body");
  std::string C = findCollective(Body, SM);
  if (!C.empty())
    return fail(FD->getLocation(), "the kernel " + C +
                                       ": the lanes of a warp would no longer "
                                       "run the code their threads did");
  std::string Sh = findSharedMemory(Body, SM);
  if (!Sh.empty())
    return fail(FD->getLocation(), "the kernel " + Sh +
                                       ": threads of a block share it by "
                                       "thread, not by row");

  // PRE, the row index, REST.
  for (const Stmt *S : Body->body()) {
    if (IndexDecl) {
      Rest.push_back(S);
      continue;
    }
    const auto *DS = dyn_cast<DeclStmt>(S);
    if (DS && DS->isSingleDecl())
      if (const auto *V = dyn_cast<VarDecl>(DS->getSingleDecl()))
        if (V->getType()->isIntegerType() && V->getInit() &&
            isGlobalThreadIndex(V->getInit())) {
          IndexDecl = DS;
          Row = V;
          continue;
        }
    if (!DS)
      return fail(S->getBeginLoc(),
                  "a statement before the row index "
                  "`blockIdx.x * blockDim.x + threadIdx.x` (only declarations "
                  "may come first)");
    if (usesBuiltin(S, cudaidiom::Builtin::ThreadIdx, 0))
      return fail(S->getBeginLoc(), "reads threadIdx before the row index: "
                                    "the value is not the same for a warp's "
                                    "rows");
    if (hasNonLocalEffect(S, SM))
      return fail(S->getBeginLoc(),
                  "a declaration before the row index has an effect");
  }
  if (!IndexDecl)
    return fail(FD->getLocation(),
                "no row index: the kernel body has no top-level declaration "
                "`int r = blockIdx.x * blockDim.x + threadIdx.x;`");
  if (Rest.empty())
    return fail(IndexDecl->getBeginLoc(), "nothing follows the row index");
  for (const Stmt *S : Rest) {
    const Expr *At = nullptr;
    if (usesBuiltin(S, cudaidiom::Builtin::ThreadIdx, 0, &At))
      return fail(At->getBeginLoc(),
                  "reads threadIdx other than in the row index: each lane "
                  "would see its own value, not its row's thread's");
  }
  // The rows of a warp now run one after another in one thread: what is
  // declared before the row index would carry over from row to row.
  for (const Stmt *S : Body->body()) {
    if (S == IndexDecl)
      break;
    for (const Decl *D : cast<DeclStmt>(S)->decls())
      if (const auto *V = dyn_cast<VarDecl>(D); V && modifiedInRest(V))
        return fail(V->getLocation(),
                    varName(V) + " is declared before the row index and "
                    "changed after it: a warp's rows would share it");
  }
  if (modifiedInRest(Row))
    return fail(Row->getLocation(),
                "the row index " + varName(Row) + " is changed after it is "
                "computed");
  for (const Stmt *S : Rest)
    if (!walkUniform(S))
      return false;
  if (Loops.empty())
    return fail(IndexDecl->getBeginLoc(),
                "no loop over the row (`for (int j = 0; j < n; j++)`) after "
                "the row index");
  for (const auto &L : Loops) {
    if (L->Declared)
      continue;
    for (const Stmt *S : Rest)
      for (const DeclRefExpr *E : referencesTo(S, L->J)) {
        bool InRowLoop = false;
        for (const auto &M : Loops)
          InRowLoop |= M->J == L->J &&
                       !(E->getBeginLoc() < M->F->getBeginLoc()) &&
                       !(M->F->getEndLoc() < E->getBeginLoc());
        if (!InRowLoop)
          return fail(E->getBeginLoc(),
                      "the loop variable " + varName(L->J) +
                          " is used outside the row loops, where each lane "
                          "would hold its own value");
      }
  }
  return checkMemory();
}

bool RowAnalysis::walkUniform(const Stmt *S) {
  if (!S)
    return true;
  if (const auto *CS = dyn_cast<CompoundStmt>(S)) {
    for (const Stmt *C : CS->body())
      if (!walkUniform(C))
        return false;
    return true;
  }
  if (const auto *If = dyn_cast<IfStmt>(S)) {
    if (If->getInit() || If->getConditionVariable() || If->isConsteval())
      return fail(If->getBeginLoc(), "an `if` with a declaration in its "
                                     "condition");
    return checkEffects(If->getCond(), nullptr, false) &&
           walkUniform(If->getThen()) && walkUniform(If->getElse());
  }
  if (const auto *F = dyn_cast<ForStmt>(S))
    return matchRowLoop(F);
  if (const auto *R = dyn_cast<ReturnStmt>(S)) {
    if (R->getRetValue())
      return fail(R->getBeginLoc(), "a return with a value");
    Returns.push_back(R);
    return true;
  }
  if (isa<WhileStmt>(S) || isa<DoStmt>(S) || isa<CXXForRangeStmt>(S))
    return fail(S->getBeginLoc(),
                "a loop that is not a row loop `for (j = 0; j < n; j++)`");
  if (isa<SwitchStmt>(S) || isa<GotoStmt>(S) || isa<IndirectGotoStmt>(S) ||
      isa<LabelStmt>(S) || isa<BreakStmt>(S) || isa<ContinueStmt>(S))
    return fail(S->getBeginLoc(),
                "control flow other than `if` and return outside the row "
                "loops");
  if (const auto *E = dyn_cast<Expr>(S)) {
    const auto *B = dyn_cast<BinaryOperator>(E->IgnoreParens());
    if (B && B->isAssignmentOp() &&
        isa<ArraySubscriptExpr>(B->getLHS()->IgnoreParens())) {
      if (const Stmt *X = findLocalChange(B->getRHS()))
        return fail(X->getBeginLoc(),
                    "a store to memory outside the row loops that also "
                    "changes a variable (lane 0 alone makes the store)");
      Stores.push_back(E);
    }
    return checkEffects(S, nullptr, false);
  }
  if (isa<DeclStmt>(S) || isa<NullStmt>(S))
    return checkEffects(S, nullptr, false);
  return fail(S->getBeginLoc(), Twine("a statement the pass does not handle (") +
                                    S->getStmtClassName() + ")");
}

/// Checks what \p S does beyond its own locals and records its memory
/// accesses. \p Loop: the row loop \p S is in (null outside them).
bool RowAnalysis::checkEffects(const Stmt *S, RowLoop *Loop,
                               bool Nested) {
  if (!S)
    return true;
  if (isa<AsmStmt>(S))
    return fail(S->getBeginLoc(), "inline asm");
  if (isa<LambdaExpr>(S))
    return fail(S->getBeginLoc(), "a lambda");
  if (const auto *CE = dyn_cast<CallExpr>(S)) {
    StringRef Name = libraryCalleeName(SM, Ctx, CE);
    if (Name.empty())
      return fail(CE->getBeginLoc(),
                  "calls a function that is not a library math function (a "
                  "user function may have effects or read the thread)");
    if (systemCallHasEffect(Name))
      return fail(CE->getBeginLoc(), "calls " + Name +
                                          ", which has an effect beyond its "
                                          "result");
  }
  if (isa<CXXConstructExpr>(S) &&
      !cast<CXXConstructExpr>(S)->getConstructor()->isTrivial())
    return fail(S->getBeginLoc(), "a constructor call");
  if (const auto *UO = dyn_cast<UnaryOperator>(S))
    if (UO->getOpcode() == UO_Deref)
      return fail(UO->getBeginLoc(),
                  "a pointer dereference `*p` (only subscripts `p[i]` are "
                  "followed)");
  if (const auto *ME = dyn_cast<MemberExpr>(S))
    if (ME->isArrow())
      return fail(ME->getBeginLoc(), "an access through `->`");
  if (const auto *DRE = dyn_cast<DeclRefExpr>(S))
    if (const auto *V = dyn_cast<VarDecl>(DRE->getDecl()))
      if (!isOwnLocal(V) && !V->getType().isConstQualified() &&
          isModifyingUse(DRE, PM))
        return fail(DRE->getBeginLoc(),
                    isa<ParmVarDecl>(V)
                        ? "changes the parameter " + varName(V) +
                              ": a warp's rows, now run one after another, "
                              "would share it"
                        : "changes " + varName(V) +
                              ", which is not the thread's own");
  if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(S)) {
    const Expr *B = ASE->getBase()->IgnoreParenImpCasts();
    const auto *DRE = dyn_cast<DeclRefExpr>(B);
    const auto *V = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
    if (!V || !V->getType()->isPointerType())
      return fail(ASE->getBeginLoc(),
                  "a subscript of something other than a pointer variable");
    Access A;
    A.ASE = ASE;
    A.Base = V;
    A.U = accessUse(ASE, PM);
    A.Loop = Loop;
    A.Nested = Nested;
    if (A.U == Use::Escape)
      return fail(ASE->getBeginLoc(), "the address of an element escapes");
    Accesses.push_back(A);
  }
  // Callers pass a row loop's body, never the loop: a loop found here is
  // nested in the row loop.
  bool InLoop = Nested || isa<ForStmt>(S) || isa<WhileStmt>(S) ||
                isa<DoStmt>(S) || isa<CXXForRangeStmt>(S);
  for (const Stmt *C : S->children())
    if (!checkEffects(C, Loop, InLoop))
      return false;
  return true;
}

bool RowAnalysis::matchRowLoop(const ForStmt *F) {
  auto Bad = [&](const Twine &What) {
    return fail(F->getBeginLoc(),
                "not a row loop `for (int j = 0; j < n; j++)`: " + What);
  };
  auto L = std::make_unique<RowLoop>();
  L->F = F;
  const Expr *Start = nullptr;
  if (const auto *DS = dyn_cast_or_null<DeclStmt>(F->getInit())) {
    if (DS->isSingleDecl())
      L->J = dyn_cast<VarDecl>(DS->getSingleDecl());
    Start = L->J ? L->J->getInit() : nullptr;
  } else if (const auto *As = dyn_cast_or_null<BinaryOperator>(F->getInit());
             As && As->getOpcode() == BO_Assign) {
    // `int j; for (j = 0; ...)`: j must not be read after the loop, where
    // each lane would hold its own last value.
    if (const auto *DRE =
            dyn_cast<DeclRefExpr>(As->getLHS()->IgnoreParenImpCasts()))
      L->J = dyn_cast<VarDecl>(DRE->getDecl());
    L->Declared = false;
    Start = As->getRHS();
    if (L->J && !isOwnLocal(L->J))
      return Bad("the loop variable is not a local of the thread");
  }
  if (!L->J || !L->J->getType()->isIntegerType() || !Start)
    return Bad("the loop does not start one integer variable");
  const auto *Lit = dyn_cast<IntegerLiteral>(Start->IgnoreParenImpCasts());
  if (!Lit || Lit->getValue() != 0)
    return Bad("the loop does not start at 0");
  L->Init = Lit;
  const auto *Cond = dyn_cast_or_null<BinaryOperator>(
      F->getCond() ? F->getCond()->IgnoreParenImpCasts() : nullptr);
  if (!Cond || Cond->getOpcode() != BO_LT || !refersTo(Cond->getLHS(), L->J))
    return Bad("the condition is not `j < n`");
  const Expr *Bound = Cond->getRHS();
  if (mentionsDecl(Bound, L->J))
    return Bad("the bound reads the loop variable");
  {
    OuterRefs BR(nullptr, PM);
    BR.TraverseStmt(const_cast<Expr *>(Bound));
    for (const auto &R : BR.Refs)
      if (mayModify(F->getBody(), R.V))
        return Bad("the bound reads " + varName(R.V) +
                   ", which the loop changes");
    if (!checkEffects(Bound, nullptr, false))
      return false;
    for (const Access &A : Accesses)
      if (A.ASE->getBeginLoc() >= Bound->getBeginLoc() &&
          A.ASE->getEndLoc() <= Bound->getEndLoc())
        return Bad("the bound reads memory");
  }
  const Expr *Inc = F->getInc() ? F->getInc()->IgnoreParenImpCasts() : nullptr;
  bool IncOk = false;
  if (const auto *U = dyn_cast_or_null<UnaryOperator>(Inc))
    IncOk = U->isIncrementOp() && refersTo(U->getSubExpr(), L->J);
  else if (const auto *B = dyn_cast_or_null<BinaryOperator>(Inc)) {
    if (B->getOpcode() == BO_AddAssign && refersTo(B->getLHS(), L->J))
      if (auto One = constInt(Ctx, B->getRHS()))
        IncOk = *One == 1;
  }
  if (!IncOk)
    return Bad("the step is not `j++`, `++j` or `j += 1`");
  L->Inc = Inc;
  const Stmt *Body = F->getBody();
  if (const Stmt *X = findEarlyExit(Body, /*ContinueExits=*/false))
    return fail(X->getBeginLoc(),
                "leaves the row loop early (return, break or goto): the "
                "lanes would stop at different elements");
  if (mayModify(Body, L->J))
    return Bad("the body changes the loop variable");

  // Variables from outside the loop that the body changes: reductions only.
  OuterRefs OR(Body, PM);
  OR.TraverseStmt(const_cast<Stmt *>(Body));
  std::vector<const VarDecl *> Changed;
  for (const auto &R : OR.Refs)
    if (R.Modifies && R.V != L->J &&
        std::find(Changed.begin(), Changed.end(), R.V) == Changed.end())
      Changed.push_back(R.V);
  for (const VarDecl *V : Changed)
    if (!matchReduction(*L, V))
      return false;
  if (!checkEffects(Body, L.get(), false))
    return false;
  Loops.push_back(std::move(L));
  return true;
}

/// Whether the body of \p L updates \p V only as a known reduction, in one
/// place, reading it nowhere else.
bool RowAnalysis::matchReduction(RowLoop &L, const VarDecl *V) {
  const Stmt *Body = L.F->getBody();
  auto Bad = [&](SourceLocation Loc, const Twine &What) {
    return fail(Loc, "the row loop changes " + varName(V) +
                         ", declared outside it, " + What);
  };
  if (!isOwnLocal(V))
    return Bad(L.F->getBeginLoc(), "which is not a local of the thread");
  if (!isShuffleElementType(V->getType().getUnqualifiedType()))
    return Bad(L.F->getBeginLoc(),
               "whose type does not move through a warp shuffle");
  std::vector<const DeclRefExpr *> Refs = referencesTo(Body, V);
  // The update: the assignment around the first reference.
  const Expr *Upd = nullptr;
  for (const Stmt *P = PM.getParent(Refs.front()); P; P = PM.getParent(P))
    if (const auto *B = dyn_cast<BinaryOperator>(P); B && B->isAssignmentOp()) {
      Upd = B;
      break;
    }
  Reduction R;
  R.Var = V;
  const Expr *Operand = nullptr;
  if (const auto *B = dyn_cast_or_null<BinaryOperator>(Upd);
      B && refersTo(B->getLHS(), V)) {
    if (B->getOpcode() == BO_AddAssign) {
      R.Kind = RedKind::Sum;
      Operand = B->getRHS();
    } else if (B->getOpcode() == BO_Assign) {
      const Expr *RHS = B->getRHS()->IgnoreParenImpCasts();
      if (const auto *Add = dyn_cast<BinaryOperator>(RHS);
          Add && Add->getOpcode() == BO_Add) {
        R.Kind = RedKind::Sum;
        if (refersTo(Add->getLHS(), V))
          Operand = Add->getRHS();
        else if (refersTo(Add->getRHS(), V))
          Operand = Add->getLHS();
      } else if (const auto *CE = dyn_cast<CallExpr>(RHS);
                 CE && CE->getNumArgs() == 2) {
        StringRef N = systemCalleeName(SM, CE);
        if (N == "fmaxf" || N == "fmax" || N == "max")
          R.Kind = RedKind::Max;
        else if (N == "fminf" || N == "fmin" || N == "min")
          R.Kind = RedKind::Min;
        else
          N = "";
        if (!N.empty()) {
          R.Fn = N.str();
          if (refersTo(CE->getArg(0), V))
            Operand = CE->getArg(1);
          else if (refersTo(CE->getArg(1), V))
            Operand = CE->getArg(0);
        }
      }
    }
  }
  if (!Operand || mentionsDecl(Operand, V))
    return Bad(Refs.front()->getBeginLoc(),
               "other than as a reduction `s += e`, `s = s + e` or `m = "
               "fmaxf(m, e)` (fmax, max, fminf, fmin, min) with e not "
               "reading it");
  for (const DeclRefExpr *E : Refs)
    if (E->getBeginLoc() < Upd->getBeginLoc() ||
        Upd->getEndLoc() < E->getBeginLoc())
      return Bad(E->getBeginLoc(), "and reads it outside its update: each "
                                   "lane would see only its partial value");
  if (R.Kind == RedKind::Sum) {
    if (V->getType()->isRealFloatingType() &&
        PC.options().intParam(PC.passName(), "reductions", 1) == 0)
      return Bad(Upd->getBeginLoc(),
                 "a floating-point sum, and " + PC.passName() +
                     ".reductions=0 keeps sums in their order");
    // The 32 partial sums add up to the row's only when the sum starts at 0
    // on every lane.
    Expr::EvalResult Init;
    bool Zero = V->getInit() && !V->getInit()->isValueDependent() &&
                V->getInit()->EvaluateAsRValue(Init, Ctx) &&
                ((Init.Val.isInt() && Init.Val.getInt() == 0) ||
                 (Init.Val.isFloat() && Init.Val.getFloat().isZero()));
    if (!Zero)
      return Bad(V->getLocation(),
                 "a sum whose declaration does not start it at 0");
    // Nothing changes it between its declaration and the loop: the body
    // outside row loops has no other loops, so source order is run order.
    for (const DeclRefExpr *E : referencesTo(FD->getBody(), V))
      if (E->getBeginLoc() < L.F->getBeginLoc() && isModifyingUse(E, PM))
        return Bad(E->getBeginLoc(), "a sum changed before the row loop: it "
                                     "would not start at 0 on every lane");
  }
  L.Reds.push_back(R);
  return true;
}

/// For an access directly in a row loop: \p E is the offset in `E + j`
/// (null for `j`). False when the index is not of that form.
bool RowAnalysis::indexOffset(const Access &A, const Expr *&E) {
  const Expr *Idx = stripIntCasts(A.ASE->getIdx());
  E = nullptr;
  if (refersTo(Idx, A.Loop->J))
    return true;
  const auto *Add = dyn_cast<BinaryOperator>(Idx);
  if (!Add || Add->getOpcode() != BO_Add)
    return false;
  if (refersTo(Add->getRHS(), A.Loop->J))
    E = Add->getLHS();
  else if (refersTo(Add->getLHS(), A.Loop->J))
    E = Add->getRHS();
  return E && !mentionsDecl(E, A.Loop->J);
}

/// The kernel parameter a pointer variable points into: itself, or the
/// parameter a local pointer is initialized from (`p`, `p + e`, `&p[e]`)
/// and never changed. Null otherwise.
const VarDecl *RowAnalysis::rootParam(const VarDecl *Base) {
  if (isa<ParmVarDecl>(Base))
    return Base;
  if (!isOwnLocal(Base) || !Base->getInit() || mayModify(FD->getBody(), Base))
    return nullptr;
  const Expr *I = Base->getInit()->IgnoreParenImpCasts();
  if (const auto *U = dyn_cast<UnaryOperator>(I);
      U && U->getOpcode() == UO_AddrOf)
    if (const auto *ASE =
            dyn_cast<ArraySubscriptExpr>(U->getSubExpr()->IgnoreParens()))
      I = ASE->getBase()->IgnoreParenImpCasts();
  if (const auto *B = dyn_cast<BinaryOperator>(I);
      B && (B->getOpcode() == BO_Add || B->getOpcode() == BO_Sub))
    I = B->getLHS()->getType()->isPointerType()
            ? B->getLHS()->IgnoreParenImpCasts()
            : B->getRHS()->IgnoreParenImpCasts();
  const auto *DRE = dyn_cast<DeclRefExpr>(I);
  return DRE ? dyn_cast<ParmVarDecl>(DRE->getDecl()) : nullptr;
}

bool RowAnalysis::checkMemory() {
  std::vector<const VarDecl *> Written, Bases;
  for (const Access &A : Accesses) {
    if (std::find(Bases.begin(), Bases.end(), A.Base) == Bases.end())
      Bases.push_back(A.Base);
    if (A.U != Use::Read &&
        std::find(Written.begin(), Written.end(), A.Base) == Written.end())
      Written.push_back(A.Base);
  }
  // Worth doing only where a warp's threads walked rows apart: some access
  // in a row loop is `p[e + j]` with e (or p's own offset) reading the row.
  bool Strided = false;
  for (const Access &A : Accesses) {
    const Expr *Off = nullptr;
    if (!A.Loop || A.Nested || !indexOffset(A, Off))
      continue;
    Strided |= Off ? mentionsDecl(Off, Row)
                   : !isa<ParmVarDecl>(A.Base) && A.Base->getInit() &&
                         mentionsDecl(A.Base->getInit(), Row);
  }
  if (!Strided)
    return fail(Loops.front()->F->getBeginLoc(),
                "no access in the row loops walks along the row (`p[r * n + "
                "j]`): the threads of a warp already read consecutive or "
                "shared elements at each step, and striding the lanes over j "
                "would not make the loads consecutive");

  for (const VarDecl *W : Written) {
    // Two kinds of written buffers: row elements `p[e + j]`, touched only in
    // row loops, and row values `p[i]`, i the same everywhere.
    bool Elements = false;
    for (const Access &A : Accesses)
      if (A.Base == W && A.Loop && !A.Nested &&
          mentionsDecl(A.ASE->getIdx(), A.Loop->J))
        Elements = true;
    const Access *First = nullptr;
    const Expr *FirstOff = nullptr;
    for (const Access &A : Accesses) {
      if (A.Base != W)
        continue;
      auto Bad = [&](const Twine &What) {
        return fail(A.ASE->getBeginLoc(),
                    "the kernel writes " + varName(W) + ", and " + What);
      };
      if (A.Nested)
        return Bad("accesses it in a loop inside a row loop");
      if (Elements) {
        const Expr *Off = nullptr;
        if (!A.Loop)
          return Bad("accesses it both in and outside a row loop");
        if (!indexOffset(A, Off))
          return Bad("this index is not `e + j` with j the row loop's "
                     "variable");
        if (!First) {
          First = &A;
          FirstOff = Off;
        } else if (!Off != !FirstOff || (Off && !sameExpr(Ctx, Off, FirstOff)))
          return Bad("accesses it at another offset than at " +
                     posText(PC, First->ASE->getBeginLoc()) +
                     ": another lane's element");
        continue;
      }
      if (!First)
        First = &A;
      else if (!sameExpr(Ctx, A.ASE->getIdx(), First->ASE->getIdx()))
        return Bad("accesses it at two indices, neither following a row "
                   "loop's variable");
      if (!A.Loop) {
        if (A.U != Use::Read &&
            std::none_of(Stores.begin(), Stores.end(), [&](const Expr *S) {
              const auto *B = cast<BinaryOperator>(S->IgnoreParens());
              return B->getLHS()->IgnoreParens() == A.ASE;
            }))
          return Bad("writes it other than as a statement `p[i] = e;`");
        continue;
      }
      if (A.U == Use::Read)
        continue;
      const auto *CAO =
          dyn_cast_or_null<CompoundAssignOperator>(PM.getParentIgnoreParens(A.ASE));
      if (A.U != Use::ReadWrite || !CAO || CAO->getOpcode() != BO_AddAssign ||
          CAO->getLHS()->IgnoreParens() != A.ASE)
        return Bad("writes it in a row loop other than as a sum `p[i] += e`");
      if (mentionsDecl(CAO->getRHS(), W))
        return Bad("reads it in the sum's own terms");
      QualType ET = W->getType()->getPointeeType().getUnqualifiedType();
      if (!isShuffleElementType(ET))
        return Bad("its elements do not move through a warp shuffle");
      if (ET->isRealFloatingType() &&
          PC.options().intParam(PC.passName(), "reductions", 1) == 0)
        return Bad("sums into it, and " + PC.passName() +
                   ".reductions=0 keeps sums in their order");
      for (const MemReduction &M : A.Loop->MemReds)
        if (M.ASE != A.ASE && cast<DeclRefExpr>(M.ASE->getBase()->IgnoreParenImpCasts())
                                      ->getDecl() == W)
          return Bad("sums into it twice in one row loop");
      A.Loop->MemReds.push_back({CAO, A.ASE});
    }
    // A loop that sums into a row value touches it nowhere else.
    for (const auto &L : Loops)
      for (const MemReduction &M : L->MemReds)
        for (const Access &A : Accesses)
          if (A.Base == W && A.Loop == L.get() && A.ASE != M.ASE &&
              cast<DeclRefExpr>(M.ASE->getBase()->IgnoreParenImpCasts())
                      ->getDecl() == W)
            return fail(A.ASE->getBeginLoc(),
                        "the row loop sums into " + varName(W) +
                            " and also reads it");
    // The addresses (and the pointer) must mean the same in every access.
    std::set<const VarDecl *> Read;
    if (Elements && FirstOff)
      localsRead(FirstOff, Read);
    if (!Elements)
      localsRead(First->ASE->getIdx(), Read);
    Read.insert(W);
    for (const VarDecl *V : Read)
      if (modifiedInRest(V))
        return fail(First->ASE->getBeginLoc(),
                    "the address of " + varName(W) + "'s elements reads " +
                        varName(V) + ", which changes");
  }
  // Buffers that may overlap a written one.
  KernelLaunches KL;
  bool HaveLaunches = false;
  for (const VarDecl *W : Written) {
    const VarDecl *RW = rootParam(W);
    if (!RW)
      return fail(W->getLocation(), "cannot tell which buffer " +
                                        varName(W) + " points into");
    for (const VarDecl *B : Bases) {
      if (B == W)
        continue;
      const VarDecl *RB = rootParam(B);
      if (!RB)
        return fail(B->getLocation(), "cannot tell which buffer " +
                                          varName(B) + " points into");
      if (RB == RW)
        return fail(B->getLocation(),
                    varName(B) + " and " + varName(W) +
                        " point into the same buffer, one written");
      if (RW->getType().isRestrictQualified() &&
          RB->getType().isRestrictQualified())
        continue;
      if (!HaveLaunches) {
        KL = findLaunches(Ctx, FD);
        HaveLaunches = true;
      }
      auto Why = [&](const Twine &What) {
        return fail(RW->getLocation(),
                    varName(RW) + " is written and " + varName(RB) +
                        " read: neither is `__restrict__` and " + What +
                        " (restrict-const may prove it)");
      };
      if (!KL.allVisible())
        return Why("the file may not show every launch (" + KL.Hidden + ")");
      if (KL.chevrons().size() != KL.Launches.size())
        return Why("a launch goes through a launch API");
      unsigned IW = cast<ParmVarDecl>(RW)->getFunctionScopeIndex();
      unsigned IB = cast<ParmVarDecl>(RB)->getFunctionScopeIndex();
      for (const CUDAKernelCallExpr *E : KL.chevrons())
        if (launchArgsMayAlias(E, IW, IB))
          return Why("the launch at " + posText(PC, E->getBeginLoc()) +
                     " may pass overlapping buffers");
    }
  }
  return true;
}

/// Finds warp-per-row's guard: the first statement after the row index that
/// is not a declaration without effect is `if (r < N) { ... }`, the last
/// one, or `if (r >= N) return;`, N a parameter never changed. Null, with
/// the refusal recorded in \p A, otherwise.
const ParmVarDecl *findRowGuard(RowAnalysis &A) {
  auto Bad = [&](SourceLocation L, const Twine &Why) {
    A.fail(L, Why);
    return nullptr;
  };
  const VarDecl *Row = A.Row;
  for (size_t I = 0; I < A.Rest.size(); ++I) {
    const Stmt *S = A.Rest[I];
    if (isa<DeclStmt>(S) && !hasNonLocalEffect(S, A.SM))
      continue;
    const auto *If = dyn_cast<IfStmt>(S);
    const auto *Cmp = If ? dyn_cast<BinaryOperator>(
                               If->getCond()->IgnoreParenImpCasts())
                         : nullptr;
    if (!Cmp || If->getElse())
      break;
    // Normalized to `Row Op Bound`.
    BinaryOperatorKind Op = Cmp->getOpcode();
    const Expr *Bound = nullptr;
    if (refersTo(Cmp->getLHS(), Row)) {
      Bound = Cmp->getRHS();
    } else if (refersTo(Cmp->getRHS(), Row)) {
      Bound = Cmp->getLHS();
      Op = Op == BO_GT ? BO_LT : Op == BO_LE ? BO_GE : BO_Comma;
    }
    bool Enters = Op == BO_LT && I + 1 == A.Rest.size();
    const Stmt *Then = If->getThen();
    if (const auto *CS = dyn_cast<CompoundStmt>(Then); CS && CS->size() == 1)
      Then = CS->body_front();
    bool Leaves = Op == BO_GE && isa<ReturnStmt>(Then);
    if (!Bound || !(Enters || Leaves))
      break;
    const auto *DRE = dyn_cast<DeclRefExpr>(stripIntCasts(Bound));
    const auto *P = DRE ? dyn_cast<ParmVarDecl>(DRE->getDecl()) : nullptr;
    if (!P)
      return Bad(Bound->getBeginLoc(),
                 "the guard's row count is not a parameter of the kernel: "
                 "the launch sites' grids cannot be matched against it");
    if (mayModify(A.FD->getBody(), P))
      return Bad(Bound->getBeginLoc(), "the guard's row count " + varName(P) +
                                           " is changed in the kernel");
    return P;
  }
  return Bad(A.IndexDecl->getBeginLoc(),
             "no guard on the row index right after it (`if (" +
                 Row->getNameAsString() + " < n) { ... }` around the rest "
                 "of the kernel, or `if (" + Row->getNameAsString() +
                 " >= n) return;`): the rows the new grid adds past the "
                 "old one would run");
}

} // namespace

std::optional<RowBody> rewriteRowBody(PassContext &PC, RowLaunch Mode) {
  const FunctionDecl *FD = PC.kernel().Decl;
  if (!FD || !FD->hasBody())
    return std::nullopt;
  if (PC.kernel().isTemplate()) {
    PC.refused(FD->getLocation(), "template kernels are not handled");
    return std::nullopt;
  }
  RowAnalysis A(PC, FD);
  const ParmVarDecl *Bound = nullptr;
  bool Ok = true;
  if (const auto *Body = dyn_cast<CompoundStmt>(FD->getBody());
      Body && Mode == RowLaunch::WarpEach) {
    // The new launch changes blockIdx, blockDim and gridDim: the row index
    // (the first top-level declaration of one) alone may read them.
    bool SeenIndex = false;
    for (const Stmt *S : Body->body()) {
      const auto *DS = dyn_cast<DeclStmt>(S);
      const auto *V = DS && DS->isSingleDecl()
                          ? dyn_cast<VarDecl>(DS->getSingleDecl())
                          : nullptr;
      if (!SeenIndex && V && V->getInit() &&
          isGlobalThreadIndex(V->getInit())) {
        SeenIndex = true;
        continue;
      }
      const Expr *At = nullptr;
      for (cudaidiom::Builtin B :
           {cudaidiom::Builtin::BlockIdx, cudaidiom::Builtin::BlockDim,
            cudaidiom::Builtin::GridDim})
        if (!At)
          usesBuiltin(S, B, 0, &At);
      if (At) {
        Ok = A.fail(At->getBeginLoc(),
                    "reads " + PC.text(At->getSourceRange()) +
                        " other than in the row index: the new launch "
                        "changes it");
        break;
      }
    }
  }
  Ok = Ok && A.run();
  if (Ok && Mode == RowLaunch::WarpEach) {
    Bound = findRowGuard(A);
    Ok = Bound != nullptr;
  }
  if (!Ok) {
    PC.refused(A.WhyLoc.isValid() ? A.WhyLoc : FD->getLocation(), A.Why);
    return std::nullopt;
  }
  const SourceManager &SM = PC.sourceManager();
  const LangOptions &LO = PC.langOpts();
  SourceLocation Loc = A.IndexDecl->getBeginLoc();
  auto refuse = [&](const Twine &Why) -> std::optional<RowBody> {
    PC.refused(Loc, Why);
    return std::nullopt;
  };
  SourceLocation EndLoc = endOfStatement(A.Rest.back(), SM, LO);
  if (Loc.isMacroID() || EndLoc.isInvalid() || EndLoc.isMacroID() ||
      !PC.isEditable(SourceRange(Loc, A.Rest.back()->getEndLoc())))
    return refuse("the kernel body comes from a macro expansion");
  FileID FID = SM.getFileID(Loc);
  if (SM.getFileID(EndLoc) != FID)
    return refuse("the kernel body is not in one file");
  StringRef Buf = SM.getBufferData(FID);
  unsigned Begin = SM.getFileOffset(Loc), End = SM.getFileOffset(EndLoc);

  std::vector<Splice> Edits;
  auto edit = [&](SourceRange R, std::string Text) {
    CharSourceRange CR = Lexer::makeFileCharRange(
        CharSourceRange::getTokenRange(R), SM, LO);
    if (CR.isInvalid() || SM.getFileID(CR.getBegin()) != FID)
      return false;
    unsigned B = SM.getFileOffset(CR.getBegin());
    unsigned E = SM.getFileOffset(CR.getEnd());
    if (B < Begin || E > End)
      return false;
    Edits.push_back({B, E - B, std::move(Text)});
    return true;
  };
  if (Mode == RowLaunch::Same) {
    // The warp's rows in turn: a return leaves one row, not the kernel.
    const Expr *Tid = nullptr;
    usesBuiltin(A.Row->getInit(), cudaidiom::Builtin::ThreadIdx, 'x', &Tid);
    Ok = Tid && edit(Tid->getSourceRange(),
                     "(threadIdx.x - astra_lane + astra_row)");
    for (const ReturnStmt *R : A.Returns)
      Ok = Ok && edit(SourceRange(R->getReturnLoc()), "continue");
  } else {
    // The global warp index; blockDim.x is a multiple of 32 here, so it
    // counts warps from 0 without a gap, and stays as small as the old
    // thread index.
    Ok = edit(stripIntCasts(A.Row->getInit())->getSourceRange(),
              "(blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32)");
  }
  std::string Summary;
  bool FloatSum = false;
  unsigned AccCount = 0;
  auto combine = [&](StringRef V, RedKind K, StringRef Fn, StringRef LI) {
    std::string Sh = "__shfl_xor_sync(0xffffffffu, " + V.str() + ", astra_o)";
    return "\n" + LI.str() +
           "for (int astra_o = 16; astra_o > 0; astra_o /= 2)\n" + LI.str() +
           "  " + V.str() + " = " +
           (K == RedKind::Sum ? V.str() + " + " + Sh
                              : Fn.str() + "(" + V.str() + ", " + Sh + ")") +
           ";\n" + LI.str() + V.str() + " = __shfl_sync(0xffffffffu, " +
           V.str() + ", 0);";
  };
  for (const auto &L : A.Loops) {
    Ok = Ok && edit(L->Init->getSourceRange(), "astra_lane") &&
         edit(L->Inc->getSourceRange(), L->J->getNameAsString() + " += 32");
    std::string Why;
    std::optional<LoopText> LT = loopText(PC, L->F, Why);
    if (!LT)
      return refuse(Why);
    std::string LI = lineIndent(L->F->getForLoc(), PC.sourceManager());
    std::string Comb;
    for (const Reduction &R : L->Reds) {
      std::string V = R.Var->getNameAsString();
      Comb += combine(V, R.Kind, R.Fn, LI);
      if (!Summary.empty())
        Summary += ", ";
      Summary += "'" + V + "' (" + kindName(R.Kind) + ")";
      FloatSum |= R.Kind == RedKind::Sum &&
                  R.Var->getType()->isRealFloatingType();
    }
    for (const MemReduction &M : L->MemReds) {
      std::string V = "astra_acc" + std::to_string(AccCount++);
      QualType ET = M.ASE->getType().getUnqualifiedType();
      std::string Elem = PC.text(M.ASE->getSourceRange());
      Edits.push_back(
          {LT->Begin, 0, ET.getAsString() + " " + V + " = 0;\n" + LI});
      Ok = Ok && edit(M.ASE->getSourceRange(), V);
      Comb += combine(V, RedKind::Sum, "", LI) + "\n" + LI +
              "__syncwarp();\n" + LI + "if (astra_lane == 0)\n" + LI + "  " +
              Elem + " += " + V + ";\n" + LI + "__syncwarp();";
      if (!Summary.empty())
        Summary += ", ";
      Summary += "'" + Elem + "' (+)";
      FloatSum |= ET->isRealFloatingType();
    }
    if (!Comb.empty()) {
      if (LT->End < Begin || LT->End > End)
        Ok = false;
      else
        Edits.push_back({LT->End, 0, Comb});
    }
  }
  for (const Expr *St : A.Stores) {
    SourceLocation After = endOfStatement(St, SM, LO);
    SourceLocation B = SM.getExpansionLoc(St->getBeginLoc());
    if (After.isInvalid() || SM.getFileID(After) != FID ||
        SM.getFileID(B) != FID) {
      Ok = false;
      break;
    }
    unsigned SB = SM.getFileOffset(B), SE = SM.getFileOffset(After);
    Edits.push_back({SB, 0, "{ __syncwarp(); if (astra_lane == 0) "});
    Edits.push_back({SE, 0, " __syncwarp(); }"});
  }
  if (!Ok)
    return refuse("part of the kernel comes from a macro expansion");

  std::optional<std::string> Cooperative =
      spliceText(Buf, Begin, End, std::move(Edits));
  if (!Cooperative)
    return refuse("two rewrites of the kernel body overlap");

  RowBody Out;
  Out.Range = CharSourceRange::getCharRange(Loc, EndLoc);
  Out.Indent = lineIndent(Loc, PC.sourceManager());
  Out.Original = Buf.substr(Begin, End - Begin).str();
  Out.Cooperative = std::move(*Cooperative);
  Out.Row = A.Row;
  Out.Bound = Bound;
  Out.Detail = std::to_string(A.Loops.size()) +
               " row loop(s) strided over the 32 lanes";
  if (!Summary.empty())
    Out.Detail += "; reductions " + Summary + " combined by warp shuffles";
  if (FloatSum)
    Out.Detail += " (floating-point sums are reassociated: each lane adds "
                  "every 32nd element; results may differ in the last bits, "
                  "the verifier's tolerances decide)";
  return Out;
}

} // namespace astra
