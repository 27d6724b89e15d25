//===- SmemTile.cpp -------------------------------------------------------===//
//
// Safety argument. The pass fires only on a kernel (not a template) of this
// form, with no barrier, warp collective, shared memory, inline asm, atomic
// or call of a user function anywhere:
//
//   <declarations>, among them  J j = blockIdx.x * blockDim.x + threadIdx.x;
//                               I i = blockIdx.y * blockDim.y + threadIdx.y;
//   if (G) {                                   // no else
//     PRE                                      // no early exit
//     for (k = 0; k < N; k++) BODY             // or `for (K k = 0; ...)`
//     POST
//   }
//
// i and j never change; G has no side effect and is a conjunction whose
// terms each read i or j (not both) or neither, besides uniform values
// (parameters the kernel never changes, constants, blockIdx/blockDim); N
// is uniform; the declarations of PRE have constant initializers (they are
// hoisted out of the guard); k is used only by the loop, which neither
// changes it nor leaves early, and BODY has no branch (if, ?:, &&, ||,
// loop), so every step runs every statement.
//
// A tile is a load P[e] in BODY whose index e reads k: e reads only k, one
// of i and j, and uniform values, and is affine in them (checked by
// evaluating it at sample points); P is a pointer parameter the kernel
// never writes and never changes. Every buffer the kernel writes is a
// pointer parameter that is not P and does not overlap it: both are
// `__restrict__`, or every launch (all visible, all `<<<>>>`) passes them
// from different variables. So a tile's elements hold the same values
// whenever they are read, and loading them earlier, by another thread of
// the block, reads what the original read.
//
// The rewrite runs, for blocks of the one shape (BX, BY, 1) that every
// launch in the code passes (other shapes run the original code, so a
// launch the analysis missed is still correct), per chunk of TK steps:
// every thread of the block loads its share of each tile (TK x BY elements
// for a tile that reads i, TK x BX for j, TK for neither) into shared
// memory, __syncthreads(), the threads inside G run the chunk's steps of
// BODY in order with each tile load replaced by its shared element,
// __syncthreads(). A load is made only where the original made it: for
// k < N, for a row i whose terms of G hold (those reading neither i nor j
// too), and only when some thread of the block is inside G: that thread's
// column j* then satisfies G's terms on j, so the original thread (i, j*),
// which is in the block, read P[e(i, k)]. Whether some thread is inside is
// a __syncthreads_or(G), or, when every term reading i or j bounds it from
// above (`i < n`, `j <= m`), G at the block's first row and column: each
// such term holds somewhere in the block iff it holds at the smallest
// coordinate, and the terms on i, on j and on neither are independent. (The
// second form needs no barrier with a result, which thread-coarsen
// refuses.)
// Elements outside that range are zero-filled and never read: a thread
// inside G reads only its own row's (column's) elements for k < N. Every
// thread reaches every barrier: the guard is evaluated once into
// `astra_in`, and everything that depends on it stays between barriers.
//
// A buffer the loop writes (`c[E] += ...`) is accessed in BODY only at one
// index E that does not read k (else the pass refuses): the thread keeps
// that element in a register `astra_accN`, read from memory after PRE and
// written back before POST; the other buffers the loop reads do not overlap
// it (the same proof as for the tiles), so no load sees its stale value. That moves the element's intermediate stores
// to the end of the loop; another thread could only see them through a
// data race (no barrier separates them in the original).
//
// What changes: the order of memory accesses, and nothing else. Each
// thread adds the same terms in the same order (k ascending), from the same
// values; the sum is bit-identical unless the compiler contracts the
// register form into fused multiply-adds differently (both are compiled
// with the same contraction rules; the verifier's tolerance decides).
//
//===----------------------------------------------------------------------===//
#include "SmemTile.h"

#include "astra/Support/TextSplice.h"
#include "utils/CudaIdioms.h"
#include "utils/Mutation.h"
#include "utils/PassSupport.h"
#include "utils/SourceText.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/ParentMap.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

using namespace clang;
using namespace llvm;
using namespace astra::cudaidiom;

namespace astra {
namespace {

std::string varName(const ValueDecl *V) {
  return "'" + V->getNameAsString() + "'";
}

/// A tile: the loads of one index expression of one operand.
struct Tile {
  std::vector<const ArraySubscriptExpr *> Uses;
  const ParmVarDecl *Base = nullptr;
  /// The thread coordinate the index reads: 'y' (i), 'x' (j) or 0.
  char Coord = 0;
  /// Whether k walks memory faster than the coordinate (it is then the
  /// tile's loading direction along threadIdx.x).
  bool KFast = true;
  int64_t StrideK = 0, StrideC = 0;
};

/// A buffer the k loop writes, kept in a register over the loop.
struct Accumulator {
  const ParmVarDecl *Base = nullptr;
  std::vector<const ArraySubscriptExpr *> Uses;
};

/// Whether \p E is `blockIdx.D * blockDim.D + threadIdx.D`, operands in
/// any order.
bool isThreadIndex(const Expr *E, char D) {
  const auto *Add = dyn_cast<BinaryOperator>(stripIntCasts(E));
  if (!Add || Add->getOpcode() != BO_Add)
    return false;
  auto IsTid = [&](const Expr *X) {
    BuiltinRef R = matchBuiltin(X);
    return R.Var == cudaidiom::Builtin::ThreadIdx && R.Dim == D;
  };
  auto IsBase = [&](const Expr *X) {
    const auto *Mul = dyn_cast<BinaryOperator>(stripIntCasts(X));
    if (!Mul || Mul->getOpcode() != BO_Mul)
      return false;
    BuiltinRef L = matchBuiltin(Mul->getLHS()), R = matchBuiltin(Mul->getRHS());
    return L.Dim == D && R.Dim == D &&
           ((L.Var == cudaidiom::Builtin::BlockIdx && R.Var == cudaidiom::Builtin::BlockDim) ||
            (L.Var == cudaidiom::Builtin::BlockDim && R.Var == cudaidiom::Builtin::BlockIdx));
  };
  return (IsTid(Add->getRHS()) && IsBase(Add->getLHS())) ||
         (IsTid(Add->getLHS()) && IsBase(Add->getRHS()));
}

/// Whether \p T is `v < e`, `v <= e`, `e > v` or `e >= v` with e not
/// reading v: true for the smallest v of a range if for any.
bool isUpperBound(const Expr *T, const VarDecl *V) {
  const auto *B = dyn_cast<BinaryOperator>(T->IgnoreParenImpCasts());
  if (!B)
    return false;
  const Expr *Var = nullptr, *Other = nullptr;
  if (B->getOpcode() == BO_LT || B->getOpcode() == BO_LE) {
    Var = B->getLHS();
    Other = B->getRHS();
  } else if (B->getOpcode() == BO_GT || B->getOpcode() == BO_GE) {
    Var = B->getRHS();
    Other = B->getLHS();
  } else {
    return false;
  }
  return refersTo(Var, V) && !mentionsDecl(Other, V);
}

/// Every DeclRefExpr under \p S.
std::vector<const DeclRefExpr *> declRefs(const Stmt *S) {
  std::vector<const DeclRefExpr *> Out;
  std::function<void(const Stmt *)> Walk = [&](const Stmt *X) {
    if (!X)
      return;
    if (const auto *R = dyn_cast<DeclRefExpr>(X))
      Out.push_back(R);
    for (const Stmt *C : X->children())
      Walk(C);
  };
  Walk(S);
  return Out;
}

/// Splits a `&&` tree into its terms.
void conjuncts(const Expr *E, std::vector<const Expr *> &Out) {
  const auto *B = dyn_cast<BinaryOperator>(E->IgnoreParenImpCasts());
  if (B && B->getOpcode() == BO_LAnd) {
    conjuncts(B->getLHS(), Out);
    conjuncts(B->getRHS(), Out);
    return;
  }
  Out.push_back(E);
}

class TileMatcher {
public:
  TileMatcher(PassContext &PC, const FunctionDecl *FD, int64_t TK)
      : PC(PC), Ctx(PC.astContext()), SM(PC.sourceManager()), FD(FD),
        Body(dyn_cast_or_null<CompoundStmt>(FD->getBody())), PM(FD->getBody()),
        TK(TK) {}

  bool run();

  bool fail(SourceLocation Loc, const Twine &Msg) {
    if (Why.empty()) {
      Why = Msg.str();
      WhyLoc = Loc;
    }
    return false;
  }

  PassContext &PC;
  ASTContext &Ctx;
  const SourceManager &SM;
  const FunctionDecl *FD;
  const CompoundStmt *Body;
  ParentMap PM;
  int64_t TK;

  std::string Why;
  SourceLocation WhyLoc;

  const VarDecl *I = nullptr, *J = nullptr, *K = nullptr;
  const IfStmt *Guard = nullptr;
  std::vector<const Expr *> Terms;
  /// Every term of G reading i or j bounds it from above (`i < n`,
  /// `j <= m`): G holds for some thread of a block iff it holds at the
  /// block's first row and column, so no barrier is needed to tell.
  bool UpperBounds = true;
  const ForStmt *Loop = nullptr;
  bool KDeclaredInLoop = false;
  const Expr *Bound = nullptr;
  std::vector<const DeclStmt *> PreDecls;
  std::vector<const Stmt *> Pre, Post;
  std::vector<Tile> Tiles;
  std::vector<Accumulator> Accs;
  std::vector<const ParmVarDecl *> Written;
  /// Buffers the loop reads without tiling them (indices without k).
  std::vector<const ParmVarDecl *> OtherReads;
  std::array<int64_t, 3> Block = {0, 0, 0};

private:
  bool matchLoop(const Stmt *Then);
  bool checkKernel();
  bool checkBody(const Stmt *S);
  bool checkAccesses();
  bool checkAliasing();
  bool checkLaunches();
  /// Whether \p E reads only \p Allowed variables and uniform values; the
  /// first other read goes to the refusal, described as \p What.
  bool uniformBut(const Expr *E, std::initializer_list<const VarDecl *> Allowed,
                  const Twine &What);
  std::optional<int64_t> eval(const Expr *E,
                              const std::map<const VarDecl *, int64_t> &At,
                              unsigned Depth = 0) const;
};

bool TileMatcher::uniformBut(const Expr *E,
                             std::initializer_list<const VarDecl *> Allowed,
                             const Twine &What) {
  if (!E)
    return true;
  E = E->IgnoreParens();
  BuiltinRef B = matchBuiltin(E);
  if (B) {
    if (B.Var == cudaidiom::Builtin::ThreadIdx)
      return fail(E->getBeginLoc(),
                  What + " reads threadIdx other than through the thread's "
                         "row and column");
    return true;
  }
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    const ValueDecl *D = DRE->getDecl();
    if (isa<EnumConstantDecl>(D))
      return true;
    if (const auto *V = dyn_cast<VarDecl>(D)) {
      if (std::find(Allowed.begin(), Allowed.end(), V) != Allowed.end())
        return true;
      if (const auto *P = dyn_cast<ParmVarDecl>(V))
        if (!P->getType()->isPointerType() && !mayModify(Body, P))
          return true;
      if (V->isConstexpr() ||
          (V->getType().isConstQualified() && V->hasGlobalStorage() &&
           V->getInit() && V->getInit()->isIntegerConstantExpr(Ctx)))
        return true;
      return fail(E->getBeginLoc(),
                  What + " reads " + varName(V) +
                      ", which is neither the thread's row or column, the "
                      "loop variable, nor a value every thread shares");
    }
    return fail(E->getBeginLoc(), What + " names " + varName(D));
  }
  if (isa<ArraySubscriptExpr>(E) || isa<MemberExpr>(E) || isa<CallExpr>(E) ||
      isa<CXXMemberCallExpr>(E))
    return fail(E->getBeginLoc(), What + " reads memory or calls a function");
  if (const auto *UO = dyn_cast<UnaryOperator>(E))
    if (UO->getOpcode() == UO_Deref || UO->getOpcode() == UO_AddrOf ||
        UO->isIncrementDecrementOp())
      return fail(E->getBeginLoc(), What + " dereferences, takes an address "
                                           "or increments");
  if (const auto *BO = dyn_cast<BinaryOperator>(E))
    if (BO->isAssignmentOp() || BO->getOpcode() == BO_Comma)
      return fail(E->getBeginLoc(), What + " assigns");
  for (const Stmt *C : E->children())
    if (const auto *CE = dyn_cast_or_null<Expr>(C))
      if (!uniformBut(CE, Allowed, What))
        return false;
  return true;
}

std::optional<int64_t>
TileMatcher::eval(const Expr *E, const std::map<const VarDecl *, int64_t> &At,
                  unsigned Depth) const {
  return evalIntAt(
      E,
      [&](const Expr *L, unsigned D) -> std::optional<int64_t> {
        if (BuiltinRef B = matchBuiltin(L)) {
          // blockIdx (3, 5), blocks of 32 x 8: a point away from every edge.
          switch (B.Var) {
          case cudaidiom::Builtin::BlockIdx:
            return B.Dim == 'x' ? 3 : B.Dim == 'y' ? 5 : 0;
          case cudaidiom::Builtin::BlockDim:
            return B.Dim == 'x' ? 32 : B.Dim == 'y' ? 8 : 1;
          case cudaidiom::Builtin::GridDim:
            return 40;
          default:
            return std::nullopt;
          }
        }
        const auto *DRE = dyn_cast<DeclRefExpr>(L);
        if (!DRE)
          return std::nullopt;
        if (const auto *EC = dyn_cast<EnumConstantDecl>(DRE->getDecl()))
          return EC->getInitVal().getExtValue();
        const auto *V = dyn_cast<VarDecl>(DRE->getDecl());
        if (!V)
          return std::nullopt;
        auto It = At.find(V);
        if (It != At.end())
          return It->second;
        if (const auto *P = dyn_cast<ParmVarDecl>(V)) {
          // Distinct sizes, none a small multiple of another.
          if (!P->getType()->isIntegerType())
            return std::nullopt;
          return 1000 + 37 * int64_t(P->getFunctionScopeIndex());
        }
        if (V->getInit())
          return eval(V->getInit(), At, D + 1);
        return std::nullopt;
      },
      Depth);
}

bool TileMatcher::run() {
  if (!Body || Body->body_empty())
    return fail(FD->getLocation(), "the kernel has no body");
  std::string C = findCollective(Body, SM);
  if (!C.empty())
    return fail(FD->getLocation(), "the kernel " + C +
                                       ": the pass adds barriers of its own "
                                       "and does not reason about others");
  std::string Sh = findSharedMemory(Body, SM);
  if (!Sh.empty())
    return fail(FD->getLocation(),
                "the kernel " + Sh + ": it is tiled already");

  // The names the rewrite declares must not capture the kernel's.
  for (const ParmVarDecl *P : FD->parameters())
    if (P->getName().starts_with("astra_"))
      return fail(P->getLocation(), "a parameter is named " + varName(P) +
                                        ", a prefix the pass's names use");
  for (const DeclRefExpr *R : declRefs(Body))
    if (R->getDecl()->getName().starts_with("astra_"))
      return fail(R->getBeginLoc(), "the kernel uses " + varName(R->getDecl()) +
                                        ", a prefix the pass's names use");

  // Declarations, then the guard.
  const Stmt *Last = Body->body_back();
  for (const Stmt *S : Body->body()) {
    if (S == Last)
      break;
    const auto *DS = dyn_cast<DeclStmt>(S);
    if (!DS)
      return fail(S->getBeginLoc(),
                  "a statement other than a declaration before the guard (the "
                  "pass takes a body of declarations and one `if (i < .. && "
                  "j < ..) { ... }`; an early `return` is not handled)");
    for (const Decl *D : DS->decls())
      if (const auto *V = dyn_cast<VarDecl>(D); V && V->getInit() &&
                                                 V->getType()->isIntegerType()) {
        if (!I && isThreadIndex(V->getInit(), 'y'))
          I = V;
        else if (!J && isThreadIndex(V->getInit(), 'x'))
          J = V;
      }
  }
  if (!I || !J)
    return fail(FD->getLocation(),
                "no 2-D thread index: the pass needs `j = blockIdx.x * "
                "blockDim.x + threadIdx.x` and `i = blockIdx.y * blockDim.y + "
                "threadIdx.y` declared at the top of the kernel (a 1-D "
                "launch, or a flat index split by `/` and `%`, is not tiled)");
  for (const VarDecl *V : {I, J})
    if (mayModify(Body, V))
      return fail(V->getLocation(),
                  "the thread index " + varName(V) + " is changed");
  Guard = dyn_cast<IfStmt>(Last);
  if (!Guard)
    return fail(Last->getBeginLoc(),
                "the body does not end in the guard `if (i < .. && j < ..) "
                "{ ... }`");
  if (Guard->getElse() || Guard->getInit() || Guard->getConditionVariable() ||
      Guard->isConstexpr() || Guard->isConsteval())
    return fail(Guard->getBeginLoc(), "the guard has an else branch, an "
                                      "initializer or a declaration");
  if (Guard->getCond()->HasSideEffects(Ctx))
    return fail(Guard->getBeginLoc(), "the guard has side effects");
  conjuncts(Guard->getCond(), Terms);
  for (const Expr *T : Terms) {
    if (mentionsDecl(T, I) && mentionsDecl(T, J))
      return fail(T->getBeginLoc(),
                  "a term of the guard reads both the row " + varName(I) +
                      " and the column " + varName(J) +
                      ": which rows and columns of a tile exist could not be "
                      "told apart");
    if (!uniformBut(T, {I, J}, "the guard"))
      return false;
    if (mentionsDecl(T, I) || mentionsDecl(T, J))
      UpperBounds &= isUpperBound(T, mentionsDecl(T, I) ? I : J);
  }
  if (!matchLoop(Guard->getThen()))
    return false;
  if (!checkBody(Loop->getBody()) || !checkAccesses() || !checkAliasing())
    return false;
  return checkLaunches();
}

bool TileMatcher::matchLoop(const Stmt *Then) {
  std::vector<const Stmt *> Stmts;
  if (const auto *CS = dyn_cast<CompoundStmt>(Then))
    Stmts.assign(CS->body_begin(), CS->body_end());
  else
    Stmts.push_back(Then);
  for (const Stmt *S : Stmts) {
    if (const auto *F = dyn_cast<ForStmt>(S)) {
      if (Loop)
        return fail(F->getBeginLoc(),
                    "a second loop in the guard (the pass tiles one k loop)");
      Loop = F;
      continue;
    }
    if (Loop) {
      Post.push_back(S);
      continue;
    }
    if (const Stmt *X = findEarlyExit(S, /*ContinueExits=*/true))
      return fail(X->getBeginLoc(),
                  "leaves the guard before the k loop: the threads of a "
                  "block must all reach its barriers");
    if (const auto *DS = dyn_cast<DeclStmt>(S)) {
      for (const Decl *D : DS->decls()) {
        const auto *V = dyn_cast<VarDecl>(D);
        if (!V || !V->getType()->isScalarType() || V->isStaticLocal())
          return fail(D->getLocation(),
                      "a declaration before the k loop that is not a scalar "
                      "local");
        if (const Expr *Init = V->getInit())
          if (!Init->isConstantInitializer(Ctx, false))
            return fail(V->getLocation(),
                        "the declaration of " + varName(V) +
                            " before the k loop has an initializer that is "
                            "not a constant (the pass moves it out of the "
                            "guard)");
      }
      // Hoisted above the statements before it: none of them may name
      // another variable of the same name.
      for (const Decl *D : DS->decls())
        for (const Stmt *Before : Pre)
          for (const DeclRefExpr *R : declRefs(Before))
            if (R->getDecl() != D &&
                R->getDecl()->getName() == cast<VarDecl>(D)->getName())
              return fail(D->getLocation(),
                          "the declaration of " +
                              varName(cast<VarDecl>(D)) +
                              " would hide the variable of that name that an "
                              "earlier statement reads (the pass moves it "
                              "up)");
      PreDecls.push_back(DS);
      continue;
    }
    Pre.push_back(S);
  }
  if (!Loop)
    return fail(Guard->getBeginLoc(), "no loop in the guard");

  auto Bad = [&](const Twine &What) {
    return fail(Loop->getBeginLoc(),
                "not a k loop `for (k = 0; k < n; k++)`: " + What);
  };
  const Expr *Start = nullptr;
  if (const auto *DS = dyn_cast_or_null<DeclStmt>(Loop->getInit())) {
    if (DS->isSingleDecl())
      K = dyn_cast<VarDecl>(DS->getSingleDecl());
    Start = K ? K->getInit() : nullptr;
    KDeclaredInLoop = true;
  } else if (const auto *As = dyn_cast_or_null<BinaryOperator>(Loop->getInit());
             As && As->getOpcode() == BO_Assign) {
    if (const auto *DRE =
            dyn_cast<DeclRefExpr>(As->getLHS()->IgnoreParenImpCasts()))
      K = dyn_cast<VarDecl>(DRE->getDecl());
    Start = As->getRHS();
    if (K && (!isOwnLocal(K) || isa<ParmVarDecl>(K)))
      return Bad("the loop variable is not a local of the thread");
  }
  if (!K || !K->getType()->isIntegerType() || !Start)
    return Bad("the loop does not start one integer variable");
  auto Zero = constInt(Ctx, Start);
  if (!Zero || *Zero != 0)
    return Bad("the loop does not start at 0");
  const auto *Cond = dyn_cast_or_null<BinaryOperator>(
      Loop->getCond() ? Loop->getCond()->IgnoreParenImpCasts() : nullptr);
  if (!Cond || Cond->getOpcode() != BO_LT || !refersTo(Cond->getLHS(), K))
    return Bad("the condition is not `k < n`");
  Bound = Cond->getRHS();
  if (Bound->HasSideEffects(Ctx) || !uniformBut(Bound, {}, "the loop's bound"))
    return false;
  const Expr *Inc = Loop->getInc() ? Loop->getInc()->IgnoreParenImpCasts()
                                   : nullptr;
  bool IncOk = false;
  if (const auto *U = dyn_cast_or_null<UnaryOperator>(Inc))
    IncOk = U->isIncrementOp() && refersTo(U->getSubExpr(), K);
  else if (const auto *B = dyn_cast_or_null<BinaryOperator>(Inc))
    if (B->getOpcode() == BO_AddAssign && refersTo(B->getLHS(), K))
      if (auto One = constInt(Ctx, B->getRHS()))
        IncOk = *One == 1;
  if (!IncOk)
    return Bad("the step is not `k++`, `++k` or `k += 1`");
  if (const Stmt *X = findEarlyExit(Loop->getBody(), /*ContinueExits=*/false))
    return fail(X->getBeginLoc(),
                "leaves the k loop early (return, break or goto)");
  if (mayModify(Loop->getBody(), K))
    return Bad("the body changes the loop variable");
  // k is the loop's alone: its value after the loop is not kept.
  for (const DeclRefExpr *R : referencesTo(Body, K))
    if (R->getBeginLoc() < Loop->getBeginLoc() ||
        Loop->getEndLoc() < R->getBeginLoc())
      return fail(R->getBeginLoc(), "the loop variable " + varName(K) +
                                        " is used outside the k loop");
  return true;
}

/// No branch in the loop body (each step runs every load), no call but a
/// library function without effects, no access but a subscript of a
/// pointer parameter.
bool TileMatcher::checkBody(const Stmt *S) {
  if (!S)
    return true;
  if (isa<IfStmt, SwitchStmt, ForStmt, WhileStmt, DoStmt, CXXForRangeStmt,
          ConditionalOperator, BinaryConditionalOperator>(S))
    return fail(S->getBeginLoc(),
                "a branch or loop inside the k loop: the pass needs every "
                "step to read every operand");
  if (const auto *B = dyn_cast<BinaryOperator>(S))
    if (B->getOpcode() == BO_LAnd || B->getOpcode() == BO_LOr)
      return fail(S->getBeginLoc(),
                  "`&&` or `||` inside the k loop: the pass needs every step "
                  "to read every operand");
  for (const Stmt *C : S->children())
    if (!checkBody(C))
      return false;
  return true;
}

bool TileMatcher::checkAccesses() {
  if (!checkKernel())
    return false;
  // Loads and stores in the loop.
  std::vector<const ArraySubscriptExpr *> InLoop;
  std::function<void(const Stmt *)> Collect = [&](const Stmt *S) {
    if (!S)
      return;
    if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(S))
      InLoop.push_back(ASE);
    for (const Stmt *C : S->children())
      Collect(C);
  };
  Collect(Loop->getBody());
  for (const ArraySubscriptExpr *ASE : InLoop) {
    const auto *DRE =
        dyn_cast<DeclRefExpr>(ASE->getBase()->IgnoreParenImpCasts());
    const auto *P = DRE ? dyn_cast<ParmVarDecl>(DRE->getDecl()) : nullptr;
    if (!P || !P->getType()->isPointerType())
      return fail(ASE->getBeginLoc(), "a subscript of something other than a "
                                      "pointer parameter in the k loop");
    const Expr *Idx = ASE->getIdx();
    bool ReadsK = mentionsDecl(Idx, K);
    Use U = accessUse(ASE, PM);
    bool IsWritten = is_contained(Written, P);
    if (ReadsK) {
      if (U != Use::Read)
        return fail(ASE->getBeginLoc(),
                    "a store indexed by the loop variable " + varName(K) +
                        " (only loads follow k)");
      if (IsWritten)
        return fail(ASE->getBeginLoc(),
                    "the operand " + varName(P) +
                        " is written in the kernel: a tile loaded ahead could "
                        "miss a store");
      if (!uniformBut(Idx, {I, J, K}, "the operand's index"))
        return false;
      bool ReadsI = mentionsDecl(Idx, I), ReadsJ = mentionsDecl(Idx, J);
      if (ReadsI && ReadsJ)
        return fail(ASE->getBeginLoc(),
                    "the load reads the row, the column and k: no other "
                    "thread of the block shares it");
      Tile *Same = nullptr;
      for (Tile &T : Tiles)
        if (T.Base == P && sameExpr(Ctx, T.Uses.front()->getIdx(), Idx))
          Same = &T;
      if (Same) {
        Same->Uses.push_back(ASE);
        continue;
      }
      Tile T;
      T.Base = P;
      T.Uses.push_back(ASE);
      T.Coord = ReadsI ? 'y' : ReadsJ ? 'x' : 0;
      const VarDecl *Cv = ReadsI ? I : ReadsJ ? J : nullptr;
      auto F = [&](int64_t Kv, int64_t C) {
        std::map<const VarDecl *, int64_t> At = {{K, Kv}};
        if (Cv)
          At[Cv] = C;
        return eval(Idx, At);
      };
      auto F11 = F(1, 1), F21 = F(2, 1), F12 = F(1, 2), F35 = F(3, 5),
           F72 = F(7, 2);
      if (!F11 || !F21 || !F12 || !F35 || !F72)
        return fail(ASE->getBeginLoc(),
                    "the operand's index is not an integer expression the "
                    "pass can evaluate");
      T.StrideK = *F21 - *F11;
      T.StrideC = *F12 - *F11;
      if (*F35 != *F11 + 2 * T.StrideK + 4 * T.StrideC ||
          *F72 != *F11 + 6 * T.StrideK + T.StrideC || T.StrideK == 0)
        return fail(ASE->getBeginLoc(),
                    "the operand's index is not affine in k and the thread's "
                    "row or column");
      T.KFast = !Cv || std::llabs(T.StrideK) <= std::llabs(T.StrideC);
      Tiles.push_back(std::move(T));
      continue;
    }
    if (!IsWritten) {
      // A load that stays: it must not see an element the loop keeps in a
      // register (checked against the accumulators in checkAliasing).
      if (!is_contained(OtherReads, P))
        OtherReads.push_back(P);
      continue;
    }
    if (!uniformBut(Idx, {I, J}, "the index of the written buffer"))
      return false;
    Accumulator *A = nullptr;
    for (Accumulator &X : Accs)
      if (X.Base == P)
        A = &X;
    if (A) {
      if (!sameExpr(Ctx, A->Uses.front()->getIdx(), Idx))
        return fail(ASE->getBeginLoc(),
                    "the k loop accesses " + varName(P) +
                        " at two indices; the pass keeps one element in a "
                        "register");
      A->Uses.push_back(ASE);
      continue;
    }
    QualType ET = ASE->getType();
    if (!ET->isArithmeticType() || ET.isVolatileQualified())
      return fail(ASE->getBeginLoc(), "the element type of " + varName(P) +
                                          " is not arithmetic");
    Accs.push_back({P, {ASE}});
  }
  if (Tiles.empty())
    return fail(Loop->getBeginLoc(),
                "no load in the k loop follows k: nothing to share between "
                "the threads of a block");
  return true;
}

/// What the whole kernel does with memory: the buffers it writes (pointer
/// parameters only) and no effect the pass cannot follow.
bool TileMatcher::checkKernel() {
  std::function<bool(const Stmt *)> Walk = [&](const Stmt *S) -> bool {
    if (!S)
      return true;
    // threadIdx.y and the like call the built-in's accessor.
    if (isa<PseudoObjectExpr>(S) && matchBuiltin(cast<Expr>(S)))
      return true;
    if (isa<AsmStmt>(S))
      return fail(S->getBeginLoc(), "inline asm");
    if (isa<LambdaExpr>(S))
      return fail(S->getBeginLoc(), "a lambda");
    if (const auto *CE = dyn_cast<CallExpr>(S)) {
      StringRef Name = libraryCalleeName(SM, Ctx, CE);
      if (Name.empty())
        return fail(CE->getBeginLoc(),
                    "calls a function that is not a library function (it "
                    "could write an operand)");
      if (systemCallHasEffect(Name))
        return fail(CE->getBeginLoc(),
                    "calls " + Name + ", which has an effect beyond its result");
    }
    if (const auto *UO = dyn_cast<UnaryOperator>(S))
      if (UO->getOpcode() == UO_Deref)
        return fail(UO->getBeginLoc(), "a pointer dereference `*p` (only "
                                       "subscripts `p[i]` are followed)");
    if (const auto *ME = dyn_cast<MemberExpr>(S))
      if (ME->isArrow())
        return fail(ME->getBeginLoc(), "an access through `->`");
    if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(S)) {
      Use U = accessUse(ASE, PM);
      if (U == Use::Escape)
        return fail(ASE->getBeginLoc(), "the address of an element escapes");
      if (U != Use::Read) {
        const auto *DRE =
            dyn_cast<DeclRefExpr>(ASE->getBase()->IgnoreParenImpCasts());
        const auto *P = DRE ? dyn_cast<ParmVarDecl>(DRE->getDecl()) : nullptr;
        if (!P || !P->getType()->isPointerType())
          return fail(ASE->getBeginLoc(),
                      "a store through something other than a pointer "
                      "parameter: the pass cannot tell which buffer it "
                      "writes");
        if (mayModify(Body, P))
          return fail(ASE->getBeginLoc(), "the output pointer " + varName(P) +
                                              " is changed in the kernel");
        if (!is_contained(Written, P))
          Written.push_back(P);
      }
    }
    for (const Stmt *C : S->children())
      if (!Walk(C))
        return false;
    return true;
  };
  return Walk(Body);
}

bool TileMatcher::checkAliasing() {
  std::optional<KernelLaunches> KL;
  // \p W, written, and \p R, read as \p How, do not overlap.
  auto Apart = [&](const ParmVarDecl *W, const ParmVarDecl *R,
                   SourceLocation At, StringRef How) {
    if (W == R)
      return fail(At, varName(W) + " is written and " + How.str());
    if (R->getType().isRestrictQualified() && W->getType().isRestrictQualified())
      return true;
    if (!KL)
      KL = findLaunches(Ctx, FD);
    auto Why = [&](const Twine &What) {
      return fail(At, varName(W) + " is written and " + varName(R) + " " +
                          How + ": neither is `__restrict__` and " + What +
                          " (restrict-const may prove it)");
    };
    if (!KL->allVisible())
      return Why("the file may not show every launch (" + KL->Hidden + ")");
    if (KL->chevrons().size() != KL->Launches.size())
      return Why("a launch goes through a launch API");
    for (const CUDAKernelCallExpr *E : KL->chevrons())
      if (launchArgsMayAlias(E, W->getFunctionScopeIndex(),
                             R->getFunctionScopeIndex()))
        return Why("the launch at " + posText(PC, E->getBeginLoc()) +
                   " may pass overlapping buffers");
    return true;
  };
  for (const Tile &T : Tiles) {
    if (mayModify(Body, T.Base))
      return fail(T.Uses.front()->getBeginLoc(),
                  "the operand pointer " + varName(T.Base) +
                      " is changed in the kernel");
    for (const ParmVarDecl *W : Written)
      if (!Apart(W, T.Base, T.Uses.front()->getBeginLoc(), "tiled"))
        return false;
  }
  for (const Accumulator &A : Accs)
    for (const ParmVarDecl *R : OtherReads)
      if (!Apart(A.Base, R, A.Uses.front()->getBeginLoc(),
                 "read in the k loop, where the written element is kept in a "
                 "register"))
        return false;
  return true;
}

bool TileMatcher::checkLaunches() {
  KernelLaunches KL = findLaunches(Ctx, FD);
  SourceLocation At = Guard->getBeginLoc();
  if (!KL.allVisible())
    return fail(At, "the file may not show every launch (" + KL.Hidden +
                        "): the tile's shape is the block every launch "
                        "passes");
  std::optional<std::array<int64_t, 3>> Shape;
  for (const LaunchFact &L : KL.Launches) {
    std::optional<std::array<int64_t, 3>> D;
    if (L.Block.Readable)
      D = L.Block.constant();
    if (!D)
      return fail(At, L.where() + " passes a block that is not a "
                                  "compile-time constant (" +
                          (L.Block.Readable ? L.Block.unknown()
                                            : std::string("not readable")) +
                          "): the tile's shape is the block every launch "
                          "passes");
    if (Shape && *Shape != *D)
      return fail(At, formatv("the launches pass blocks of ({0}, {1}, {2}) "
                              "and ({3}, {4}, {5}); the tiled path is "
                              "written for one shape",
                              (*Shape)[0], (*Shape)[1], (*Shape)[2], (*D)[0],
                              (*D)[1], (*D)[2])
                          .str());
    Shape = D;
  }
  if (!Shape)
    return fail(At, "no launch of the kernel in this file");
  Block = *Shape;
  if (Block[1] < 2 || Block[2] != 1)
    return fail(At, formatv("the launches pass blocks of ({0}, {1}, {2}): "
                            "the pass tiles 2-D blocks (a 1-D launch has "
                            "one row per block, nothing to share along it)",
                            Block[0], Block[1], Block[2])
                        .str());
  if (Block[0] < 2)
    return fail(At, "the launches pass blocks one thread wide");
  int64_t Bytes = 0;
  for (const Tile &T : Tiles) {
    int64_t Ec = T.Coord == 'y' ? Block[1] : T.Coord == 'x' ? Block[0] : 1;
    Bytes += TK * (Ec + 1) *
             Ctx.getTypeSizeInChars(T.Uses.front()->getType()).getQuantity();
  }
  if (Bytes > 48 * 1024)
    return fail(At, formatv("the tiles would take {0} bytes of shared memory "
                            "(at most 49152 without an opt-in)",
                            Bytes)
                        .str());
  return true;
}

/// Text of the file between two file locations.
std::optional<std::string> fileText(const PassContext &PC, SourceLocation B,
                                    SourceLocation E) {
  const SourceManager &SM = PC.sourceManager();
  if (B.isInvalid() || E.isInvalid() || B.isMacroID() || E.isMacroID() ||
      SM.getFileID(B) != SM.getFileID(E))
    return std::nullopt;
  unsigned Ob = SM.getFileOffset(B), Oe = SM.getFileOffset(E);
  if (Oe < Ob)
    return std::nullopt;
  return SM.getBufferData(SM.getFileID(B)).slice(Ob, Oe).str();
}

} // namespace

void SmemTilePass::run(PassContext &PC) {
  const FunctionDecl *FD = PC.kernel().Decl;
  if (!FD || !FD->hasBody())
    return;
  if (PC.kernel().isTemplate()) {
    PC.refused(FD->getLocation(), "template kernels are not handled");
    return;
  }
  int64_t TK = PC.options().intParam(name(), "k", 32);
  TileMatcher M(PC, FD, TK);
  if (!M.run()) {
    PC.refused(M.WhyLoc.isValid() ? M.WhyLoc : FD->getLocation(), M.Why);
    return;
  }
  const SourceManager &SM = PC.sourceManager();
  const LangOptions &LO = PC.langOpts();
  const ASTContext &Ctx = PC.astContext();
  SourceLocation Loc = M.Guard->getBeginLoc();
  auto refuse = [&](const Twine &Why) { PC.refused(Loc, Why); };

  // Text of a token range (macros inside are kept as written).
  auto tokText = [&](SourceRange R) -> std::optional<std::string> {
    CharSourceRange CR = Lexer::makeFileCharRange(
        CharSourceRange::getTokenRange(R), SM, LO);
    if (CR.isInvalid())
      return std::nullopt;
    return fileText(PC, CR.getBegin(), CR.getEnd());
  };
  auto stmtText = [&](const Stmt *S) -> std::optional<std::string> {
    SourceLocation E = endOfStatement(S, SM, LO);
    return fileText(PC, SM.getExpansionLoc(S->getBeginLoc()), E);
  };

  // The loop body with each tile load and accumulator access replaced.
  const Stmt *LB = M.Loop->getBody();
  SourceLocation LBegin = SM.getExpansionLoc(LB->getBeginLoc());
  SourceLocation LEnd = endOfStatement(LB, SM, LO);
  auto LoopBodyText = fileText(PC, LBegin, LEnd);
  if (!LoopBodyText)
    return refuse("the k loop's body is not plain file text");
  unsigned LOff = SM.getFileOffset(LBegin);
  std::vector<Splice> Edits;
  auto edit = [&](const Expr *E, std::string Text) {
    CharSourceRange CR = Lexer::makeFileCharRange(
        CharSourceRange::getTokenRange(E->getSourceRange()), SM, LO);
    if (CR.isInvalid() || SM.getFileID(CR.getBegin()) != SM.getFileID(LBegin))
      return false;
    unsigned B = SM.getFileOffset(CR.getBegin()),
             En = SM.getFileOffset(CR.getEnd());
    if (B < LOff || En > LOff + LoopBodyText->size())
      return false;
    Edits.push_back({B - LOff, En - B, std::move(Text)});
    return true;
  };
  PrintingPolicy PP(LO);
  PP.SuppressTagKeyword = true;
  auto typeText = [&](QualType T) {
    return T.getUnqualifiedType().getAsString(PP);
  };
  std::string KT = typeText(M.K->getType());
  std::string T = std::to_string(TK);
  std::string BX = std::to_string(M.Block[0]), BY = std::to_string(M.Block[1]);
  for (size_t N = 0; N < M.Tiles.size(); ++N) {
    const Tile &Ti = M.Tiles[N];
    std::string Own = Ti.Coord == 'y'   ? "threadIdx.y"
                      : Ti.Coord == 'x' ? "threadIdx.x"
                                        : "0";
    for (const ArraySubscriptExpr *U : Ti.Uses)
      if (!edit(U, "astra_tile" + std::to_string(N) + "[" +
                       M.K->getNameAsString() + " - astra_k0][" + Own + "]"))
        return refuse("a load of the k loop comes from a macro expansion");
  }
  for (size_t N = 0; N < M.Accs.size(); ++N)
    for (const ArraySubscriptExpr *U : M.Accs[N].Uses)
      if (!edit(U, "astra_acc" + std::to_string(N)))
        return refuse("an access of the k loop comes from a macro expansion");
  std::optional<std::string> NewBody =
      spliceText(*LoopBodyText, std::move(Edits));
  if (!NewBody)
    return refuse("internal error: overlapping edits of the k loop");

  auto CondText = tokText(M.Guard->getCond()->getSourceRange());
  auto BoundText = tokText(M.Bound->getSourceRange());
  auto GuardText = stmtText(M.Guard);
  if (!CondText || !BoundText || !GuardText)
    return refuse("the guard or the loop's bound is not plain file text");
  std::string Nb = "(" + *BoundText + ")";
  std::string LoopIndent =
      lineIndent(M.Loop->getBeginLoc(), PC.sourceManager());
  std::string KName = M.K->getNameAsString();

  std::string In = lineIndent(Loc, PC.sourceManager());
  std::string Out;
  auto line = [&](unsigned Depth, const Twine &S) {
    Out += In + std::string(2 * Depth, ' ') + S.str() + "\n";
  };
  // A copied statement whose line is indented by \p Was: its first line at
  // Depth, the rest moved from Was to Depth (or, for a loop body, to
  // \p RestDepth: its braces line up with the loop's).
  auto block = [&](unsigned Depth, StringRef S, StringRef Was,
                   std::optional<unsigned> RestDepth = std::nullopt) {
    std::string Pad = In + std::string(2 * Depth, ' ');
    std::string Rest = In + std::string(2 * RestDepth.value_or(Depth), ' ');
    SmallVector<StringRef> Lines;
    S.split(Lines, '\n');
    for (size_t N = 0; N < Lines.size(); ++N) {
      StringRef L = Lines[N];
      if (N == 0) {
        Out += Pad + L.str();
      } else {
        Out += "\n";
        if (!L.trim().empty())
          Out += Rest + (L.starts_with(Was) ? L.drop_front(Was.size()) : L).str();
      }
    }
    Out += "\n";
  };
  auto indentOf = [&](const Stmt *S) {
    return lineIndent(S->getBeginLoc(), PC.sourceManager());
  };

  // Header.
  std::string Names;
  for (size_t N = 0; N < M.Tiles.size(); ++N) {
    std::string Nm = "'" + M.Tiles[N].Base->getNameAsString() + "'";
    if (Names.find(Nm) == std::string::npos)
      Names += (Names.empty() ? "" : ", ") + Nm;
  }
  Out += "if (blockDim.x == " + BX + " && blockDim.y == " + BY +
         " && blockDim.z == 1) {\n";
  line(1, "// smem-tile: " + Names + " read from shared tiles of " + T +
              " steps of '" + KName + "',");
  line(1, "// loaded once per block; other block shapes run the code below.");
  for (size_t N = 0; N < M.Tiles.size(); ++N) {
    const Tile &Ti = M.Tiles[N];
    std::string Ec = Ti.Coord == 'y' ? BY : Ti.Coord == 'x' ? BX : "1";
    line(1, "__shared__ " + typeText(Ti.Uses.front()->getType()) +
                " astra_tile" + std::to_string(N) + "[" + T + "][" + Ec +
                " + 1];");
  }
  line(1, "const bool astra_in = " + *CondText + ";");
  for (const DeclStmt *DS : M.PreDecls) {
    auto S = stmtText(DS);
    if (!S)
      return refuse("a declaration in the guard is not plain file text");
    block(1, *S, indentOf(DS));
  }
  for (size_t N = 0; N < M.Accs.size(); ++N)
    line(1, typeText(M.Accs[N].Uses.front()->getType()) + " astra_acc" +
                std::to_string(N) + " = 0;");
  if (!M.Pre.empty() || !M.Accs.empty()) {
    line(1, "if (astra_in) {");
    for (const Stmt *S : M.Pre) {
      auto Tx = stmtText(S);
      if (!Tx)
        return refuse("a statement in the guard is not plain file text");
      block(2, *Tx, indentOf(S));
    }
    for (size_t N = 0; N < M.Accs.size(); ++N) {
      auto E = tokText(M.Accs[N].Uses.front()->getSourceRange());
      if (!E)
        return refuse("an access of the k loop is not plain file text");
      line(2, "astra_acc" + std::to_string(N) + " = " + *E + ";");
    }
    line(1, "}");
  }
  if (M.UpperBounds) {
    // The block's first row and column: inside G iff any thread is.
    line(1, "bool astra_live;");
    line(1, "{");
    line(2, "const " + typeText(M.I->getType()) + " " + M.I->getNameAsString() +
                " = blockIdx.y * blockDim.y;");
    line(2, "const " + typeText(M.J->getType()) + " " + M.J->getNameAsString() +
                " = blockIdx.x * blockDim.x;");
    line(2, "astra_live = " + *CondText + ";");
    line(1, "}");
    line(1, "if (astra_live) {");
  } else {
    line(1, "if (__syncthreads_or(astra_in)) {");
  }
  line(2, "for (" + KT + " astra_k0 = 0; astra_k0 < " + Nb + "; astra_k0 += " +
              T + ") {");
  for (size_t N = 0; N < M.Tiles.size(); ++N) {
    const Tile &Ti = M.Tiles[N];
    std::string Ec = Ti.Coord == 'y' ? BY : Ti.Coord == 'x' ? BX : "1";
    std::string Tn = "astra_tile" + std::to_string(N);
    line(3, "for (unsigned astra_e = threadIdx.y * " + BX +
                " + threadIdx.x; astra_e < " + T + " * " + Ec +
                "; astra_e += " + BX + " * " + BY + ") {");
    if (Ti.KFast)
      line(4, "const unsigned astra_kk = astra_e % " + T +
                  ", astra_c = astra_e / " + T + ";");
    else
      line(4, "const unsigned astra_c = astra_e % " + Ec +
                  ", astra_kk = astra_e / " + Ec + ";");
    line(4, "const " + KT + " " + KName + " = astra_k0 + astra_kk;");
    std::string Cond = KName + " < " + Nb;
    const VarDecl *Cv = Ti.Coord == 'y' ? M.I : Ti.Coord == 'x' ? M.J : nullptr;
    if (Cv)
      line(4, "const " + typeText(Cv->getType()) + " " +
                  Cv->getNameAsString() + " = blockIdx." + Ti.Coord +
                  " * blockDim." + Ti.Coord + " + astra_c;");
    for (const Expr *Term : M.Terms) {
      bool ReadsI = mentionsDecl(Term, M.I), ReadsJ = mentionsDecl(Term, M.J);
      if ((ReadsI && Cv != M.I) || (ReadsJ && Cv != M.J))
        continue;
      auto Tx = tokText(Term->getSourceRange());
      if (!Tx)
        return refuse("a term of the guard is not plain file text");
      Cond += " && (" + *Tx + ")";
    }
    auto Load = tokText(Ti.Uses.front()->getSourceRange());
    if (!Load)
      return refuse("a load of the k loop is not plain file text");
    line(4, Tn + "[astra_kk][astra_c] = " + Cond + " ? " + *Load + " : (" +
                typeText(Ti.Uses.front()->getType()) + ")0;");
    line(3, "}");
  }
  line(3, "__syncthreads();");
  line(3, "if (astra_in) {");
  std::string KDecl = M.KDeclaredInLoop ? KT + " " : "";
  line(4, "if (" + Nb + " - astra_k0 >= " + T + ") {");
  Out += "#pragma unroll\n";
  line(5, "for (" + KDecl + KName + " = astra_k0; " + KName + " < astra_k0 + " +
              T + "; " + KName + "++)");
  block(isa<CompoundStmt>(LB) ? 5 : 6, *NewBody, LoopIndent, 5);
  line(4, "} else {");
  line(5, "for (" + KDecl + KName + " = astra_k0; " + KName + " < " + Nb +
              "; " + KName + "++)");
  block(isa<CompoundStmt>(LB) ? 5 : 6, *NewBody, LoopIndent, 5);
  line(4, "}");
  line(3, "}");
  line(3, "__syncthreads();");
  line(3, "if (" + Nb + " - astra_k0 <= " + T + ")");
  line(4, "break;");
  line(2, "}");
  line(1, "}");
  if (!M.Post.empty() || !M.Accs.empty()) {
    line(1, "if (astra_in) {");
    for (size_t N = 0; N < M.Accs.size(); ++N) {
      auto E = tokText(M.Accs[N].Uses.front()->getSourceRange());
      if (!E)
        return refuse("an access of the k loop is not plain file text");
      line(2, *E + " = astra_acc" + std::to_string(N) + ";");
    }
    for (const Stmt *S : M.Post) {
      auto Tx = stmtText(S);
      if (!Tx)
        return refuse("a statement in the guard is not plain file text");
      block(2, *Tx, indentOf(S));
    }
    line(1, "}");
  }
  Out += In + "} else {\n";
  block(1, *GuardText, In);
  Out += In + "}";

  SourceLocation GEnd = endOfStatement(M.Guard, SM, LO);
  if (!PC.replace(CharSourceRange::getCharRange(SM.getExpansionLoc(Loc), GEnd),
                  Out))
    return;

  std::string Msg;
  for (size_t N = 0; N < M.Tiles.size(); ++N) {
    const Tile &Ti = M.Tiles[N];
    Msg += (N ? "; " : "") +
           formatv("'{0}' as a {1} x {2} tile ({3})",
                   PC.text(Ti.Uses.front()->getSourceRange()), T,
                   Ti.Coord == 'y'   ? BY + " rows"
                   : Ti.Coord == 'x' ? BX + " columns"
                                     : std::string("1"),
                   Ti.Coord == 0 ? std::string("shared by the block")
                   : Ti.KFast    ? std::string("loaded along k")
                                 : "loaded along the " +
                                    std::string(Ti.Coord == 'y' ? "row"
                                                                : "column"))
               .str();
  }
  for (const Accumulator &A : M.Accs)
    Msg += "; '" + PC.text(A.Uses.front()->getSourceRange()) +
           "' accumulated in a register";
  PC.fired(Loc, formatv("blocks of ({0}, {1}, 1), as every launch passes: {2}; "
                        "the sum over '{3}' keeps its order",
                        BX, BY, Msg, KName)
                    .str());
  (void)Ctx;
}

} // namespace astra
