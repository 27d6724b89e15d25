//===- WarpReduce.cpp -----------------------------------------------------===//
//
// Safety argument.
//  What the original computes: with `for (off = blockDim.x / 2; off > 0;
//   off >>= 1)` the tree adds s[tid + off] into s[tid] for tid < off, so it
//   reduces the values of threads 0 .. 2*start-1 (all of blockDim.x when
//   blockDim.x is a power of two, which the tree requires: for other sizes it
//   silently drops values). A constant start C reduces threads 0 .. 2C-1 and
//   requires a power of two. The result is in s[0], behind the barrier the
//   last iteration executes (or the one before the loop when it runs zero
//   times). The CUDA-sample variant stops the loop at 32 and finishes in warp
//   0 with six volatile steps (offsets 32 .. 1): the same sum for block sizes
//   from 64 up, with no barrier after it.
//  What the rewrite computes: the stored value v is evaluated once by every
//   thread, as before. The threads that took part in the tree (tid < width)
//   reduce within their warp with __shfl_xor_sync; the mask names exactly
//   the lanes of that warp that take part, so a block smaller than a warp
//   (1 .. 16 threads) never shuffles with a lane that does not exist, and the
//   xor partners of a power-of-two lane count stay inside it. With more than
//   one warp, lane 0 of warp k writes s[k], a barrier, and warp 0 reduces the
//   partials the same way. Thread 0 writes s[0]; a final barrier makes it
//   visible to every thread, as the original's last barrier did (the sample
//   variant had none; one more barrier at a point every thread reaches only
//   adds ordering).
//  Shared memory: the pass fires only when every other use of s in the
//   kernel reads s[0] (the result), so the partial sums the tree left in
//   s[1..] and the warp partials the rewrite leaves there are never read.
//   The rewrite writes s[k] for k < number of warps <= width, slots the
//   original wrote too.
//  Order of operations: integer sums, max and min give the same result; a
//   float or double sum is reassociated (butterfly within warps, then across
//   warps, instead of the tree's pairing), so it may differ in the last bits.
//   The verifier's tolerances decide; docs/passes.md says so.
//  Block shape: the pattern indexes s by threadIdx.x alone, which is only
//   race-free for one-dimensional blocks; kernels that read threadIdx.y or .z
//   are refused.
//  Arg reductions: a step over two shared arrays that combines (value,
//   index) pairs keeping the larger (smaller) value and on equal values the
//   lower index (matchArgCombine, shared with vectorize) is rewritten with
//   both halves shuffled together and the same combine on registers. That
//   combine is a lexicographic max, commutative and associative over
//   non-NaN values, so any tree, the butterfly included, gives the
//   original's pair, and the two lanes of a butterfly step agree. Steps
//   whose ties go to the higher index or are not broken by the index are
//   refused (with ties broken arbitrarily the tree's shape decides the
//   index). A NaN value would make the combine order-dependent; the pass
//   cannot see every caller of a helper, so it fires anyway and says so, as
//   it does for float sums (docs/passes.md).
//
//===----------------------------------------------------------------------===//
#include "WarpReduce.h"
#include "utils/CudaIdioms.h"
#include "utils/Mutation.h"
#include "utils/PassSupport.h"
#include "utils/SourceText.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"
#include "clang/AST/TypeLoc.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <functional>

using namespace clang;
using namespace llvm;
using namespace astra::cudaidiom;

namespace astra {

namespace {

enum class ReduceOp { Sum, Max, Min, ArgMax, ArgMin };

StringRef opName(ReduceOp Op) {
  switch (Op) {
  case ReduceOp::Sum:
    return "sum";
  case ReduceOp::Max:
    return "max";
  case ReduceOp::Min:
    return "min";
  case ReduceOp::ArgMax:
    return "arg-max";
  case ReduceOp::ArgMin:
    return "arg-min";
  }
  return "";
}

/// One tree reduction as matched in one body.
struct TreeReduction {
  const VarDecl *Shared = nullptr;
  const Stmt *Store = nullptr; ///< `s[tid] = v;`
  const Expr *Value = nullptr; ///< v
  const Stmt *Last = nullptr;  ///< The loop, or the warp tail after it.
  ReduceOp Op = ReduceOp::Sum;
  /// Callee as written for max/min ("fmaxf"); empty for a sum. For a
  /// functor (`op(a, b)`), the object as written, whatever its operation.
  std::string Combine;
  /// The step calls a functor: the rewrite combines through the same call,
  /// so one text serves every instantiation (SumOp and MaxOp alike).
  bool Functor = false;
  /// C++ text: how many threads' values the original reduces.
  std::string Width;
  bool Tail = false;
  /// An arg reduction (ArgMax, ArgMin) also reduces an index array, stored
  /// by a second statement before the barrier, in step with Shared.
  const VarDecl *IdxShared = nullptr;
  const Expr *IdxValue = nullptr; ///< The index stored: idxs[tid] = index.
  bool isArg() const { return IdxShared != nullptr; }
};

/// Identifiers the rewrite declares (fresh: see freshIdentifier).
struct Names {
  std::string Val, Count, Lanes, Mask, Off, Warps;
  /// The index of an arg reduction, and the partner lane's pair.
  std::string Idx, OtherVal, OtherIdx;
};

/// `e[idx]` (an lvalue, through parens and implicit casts).
struct ElementShape {
  std::function<bool(const Expr *)> IsArray;
  std::function<bool(const Expr *)> IsIndex;
};

bool isElement(const Expr *E, const ElementShape &S) {
  const auto *ASE = dyn_cast<ArraySubscriptExpr>(E->IgnoreParenImpCasts());
  return ASE && S.IsArray(ASE->getBase()) && S.IsIndex(ASE->getIdx());
}

/// `e[idx + off]` or `e[off + idx]`.
bool isElementPlus(const Expr *E, const ElementShape &S,
                   const std::function<bool(const Expr *)> &IsOff) {
  const auto *ASE = dyn_cast<ArraySubscriptExpr>(E->IgnoreParenImpCasts());
  if (!ASE || !S.IsArray(ASE->getBase()))
    return false;
  const auto *Add = dyn_cast<BinaryOperator>(ASE->getIdx()->IgnoreParenImpCasts());
  if (!Add || Add->getOpcode() != BO_Add)
    return false;
  return (S.IsIndex(Add->getLHS()) && IsOff(Add->getRHS())) ||
         (IsOff(Add->getLHS()) && S.IsIndex(Add->getRHS()));
}

struct Update {
  ReduceOp Op;
  std::string Combine;
  bool Functor = false;
};

/// What the call operator of a functor computes, when it is `return a + b;`,
/// `return fmaxf(a, b);` (max, fmax) or `return fminf(a, b);` (min, fmin) of
/// its two parameters of type \p Elem, and is const (no state changes).
std::optional<ReduceOp> functorOp(const PassContext &PC,
                                  const CXXOperatorCallExpr *OC) {
  const auto *MD = dyn_cast_or_null<CXXMethodDecl>(OC->getDirectCallee());
  if (!MD || !MD->isConst() || MD->getNumParams() != 2 || !MD->getBody())
    return std::nullopt;
  const auto *Body = dyn_cast<CompoundStmt>(MD->getBody());
  const auto *Ret = Body && Body->size() == 1
                        ? dyn_cast<ReturnStmt>(Body->body_front())
                        : nullptr;
  if (!Ret || !Ret->getRetValue())
    return std::nullopt;
  const ParmVarDecl *A = MD->getParamDecl(0), *B = MD->getParamDecl(1);
  QualType T = A->getType().getNonReferenceType().getUnqualifiedType();
  if (T != B->getType().getNonReferenceType().getUnqualifiedType() ||
      T != MD->getReturnType().getUnqualifiedType())
    return std::nullopt;
  auto IsParams = [&](const Expr *X, const Expr *Y) {
    const auto *DX = dyn_cast<DeclRefExpr>(X->IgnoreParenImpCasts());
    const auto *DY = dyn_cast<DeclRefExpr>(Y->IgnoreParenImpCasts());
    return DX && DY &&
           ((DX->getDecl() == A && DY->getDecl() == B) ||
            (DX->getDecl() == B && DY->getDecl() == A));
  };
  const Expr *R = Ret->getRetValue()->IgnoreParenImpCasts();
  if (const auto *Add = dyn_cast<BinaryOperator>(R))
    return Add->getOpcode() == BO_Add && IsParams(Add->getLHS(), Add->getRHS())
               ? std::optional<ReduceOp>(ReduceOp::Sum)
               : std::nullopt;
  const auto *CE = dyn_cast<CallExpr>(R);
  if (!CE || CE->getNumArgs() != 2 || !IsParams(CE->getArg(0), CE->getArg(1)))
    return std::nullopt;
  StringRef Name = systemCalleeName(PC.sourceManager(), CE);
  bool FloatOnly = Name.ends_with("f") || Name == "fmax" || Name == "fmin";
  if (FloatOnly && !T->isFloatingType())
    return std::nullopt;
  if (Name == "fmaxf" || Name == "fmax" || Name == "max")
    return ReduceOp::Max;
  if (Name == "fminf" || Name == "fmin" || Name == "min")
    return ReduceOp::Min;
  return std::nullopt;
}

/// One reduction step `a[i] += a[i + off]`, `a[i] = a[i] + a[i + off]` or
/// `a[i] = fmaxf(a[i], a[i + off])` (max, min, fmax, fmin, fminf; either
/// argument order).
std::optional<Update> matchUpdate(const PassContext &PC, const Stmt *S,
                                  const ElementShape &Shape,
                                  const std::function<bool(const Expr *)> &IsOff) {
  const auto *E = dyn_cast_or_null<Expr>(S);
  if (!E)
    return std::nullopt;
  E = E->IgnoreImplicit()->IgnoreParens();
  if (const auto *CA = dyn_cast<CompoundAssignOperator>(E)) {
    if (CA->getOpcode() == BO_AddAssign && isElement(CA->getLHS(), Shape) &&
        isElementPlus(CA->getRHS(), Shape, IsOff))
      return Update{ReduceOp::Sum, ""};
    return std::nullopt;
  }
  const auto *BO = dyn_cast<BinaryOperator>(E);
  if (!BO || BO->getOpcode() != BO_Assign || !isElement(BO->getLHS(), Shape))
    return std::nullopt;
  const Expr *R = BO->getRHS()->IgnoreParenImpCasts();
  auto Pair = [&](const Expr *A, const Expr *B) {
    return (isElement(A, Shape) && isElementPlus(B, Shape, IsOff)) ||
           (isElementPlus(A, Shape, IsOff) && isElement(B, Shape));
  };
  if (const auto *Add = dyn_cast<BinaryOperator>(R)) {
    if (Add->getOpcode() == BO_Add && Pair(Add->getLHS(), Add->getRHS()))
      return Update{ReduceOp::Sum, ""};
    return std::nullopt;
  }
  // `s[i] = op(s[i], s[i + off])` with a functor whose operation this
  // instantiation shows.
  if (const auto *OC = dyn_cast<CXXOperatorCallExpr>(R)) {
    if (OC->getOperator() != OO_Call || OC->getNumArgs() != 3 ||
        !Pair(OC->getArg(1), OC->getArg(2)))
      return std::nullopt;
    const auto *Obj = dyn_cast<DeclRefExpr>(OC->getArg(0)->IgnoreParenImpCasts());
    std::optional<ReduceOp> Op = functorOp(PC, OC);
    if (!Obj || !Op)
      return std::nullopt;
    return Update{*Op, Obj->getDecl()->getNameAsString(), true};
  }
  const auto *CE = dyn_cast<CallExpr>(R);
  if (!CE || CE->getNumArgs() != 2 || !Pair(CE->getArg(0), CE->getArg(1)))
    return std::nullopt;
  StringRef Name = systemCalleeName(PC.sourceManager(), CE);
  std::string Callee = PC.text(CE->getCallee()->getSourceRange());
  if (Callee.empty())
    return std::nullopt;
  if (Name == "fmaxf" || Name == "fmax" || Name == "max")
    return Update{ReduceOp::Max, Callee};
  if (Name == "fminf" || Name == "fmin" || Name == "min")
    return Update{ReduceOp::Min, Callee};
  return std::nullopt;
}

/// The variable a loop increment halves: `v >>= 1`, `v /= 2`, `v = v / 2`,
/// `v = v >> 1`.
const VarDecl *halvedVar(const ASTContext &Ctx, const Expr *Inc) {
  if (!Inc)
    return nullptr;
  Inc = Inc->IgnoreParenImpCasts();
  const auto *BO = dyn_cast<BinaryOperator>(Inc);
  if (!BO)
    return nullptr;
  const VarDecl *V = lvalueVar(BO->getLHS());
  if (!V)
    return nullptr;
  auto Halves = [&](BinaryOperatorKind K, const Expr *By) {
    std::optional<int64_t> C = constInt(Ctx, By);
    return C && ((K == BO_Shr && *C == 1) || (K == BO_Div && *C == 2));
  };
  if (BO->getOpcode() == BO_ShrAssign || BO->getOpcode() == BO_DivAssign)
    return Halves(BO->getOpcode() == BO_ShrAssign ? BO_Shr : BO_Div,
                  BO->getRHS())
               ? V
               : nullptr;
  if (BO->getOpcode() != BO_Assign)
    return nullptr;
  const auto *R = dyn_cast<BinaryOperator>(BO->getRHS()->IgnoreParenImpCasts());
  if (!R || lvalueVar(R->getLHS()) != V)
    return nullptr;
  return Halves(R->getOpcode(), R->getRHS()) ? V : nullptr;
}

/// Finds every tree loop of one body and matches it.
class Matcher {
public:
  Matcher(PassContext &PC, const KernelBody &Body)
      : PC(PC), Ctx(PC.astContext()), FD(Body.FD), Label(Body.Label) {}

  /// Whether \p E is threadIdx.x, or a local initialized to it and never
  /// changed.
  bool isTid(const Expr *E) const {
    return readsBuiltinIndex(E, "threadIdx.x", FD);
  }

  /// The __shared__ array \p E names (through array decay), or null.
  static const VarDecl *sharedArray(const Expr *E) {
    const auto *DRE = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts());
    const auto *V = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
    if (!V || !V->hasAttr<CUDASharedAttr>() || !V->getType()->isArrayType())
      return nullptr;
    return V;
  }

  /// Matches the tree loop \p F, child \p I of \p Block. On failure returns
  /// nullopt and sets \p Why.
  std::optional<TreeReduction> match(const CompoundStmt *Block, unsigned I,
                                     const ForStmt *F, std::string &Why);

  std::string text(const Stmt *S) const {
    return PC.text(S->getSourceRange());
  }

private:
  /// The guarded step of an arg reduction over two shared arrays:
  ///   { const T v = vals[tid + off]; const I i = idxs[tid + off];
  ///     if (v > vals[tid] || (v == vals[tid] && i < idxs[tid])) {
  ///       vals[tid] = v; idxs[tid] = i; } }
  /// (see matchArgCombine for the forms of the condition). Sets R.Shared,
  /// R.IdxShared and R.Op.
  bool matchPairStep(const CompoundStmt *CS,
                     const std::function<bool(const Expr *)> &IsOff,
                     TreeReduction &R, std::string &Why);
  std::optional<TreeReduction> matchTail(const Stmt *S, const TreeReduction &R,
                                         std::string &Why);
  bool matchTailSteps(ArrayRef<const Stmt *> Steps, const ElementShape &Shape,
                      const TreeReduction &R, std::string &Why);

  PassContext &PC;
  ASTContext &Ctx;
  const FunctionDecl *FD;
  std::string Label;
};

std::optional<TreeReduction> Matcher::match(const CompoundStmt *Block,
                                            unsigned I, const ForStmt *F,
                                            std::string &Why) {
  TreeReduction R;
  const VarDecl *Off = halvedVar(Ctx, F->getInc());
  const auto *Init = dyn_cast_or_null<DeclStmt>(F->getInit());
  if (!Init || !Init->isSingleDecl() || Init->getSingleDecl() != Off ||
      !Off->getInit() || !Off->getType()->isIntegerType()) {
    Why = "the loop does not declare its integer stride variable in its "
          "init (for (int off = ...; ...))";
    return std::nullopt;
  }
  auto IsOff = [&](const Expr *E) {
    const auto *DRE = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts());
    return DRE && DRE->getDecl() == Off;
  };

  // The condition: off > 0 (or off > 32 followed by a warp tail).
  int64_t Stop = -1;
  if (const Expr *Cond = F->getCond()) {
    const Expr *C = Cond->IgnoreParenImpCasts();
    if (IsOff(C))
      Stop = 0;
    else if (const auto *BO = dyn_cast<BinaryOperator>(C)) {
      std::optional<int64_t> K;
      if (IsOff(BO->getLHS()) && (K = constInt(Ctx, BO->getRHS()))) {
        if ((BO->getOpcode() == BO_GT || BO->getOpcode() == BO_NE) && *K == 0)
          Stop = 0;
        else if (BO->getOpcode() == BO_GE && *K == 1)
          Stop = 0;
        else if (BO->getOpcode() == BO_GT && *K == 32)
          Stop = 32;
      } else if (IsOff(BO->getRHS()) && (K = constInt(Ctx, BO->getLHS()))) {
        if (BO->getOpcode() == BO_LT && (*K == 0 || *K == 32))
          Stop = *K;
      }
    }
  }
  if (Stop < 0) {
    Why = "the loop condition is not '" + Off->getNameAsString() +
          " > 0' (or '> 32' followed by a warp-synchronous tail)";
    return std::nullopt;
  }

  // The body: { if (tid < off) <step>; __syncthreads(); }
  const auto *Body = dyn_cast<CompoundStmt>(F->getBody());
  if (!Body || Body->size() != 2 || !isSyncthreadsCall(Body->body_back())) {
    Why = "the loop body is not '{ if (tid < off) <step>; __syncthreads(); }'";
    return std::nullopt;
  }
  const auto *If = dyn_cast<IfStmt>(Body->body_front());
  if (!If || If->getElse() || If->getInit() || If->getConditionVariable()) {
    Why = "the loop body does not start with 'if (tid < off) <step>;' "
          "(no else)";
    return std::nullopt;
  }
  const auto *Guard = dyn_cast<BinaryOperator>(If->getCond()->IgnoreParenImpCasts());
  if (!Guard ||
      !((Guard->getOpcode() == BO_LT && isTid(Guard->getLHS()) &&
         IsOff(Guard->getRHS())) ||
        (Guard->getOpcode() == BO_GT && IsOff(Guard->getLHS()) &&
         isTid(Guard->getRHS())))) {
    Why = "the step is guarded by '" + text(If->getCond()) +
          "', not 'tid < " + Off->getNameAsString() +
          "' with tid = threadIdx.x";
    return std::nullopt;
  }
  const Stmt *Step = If->getThen();
  const auto *StepBlock = dyn_cast<CompoundStmt>(Step);
  if (StepBlock && StepBlock->size() == 3) {
    if (!matchPairStep(StepBlock, IsOff, R, Why))
      return std::nullopt;
    if (Stop != 0) {
      Why = "an arg reduction with a warp-synchronous tail is not handled";
      return std::nullopt;
    }
  } else if (StepBlock) {
    if (StepBlock->size() != 1) {
      Why = "the guarded step is more than one statement, and not the three "
            "of an arg reduction's (value, index) step";
      return std::nullopt;
    }
    Step = StepBlock->body_front();
  }
  // The array is whatever the step indexes; it must be a __shared__ array.
  const VarDecl *S = R.Shared;
  if (const auto *E = dyn_cast<Expr>(Step); E && !R.isArg()) {
    const Expr *L = E->IgnoreImplicit()->IgnoreParens();
    if (const auto *BO = dyn_cast<BinaryOperator>(L))
      if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(
              BO->getLHS()->IgnoreParenImpCasts()))
        S = sharedArray(ASE->getBase());
  }
  if (!S) {
    Why = "the step '" + text(Step) +
          "' does not update an element of a __shared__ array";
    return std::nullopt;
  }
  ElementShape Shape{[&](const Expr *E) { return sharedArray(E) == S; },
                     [&](const Expr *E) { return isTid(E); }};
  if (!R.isArg()) {
    std::optional<Update> U = matchUpdate(PC, Step, Shape, IsOff);
    if (!U) {
      Why = "the step '" + text(Step) +
            "' is not s[tid] += s[tid + off], s[tid] = s[tid] + s[tid + off] "
            "or s[tid] = max/min/fmaxf/fminf(s[tid], s[tid + off])";
      return std::nullopt;
    }
    R.Shared = S;
    R.Op = U->Op;
    R.Combine = U->Combine;
    R.Functor = U->Functor;
  }

  // The element types.
  const ArrayType *AT = Ctx.getAsArrayType(S->getType());
  QualType Elem = AT->getElementType();
  for (const VarDecl *A : {S, R.IdxShared}) {
    if (!A)
      continue;
    QualType T = Ctx.getAsArrayType(A->getType())->getElementType();
    if (T->isArrayType()) {
      Why = "'" + A->getNameAsString() +
            "' has more than one dimension (a reduction per row of a 2-D "
            "block is not handled)";
      return std::nullopt;
    }
    if (T.isVolatileQualified() || !isShuffleElementType(T)) {
      Why = "'" + A->getNameAsString() + "' holds '" + T.getAsString() +
            "'; only float, double and non-volatile integer elements are "
            "handled";
      return std::nullopt;
    }
  }
  if (R.Op != ReduceOp::Sum && !R.Functor && Elem->isIntegerType() &&
      StringRef(R.Combine).ends_with("f")) {
    Why = "'" + R.Combine + "' on integer elements converts them to floating "
          "point; the rewrite would round in a different order";
    return std::nullopt;
  }

  // Before the loop: s[tid] = v; __syncthreads(); (and t[tid] = i; for an
  // arg reduction, in either order).
  unsigned Stores = R.isArg() ? 2 : 1;
  if (I < Stores + 1 || !isSyncthreadsCall(Block->body_begin()[I - 1])) {
    Why = R.isArg() ? "the loop is not directly preceded by '" +
                          S->getNameAsString() + "[tid] = value; " +
                          R.IdxShared->getNameAsString() +
                          "[tid] = index; __syncthreads();'"
                    : "the loop is not directly preceded by 's[tid] = value; "
                      "__syncthreads();'";
    return std::nullopt;
  }
  auto StoreTo = [&](const Stmt *Store, const VarDecl *A) -> const Expr * {
    const auto *SE = dyn_cast<Expr>(Store);
    const auto *SA =
        SE ? dyn_cast<BinaryOperator>(SE->IgnoreImplicit()->IgnoreParens())
           : nullptr;
    ElementShape AShape{[&](const Expr *E) { return sharedArray(E) == A; },
                        Shape.IsIndex};
    return SA && SA->getOpcode() == BO_Assign && isElement(SA->getLHS(), AShape)
               ? SA->getRHS()
               : nullptr;
  };
  R.Store = Block->body_begin()[I - 1 - Stores];
  R.Value = StoreTo(R.Store, S);
  if (R.isArg()) {
    const Stmt *Other = Block->body_begin()[I - 2];
    R.IdxValue = StoreTo(Other, R.IdxShared);
    if (!R.Value || !R.IdxValue) {
      R.Value = StoreTo(Other, S);
      R.IdxValue = StoreTo(R.Store, R.IdxShared);
    }
  }
  if (!R.Value || (R.isArg() && !R.IdxValue)) {
    Why = R.isArg() ? "the statements before the barrier are not '" +
                          S->getNameAsString() + "[tid] = value; " +
                          R.IdxShared->getNameAsString() + "[tid] = index;'"
                    : "the statement before the barrier is not '" +
                          S->getNameAsString() + "[tid] = value;'";
    return std::nullopt;
  }
  // The rewrite evaluates the value first, then the index.
  if (R.isArg() &&
      (R.Value->HasSideEffects(Ctx, /*IncludePossibleEffects=*/false) ||
       R.IdxValue->HasSideEffects(Ctx, /*IncludePossibleEffects=*/false))) {
    Why = "the stored value or index has side effects";
    return std::nullopt;
  }
  for (const Expr *Stored : {R.Value, R.IdxValue})
    for (const VarDecl *A : {S, R.IdxShared})
      if (Stored && A && mentionsDecl(Stored, A)) {
        Why = "the stored value reads '" + A->getNameAsString() + "' itself";
        return std::nullopt;
      }

  // How many threads the tree reduces.
  const Expr *Start = Off->getInit()->IgnoreParenImpCasts();
  bool FromBlockDim = false;
  if (const auto *BO = dyn_cast<BinaryOperator>(Start)) {
    std::optional<int64_t> K = constInt(Ctx, BO->getRHS());
    FromBlockDim = builtinRef(BO->getLHS()->IgnoreParenImpCasts())
                       .is(cudaidiom::Builtin::BlockDim, 'x') &&
                   K &&
                   ((BO->getOpcode() == BO_Div && *K == 2) ||
                    (BO->getOpcode() == BO_Shr && *K == 1));
  }
  if (FromBlockDim) {
    R.Width = "blockDim.x";
  } else if (std::optional<int64_t> C = constInt(Ctx, Start)) {
    if (*C <= 0 || (*C & (*C - 1)) != 0) {
      Why = "the loop starts at " + std::to_string(*C) +
            ", not a power of two: the tree drops values, which a shuffle "
            "reduction would not reproduce";
      return std::nullopt;
    }
    for (const VarDecl *A : {S, R.IdxShared})
      if (const auto *CAT = dyn_cast_or_null<ConstantArrayType>(
              A ? Ctx.getAsArrayType(A->getType()) : nullptr))
        if (uint64_t(2 * *C) > CAT->getZExtSize()) {
          Why = "the loop starts at " + std::to_string(*C) + " but '" +
                A->getNameAsString() + "' has only " +
                std::to_string(CAT->getZExtSize()) + " elements";
          return std::nullopt;
        }
    if (Stop == 32 && *C < 32) {
      Why = "the warp tail reads s[tid + 32] but the loop starts at " +
            std::to_string(*C);
      return std::nullopt;
    }
    // Template bodies share the text: keep the expression as written.
    std::string StartText = text(Off->getInit());
    if (Label.empty() || StartText.empty())
      R.Width = std::to_string(2 * *C) + "u";
    else
      R.Width = "2u * (" + StartText + ")";
  } else {
    Why = "the loop starts at '" + text(Off->getInit()) +
          "'; only blockDim.x / 2 and constant powers of two are recognized";
    return std::nullopt;
  }
  R.Last = F;
  if (Stop == 32) {
    if (I + 1 >= Block->size()) {
      Why = "the loop stops at 32 but no warp-synchronous tail follows it";
      return std::nullopt;
    }
    return matchTail(Block->body_begin()[I + 1], R, Why);
  }
  return R;
}

bool Matcher::matchPairStep(const CompoundStmt *CS,
                            const std::function<bool(const Expr *)> &IsOff,
                            TreeReduction &R, std::string &Why) {
  const std::string Shape =
      "'{ const T v = s[tid + off]; const I i = t[tid + off]; if (v > s[tid] "
      "|| (v == s[tid] && i < t[tid])) { s[tid] = v; t[tid] = i; } }'";
  // The two loads of the partner's pair into locals.
  const VarDecl *Local[2] = {}, *Arr[2] = {};
  for (unsigned K = 0; K < 2; ++K) {
    const auto *DS = dyn_cast<DeclStmt>(CS->body_begin()[K]);
    const auto *V = DS && DS->isSingleDecl()
                        ? dyn_cast<VarDecl>(DS->getSingleDecl())
                        : nullptr;
    const auto *ASE =
        V && V->getInit()
            ? dyn_cast<ArraySubscriptExpr>(V->getInit()->IgnoreParenImpCasts())
            : nullptr;
    const VarDecl *A = ASE ? sharedArray(ASE->getBase()) : nullptr;
    ElementShape AShape{[&](const Expr *E) { return sharedArray(E) == A; },
                        [&](const Expr *E) { return isTid(E); }};
    if (!A || !isElementPlus(V->getInit(), AShape, IsOff)) {
      Why = "the guarded step has three statements but is not the (value, "
            "index) step of an arg reduction " + Shape;
      return false;
    }
    Local[K] = V;
    Arr[K] = A;
  }
  const auto *If = dyn_cast<IfStmt>(CS->body_back());
  std::optional<ArgCombine> C = matchArgCombine(Ctx, If);
  if (!C) {
    Why = "the (value, index) step '" +
          (If ? "if (" + text(If->getCond()) + ") ..." : text(CS->body_back())) +
          "' does not keep the larger (or smaller) value and, on equal "
          "values, the lower index; only that combine gives the same pair "
          "in any order";
    return false;
  }
  auto Names = [](const Expr *E, const VarDecl *V) {
    const auto *DRE = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts());
    return DRE && DRE->getDecl() == V;
  };
  for (unsigned VK = 0; VK < 2; ++VK) {
    const VarDecl *S = Arr[VK], *T = Arr[1 - VK];
    ElementShape SShape{[&](const Expr *E) { return sharedArray(E) == S; },
                        [&](const Expr *E) { return isTid(E); }};
    ElementShape TShape{[&](const Expr *E) { return sharedArray(E) == T; },
                        [&](const Expr *E) { return isTid(E); }};
    if (S != T && isElement(C->CurVal, SShape) &&
        isElement(C->CurIdx, TShape) && Names(C->NewVal, Local[VK]) &&
        Names(C->NewIdx, Local[1 - VK]) &&
        !mayModify(CS->body_back(), Local[0]) &&
        !mayModify(CS->body_back(), Local[1])) {
      R.Shared = S;
      R.IdxShared = T;
      R.Op = C->Max ? ReduceOp::ArgMax : ReduceOp::ArgMin;
      return true;
    }
  }
  Why = "the (value, index) step does not combine the loaded pair into two "
        "different __shared__ arrays at [tid] " + Shape;
  return false;
}

/// The sample-style tail: `if (tid < 32) { volatile T *vs = s; vs[tid] +=
/// vs[tid + 32]; ... vs[tid] += vs[tid + 1]; }` or `if (tid < 32)
/// warpReduce(s, tid);` with those six steps in the helper.
std::optional<TreeReduction> Matcher::matchTail(const Stmt *S,
                                                const TreeReduction &R,
                                                std::string &Why) {
  const auto *If = dyn_cast<IfStmt>(S);
  const BinaryOperator *Guard =
      If ? dyn_cast<BinaryOperator>(If->getCond()->IgnoreParenImpCasts())
         : nullptr;
  std::optional<int64_t> K =
      Guard ? constInt(Ctx, Guard->getRHS()) : std::nullopt;
  if (!Guard || If->getElse() || If->getInit() ||
      Guard->getOpcode() != BO_LT || !isTid(Guard->getLHS()) || !K ||
      *K != 32) {
    Why = "the loop stops at 32 but is not followed by 'if (tid < 32) "
          "{ <six warp steps> }'";
    return std::nullopt;
  }
  const Stmt *Then = If->getThen();
  std::vector<const Stmt *> Steps;
  if (const auto *CS = dyn_cast<CompoundStmt>(Then))
    Steps.assign(CS->body_begin(), CS->body_end());
  else
    Steps.push_back(Then);

  // A call of a helper with the steps: warpReduce(s, tid).
  if (Steps.size() == 1)
    if (const auto *CE = dyn_cast<CallExpr>(Steps[0])) {
      const FunctionDecl *Callee = CE->getDirectCallee();
      const FunctionDecl *Def = nullptr;
      if (!Callee || !Callee->hasBody(Def) ||
          isSystemFunction(PC.sourceManager(), Callee) ||
          CE->getNumArgs() != 2 || Def->getNumParams() != 2 ||
          sharedArray(CE->getArg(0)->IgnoreParenCasts()) != R.Shared ||
          !isTid(CE->getArg(1))) {
        Why = "the warp tail '" + text(CE) +
              "' is not a call of a helper with (s, tid)";
        return std::nullopt;
      }
      const ParmVarDecl *P0 = Def->getParamDecl(0), *P1 = Def->getParamDecl(1);
      const auto *HB = dyn_cast<CompoundStmt>(Def->getBody());
      if (!HB || mayModify(HB, P0) || mayModify(HB, P1)) {
        Why = "the warp helper '" + Def->getNameAsString() +
              "' changes its parameters";
        return std::nullopt;
      }
      auto IsP = [](const ParmVarDecl *P) {
        return [P](const Expr *E) {
          const auto *DRE = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts());
          return DRE && DRE->getDecl() == P;
        };
      };
      ElementShape Shape{IsP(P0), IsP(P1)};
      std::vector<const Stmt *> HSteps(HB->body_begin(), HB->body_end());
      if (!matchTailSteps(HSteps, Shape, R, Why)) {
        Why = "in the warp helper '" + Def->getNameAsString() + "': " + Why;
        return std::nullopt;
      }
      TreeReduction Out = R;
      Out.Last = If;
      Out.Tail = true;
      return Out;
    }

  // Inline steps, through a volatile alias or a cast of s.
  const VarDecl *Alias = nullptr;
  if (!Steps.empty())
    if (const auto *DS = dyn_cast<DeclStmt>(Steps[0])) {
      const auto *V =
          DS->isSingleDecl() ? dyn_cast<VarDecl>(DS->getSingleDecl()) : nullptr;
      if (!V || !V->getInit() || !V->getType()->isPointerType() ||
          sharedArray(V->getInit()->IgnoreParenCasts()) != R.Shared) {
        Why = "the warp tail declares something other than a pointer to '" +
              R.Shared->getNameAsString() + "'";
        return std::nullopt;
      }
      Alias = V;
      Steps.erase(Steps.begin());
    }
  ElementShape Shape{[&](const Expr *E) {
                       E = E->IgnoreParenImpCasts();
                       if (const auto *DRE = dyn_cast<DeclRefExpr>(E))
                         if (Alias && DRE->getDecl() == Alias)
                           return true;
                       return sharedArray(E->IgnoreParenCasts()) == R.Shared;
                     },
                     [&](const Expr *E) { return isTid(E); }};
  if (!matchTailSteps(Steps, Shape, R, Why))
    return std::nullopt;
  TreeReduction Out = R;
  Out.Last = If;
  Out.Tail = true;
  return Out;
}

bool Matcher::matchTailSteps(ArrayRef<const Stmt *> Steps,
                             const ElementShape &Shape, const TreeReduction &R,
                             std::string &Why) {
  static const int64_t Offsets[] = {32, 16, 8, 4, 2, 1};
  if (Steps.size() != 6) {
    Why = "the warp tail has " + std::to_string(Steps.size()) +
          " steps, not the six steps with offsets 32, 16, 8, 4, 2, 1";
    return false;
  }
  for (unsigned J = 0; J < 6; ++J) {
    int64_t Want = Offsets[J];
    auto IsK = [&](const Expr *E) {
      std::optional<int64_t> C = constInt(Ctx, E);
      return C && *C == Want;
    };
    std::optional<Update> U = matchUpdate(PC, Steps[J], Shape, IsK);
    if (!U || U->Op != R.Op || U->Functor != R.Functor) {
      Why = "warp tail step '" + text(Steps[J]) + "' is not the " +
            opName(R.Op).str() + " step with offset " + std::to_string(Want);
      return false;
    }
  }
  return true;
}

/// Uses of a shared array other than the matched reductions and reads of
/// s[0].
class SharedUses : public RecursiveASTVisitor<SharedUses> {
public:
  SharedUses(const SourceManager &SM, const VarDecl *S,
             std::vector<SourceRange> Allowed, bool SkipKernels)
      : SM(SM), S(S), Allowed(std::move(Allowed)), SkipKernels(SkipKernels) {}

  /// A file-scope (extern) array is visible to every function; other
  /// kernels are separate launches, but device functions this kernel calls
  /// may touch it.
  bool TraverseFunctionDecl(FunctionDecl *FD) {
    if (SkipKernels && FD->hasAttr<CUDAGlobalAttr>())
      return true;
    return RecursiveASTVisitor::TraverseFunctionDecl(FD);
  }

  bool VisitImplicitCastExpr(ImplicitCastExpr *E) {
    if (E->getCastKind() != CK_LValueToRValue)
      return true;
    const auto *ASE = dyn_cast<ArraySubscriptExpr>(E->getSubExpr()->IgnoreParens());
    if (!ASE)
      return true;
    Expr::EvalResult R;
    const auto *DRE = dyn_cast<DeclRefExpr>(ASE->getBase()->IgnoreParenImpCasts());
    if (DRE && DRE->getDecl() == S && !ASE->getIdx()->isValueDependent() &&
        ASE->getIdx()->EvaluateAsInt(R, S->getASTContext()) &&
        R.Val.getInt() == 0)
      ResultReads.insert(DRE);
    return true;
  }
  bool VisitDeclRefExpr(DeclRefExpr *E) {
    if (E->getDecl() != S || ResultReads.count(E) || Other.isValid())
      return true;
    SourceLocation L = E->getLocation();
    for (SourceRange R : Allowed)
      if (!SM.isBeforeInTranslationUnit(L, R.getBegin()) &&
          !SM.isBeforeInTranslationUnit(R.getEnd(), L))
        return true;
    Other = L;
    return true;
  }

  const SourceManager &SM;
  const VarDecl *S;
  std::vector<SourceRange> Allowed;
  bool SkipKernels;
  SmallPtrSet<const DeclRefExpr *, 8> ResultReads;
  SourceLocation Other;
};

/// Tree loops: for-loops that halve a variable, in blocks of the body.
class LoopFinder : public RecursiveASTVisitor<LoopFinder> {
public:
  explicit LoopFinder(ASTContext &Ctx) : Ctx(Ctx) {}
  bool VisitCompoundStmt(CompoundStmt *C) {
    unsigned I = 0;
    for (Stmt *S : C->body()) {
      if (auto *F = dyn_cast<ForStmt>(S))
        if (halvedVar(Ctx, F->getInc()))
          InBlock.push_back({C, I, F});
      ++I;
    }
    return true;
  }
  bool VisitForStmt(ForStmt *F) {
    if (halvedVar(Ctx, F->getInc()))
      All.push_back(F);
    return true;
  }
  struct Site {
    const CompoundStmt *Block;
    unsigned Index;
    const ForStmt *Loop;
  };
  ASTContext &Ctx;
  std::vector<Site> InBlock;
  std::vector<const ForStmt *> All;
};

/// Does the body read threadIdx.y or threadIdx.z?
struct MultiDimFinder {
  void TraverseStmt(const Stmt *S) {
    if (!Found.isValid())
      Found = findMultiDimIndex(S, What);
  }
  SourceLocation Found;
  std::string What;
};

/// The code that replaces the store, the barrier, the loop and the tail.
std::string emit(const PassContext &PC, const TreeReduction &R,
                 const Names &N, StringRef ValueText, StringRef ElemText,
                 StringRef IdxValueText, StringRef IdxElemText,
                 StringRef Indent) {
  std::string Arr = R.Shared->getNameAsString();
  std::string IdxArr = R.isArg() ? R.IdxShared->getNameAsString() : "";
  /// One step with the partner lane at distance N.Off, at indent \p In.
  auto Combine = [&](StringRef Mask, StringRef In) {
    auto Shfl = [&](StringRef Of) {
      return ("__shfl_xor_sync(" + Mask + ", " + Of + ", " + N.Off + ")").str();
    };
    if (R.isArg())
      // The combine of the original step, on registers.
      return "{\n" + In.str() + "  const " + ElemText.str() + " " +
             N.OtherVal + " = " + Shfl(N.Val) + ";\n" + In.str() + "  const " +
             IdxElemText.str() + " " + N.OtherIdx + " = " + Shfl(N.Idx) +
             ";\n" + In.str() + "  if (" + N.OtherVal +
             (R.Op == ReduceOp::ArgMax ? " > " : " < ") + N.Val + " || (" +
             N.OtherVal + " == " + N.Val + " && " + N.OtherIdx + " < " +
             N.Idx + ")) {\n" + In.str() + "    " + N.Val + " = " +
             N.OtherVal + ";\n" + In.str() + "    " + N.Idx + " = " +
             N.OtherIdx + ";\n" + In.str() + "  }\n" + In.str() + "}";
    if (R.Op == ReduceOp::Sum && !R.Functor)
      return N.Val + " = " + N.Val + " + " + Shfl(N.Val) + ";";
    return N.Val + " = " + R.Combine + "(" + N.Val + ", " + Shfl(N.Val) + ");";
  };
  /// `s[Slot] = val;`, and `t[Slot] = idx;` for an arg reduction.
  auto Store = [&](StringRef Slot, StringRef In) {
    std::string T = Arr + "[" + Slot.str() + "] = " + N.Val + ";";
    if (R.isArg())
      T += "\n" + In.str() + IdxArr + "[" + Slot.str() + "] = " + N.Idx + ";";
    return T;
  };
  std::string Count = R.Width == "blockDim.x"
                          ? std::string("blockDim.x")
                          : "(" + R.Width + " < blockDim.x ? " + R.Width +
                                " : blockDim.x)";
  std::string I = Indent.str();
  std::string O;
  raw_string_ostream OS(O);
  OS << "{ // warp-reduce: "
     << (R.Functor ? "'" + R.Combine + "'" : opName(R.Op).str()) << " of "
     << (R.isArg() ? "(" + Arr + ", " + IdxArr + ")" : Arr)
     << " with warp shuffles, one shared-memory step across warps\n";
  OS << I << "  " << ElemText << " " << N.Val << " = " << ValueText << ";\n";
  if (R.isArg())
    OS << I << "  " << IdxElemText << " " << N.Idx << " = " << IdxValueText
       << ";\n";
  OS << I << "  const unsigned " << N.Count << " = " << Count
     << "; // threads whose values are reduced\n";
  OS << I << "  if (threadIdx.x < " << N.Count << ") {\n";
  OS << I << "    // The lanes of this warp that take part; fewer than 32 "
             "only in a block\n";
  OS << I << "    // smaller than a warp. The mask names exactly them.\n";
  OS << I << "    const unsigned " << N.Lanes << " = " << N.Count
     << " - (threadIdx.x & ~31u) < 32u ? " << N.Count
     << " - (threadIdx.x & ~31u) : 32u;\n";
  OS << I << "    const unsigned " << N.Mask << " = 0xffffffffu >> (32u - "
     << N.Lanes << ");\n";
  OS << I << "    for (unsigned " << N.Off << " = 16u; " << N.Off << " > 0u; "
     << N.Off << " >>= 1)\n";
  // An arg step is a { } block: it opens on the line of its condition.
  std::string Sep = R.isArg() ? " " : "\n" + I + "        ";
  OS << I << "      if (" << N.Off << " < " << N.Lanes << ")" << Sep
     << Combine(N.Mask, I + "      ") << "\n";
  OS << I << "    if (" << N.Count << " > 32u && (threadIdx.x & 31u) == 0u)"
     << (R.isArg() ? " {\n" : "\n");
  OS << I << "      " << Store("threadIdx.x >> 5", I + "      ") << "\n";
  if (R.isArg())
    OS << I << "    }\n";
  OS << I << "  }\n";
  OS << I << "  if (" << N.Count << " > 32u) {\n";
  OS << I << "    __syncthreads();\n";
  OS << I << "    const unsigned " << N.Warps << " = (" << N.Count
     << " + 31u) >> 5;\n";
  OS << I << "    if (threadIdx.x < " << N.Warps << ") {\n";
  OS << I << "      " << N.Val << " = " << Arr << "[threadIdx.x];\n";
  if (R.isArg())
    OS << I << "      " << N.Idx << " = " << IdxArr << "[threadIdx.x];\n";
  OS << I << "      for (unsigned " << N.Off << " = 16u; " << N.Off
     << " > 0u; " << N.Off << " >>= 1)\n";
  Sep = R.isArg() ? " " : "\n" + I + "          ";
  OS << I << "        if (" << N.Off << " < " << N.Warps << ")" << Sep
     << Combine(("0xffffffffu >> (32u - " + N.Warps + ")"), I + "        ")
     << "\n";
  OS << I << "    }\n";
  OS << I << "  }\n";
  OS << I << "  if (threadIdx.x == 0u)" << (R.isArg() ? " {\n" : "\n");
  OS << I << "    " << Store("0", I + "    ") << "\n";
  if (R.isArg())
    OS << I << "  }\n";
  OS << I << "  __syncthreads();\n";
  OS << I << "}";
  return OS.str();
}

} // namespace

namespace {

/// Device functions the kernel calls, directly or through other device
/// functions, defined in the user's files (not the CUDA or system headers):
/// a block reduction often lives in a helper of a shared header
/// (`block_reduce(v, op)`). Templates are returned as their patterns, whose
/// every instantiation in the translation unit is then judged.
class HelperFinder : public RecursiveASTVisitor<HelperFinder> {
public:
  explicit HelperFinder(const SourceManager &SM) : SM(SM) {}
  bool VisitCallExpr(CallExpr *CE) {
    const FunctionDecl *Callee = CE->getDirectCallee();
    if (!Callee || !Callee->hasBody() || Callee->hasAttr<CUDAGlobalAttr>() ||
        isSystemFunction(SM, Callee) || Depth > 4)
      return true;
    const FunctionDecl *Pattern = Callee->getTemplateInstantiationPattern();
    if (!Pattern)
      Pattern = Callee;
    if (SM.isInSystemHeader(Pattern->getLocation()) || !Seen.insert(Callee).second)
      return true;
    if (!is_contained(Helpers, Pattern))
      Helpers.push_back(Pattern);
    ++Depth;
    TraverseStmt(Callee->getBody());
    --Depth;
    return true;
  }
  const SourceManager &SM;
  std::vector<const FunctionDecl *> Helpers;
  SmallPtrSet<const FunctionDecl *, 8> Seen;
  unsigned Depth = 0;
};

/// Matches and votes on every tree loop of \p Votes' bodies. \p Caller is
/// set when the bodies are a helper's: the kernel that calls it, whose block
/// shape the reduction relies on too.
/// \p NotPow2: why the launches of the kernels whose bodies these are do
/// not show a power-of-two block x (empty when they do): a tree that starts
/// at blockDim.x / 2 reduces every value only for such blocks, so its
/// rewrite would change what another block size computes.
void voteOnBodies(PassContext &PC, SiteVotes &Votes, const Names &N,
                  const MultiDimFinder *Caller, StringRef Helper,
                  StringRef NotPow2) {
  ASTContext &Ctx = PC.astContext();
  const SourceManager &SM = PC.sourceManager();
  const StringRef Kind = "warp-reduce";
  for (unsigned BI = 0; BI < Votes.bodies().size(); ++BI) {
    const KernelBody &B = Votes.bodies()[BI];
    // Refusals of a template's instantiation already name it.
    std::string Named =
        Helper.empty() ? "" : "in '" + Helper.str() + "' (called by the kernel): ";
    std::string In = B.Label.empty() || Helper.empty()
                         ? Named
                         : std::string("called by the kernel: ");
    Stmt *Body = B.FD->getBody();
    if (!Body)
      continue;
    LoopFinder LF(Ctx);
    LF.TraverseStmt(Body);
    MultiDimFinder MD;
    MD.TraverseStmt(Body);
    if (!MD.Found.isValid() && Caller)
      MD = *Caller;
    Matcher M(PC, B);

    std::vector<std::pair<const ForStmt *, TreeReduction>> Matched;
    SmallPtrSet<const ForStmt *, 8> Seen;
    for (const LoopFinder::Site &Site : LF.InBlock) {
      Seen.insert(Site.Loop);
      SourceLocation Loc = Site.Loop->getForLoc();
      std::string Why;
      std::optional<TreeReduction> R =
          M.match(Site.Block, Site.Index, Site.Loop, Why);
      if (!R) {
        Votes.reject(BI, Loc, Kind,
                     In + "not a shared-memory tree reduction: " + Why);
        continue;
      }
      if (MD.Found.isValid()) {
        Votes.reject(BI, Loc, Kind,
                     In + "the kernel reads " + MD.What + " (at " +
                         posText(PC, MD.Found) +
                         "); a reduction over " +
                         R->Shared->getNameAsString() +
                         "[threadIdx.x] in a multi-dimensional block is not "
                         "handled");
        continue;
      }
      if (R->Width == "blockDim.x" && !NotPow2.empty()) {
        Votes.reject(BI, Loc, Kind,
                     In + "the tree starts at blockDim.x / 2, which reduces "
                          "every value only when blockDim.x is a power of "
                          "two, and " + NotPow2.str());
        continue;
      }
      Matched.push_back({Site.Loop, std::move(*R)});
    }
    for (const ForStmt *F : LF.All)
      if (!Seen.count(F))
        Votes.reject(BI, F->getForLoc(), Kind,
                     In + "not a shared-memory tree reduction: the loop is "
                          "not a statement of a { } block, so the store and "
                          "barrier before it cannot be matched");

    for (auto &[F, R] : Matched) {
      SourceLocation Loc = F->getForLoc();
      std::string Arr = R.Shared->getNameAsString();
      // Every other use of the arrays must read the result, s[0].
      std::string OtherUse;
      for (const VarDecl *A : {R.Shared, R.IdxShared}) {
        if (!A || !OtherUse.empty())
          continue;
        std::vector<SourceRange> Allowed;
        for (auto &[F2, R2] : Matched)
          if (R2.Shared == A || R2.IdxShared == A)
            Allowed.push_back({R2.Store->getBeginLoc(), R2.Last->getEndLoc()});
        bool Local = A->isLocalVarDecl();
        SharedUses Uses(SM, A, Allowed, /*SkipKernels=*/!Local);
        Uses.TraverseStmt(Body);
        if (!Local)
          Uses.TraverseDecl(Ctx.getTranslationUnitDecl());
        std::string AN = A->getNameAsString();
        if (Uses.Other.isValid())
          OtherUse = "'" + AN + "' is also used at " +
                     posText(PC, Uses.Other) +
                     ", other than reading the result " + AN +
                     "[0]; the rewrite leaves different partial values in " +
                     AN + "[1..]";
      }
      if (!OtherUse.empty()) {
        Votes.reject(BI, Loc, Kind, In + OtherUse);
        continue;
      }
      std::string ValueText = PC.text(R.Value->getSourceRange());
      std::string ElemText = arrayElementTypeText(PC, R.Shared);
      std::string IdxValueText, IdxElemText;
      if (R.isArg()) {
        IdxValueText = PC.text(R.IdxValue->getSourceRange());
        IdxElemText = arrayElementTypeText(PC, R.IdxShared);
      }
      SourceLocation Begin = R.Store->getBeginLoc();
      SourceLocation End =
          endOfStatement(R.Last, PC.sourceManager(), PC.langOpts());
      std::optional<TextEdit> Edit;
      if (!ValueText.empty() && End.isValid() &&
          (!R.isArg() || !IdxValueText.empty()))
        Edit =
            makeEdit(PC, CharSourceRange::getCharRange(Begin, End),
                     emit(PC, R, N, ValueText, ElemText, IdxValueText,
                          IdxElemText, lineIndent(Begin, PC.sourceManager())));
      if (!Edit) {
        Votes.reject(BI, Loc, Kind,
                     In + "the reduction's text comes from a macro "
                          "expansion; it cannot be rewritten");
        continue;
      }
      // One message for every instantiation of a functor reduction (their
      // votes must agree): which operation each one is does not matter to
      // the rewrite.
      std::string What = R.Functor ? "'" + R.Combine +
                                         "' (a sum, max or min in every "
                                         "instantiation)"
                                   : opName(R.Op).str();
      std::string Of = R.isArg() ? "(" + Arr + ", " +
                                       R.IdxShared->getNameAsString() + ")"
                                 : "'" + Arr + "'";
      std::string Msg = Named + "the " + What + " tree reduction of " + Of +
                        " over " +
                        (R.Width == "blockDim.x" ? std::string("blockDim.x")
                                                 : R.Width) +
                        " threads" +
                        (R.Tail ? " (with its volatile warp tail, a race on "
                                  "Volta and later)"
                                : "") +
                        " now reduces with warp shuffles and one "
                        "shared-memory step; " + Arr + "[0]" +
                        (R.isArg() ? " and " + R.IdxShared->getNameAsString() +
                                         "[0] hold"
                                   : std::string(" holds")) +
                        " the result after a barrier as before";
      if (R.isArg())
        Msg += std::string(" (the combine keeps the ") +
               (R.Op == ReduceOp::ArgMax ? "larger" : "smaller") +
               " value, then the lower index: the same pair in any order, "
               "unless a value is NaN)";
      if ((R.Op == ReduceOp::Sum || R.Functor) &&
          Ctx.getAsArrayType(R.Shared->getType())
                                       ->getElementType()
                                       ->isFloatingType())
        Msg += R.Functor ? " (floating-point sums are reassociated and may "
                           "differ in the last bits)"
                         : " (floating-point additions are reassociated; the "
                           "sum may differ in the last bits)";
      Votes.accept(BI, Loc, Kind, {*Edit}, Msg);
    }
  }
}

} // namespace

void WarpReducePass::run(PassContext &PC) {
  const KernelInfo &K = PC.kernel();
  ASTContext &Ctx = PC.astContext();
  Names N{freshIdentifier(Ctx, "astra_wr_val"),
          freshIdentifier(Ctx, "astra_wr_count"),
          freshIdentifier(Ctx, "astra_wr_lanes"),
          freshIdentifier(Ctx, "astra_wr_mask"),
          freshIdentifier(Ctx, "astra_wr_off"),
          freshIdentifier(Ctx, "astra_wr_warps"),
          freshIdentifier(Ctx, "astra_wr_idx"),
          freshIdentifier(Ctx, "astra_wr_oval"),
          freshIdentifier(Ctx, "astra_wr_oidx")};
  EditSet ES;
  SiteVotes Votes(kernelBodies(K.Decl));
  // Whether a kernel's launches all pass power-of-two blocks (empty) or why
  // not.
  auto NotPow2 = [&](const FunctionDecl *Kernel) {
    std::string Why;
    return findLaunches(Ctx, Kernel).blockXPowerOfTwo(&Why) ? std::string()
                                                            : Why;
  };
  std::string MineNotPow2 = NotPow2(K.Decl);
  voteOnBodies(PC, Votes, N, nullptr, "", MineNotPow2);
  Votes.resolve(PC, ES);

  // Helpers the kernel calls. The rewrite of a helper changes it for every
  // kernel that calls it, and their block shapes matter to it too: a helper
  // that any kernel of the file reading threadIdx.y or .z calls stays as it
  // is.
  auto Scan = [&](const FunctionDecl *Kernel, HelperFinder &HF,
                  MultiDimFinder &MD) {
    for (const KernelBody &B : kernelBodies(Kernel))
      if (Stmt *Body = B.FD->getBody()) {
        HF.TraverseStmt(Body);
        if (!MD.Found.isValid())
          MD.TraverseStmt(Body);
      }
  };
  HelperFinder HF(PC.sourceManager());
  MultiDimFinder Mine;
  Scan(K.Decl, HF, Mine);
  // The other kernels that read threadIdx.y or .z, and their helpers.
  // The other kernels that read threadIdx.y or .z, and their helpers; and
  // the other kernels whose launches may pass blocks that are not powers
  // of two.
  std::vector<std::pair<std::vector<const FunctionDecl *>, MultiDimFinder>>
      MultiDim;
  std::vector<std::pair<std::vector<const FunctionDecl *>, std::string>>
      OddBlocks;
  if (!HF.Helpers.empty())
    for (const KernelInfo &Other : PC.allKernels()) {
      if (Other.Decl == K.Decl)
        continue;
      HelperFinder OtherHF(PC.sourceManager());
      MultiDimFinder OtherMD;
      Scan(Other.Decl, OtherHF, OtherMD);
      if (OtherMD.Found.isValid())
        MultiDim.push_back({OtherHF.Helpers, OtherMD});
      if (std::string Why = NotPow2(Other.Decl); !Why.empty())
        OddBlocks.push_back({OtherHF.Helpers, "kernel '" + Other.Name +
                                                  "', which calls it too: " +
                                                  Why});
    }
  for (const FunctionDecl *H : HF.Helpers) {
    MultiDimFinder Caller = Mine;
    for (auto &[Helpers, MD] : MultiDim)
      if (!Caller.Found.isValid() && is_contained(Helpers, H))
        Caller = MD;
    std::string CallerNotPow2 = MineNotPow2;
    for (auto &[Helpers, Why] : OddBlocks)
      if (CallerNotPow2.empty() && is_contained(Helpers, H))
        CallerNotPow2 = Why;
    SiteVotes HV(kernelBodies(H));
    voteOnBodies(PC, HV, N, &Caller, H->getName(), CallerNotPow2);
    HV.resolve(PC, ES);
  }
  ES.commit(PC);
}

} // namespace astra
