//===- FlatVectorize.cpp - Vector accesses in flat 2-D index loops --------===//
//
// The loop
//
//   for (IT idx = <global index>; idx < n; idx += <grid stride>) {
//     <row decl> i = idx / cols;
//     <col decl> c = idx % cols;
//     <rest>
//   }
//
// becomes
//
//   if (cols % VEC == 0 && <every vectorized pointer 16-byte aligned>) {
//     constexpr int astra_vec = VEC;
//     for (IT astra_v = <global index>; astra_v < n / astra_vec; astra_v += <grid stride>) {
//       const IT astra_idx0 = astra_v * astra_vec;
//       <row decl> i = astra_idx0 / cols;
//       const int astra_c0 = astra_idx0 % cols;
//       <16-byte loads of the chunk of each read buffer>
//       #pragma unroll
//       for (int astra_k = 0; astra_k < astra_vec; ++astra_k) {
//         const IT idx = astra_idx0 + astra_k;   <col decl> c = astra_c0 + astra_k;
//         <rest, with the vectorized accesses reading and writing the chunk>
//       }
//       <16-byte stores of each written buffer>
//     }
//     for (IT idx = n / astra_vec * astra_vec + <global index>; ...) <body>   // tail
//   } else if (cols % VEC8 == 0 && <8-byte aligned>) {
//     <the same with 8-byte (uint2) accesses>
//   } else {
//     <the original loop>
//   }
//
//===----------------------------------------------------------------------===//
#include "FlatVectorize.h"

#include "utils/CudaIdioms.h"
#include "utils/Mutation.h"
#include "utils/PassSupport.h"
#include "utils/SourceText.h"

#include "clang/AST/ParentMap.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <map>
#include <set>

using namespace clang;
using namespace llvm;

namespace astra {

using namespace cudaidiom;

namespace {

/// A grid-stride loop whose body starts with the row/column split.
struct FlatLoop {
  const ForStmt *Loop = nullptr;
  const VarDecl *Idx = nullptr;
  const Expr *Start = nullptr, *Bound = nullptr, *Step = nullptr;
  const DeclStmt *RowDecl = nullptr, *ColDecl = nullptr;
  const VarDecl *Row = nullptr, *Col = nullptr;
  const Expr *Cols = nullptr; ///< The divisor.
  std::vector<const Stmt *> Rest;
  /// A block-stride loop (`threadIdx.x`, `+= blockDim.x`): a block's threads
  /// cover the range together, each block all of it.
  bool Block = false;
};

/// A vectorized buffer: the chunk of one pointer (a parameter, or a row
/// pointer of the body) at one base.
struct Buffer {
  const VarDecl *Ptr = nullptr;
  std::string Base; ///< Text of the chunk's first element offset.
  std::vector<const ArraySubscriptExpr *> Accesses;
  bool Read = false, Write = false;
  uint64_t ElemSize = 0;
  std::string Name, Type;
  /// Texts that must be multiples of the chunk for it to be aligned (the
  /// offset added to the column when it is not a multiple of cols).
  std::vector<std::string> Align;
  /// The offset added to the column when it is the same in every
  /// iteration ("0" for the column itself), else empty.
  std::string Offset;
  /// `atomicAdd(&p[...], v);` when the chunk is added to memory: the
  /// elements collect the values, one vector atomic add writes them.
  const CallExpr *Red = nullptr;
  /// Loaded in the neighbour loop of an InnerSum, once per iteration.
  bool Inner = false;
};

/// A sum over an inner loop whose terms move with the column, sage_mean's
///   const int64_t begin = rowptr[r], end = rowptr[r + 1];   // Pre
///   float sum = 0.0f;                                       // Acc
///   for (int64_t e = begin; e < end; ++e)                   // Loop
///     sum += x[col[e] * F + f];                             // Update
/// The chunk runs the loop once, with one 16-byte load per iteration and one
/// sum per element, instead of each element running it with scalar loads.
struct InnerSum {
  std::vector<const DeclStmt *> Pre;
  const DeclStmt *AccDecl = nullptr;
  const VarDecl *Acc = nullptr;
  const ForStmt *Loop = nullptr;
  const VarDecl *E = nullptr;
  const CompoundAssignOperator *Update = nullptr;
};

/// A pointer the loop body declares first thing as a row's part of a
/// pointer parameter, `T *h = heads + head * head_size;`: the same for the
/// chunk's elements, so the chunk loop declares it before its loads.
struct RowPointer {
  const VarDecl *Var = nullptr;
  const DeclStmt *Decl = nullptr;
  const ParmVarDecl *Base = nullptr;
  std::vector<std::string> Align; ///< Must be multiples of the chunk.
};

/// A call of a helper whose loop is rewritten: the kernel body it is in.
struct CallSite {
  const FunctionDecl *Caller = nullptr;
  const CallExpr *Call = nullptr;
};

/// Whether \p E has the same value for every thread and iteration: integer
/// literals, never-changed integer parameters, constants, and arithmetic on
/// them.
bool uniformInt(const Expr *E, const FunctionDecl *FD, const ASTContext &Ctx,
                unsigned Depth = 0) {
  E = E->IgnoreParens();
  if (isa<IntegerLiteral>(E))
    return true;
  if (const auto *C = dyn_cast<CastExpr>(E))
    return C->getType()->isIntegerType() &&
           uniformInt(C->getSubExpr(), FD, Ctx, Depth);
  if (const auto *U = dyn_cast<UnaryOperator>(E))
    return (U->getOpcode() == UO_Minus || U->getOpcode() == UO_Plus) &&
           uniformInt(U->getSubExpr(), FD, Ctx, Depth);
  if (const auto *B = dyn_cast<BinaryOperator>(E))
    return (B->isMultiplicativeOp() || B->isAdditiveOp() ||
            B->isShiftOp() || B->isBitwiseOp()) &&
           uniformInt(B->getLHS(), FD, Ctx, Depth) &&
           uniformInt(B->getRHS(), FD, Ctx, Depth);
  if (const auto *R = dyn_cast<DeclRefExpr>(E)) {
    if (isa<EnumConstantDecl>(R->getDecl()))
      return true;
    const auto *V = dyn_cast<VarDecl>(R->getDecl());
    if (!V || !V->getType()->isIntegerType())
      return false;
    if (isa<ParmVarDecl>(V))
      return !mayModify(FD->getBody(), V);
    // A local computed from such values and never changed (hoist's
    // `const int64_t astra_inv = n * cols;`).
    if (V->hasLocalStorage())
      return V->getInit() && Depth < 8 && !mayModify(FD->getBody(), V) &&
             uniformInt(V->getInit(), FD, Ctx, Depth + 1);
    return V->getType().isConstQualified() && V->getInit() &&
           constInt(Ctx, V->getInit()).has_value();
  }
  return false;
}

/// The variable a declaration statement declares alone, else null.
const VarDecl *singleVar(const Stmt *S) {
  const auto *DS = dyn_cast_or_null<DeclStmt>(S);
  return DS && DS->isSingleDecl() ? dyn_cast<VarDecl>(DS->getSingleDecl())
                                  : nullptr;
}

/// `V = <E> / cols` (\p Op BO_Div) or `<E> % cols` (BO_Rem) with E the loop
/// variable: the divisor, else null.
const Expr *splitOf(const VarDecl *V, const VarDecl *Idx,
                    BinaryOperatorKind Op) {
  if (!V->getInit() || !V->getType()->isIntegerType())
    return nullptr;
  const auto *B = dyn_cast<BinaryOperator>(stripIntCasts(V->getInit()));
  if (!B || B->getOpcode() != Op || !refersTo(B->getLHS(), Idx))
    return nullptr;
  return B->getRHS();
}

/// Matches the loop header and the split. Returns false, with \p Why empty,
/// for loops that are not this idiom at all.
bool matchLoop(const ForStmt *F, const FunctionDecl *FD, const ASTContext &Ctx,
               FlatLoop &L, std::string &Why) {
  const auto *Inc = dyn_cast_or_null<CompoundAssignOperator>(F->getInc());
  if (!Inc || Inc->getOpcode() != BO_AddAssign)
    return false;
  BuiltinRef StepRef = matchBuiltin(Inc->getRHS());
  bool Block = StepRef.Var == Builtin::BlockDim && StepRef.Dim == 'x';
  if (!Block && !isGridStrideStep(Inc->getRHS()))
    return false;
  const VarDecl *Idx = singleVar(F->getInit());
  if (!Idx || !Idx->getInit() || !Idx->getType()->isIntegerType() ||
      !refersTo(Inc->getLHS(), Idx))
    return false;
  BuiltinRef StartRef = matchBuiltin(Idx->getInit());
  if (Block ? !(StartRef.Var == Builtin::ThreadIdx && StartRef.Dim == 'x')
            : !isGlobalThreadIndex(Idx->getInit()))
    return false;
  L.Block = Block;
  const auto *Body = dyn_cast<CompoundStmt>(F->getBody());
  if (!Body)
    return false;
  // The split: the first two statements, in either order.
  for (const Stmt *S : Body->body()) {
    const auto *D = dyn_cast<DeclStmt>(S);
    const VarDecl *V = singleVar(S);
    if (!V)
      break;
    if (const Expr *C = splitOf(V, Idx, BO_Div); C && !L.Row) {
      L.Row = V, L.RowDecl = D, L.Cols = C;
    } else if (const Expr *C = splitOf(V, Idx, BO_Rem); C && !L.Col) {
      L.Col = V, L.ColDecl = D;
      if (L.Cols && !sameExpr(Ctx, L.Cols, C))
        L.Cols = nullptr;
      else
        L.Cols = C;
    } else {
      break;
    }
    if (L.Row && L.Col)
      break;
  }
  if (!L.Row && !L.Col)
    return false;
  L.Loop = F;
  L.Idx = Idx;
  L.Start = Idx->getInit();
  L.Step = Inc->getRHS();
  std::string IdxName = Idx->getNameAsString();
  if (!L.Row || !L.Col || !L.Cols) {
    Why = "the body does not start with the row and the column of '" +
          IdxName + "' by one divisor (`i = " + IdxName + " / cols; c = " +
          IdxName + " % cols;`)";
    return true;
  }
  const auto *Cond = dyn_cast_or_null<BinaryOperator>(
      F->getCond() ? F->getCond()->IgnoreParenImpCasts() : nullptr);
  if (Cond && Cond->getOpcode() == BO_LT && refersTo(Cond->getLHS(), Idx))
    L.Bound = Cond->getRHS();
  else if (Cond && Cond->getOpcode() == BO_GT && refersTo(Cond->getRHS(), Idx))
    L.Bound = Cond->getLHS();
  if (!L.Bound) {
    Why = "the condition is not `" + IdxName + " < n`";
    return true;
  }
  if (!uniformInt(L.Bound, FD, Ctx) || !uniformInt(L.Cols, FD, Ctx)) {
    Why = "the bound or the divisor is not made of unchanged integer "
          "parameters and constants";
    return true;
  }
  // Rest: everything after the later of the two declarations.
  L.Rest.clear();
  bool SeenRow = false, SeenCol = false;
  for (const Stmt *S : Body->body()) {
    if (SeenRow && SeenCol)
      L.Rest.push_back(S);
    SeenRow |= S == L.RowDecl;
    SeenCol |= S == L.ColDecl;
  }
  return true;
}

/// Finds the loops of a body.
struct LoopFinder : RecursiveASTVisitor<LoopFinder> {
  std::vector<const ForStmt *> Loops;
  bool VisitForStmt(ForStmt *F) {
    Loops.push_back(F);
    return true;
  }
};

/// Every expression of a kind under some statements.
template <typename T> std::vector<const T *> collect(ArrayRef<const Stmt *> S) {
  struct Finder : RecursiveASTVisitor<Finder> {
    std::vector<const T *> Found;
    bool VisitStmt(Stmt *X) {
      if (const auto *E = dyn_cast<T>(X))
        Found.push_back(E);
      return true;
    }
  } Fi;
  for (const Stmt *X : S)
    Fi.TraverseStmt(const_cast<Stmt *>(X));
  return Fi.Found;
}

/// The first call under \p S of a user function that reads the thread's
/// position or has no body to look into (calls of system functions, atomics
/// among them, are fine: they behave the same in whichever thread runs
/// them); null when there is none.
const CallExpr *threadDependentCall(ArrayRef<const Stmt *> S,
                                    const SourceManager &SM, unsigned Depth) {
  for (const CallExpr *CE : collect<CallExpr>(S)) {
    if (!systemCalleeName(SM, CE).empty())
      continue;
    const FunctionDecl *Callee = CE->getDirectCallee();
    const FunctionDecl *Def = nullptr;
    if (!Callee || !Callee->hasBody(Def) || Depth > 4)
      return CE;
    if (isSystemFunction(SM, Callee))
      continue;
    const Stmt *B = Def->getBody();
    for (Builtin X : {Builtin::ThreadIdx, Builtin::BlockIdx, Builtin::BlockDim,
                      Builtin::GridDim})
      if (usesBuiltin(B, X, 0))
        return CE;
    if (threadDependentCall({B}, SM, Depth + 1))
      return CE;
  }
  return nullptr;
}

/// The parameter of \p Caller that the pointer \p E is computed from
/// (through pointer arithmetic, casts, `&p[i]` and locals that never
/// change), or null.
const ParmVarDecl *pointerRoot(const FunctionDecl *Caller, const Expr *E,
                               unsigned Depth = 0) {
  if (!E || Depth > 8)
    return nullptr;
  E = E->IgnoreParenCasts();
  if (const auto *R = dyn_cast<DeclRefExpr>(E)) {
    const auto *V = dyn_cast<VarDecl>(R->getDecl());
    if (!V || !V->getType()->isPointerType() ||
        mayModify(Caller->getBody(), V))
      return nullptr;
    if (const auto *P = dyn_cast<ParmVarDecl>(V))
      return P->getDeclContext() == Caller ? P : nullptr;
    if (V->hasLocalStorage() && V->getInit())
      return pointerRoot(Caller, V->getInit(), Depth + 1);
    return nullptr;
  }
  if (const auto *B = dyn_cast<BinaryOperator>(E)) {
    if (B->getOpcode() != BO_Add && B->getOpcode() != BO_Sub)
      return nullptr;
    if (B->getLHS()->getType()->isPointerType())
      return pointerRoot(Caller, B->getLHS(), Depth + 1);
    if (B->getOpcode() == BO_Add && B->getRHS()->getType()->isPointerType())
      return pointerRoot(Caller, B->getRHS(), Depth + 1);
    return nullptr;
  }
  if (const auto *U = dyn_cast<UnaryOperator>(E))
    if (U->getOpcode() == UO_AddrOf)
      if (const auto *A =
              dyn_cast<ArraySubscriptExpr>(U->getSubExpr()->IgnoreParens()))
        return pointerRoot(Caller, A->getBase(), Depth + 1);
  return nullptr;
}

/// Whether \p E has one value in all threads of a block (\p Block) or of
/// the grid where \p Caller evaluates it: literals, parameters and locals
/// that never change, blockIdx (a block's only), blockDim, gridDim,
/// arithmetic on them, and loads at such indices through a
/// `const T *__restrict__` parameter (memory this kernel does not write).
bool uniformValue(const FunctionDecl *Caller, const Expr *E, bool Block,
                  unsigned Depth = 0) {
  if (!E || Depth > 8)
    return false;
  if (BuiltinRef B = matchBuiltin(E))
    return B.Var == Builtin::BlockDim || B.Var == Builtin::GridDim ||
           (Block && B.Var == Builtin::BlockIdx);
  E = E->IgnoreParenCasts();
  if (isa<IntegerLiteral, FloatingLiteral, CXXBoolLiteralExpr,
          CXXNullPtrLiteralExpr, UnaryExprOrTypeTraitExpr>(E))
    return true;
  if (const auto *R = dyn_cast<DeclRefExpr>(E)) {
    if (isa<EnumConstantDecl>(R->getDecl()))
      return true;
    const auto *V = dyn_cast<VarDecl>(R->getDecl());
    if (!V)
      return false;
    if (isa<ParmVarDecl>(V))
      return V->getDeclContext() == Caller &&
             !mayModify(Caller->getBody(), V);
    if (V->hasLocalStorage())
      return V->getInit() && !mayModify(Caller->getBody(), V) &&
             uniformValue(Caller, V->getInit(), Block, Depth + 1);
    return V->getType().isConstQualified() && V->getInit() &&
           V->getInit()->isEvaluatable(Caller->getASTContext());
  }
  if (const auto *B = dyn_cast<BinaryOperator>(E))
    return !B->isAssignmentOp() && B->getOpcode() != BO_Comma &&
           uniformValue(Caller, B->getLHS(), Block, Depth + 1) &&
           uniformValue(Caller, B->getRHS(), Block, Depth + 1);
  if (const auto *U = dyn_cast<UnaryOperator>(E))
    return !U->isIncrementDecrementOp() && U->getOpcode() != UO_Deref &&
           U->getOpcode() != UO_AddrOf &&
           uniformValue(Caller, U->getSubExpr(), Block, Depth + 1);
  if (const auto *C = dyn_cast<ConditionalOperator>(E))
    return uniformValue(Caller, C->getCond(), Block, Depth + 1) &&
           uniformValue(Caller, C->getTrueExpr(), Block, Depth + 1) &&
           uniformValue(Caller, C->getFalseExpr(), Block, Depth + 1);
  if (const auto *A = dyn_cast<ArraySubscriptExpr>(E)) {
    const ParmVarDecl *P = pointerRoot(Caller, A->getBase());
    return P && P->getType().isRestrictQualified() &&
           P->getType()->getPointeeType().isConstQualified() &&
           uniformValue(Caller, A->getBase(), Block, Depth + 1) &&
           uniformValue(Caller, A->getIdx(), Block, Depth + 1);
  }
  return false;
}

/// Whether every thread of \p Caller runs the call \p CE: it is a statement
/// of its own in the body's top block, and the body has no return (a
/// thread that left early would not take its part of the callee's loop).
bool everyThreadCalls(const FunctionDecl *Caller, const CallExpr *CE) {
  const auto *Body = dyn_cast_or_null<CompoundStmt>(Caller->getBody());
  if (!Body || !collect<ReturnStmt>({Body}).empty())
    return false;
  for (const Stmt *S : Body->body()) {
    if (const auto *EWC = dyn_cast<ExprWithCleanups>(S))
      S = EWC->getSubExpr();
    if (const auto *E = dyn_cast<Expr>(S))
      if (E->IgnoreImplicit() == CE)
        return true;
  }
  return false;
}

/// Where an access's chunk starts and what keeps it aligned.
struct ChunkIndex {
  std::string Base;   ///< "astra_idx0", "astra_c0" or "<T> + astra_c0".
  std::string Offset; ///< T when it never changes, "0" for the column.
  std::vector<std::string> Align; ///< Must be multiples of the chunk.
};

/// What the loop's rewrite moves: the buffers, the row pointers declared
/// before the loads, and the conditions that keep the chunks of a written
/// pointer apart.
struct LoopPlan {
  std::vector<Buffer> Buffers;
  std::vector<RowPointer> RowPtrs;
  std::optional<InnerSum> Sum;
  std::vector<std::string> Distinct; ///< `a != b`, texts of the pattern.
};

class Planner {
public:
  /// \p Sites: the calls of the helper \p FD, null for the kernel's own
  /// loops.
  Planner(PassContext &PC, const FunctionDecl *FD, const FlatLoop &L,
          const std::vector<CallSite> *Sites)
      : PC(PC), Ctx(PC.astContext()), SM(PC.sourceManager()), FD(FD), L(L),
        Sites(Sites), PM(const_cast<Stmt *>(FD->getBody())) {}

  /// The buffers to vectorize, or none with \p Why set.
  LoopPlan plan(std::string &Why);

private:
  bool conditional(const Stmt *S) const;
  /// The call when \p A is the target of `atomicAdd(&A, v);` whose old
  /// value is unused; null otherwise.
  const CallExpr *atomicAddAt(const ArraySubscriptExpr *A) const;
  /// Where the chunk of an index whose element runs with the column (or
  /// the flat index) starts; none for other indices. \p Uniform: variables
  /// besides the row that are the same for the whole chunk (an inner sum's
  /// loop variable and the declarations before it).
  std::optional<ChunkIndex>
  chunkIndex(const Expr *Index,
             const std::set<const ValueDecl *> &Uniform = {}) const;
  /// Texts whose being multiples of the chunk makes \p Off one: none
  /// when \p Off is a multiple of cols, nothing when no factor is known.
  std::optional<std::vector<std::string>> alignTerms(const Expr *Off) const;
  bool rowUniform(const Expr *E,
                  const std::set<const ValueDecl *> &Uniform = {}) const;
  void findRowPointers();
  const RowPointer *rowPointer(const VarDecl *V) const;
  /// The inner sum of the body, if it has that form (InnerSum).
  std::optional<InnerSum> findInnerSum() const;
  /// Where the chunk of an access in the inner sum's update starts: its
  /// offset may read the inner loop's variable too.
  std::optional<ChunkIndex> innerChunkIndex(const Expr *Index) const;
  /// The kernel parameter \p V points into, at call site \p S of the helper
  /// (null: the kernel's own loop).
  const ParmVarDecl *rootAt(const VarDecl *V, const CallSite *S) const;
  bool checkSites(std::string &Why) const;
  bool checkAliasing(const std::vector<Buffer> &Buffers,
                     std::string &Why) const;

  PassContext &PC;
  const ASTContext &Ctx;
  const SourceManager &SM;
  const FunctionDecl *FD;
  const FlatLoop &L;
  const std::vector<CallSite> *Sites;
  ParentMap PM;
  std::optional<InnerSum> Sum;
  std::set<const VarDecl *> Dirty; ///< Written or escaping pointers.
  std::vector<RowPointer> RowPtrs;
  /// The body without the row pointers' declarations.
  std::vector<const Stmt *> RestNoRows;
};

bool Planner::conditional(const Stmt *S) const {
  for (const Stmt *P = PM.getParent(S); P && P != L.Loop->getBody();
       S = P, P = PM.getParent(P)) {
    if (isa<IfStmt, ConditionalOperator, BinaryConditionalOperator, ForStmt,
            WhileStmt, DoStmt, SwitchStmt, CXXForRangeStmt, LambdaExpr>(P))
      return true;
    if (const auto *B = dyn_cast<BinaryOperator>(P))
      if (B->isLogicalOp() && B->getRHS() == S)
        return true;
  }
  return false;
}

const CallExpr *Planner::atomicAddAt(const ArraySubscriptExpr *A) const {
  const Stmt *P = PM.getParent(A);
  while (P && isa<ParenExpr>(P))
    P = PM.getParent(P);
  const auto *U = dyn_cast_or_null<UnaryOperator>(P);
  if (!U || U->getOpcode() != UO_AddrOf)
    return nullptr;
  P = PM.getParent(U);
  while (P && isa<ParenExpr, ImplicitCastExpr>(P))
    P = PM.getParent(P);
  const auto *CE = dyn_cast_or_null<CallExpr>(P);
  if (!CE || CE->getNumArgs() != 2 ||
      CE->getArg(0)->IgnoreParenImpCasts() != U ||
      systemCalleeName(SM, CE) != "atomicAdd")
    return nullptr;
  // A statement of its own: the old value is not used.
  return isa_and_nonnull<CompoundStmt>(PM.getParent(CE)) ? CE : nullptr;
}

/// Whether \p E is the same for the VEC elements of one chunk: it reads the
/// row, unchanged parameters (pointers not written in the loop), literals.
bool Planner::rowUniform(const Expr *E,
                         const std::set<const ValueDecl *> &Uniform) const {
  for (const DeclRefExpr *R : collect<DeclRefExpr>({E})) {
    const ValueDecl *D = R->getDecl();
    if (D == L.Row || isa<EnumConstantDecl>(D) || Uniform.count(D))
      continue;
    // Locals that never change in the function (`half = rot_dim / 2`).
    if (const auto *V = dyn_cast<VarDecl>(D);
        V && !isa<ParmVarDecl>(V) && V->getType()->isIntegerType() &&
        uniformInt(R, FD, Ctx))
      continue;
    const auto *P = dyn_cast<ParmVarDecl>(D);
    if (!P || mayModify(FD->getBody(), P))
      return false;
    if (P->getType()->isPointerType() && Dirty.count(P))
      return false;
    if (!P->getType()->isPointerType() && !P->getType()->isIntegerType())
      return false;
  }
  return collect<CallExpr>({E}).empty();
}

std::optional<std::vector<std::string>>
Planner::alignTerms(const Expr *Off) const {
  Off = stripIntCasts(Off);
  auto Text = [&](const Expr *E) -> std::optional<std::string> {
    std::string T = PC.text(E->getSourceRange());
    if (T.empty() || !PC.isEditable(E->getSourceRange()))
      return std::nullopt;
    return T;
  };
  if (const auto *B = dyn_cast<BinaryOperator>(Off)) {
    if (B->getOpcode() == BO_Mul) {
      // One factor that is a multiple of the chunk is enough.
      for (const Expr *F : {B->getRHS(), B->getLHS()})
        if (sameExpr(Ctx, stripIntCasts(F), L.Cols))
          return std::vector<std::string>{};
      for (const Expr *F : {B->getRHS(), B->getLHS()})
        if (uniformInt(F, FD, Ctx))
          if (std::optional<std::string> T = Text(F))
            return std::vector<std::string>{*T};
      if (auto A = alignTerms(B->getLHS()))
        return A;
      return alignTerms(B->getRHS());
    }
    if (B->isAdditiveOp()) {
      auto A = alignTerms(B->getLHS()), C = alignTerms(B->getRHS());
      if (!A || !C)
        return std::nullopt;
      A->insert(A->end(), C->begin(), C->end());
      return A;
    }
  }
  if (sameExpr(Ctx, Off, L.Cols))
    return std::vector<std::string>{};
  if (uniformInt(Off, FD, Ctx))
    if (std::optional<std::string> T = Text(Off))
      return std::vector<std::string>{*T};
  return std::nullopt;
}

std::optional<ChunkIndex>
Planner::chunkIndex(const Expr *Index,
                    const std::set<const ValueDecl *> &Uniform) const {
  const Expr *I = stripIntCasts(Index);
  if (refersTo(I, L.Idx))
    return ChunkIndex{"astra_idx0", "", {}};
  if (refersTo(I, L.Col))
    return ChunkIndex{"astra_c0", "0", {}};
  const auto *Add = dyn_cast<BinaryOperator>(I);
  if (!Add || Add->getOpcode() != BO_Add)
    return std::nullopt;
  const Expr *T = nullptr;
  if (refersTo(Add->getRHS(), L.Col))
    T = Add->getLHS();
  else if (refersTo(Add->getLHS(), L.Col))
    T = Add->getRHS();
  if (!T || mentionsDecl(T, L.Idx) || mentionsDecl(T, L.Col))
    return std::nullopt;
  // T must be the same for the whole chunk, and a multiple of it (so the
  // chunk stays aligned): a multiple of cols, or checked before the loop.
  bool Invariant = uniformInt(T, FD, Ctx);
  if (!Invariant && !rowUniform(T, Uniform))
    return std::nullopt;
  std::optional<std::vector<std::string>> Align = alignTerms(T);
  std::string Text = PC.text(T->getSourceRange());
  if (!Align || Text.empty() || !PC.isEditable(T->getSourceRange()))
    return std::nullopt;
  return ChunkIndex{Text + " + astra_c0", Invariant ? Text : "", *Align};
}

void Planner::findRowPointers() {
  for (const Stmt *S : L.Rest) {
    const VarDecl *V = singleVar(S);
    if (!V || !V->getType()->isPointerType() || !V->getInit() ||
        mayModify(L.Loop->getBody(), V)) {
      RestNoRows.push_back(S);
      continue;
    }
    const Expr *E = V->getInit()->IgnoreParenImpCasts();
    const Expr *Base = E, *Off = nullptr;
    if (const auto *B = dyn_cast<BinaryOperator>(E);
        B && B->getOpcode() == BO_Add) {
      bool LeftPtr = B->getLHS()->getType()->isPointerType();
      Base = (LeftPtr ? B->getLHS() : B->getRHS())->IgnoreParenImpCasts();
      Off = LeftPtr ? B->getRHS() : B->getLHS();
    }
    const auto *R = dyn_cast<DeclRefExpr>(Base);
    const auto *P = R ? dyn_cast<ParmVarDecl>(R->getDecl()) : nullptr;
    std::optional<std::vector<std::string>> Align =
        Off ? alignTerms(Off) : std::vector<std::string>{};
    if (!P || !P->getType()->isPointerType() ||
        mayModify(FD->getBody(), P) || !Align ||
        (Off && (mentionsDecl(Off, L.Idx) || mentionsDecl(Off, L.Col)))) {
      RestNoRows.push_back(S);
      continue;
    }
    RowPtrs.push_back({V, cast<DeclStmt>(S), P, *Align});
  }
}

std::optional<InnerSum> Planner::findInnerSum() const {
  InnerSum S;
  size_t I = 0;
  ArrayRef<const Stmt *> Rest = L.Rest;
  // Integer declarations the same for the whole row, never changed.
  for (; I < Rest.size(); ++I) {
    const VarDecl *V = singleVar(Rest[I]);
    if (!V || !V->getType()->isIntegerType() || !V->getInit() ||
        mayModify(L.Loop->getBody(), V) || !rowUniform(V->getInit()))
      break;
    S.Pre.push_back(cast<DeclStmt>(Rest[I]));
  }
  // The accumulator: a scalar started at a literal.
  if (I + 1 >= Rest.size())
    return std::nullopt;
  const VarDecl *Acc = singleVar(Rest[I]);
  if (!Acc || !Acc->getType()->isArithmeticType() || !Acc->getInit() ||
      !isa<IntegerLiteral, FloatingLiteral>(
          Acc->getInit()->IgnoreParenImpCasts()))
    return std::nullopt;
  S.AccDecl = cast<DeclStmt>(Rest[I]);
  S.Acc = Acc;
  // The loop: `for (IT e = lo; e < hi; ++e) acc += term;`.
  const auto *F = dyn_cast<ForStmt>(Rest[I + 1]);
  const VarDecl *E = F ? singleVar(F->getInit()) : nullptr;
  if (!E || !E->getType()->isIntegerType() || !E->getInit() || !F->getCond() ||
      !F->getInc())
    return std::nullopt;
  const auto *Cond = dyn_cast<BinaryOperator>(F->getCond()->IgnoreParenImpCasts());
  const auto *Inc = dyn_cast<UnaryOperator>(F->getInc()->IgnoreParenImpCasts());
  if (!Cond || Cond->getOpcode() != BO_LT || !refersTo(Cond->getLHS(), E) ||
      !Inc || !Inc->isIncrementOp() || !refersTo(Inc->getSubExpr(), E))
    return std::nullopt;
  const Stmt *Body = F->getBody();
  if (const auto *CS = dyn_cast<CompoundStmt>(Body))
    Body = CS->size() == 1 ? CS->body_front() : nullptr;
  const auto *U = dyn_cast_or_null<CompoundAssignOperator>(Body);
  if (!U || U->getOpcode() != BO_AddAssign || !refersTo(U->getLHS(), Acc) ||
      mentionsDecl(U->getRHS(), Acc) || !mentionsDecl(U->getRHS(), E))
    return std::nullopt;
  S.Loop = F;
  S.E = E;
  S.Update = U;
  // The bounds read only the row, parameters and the declarations before.
  std::set<const ValueDecl *> Before;
  for (const DeclStmt *DS : S.Pre)
    Before.insert(cast<VarDecl>(DS->getSingleDecl()));
  for (const Expr *X : {E->getInit(), static_cast<const Expr *>(Cond->getRHS())})
    for (const DeclRefExpr *R : collect<DeclRefExpr>({X})) {
      const ValueDecl *D = R->getDecl();
      // Parameters never changed, and no pointer the body writes (the
      // bounds must be the same for every element of the row).
      if (D != L.Row && !Before.count(D) && !isa<EnumConstantDecl>(D) &&
          !(isa<ParmVarDecl>(D) &&
            !mayModify(FD->getBody(), cast<VarDecl>(D)) &&
            !Dirty.count(cast<VarDecl>(D))))
        return std::nullopt;
    }
  // e is the loop's own; in the loop the accumulator is only added to
  // (after it, each element reads or changes its own copy).
  if (mayModify(F->getBody(), E) || referencesTo(F, Acc).size() != 1)
    return std::nullopt;
  return S;
}

std::optional<ChunkIndex>
Planner::innerChunkIndex(const Expr *Index) const {
  std::set<const ValueDecl *> Uniform = {Sum->E};
  for (const DeclStmt *DS : Sum->Pre)
    Uniform.insert(singleVar(DS));
  std::optional<ChunkIndex> CI = chunkIndex(Index, Uniform);
  // Loads at the column itself or the flat index are the same every
  // iteration: no reason to load them in the loop.
  if (CI && (CI->Base == "astra_c0" || CI->Base == "astra_idx0"))
    return std::nullopt;
  return CI;
}

const RowPointer *Planner::rowPointer(const VarDecl *V) const {
  for (const RowPointer &R : RowPtrs)
    if (R.Var == V)
      return &R;
  return nullptr;
}

const ParmVarDecl *Planner::rootAt(const VarDecl *V,
                                   const CallSite *S) const {
  if (const RowPointer *R = rowPointer(V))
    V = R->Base;
  const auto *P = dyn_cast<ParmVarDecl>(V);
  if (!P && V->hasLocalStorage() && V->getInit() &&
      !mayModify(FD->getBody(), V))
    P = pointerRoot(FD, V->getInit());
  if (!P || mayModify(FD->getBody(), P))
    return nullptr;
  if (!S)
    return P;
  unsigned I = P->getFunctionScopeIndex();
  return I < S->Call->getNumArgs() ? pointerRoot(S->Caller, S->Call->getArg(I))
                                   : nullptr;
}

bool Planner::checkSites(std::string &Why) const {
  if (!Sites)
    return true;
  if (Sites->empty()) {
    Why = "'" + FD->getNameAsString() + "' is not called from the kernel";
    return false;
  }
  for (const CallSite &S : *Sites) {
    std::string At = posText(PC, S.Call->getBeginLoc());
    if (!everyThreadCalls(S.Caller, S.Call)) {
      Why = "the call of '" + FD->getNameAsString() + "' at " + At +
            " is not run by every thread (it is not a statement of its own "
            "in the kernel's top block, or the kernel returns early); the "
            "threads share the loop";
      return false;
    }
    for (const Expr *A : S.Call->arguments())
      if (!uniformValue(S.Caller, A, L.Block)) {
        Why = "the argument '" + PC.text(A->getSourceRange()) + "' at " +
              At + " may differ between the threads of " +
              (L.Block ? "a block" : "the grid") +
              ", which share the loop";
        return false;
      }
  }
  return true;
}

bool Planner::checkAliasing(const std::vector<Buffer> &Buffers,
                            std::string &Why) const {
  // The pointers the body uses, in source order.
  std::vector<const VarDecl *> Ptrs;
  for (const DeclRefExpr *R : collect<DeclRefExpr>(RestNoRows)) {
    const auto *V = dyn_cast<VarDecl>(R->getDecl());
    if (V && V->getType()->isPointerType() && !is_contained(Ptrs, V))
      Ptrs.push_back(V);
  }
  std::vector<const CallSite *> At;
  if (Sites)
    for (const CallSite &S : *Sites)
      At.push_back(&S);
  else
    At.push_back(nullptr);
  std::set<const VarDecl *> Done;
  for (const Buffer &B : Buffers) {
    if (!Done.insert(B.Ptr).second)
      continue;
    // A vectorized pointer points into a __restrict__ parameter at every
    // call: nothing else, a callee writing through a global pointer
    // included, may change what its chunk loads early or stores late.
    for (const CallSite *S : At)
      if (const ParmVarDecl *RB = rootAt(B.Ptr, S);
          !RB || !RB->getType().isRestrictQualified()) {
        Why = "'" + B.Ptr->getNameAsString() + "' does not point into a " +
              "__restrict__ parameter" +
              (S ? " at the call at " + posText(PC, S->Call->getBeginLoc())
                 : std::string()) +
              (RB ? " ('" + RB->getNameAsString() + "')" : std::string());
        return false;
      }
    for (const VarDecl *Q : Ptrs) {
      if (Q == B.Ptr || (!Dirty.count(B.Ptr) && !Dirty.count(Q)))
        continue;
      std::string Pair = "'" + B.Ptr->getNameAsString() + "' and '" +
                         Q->getNameAsString() + "'";
      for (const CallSite *S : At) {
        std::string Where =
            S ? " (call at " + posText(PC, S->Call->getBeginLoc()) + ")" : "";
        const ParmVarDecl *RB = rootAt(B.Ptr, S), *RQ = rootAt(Q, S);
        if (!RB || !RQ) {
          Why = "cannot tell what " + Pair + " point into" + Where +
                "; the chunk's loads and stores would move past the other's "
                "accesses";
          return false;
        }
        if (RB == RQ || (!RB->getType().isRestrictQualified() &&
                         !RQ->getType().isRestrictQualified())) {
          Why = Pair + " may overlap" + Where +
                (RB == RQ ? " (both point into '" + RB->getNameAsString() +
                                "')"
                          : " (neither points into a __restrict__ "
                            "parameter)") +
                "; the chunk's loads and stores would move past the other's "
                "accesses";
          return false;
        }
      }
    }
  }
  return true;
}

LoopPlan Planner::plan(std::string &Why) {
  ArrayRef<const Stmt *> Rest = L.Rest;
  if (Rest.empty()) {
    Why = "the loop does nothing after the split";
    return {};
  }
  for (const Stmt *S : Rest) {
    if (std::string C = findCollective(S, SM); !C.empty()) {
      Why = "the body " + C + "; moving elements between threads would "
                              "change what it synchronizes";
      return {};
    }
    if (std::string Sh = findSharedMemory(S, SM); !Sh.empty()) {
      Why = "the body " + Sh + "; a thread's view of shared memory depends "
                               "on which elements it takes";
      return {};
    }
    if (const Stmt *X = findEarlyExit(S, true)) {
      Why = "the body leaves the loop early (at " +
            posText(PC, X->getBeginLoc()) + ")";
      return {};
    }
    for (Builtin X : {Builtin::ThreadIdx, Builtin::BlockIdx, Builtin::BlockDim,
                      Builtin::GridDim}) {
      const Expr *At = nullptr;
      if (usesBuiltin(S, X, 0, &At)) {
        Why = "the body reads the thread's position (" +
              PC.text(At->getSourceRange()) + " at " + posText(PC, At->getBeginLoc()) +
              ") other than through '" + L.Idx->getNameAsString() +
              "'; its elements would move to other threads";
        return {};
      }
    }
  }
  if (const CallExpr *CE = threadDependentCall(Rest, SM, 0)) {
    Why = "the body calls a function that may depend on the thread's "
          "position (at " + posText(PC, CE->getBeginLoc()) + ")";
    return {};
  }
  for (const VarDecl *V : {L.Idx, L.Row, L.Col})
    if (mayModify(L.Loop->getBody(), V)) {
      Why = "the body changes '" + V->getNameAsString() + "'";
      return {};
    }
  if (!checkSites(Why))
    return {};
  // Variables declared outside the loop may only be read: a per-thread
  // value built over the elements a thread takes would change.
  std::set<const VarDecl *> Inner;
  for (const DeclStmt *DS : collect<DeclStmt>(Rest))
    for (const Decl *D : DS->decls())
      if (const auto *V = dyn_cast<VarDecl>(D))
        Inner.insert(V);
  for (const DeclRefExpr *R : collect<DeclRefExpr>(Rest)) {
    const auto *V = dyn_cast<VarDecl>(R->getDecl());
    if (!V || Inner.count(V) || V == L.Idx || V == L.Row || V == L.Col)
      continue;
    if (isa<ParmVarDecl>(V) && V->getType()->isPointerType())
      continue; // Pointer parameters: handled below.
    if (V->getType()->isArrayType() && V->hasLocalStorage()) {
      Why = "the body uses the array '" + V->getNameAsString() +
            "' declared outside the loop";
      return {};
    }
    if (isModifyingUse(R, PM) || (!V->hasLocalStorage() &&
                                  !V->getType().isConstQualified())) {
      Why = "the body may change or read a changing '" +
            V->getNameAsString() +
            "' declared outside it: a per-thread value over the elements a "
            "thread takes would change";
      return {};
    }
    // A local read in the body must be the same in every thread that
    // shares the loop: its elements move to other threads
    // (`lane = threadIdx.x % 32` would then be another thread's).
    if (V->hasLocalStorage() && !isa<ParmVarDecl>(V) &&
        !uniformValue(FD, R, L.Block)) {
      Why = "the body reads '" + V->getNameAsString() +
            "', which may differ between the threads of " +
            (L.Block ? "a block" : "the grid") +
            " that share the loop; its elements would move to other "
            "threads";
      return {};
    }
  }
  findRowPointers();
  auto Chunked = [&](const VarDecl *V) {
    return V && V->getType()->isPointerType() &&
           (isa<ParmVarDecl>(V) || rowPointer(V));
  };

  // Which pointers the body writes or lets escape.
  // In source order, so that messages do not depend on addresses.
  std::vector<std::pair<const VarDecl *,
                        std::vector<const ArraySubscriptExpr *>>>
      Uses;
  std::set<const ArraySubscriptExpr *> AsBase;
  for (const ArraySubscriptExpr *A : collect<ArraySubscriptExpr>(Rest)) {
    const auto *R = dyn_cast<DeclRefExpr>(A->getBase()->IgnoreParenImpCasts());
    const auto *P = R ? dyn_cast<VarDecl>(R->getDecl()) : nullptr;
    if (!Chunked(P))
      continue;
    auto It = find_if(Uses, [&](const auto &U) { return U.first == P; });
    if (It == Uses.end())
      It = Uses.insert(Uses.end(), {P, {}});
    It->second.push_back(A);
    AsBase.insert(A);
    if (accessUse(A, PM) != Use::Read)
      Dirty.insert(P);
  }
  for (const DeclRefExpr *R : collect<DeclRefExpr>(RestNoRows)) {
    const auto *P = dyn_cast<VarDecl>(R->getDecl());
    if (!P || !P->getType()->isPointerType())
      continue;
    // Used other than as the base of a subscript: `p + k`, `*p`, a call.
    const Stmt *Par = PM.getParent(R);
    while (Par && isa<ImplicitCastExpr, ParenExpr>(Par))
      Par = PM.getParent(Par);
    const auto *A = dyn_cast_or_null<ArraySubscriptExpr>(Par);
    if (!A || !AsBase.count(A) ||
        A->getBase()->IgnoreParenImpCasts() != R)
      Dirty.insert(P);
  }
  for (const RowPointer &RP : RowPtrs)
    if (!rowUniform(RP.Var->getInit())) {
      Why = "'" + RP.Var->getNameAsString() +
            "' is not the same for the elements of a row";
      return {};
    }

  Sum = findInnerSum();
  auto InUpdate = [&](const Stmt *X) {
    for (; X; X = PM.getParent(X))
      if (Sum && X == Sum->Update)
        return true;
    return false;
  };

  LoopPlan Plan;
  std::vector<Buffer> &Buffers = Plan.Buffers;
  Plan.RowPtrs = RowPtrs;
  std::vector<std::string> Scalar;
  auto Add = [&](const VarDecl *P, const ArraySubscriptExpr *A,
                 const ChunkIndex &CI, bool Inner = false) {
    Use U = accessUse(A, PM);
    for (Buffer &B : Buffers)
      if (B.Ptr == P && B.Base == CI.Base && B.Inner == Inner) {
        B.Accesses.push_back(A);
        B.Read |= U != Use::Write;
        B.Write |= U != Use::Read;
        return;
      }
    Buffer B;
    B.Ptr = P;
    B.Base = CI.Base;
    B.Read = U != Use::Write;
    B.Write = U != Use::Read;
    B.Accesses.push_back(A);
    B.ElemSize =
        Ctx.getTypeSizeInChars(P->getType()->getPointeeType()).getQuantity();
    B.Align = CI.Align;
    B.Offset = CI.Offset;
    B.Inner = Inner;
    Buffers.push_back(std::move(B));
  };
  for (auto &[P, As] : Uses) {
    QualType Elem = P->getType()->getPointeeType();
    bool Sized = !Elem->isDependentType() && !Elem->isIncompleteType();
    uint64_t Size =
        Sized ? Ctx.getTypeSizeInChars(Elem).getQuantity() : uint64_t(0);
    std::string Name = P->getNameAsString();
    if (!Sized || Size == 0 || Size >= 16 || !isPowerOf2_64(Size)) {
      Scalar.push_back("'" + Name + "' (element size)");
      continue;
    }
    // The kernel's own pointer parameters must be __restrict__; a helper's
    // parameters and row pointers are checked through what the calls pass
    // (checkAliasing).
    if (!Sites && isa<ParmVarDecl>(P) && !P->getType().isRestrictQualified()) {
      Scalar.push_back("'" + Name + "' (not __restrict__)");
      continue;
    }
    if (!Dirty.count(P)) {
      for (const ArraySubscriptExpr *A : As) {
        if (InUpdate(A)) {
          if (std::optional<ChunkIndex> CI = innerChunkIndex(A->getIdx()))
            Add(P, A, *CI, /*Inner=*/true);
          else
            Scalar.push_back("'" + PC.text(A->getSourceRange()) + "'");
          continue;
        }
        std::optional<ChunkIndex> CI = chunkIndex(A->getIdx());
        if (!CI || conditional(A)) {
          Scalar.push_back("'" + PC.text(A->getSourceRange()) + "'");
          continue;
        }
        Add(P, A, *CI);
      }
      continue;
    }
    // Float atomic adds at the chunk's element, `atomicAdd(&out[...], v);`:
    // the chunk's values are collected and added with one vector atomic
    // (red.global.add.v4.f32, sm_90) instead of one atomic per element;
    // the adds are the same, and their order was never fixed.
    if (const CallExpr *Red = As.size() == 1 ? atomicAddAt(As.front())
                                             : nullptr;
        Red && referencesTo(L.Loop->getBody(), P).size() == 1 &&
        Elem.getUnqualifiedType().getCanonicalType() == Ctx.FloatTy &&
        !mentionsDecl(Red->getArg(1), P) && !conditional(Red)) {
      if (std::optional<ChunkIndex> CI = chunkIndex(As.front()->getIdx())) {
        Add(P, As.front(), *CI);
        Buffers.back().Red = Red;
        Buffers.back().Read = false;
        Buffers.back().Write = true;
        continue;
      }
    }
    // A written pointer: every use an unconditional access at a chunk's
    // element, so that each chunk it writes is written whole (the store
    // writes back every element) and is read, if at all, before.
    std::vector<std::optional<ChunkIndex>> CIs;
    bool Plain = referencesTo(L.Loop->getBody(), P).size() == As.size();
    for (const ArraySubscriptExpr *A : As) {
      CIs.push_back(chunkIndex(A->getIdx()));
      Plain &= CIs.back() && !conditional(A) &&
               accessUse(A, PM) != Use::Escape;
    }
    if (Plain) {
      // Chunks at different offsets must not overlap: offsets that never
      // change are compared before the loop; any other must be the only
      // one.
      std::set<std::string> Bases;
      std::vector<std::string> Offsets;
      for (size_t I = 0; I < As.size(); ++I) {
        Bases.insert(CIs[I]->Base);
        if (!is_contained(Offsets, CIs[I]->Offset))
          Offsets.push_back(CIs[I]->Offset);
      }
      bool Apart = Bases.size() == 1 || none_of(Offsets, [](const auto &O) {
                     return O.empty();
                   });
      if (Apart) {
        for (size_t I = 0; I < Offsets.size(); ++I)
          for (size_t J = I + 1; J < Offsets.size(); ++J)
            Plan.Distinct.push_back(
                Offsets[I] == "0" ? operand(Offsets[J]) + " != 0"
                : Offsets[J] == "0"
                    ? operand(Offsets[I]) + " != 0"
                    : operand(Offsets[I]) + " != " + operand(Offsets[J]));
        for (size_t I = 0; I < As.size(); ++I)
          Add(P, As[I], *CIs[I]);
        continue;
      }
    }
    Scalar.push_back("'" + Name + "' (written other than by plain accesses "
                                  "at the chunk's elements)");
  }
  // The inner sum is rewritten when its update moves with the column only
  // through vectorized loads: the chunk's loop has no element, so the update
  // may not read the column or the flat index otherwise.
  if (Sum) {
    std::set<unsigned> Covered; // Offsets of references inside inner loads.
    bool AnyInner = false;
    for (const Buffer &B : Buffers)
      if (B.Inner) {
        AnyInner = true;
        for (const ArraySubscriptExpr *A : B.Accesses)
          for (const VarDecl *V : {L.Col, L.Idx})
            for (const DeclRefExpr *R : referencesTo(A, V))
              Covered.insert(R->getLocation().getRawEncoding());
      }
    bool Clean = AnyInner;
    for (const VarDecl *V : {L.Col, L.Idx})
      for (const DeclRefExpr *R : referencesTo(Sum->Update->getRHS(), V))
        Clean &= Covered.count(R->getLocation().getRawEncoding()) > 0;
    if (Clean)
      Plan.Sum = Sum;
    else
      erase_if(Buffers, [](const Buffer &B) { return B.Inner; });
  }
  // An access that moves with the column but stays scalar inside an inner
  // loop: the chunk would run that loop VEC times in one thread, with the
  // same scalar loads, instead of in VEC threads (sage_mean's neighbour
  // loop). Interchanging the loops is not done here.
  for (const auto &[P, As] : Uses)
    for (const ArraySubscriptExpr *A : As) {
      bool Vectorized = any_of(Buffers, [&](const Buffer &B) {
        return is_contained(B.Accesses, A);
      });
      if (Vectorized ||
          !(mentionsDecl(A->getIdx(), L.Col) ||
            mentionsDecl(A->getIdx(), L.Idx)))
        continue;
      // A store or atomic that stays one per element: in the original a
      // warp's 32 of them hit 32 consecutive elements, in the chunks
      // elements VEC apart, so each instruction touches VEC times the
      // sectors (writes do not stay in L1 for the next element). Measured
      // on the H100: scatter_add's atomics chunked by 4 ran
      // 0.42-0.49x. Scalar loads stay allowed: the next elements of the
      // chunk find their sectors in L1.
      if (Dirty.count(P) && !Buffers.empty()) {
        Why = "'" + PC.text(A->getSourceRange()) +
              "' moves with the column but stays one store or atomic per "
              "element: a warp's would go to elements " +
              std::to_string(16 / std::max<uint64_t>(
                                      1, Ctx.getTypeSizeInChars(
                                             P->getType()->getPointeeType())
                                             .getQuantity())) +
              " apart instead of consecutive ones";
        return {};
      }
      for (const Stmt *X = PM.getParent(A); X && X != L.Loop->getBody();
           X = PM.getParent(X))
        if (isa<ForStmt, WhileStmt, DoStmt, CXXForRangeStmt>(X)) {
          Why = "'" + PC.text(A->getSourceRange()) +
                "' moves with the column but stays scalar in an inner loop "
                "(at " + posText(PC, X->getBeginLoc()) +
                "): one thread would run that loop " +
                "for every element of its chunk";
          return {};
        }
    }
  Scalar.erase(std::unique(Scalar.begin(), Scalar.end()), Scalar.end());
  if (Buffers.empty()) {
    Why = "no access moves with the column: " +
          (Scalar.empty() ? std::string("the body reads no pointer parameter")
                          : join(Scalar, ", ") + " stay scalar");
    return {};
  }
  if (!checkAliasing(Buffers, Why))
    return {};
  return Plan;
}

/// The texts that must be multiples of the chunk to keep the plan's chunks
/// aligned (row pointers' offsets, then accesses' offsets), each once.
std::vector<std::string> alignMultiples(const LoopPlan &Plan) {
  std::vector<std::string> M;
  for (const Buffer &B : Plan.Buffers) {
    std::vector<std::string> A;
    for (const RowPointer &RP : Plan.RowPtrs)
      if (RP.Var == B.Ptr)
        A.insert(A.end(), RP.Align.begin(), RP.Align.end());
    A.insert(A.end(), B.Align.begin(), B.Align.end());
    for (const std::string &X : A)
      if (!is_contained(M, X))
        M.push_back(X);
  }
  return M;
}

/// The atomic adds of a chunk of floats \p B: on sm_90 and later one
/// `red.global.add.v4.f32` (or .v2) per \p Bytes; before, one atomicAdd
/// per element. clang's CUDA headers declare atomicAdd(float4 *, float4)
/// but compile it to nothing, hence the asm.
std::string vectorRed(const std::string &In, const std::string &U,
                      const Buffer &B, unsigned Vec, unsigned Bytes,
                      const std::string &K) {
  std::string Ptr = B.Ptr->getNameAsString(), Base = operand(B.Base);
  unsigned Lanes = Bytes / 4;
  std::string S = "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900\n";
  for (unsigned Q = 0; Q < Vec / Lanes; ++Q) {
    std::string Args;
    for (unsigned L = 0; L < Lanes; ++L)
      Args += ", \"f\"(" + B.Name + "[" + std::to_string(Q * Lanes + L) + "])";
    std::string At = Ptr + " + " + Base;
    if (Q)
      At += " + " + std::to_string(Q * Lanes);
    S += In + "asm volatile(\"" + vectorRedAsm(Lanes) + "\" :: \"l\"(" + At +
         ")" + Args + " : \"memory\");\n";
  }
  S += "#else\n";
  S += In + "for (int " + K + " = 0; " + K + " < astra_vec; ++" + K + ")\n";
  S += In + U + "atomicAdd(" + Ptr + " + " + Base + " + " + K + ", " + B.Name +
       "[" + K + "]);\n";
  S += "#endif\n";
  return S;
}

/// Writes the replacement of the loop.
class Writer {
public:
  Writer(PassContext &PC, const FlatLoop &L) : PC(PC), L(L),
      SM(PC.sourceManager()), LO(PC.langOpts()), PP(LO) {
    PP.SuppressTagKeyword = true;
  }
  /// \p Vec: elements per 16-byte chunk; \p Vec8: per 8-byte chunk, 0
  /// when there is no such path.
  std::string write(LoopPlan &Plan, const FunctionDecl *FD, unsigned &Vec,
                    unsigned &Vec8, std::string &Why);

private:
  unsigned offset(SourceLocation Loc) const {
    return SM.getFileOffset(SM.getExpansionLoc(Loc));
  }
  PassContext &PC;
  const FlatLoop &L;
  const SourceManager &SM;
  const LangOptions &LO;
  PrintingPolicy PP;
};

std::string Writer::write(LoopPlan &Plan, const FunctionDecl *FD,
                          unsigned &Vec, unsigned &Vec8, std::string &Why) {
  std::vector<Buffer> &Buffers = Plan.Buffers;
  const ForStmt *F = L.Loop;
  std::optional<LoopText> LT = loopText(PC, F, Why);
  if (!LT)
    return "";
  FileID FID = SM.getFileID(SM.getExpansionLoc(F->getForLoc()));
  StringRef Buf = LT->Buf;
  unsigned Begin = LT->Begin, End = LT->End, RParenEnd = LT->RParenEnd;
  unsigned RestBegin = offset(L.Rest.front()->getBeginLoc());
  SourceLocation RestEndLoc = endOfStatement(L.Rest.back(), SM, LO);
  if (RestEndLoc.isInvalid() || SM.getFileID(RestEndLoc) != FID) {
    Why = "the loop's text is not in one piece in one file";
    return "";
  }
  unsigned RestEnd = SM.getFileOffset(RestEndLoc);
  if (!(Begin < RParenEnd && RParenEnd <= RestBegin && RestBegin < RestEnd &&
        RestEnd <= End)) {
    Why = "the loop's text is not in one piece in one file";
    return "";
  }

  // Vector width: 16 bytes of the smallest element.
  uint64_t Min = 16, Max = 0;
  for (const Buffer &B : Buffers) {
    Min = std::min(Min, B.ElemSize);
    Max = std::max(Max, B.ElemSize);
  }
  Vec = unsigned(16 / Min);

  const ASTContext &Ctx = PC.astContext();
  std::set<std::string> Taken;
  auto Fresh = [&](StringRef Base) {
    std::string N = freshIdentifier(Ctx, Base, Taken);
    Taken.insert(N);
    return N;
  };
  std::string V = Fresh("astra_v"), I0 = Fresh("astra_idx0"),
              C0 = Fresh("astra_c0"), K = Fresh("astra_k"),
              Q = Fresh("astra_q");
  // Element types as the pattern spells them (`T` in a template): every
  // instantiation must write the same text.
  const FunctionDecl *Pattern = FD->getTemplateInstantiationPattern();
  for (Buffer &B : Buffers) {
    B.Name = Fresh("astra_" + B.Ptr->getNameAsString());
    const VarDecl *PV = Pattern ? varAtSameLocation(Pattern, B.Ptr) : nullptr;
    B.Type = (PV ? PV : B.Ptr)
                 ->getType()
                 ->getPointeeType()
                 .getUnqualifiedType()
                 .getAsString(PP);
    if (StringRef(B.Type).contains("auto") ||
        StringRef(B.Type).contains("(") ||
        StringRef(B.Type).contains("<dependent")) {
      Why = "the element type of '" + B.Ptr->getNameAsString() +
            "' cannot be named here ('" + B.Type + "')";
      return "";
    }
    // The base was written with the default names.
    if (B.Base == "astra_idx0")
      B.Base = I0;
    else if (StringRef(B.Base).ends_with("astra_c0"))
      B.Base = StringRef(B.Base).drop_back(8).str() + C0;
  }

  // The rest of the body, accesses replaced by chunk elements.
  struct Sub {
    unsigned Off, Len;
    std::string Text;
  };
  std::vector<Sub> Subs;
  // The text of [Begin, End) with \p Ss applied; none when two overlap or
  // one leaves the range.
  auto Apply = [&](std::vector<Sub> Ss, unsigned Begin,
                   unsigned End) -> std::optional<std::string> {
    llvm::sort(Ss, [](const Sub &X, const Sub &Y) { return X.Off < Y.Off; });
    std::string T;
    unsigned P = Begin;
    for (const Sub &X : Ss) {
      if (X.Off < P || X.Off + X.Len > End)
        return std::nullopt;
      T += Buf.slice(P, X.Off).str() + X.Text;
      P = X.Off + X.Len;
    }
    return T + Buf.slice(P, End).str();
  };
  // An access's text and the chunk element that replaces it.
  auto AccessSub = [&](const Buffer &B,
                       const ArraySubscriptExpr *A) -> std::optional<Sub> {
    CharSourceRange R = Lexer::makeFileCharRange(
        CharSourceRange::getTokenRange(A->getSourceRange()), SM, LO);
    if (R.isInvalid() || !PC.isEditable(R.getAsRange()))
      return std::nullopt;
    return Sub{SM.getFileOffset(R.getBegin()),
               SM.getFileOffset(R.getEnd()) - SM.getFileOffset(R.getBegin()),
               B.Name + "[" + K + "]"};
  };
  for (const Buffer &B : Buffers)
    for (const ArraySubscriptExpr *A : B.Accesses) {
      if (B.Inner)
        continue; // In the inner sum's update, written apart.
      if (B.Red) {
        // `atomicAdd(&p[...], v)` becomes `astra_p[k] = (v)`: the text up
        // to v is replaced, the call's `)` closes the parenthesis.
        SourceLocation CB = SM.getExpansionLoc(B.Red->getBeginLoc());
        SourceLocation VB = SM.getExpansionLoc(B.Red->getArg(1)->getBeginLoc());
        if (!PC.isEditable(B.Red->getSourceRange()) ||
            SM.getFileID(CB) != FID || SM.getFileID(VB) != FID) {
          Why = "the atomic add comes from a macro expansion";
          return "";
        }
        Subs.push_back({SM.getFileOffset(CB),
                        SM.getFileOffset(VB) - SM.getFileOffset(CB),
                        B.Name + "[" + K + "] = ("});
        continue;
      }
      std::optional<Sub> X = AccessSub(B, A);
      if (!X) {
        Why = "the access '" + PC.text(A->getSourceRange()) +
              "' comes from a macro expansion";
        return "";
      }
      Subs.push_back(*X);
    }
  // Statements that move before the loads (the row pointers'
  // declarations, the inner sum's): taken out of the body with the space up
  // to the next statement; their text is returned.
  auto Take = [&](const Stmt *S) -> std::optional<std::string> {
    unsigned DB = offset(S->getBeginLoc());
    SourceLocation DE = endOfStatement(S, SM, LO);
    if (DE.isInvalid() || SM.getFileID(DE) != FID ||
        !PC.isEditable(S->getSourceRange()))
      return std::nullopt;
    unsigned E = SM.getFileOffset(DE);
    std::string Text = Buf.slice(DB, E).str();
    while (E < RestEnd && isWhitespace(Buf[E]))
      ++E;
    Subs.push_back({DB, E - DB, ""});
    return Text;
  };
  std::vector<std::string> RowDecls;
  for (const RowPointer &RP : Plan.RowPtrs) {
    std::optional<std::string> T = Take(RP.Decl);
    if (!T) {
      Why = "the declaration of '" + RP.Var->getNameAsString() +
            "' comes from a macro expansion";
      return "";
    }
    RowDecls.push_back(*T);
  }
  // The inner sum: its declarations move before the loads with the row
  // pointers', its loop is written apart, its update with chunk elements.
  std::string SumName, SumLoopHeader, SumUpdate;
  if (const std::optional<InnerSum> &IS = Plan.Sum) {
    for (const DeclStmt *DS : IS->Pre) {
      std::optional<std::string> T = Take(DS);
      if (!T) {
        Why = "the inner sum's declarations come from a macro expansion";
        return "";
      }
      RowDecls.push_back(*T);
    }
    SumLoopHeader = PC.text(
        SourceRange(IS->Loop->getForLoc(), IS->Loop->getRParenLoc()));
    const Expr *Term = IS->Update->getRHS();
    CharSourceRange TR = Lexer::makeFileCharRange(
        CharSourceRange::getTokenRange(Term->getSourceRange()), SM, LO);
    if (!Take(IS->AccDecl) || !Take(IS->Loop) || SumLoopHeader.empty() ||
        TR.isInvalid() || !PC.isEditable(TR.getAsRange())) {
      Why = "the inner sum comes from a macro expansion";
      return "";
    }
    unsigned TB = SM.getFileOffset(TR.getBegin()),
             TE = SM.getFileOffset(TR.getEnd());
    std::vector<Sub> TermSubs;
    for (const Buffer &B : Buffers)
      if (B.Inner)
        for (const ArraySubscriptExpr *A : B.Accesses) {
          std::optional<Sub> X = AccessSub(B, A);
          if (!X) {
            Why = "the access '" + PC.text(A->getSourceRange()) +
                  "' comes from a macro expansion";
            return "";
          }
          TermSubs.push_back(*X);
        }
    std::optional<std::string> T = Apply(TermSubs, TB, TE);
    if (!T) {
      Why = "two accesses overlap in the text";
      return "";
    }
    SumUpdate = *T;
    SumName = Fresh("astra_" + IS->Acc->getNameAsString());
  }
  std::optional<std::string> Rewritten = Apply(Subs, RestBegin, RestEnd);
  if (!Rewritten) {
    Why = "two accesses overlap in the text";
    return "";
  }
  std::string NewRest = *Rewritten;
  auto StillUsed = [&](const VarDecl *D) {
    for (const Stmt *S : L.Rest)
      for (const DeclRefExpr *R : referencesTo(S, D)) {
        unsigned O = offset(R->getLocation());
        bool Inside = false;
        for (const Sub &X : Subs)
          Inside |= O >= X.Off && O < X.Off + X.Len;
        if (!Inside)
          return true;
      }
    return false;
  };
  bool RowUsed = false;
  for (const Stmt *S : L.Rest)
    RowUsed |= mentionsDecl(S, L.Row);
  bool IdxUsed = StillUsed(L.Idx), ColUsed = StillUsed(L.Col);
  bool C0Used = ColUsed || any_of(Buffers, [&](const Buffer &B) {
                  return StringRef(B.Base).ends_with(C0);
                });

  // Indentation: the loop's and one level as its body uses it.
  std::string In0 = LT->Indent, U = LT->Unit;
  std::string In1 = In0 + U, In2 = In1 + U, In3 = In2 + U;

  std::string IT = L.Idx->getType().getUnqualifiedType().getAsString(PP);
  std::string Start = PC.text(L.Start->getSourceRange());
  std::string Bound = PC.text(L.Bound->getSourceRange());
  std::string Step = PC.text(L.Step->getSourceRange());
  std::string Cols = PC.text(L.Cols->getSourceRange());
  std::string Cond = PC.text(F->getCond()->getSourceRange());
  std::string Inc = PC.text(F->getInc()->getSourceRange());
  if (Start.empty() || Bound.empty() || Step.empty() || Cols.empty() ||
      Cond.empty() || Inc.empty()) {
    Why = "parts of the loop header come from macro expansions";
    return "";
  }
  // The declarations as written, with their initializers replaced.
  auto DeclWithInit = [&](const DeclStmt *DS, const VarDecl *D,
                          const std::string &Init) -> std::string {
    unsigned B = offset(DS->getBeginLoc());
    unsigned IB = offset(D->getInit()->getBeginLoc());
    if (IB <= B || IB > End)
      return "";
    return Buf.slice(B, IB).str() + Init + ";";
  };
  std::string RowDecl =
      DeclWithInit(L.RowDecl, L.Row, I0 + " / " + operand(Cols));
  std::string ColDecl = DeclWithInit(L.ColDecl, L.Col, C0 + " + " + K);
  if (RowDecl.empty() || ColDecl.empty()) {
    Why = "the row and column declarations are not plain text";
    return "";
  }
  // The inner sum's accumulator: an array before the loop, each element's
  // copy in the element loop (`float sum = astra_sum[k];`).
  std::string SumType, SumInit, SumDecl;
  if (const std::optional<InnerSum> &IS = Plan.Sum) {
    SumType = IS->Acc->getType().getUnqualifiedType().getAsString(PP);
    SumInit = PC.text(IS->Acc->getInit()->getSourceRange());
    SumDecl = DeclWithInit(IS->AccDecl, IS->Acc, SumName + "[" + K + "]");
    if (SumInit.empty() || SumDecl.empty()) {
      Why = "the inner sum's accumulator is not plain text";
      return "";
    }
  }

  // One path per access width: the chunk loop and its tail, for VEC
  // elements moved with accesses of \p Bytes bytes.
  auto Path = [&](unsigned Vec, unsigned Bytes) {
    std::string VT = Bytes == 16 ? "uint4" : "uint2";
    std::string BT = std::to_string(Bytes);
    auto Copy = [&](const Buffer &B, const std::string &Dst,
                    const std::string &Src, const std::string &In) {
      return vectorCopyText(In, U, VT, std::to_string(Vec * B.ElemSize / Bytes),
                            Q, Dst, Src);
    };
    auto Load = [&](const Buffer &B, const std::string &In) {
      std::string T = In + "alignas(" + BT + ") " + B.Type + " " + B.Name +
                      "[astra_vec];\n";
      if (B.Read)
        T += Copy(B, B.Name, B.Ptr->getNameAsString() + " + " + operand(B.Base),
                  In);
      return T;
    };
    std::vector<std::string> Conds = {operand(Cols) + " % " +
                                      std::to_string(Vec) + " == 0"};
    std::set<const VarDecl *> Checked;
    for (const Buffer &B : Buffers) {
      const VarDecl *Aligned = B.Ptr;
      for (const RowPointer &RP : Plan.RowPtrs)
        if (RP.Var == B.Ptr)
          Aligned = RP.Base;
      if (Checked.insert(Aligned).second)
        Conds.push_back("reinterpret_cast<unsigned long long>(" +
                        Aligned->getNameAsString() + ") % " + BT + " == 0");
    }
    std::set<std::string> Once(Conds.begin(), Conds.end());
    for (std::string C : alignMultiples(Plan)) {
      C = operand(C) + " % " + std::to_string(Vec) + " == 0";
      if (Once.insert(C).second)
        Conds.push_back(C);
    }
    for (const std::string &D : Plan.Distinct)
      if (Once.insert(D).second)
        Conds.push_back(D);
    std::string S = "(" + join(Conds, " &&\n" + In0 + "    ") + ") {\n";
    S += In1 + "constexpr int astra_vec = " + std::to_string(Vec) + ";\n";
    S += In1 + "for (" + IT + " " + V + " = " + Start + "; " + V + " < " +
         operand(Bound) + " / astra_vec; " + V + " += " + Step + ") {\n";
    S += In2 + "const " + IT + " " + I0 + " = " + V + " * astra_vec;\n";
    if (RowUsed)
      S += In2 + RowDecl + "\n";
    if (C0Used)
      S += In2 + "const " +
           L.Col->getType().getUnqualifiedType().getAsString(PP) + " " + C0 +
           " = " + I0 + " % " + operand(Cols) + ";\n";
    for (const std::string &D : RowDecls)
      S += In2 + D + "\n";
    std::string KLoop =
        "for (int " + K + " = 0; " + K + " < astra_vec; ++" + K + ")";
    if (Plan.Sum) {
      // One sum per element, the inner loop run once for the chunk.
      S += In2 + SumType + " " + SumName + "[astra_vec];\n";
      S += In2 + "#pragma unroll\n";
      S += In2 + KLoop + "\n" + In3 + SumName + "[" + K + "] = " + SumInit +
           ";\n";
      S += In2 + SumLoopHeader + " {\n";
      for (const Buffer &B : Buffers)
        if (B.Inner)
          S += Load(B, In3);
      S += In3 + "#pragma unroll\n";
      S += In3 + KLoop + "\n" + In3 + U + SumName + "[" + K + "] += " +
           SumUpdate + ";\n";
      S += In2 + "}\n";
    }
    for (const Buffer &B : Buffers)
      if (!B.Inner)
        S += Load(B, In2);
    S += In2 + "#pragma unroll\n";
    S += In2 + KLoop + " {\n";
    if (IdxUsed)
      S += In3 + "const " + IT + " " + L.Idx->getNameAsString() + " = " + I0 +
           " + " + K + ";\n";
    if (ColUsed)
      S += In3 + ColDecl + "\n";
    if (Plan.Sum)
      S += In3 + SumDecl + "\n";
    S += In3 + reindent(NewRest, U + U) + "\n";
    S += In2 + "}\n";
    for (const Buffer &B : Buffers)
      if (B.Red)
        S += vectorRed(In2, U, B, Vec, Bytes, K);
      else if (B.Write)
        S += Copy(B, B.Ptr->getNameAsString() + " + " + operand(B.Base),
                  B.Name, In2);
    S += In1 + "}\n";
    S += In1 + "for (" + IT + " " + L.Idx->getNameAsString() + " = " +
         operand(Bound) + " / astra_vec * astra_vec + " + operand(Start) +
         "; " + Cond + "; " + Inc + ")" +
         reindent(Buf.slice(RParenEnd, End), U) + "\n";
    return S;
  };

  // 16-byte accesses where cols allows them; else 8-byte ones (fp16 rows of
  // 100, ogbn-products' width, are a multiple of 4 but not of 8); else the
  // original loop.
  std::string S = "if " + Path(Vec, 16);
  Vec8 = Max <= 8 && 8 / Min >= 2 ? unsigned(8 / Min) : 0;
  if (Vec8)
    S += In0 + "} else if " + Path(Vec8, 8);
  S += In0 + "} else {\n" + In1 + reindent(Buf.slice(Begin, End), U) + "\n" +
       In0 + "}";
  return S;
}

/// A function the kernel calls, whose loops this pass may rewrite, with
/// its calls by the instantiation called.
struct Helper {
  const FunctionDecl *Pattern = nullptr;
  std::map<const FunctionDecl *, std::vector<CallSite>> Sites;
  /// Where a function other than the kernel calls it ("" when none does):
  /// the rewrite would change that caller unverified.
  std::string Foreign;
};

/// Every function defined in the main file with a body where calls are
/// resolved: plain functions and the instantiations of templates.
void concreteFunctions(const DeclContext *DC, const SourceManager &SM,
                       std::vector<const FunctionDecl *> &Out) {
  for (const Decl *D : DC->decls()) {
    if (!SM.isInMainFile(SM.getExpansionLoc(D->getLocation())))
      continue;
    if (const auto *NS = dyn_cast<NamespaceDecl>(D))
      concreteFunctions(NS, SM, Out);
    else if (const auto *LS = dyn_cast<LinkageSpecDecl>(D))
      concreteFunctions(LS, SM, Out);
    else if (const auto *FTD = dyn_cast<FunctionTemplateDecl>(D)) {
      for (const FunctionDecl *Spec : FTD->specializations())
        if (Spec->getBody() && !is_contained(Out, Spec))
          Out.push_back(Spec);
    } else if (const auto *FD = dyn_cast<FunctionDecl>(D)) {
      if (FD->doesThisDeclarationHaveABody() && !FD->isDependentContext() &&
          !is_contained(Out, FD))
        Out.push_back(FD);
    }
  }
}

/// The user functions (main file, not kernels) that the kernel's bodies
/// call directly, with every call of them in the main file.
std::vector<Helper> calledHelpers(PassContext &PC,
                                  const std::vector<KernelBody> &Kernel) {
  const SourceManager &SM = PC.sourceManager();
  std::set<const FunctionDecl *> KernelFDs;
  for (const KernelBody &B : Kernel)
    KernelFDs.insert(B.FD);
  std::vector<const FunctionDecl *> Functions;
  concreteFunctions(PC.astContext().getTranslationUnitDecl(), SM, Functions);
  std::vector<Helper> Helpers;
  for (const FunctionDecl *Caller : Functions)
    for (const CallExpr *CE : collect<CallExpr>({Caller->getBody()})) {
      const FunctionDecl *Callee = CE->getDirectCallee();
      const FunctionDecl *Def = nullptr;
      if (!Callee || !Callee->hasBody(Def) || Def->hasAttr<CUDAGlobalAttr>() ||
          isSystemFunction(SM, Def))
        continue;
      const FunctionDecl *Pattern = Def->getTemplateInstantiationPattern();
      if (!Pattern)
        Pattern = Def;
      if (!SM.isInMainFile(SM.getExpansionLoc(Pattern->getLocation())))
        continue;
      auto It = find_if(Helpers,
                        [&](const Helper &H) { return H.Pattern == Pattern; });
      if (It == Helpers.end()) {
        It = Helpers.insert(Helpers.end(), Helper());
        It->Pattern = Pattern;
      }
      if (KernelFDs.count(Caller))
        It->Sites[Def].push_back({Caller, CE});
      else if (It->Foreign.empty())
        It->Foreign = "'" + Caller->getNameAsString() + "' (at " +
                      posText(PC, CE->getBeginLoc()) + ")";
    }
  erase_if(Helpers, [](const Helper &H) { return H.Sites.empty(); });
  return Helpers;
}

/// Votes on the flat loops of one function's bodies (a kernel's or a
/// helper's instantiations); \p H: the helper, null for the kernel.
void voteOnLoops(PassContext &PC, SiteVotes &Votes, const Helper *H) {
  ASTContext &Ctx = PC.astContext();
  const StringRef Kind = "flat-vectorize";
  for (unsigned BI = 0; BI < Votes.bodies().size(); ++BI) {
    const FunctionDecl *FD = Votes.bodies()[BI].FD;
    Stmt *Body = FD->getBody();
    if (!Body)
      continue;
    LoopFinder LF;
    LF.TraverseStmt(Body);
    ParentMap PM(Body);
    static const std::vector<CallSite> NoSites;
    const std::vector<CallSite> *Sites = nullptr;
    if (H) {
      auto It = H->Sites.find(FD);
      Sites = It == H->Sites.end() ? &NoSites : &It->second;
    }
    for (const ForStmt *F : LF.Loops) {
      if (isVectorizedLoop(F, PM))
        continue;
      FlatLoop L;
      std::string Why;
      if (!matchLoop(F, FD, Ctx, L, Why))
        continue;
      SourceLocation Loc = F->getForLoc();
      if (Why.empty() && H && !H->Foreign.empty())
        Why = "'" + H->Pattern->getNameAsString() + "' is also called from " +
              H->Foreign + ", which the rewrite would change unverified";
      LoopPlan Plan;
      if (Why.empty())
        Plan = Planner(PC, FD, L, Sites).plan(Why);
      unsigned Vec = 0, Vec8 = 0;
      std::string Text;
      if (Why.empty())
        Text = Writer(PC, L).write(Plan, FD, Vec, Vec8, Why);
      std::optional<TextEdit> Edit;
      if (Why.empty()) {
        Edit = makeEdit(
            PC,
            CharSourceRange::getCharRange(
                F->getForLoc(),
                endOfStatement(F, PC.sourceManager(), PC.langOpts())),
            Text);
        if (!Edit)
          Why = "the loop's text comes from a macro expansion";
      }
      if (!Why.empty()) {
        Votes.reject(BI, Loc, Kind, "not vectorized: " + Why);
        continue;
      }
      std::vector<std::string> Names;
      for (const Buffer &B : Plan.Buffers) {
        std::string N =
            B.Ptr->getNameAsString() +
            (B.Red     ? " (atomic add)"
             : B.Write ? (B.Read ? " (load, store)" : " (store)")
                       : "");
        if (!is_contained(Names, N))
          Names.push_back(N);
      }
      std::string Cols = PC.text(L.Cols->getSourceRange());
      // The conditions beyond cols and the pointers' alignment.
      std::vector<std::string> Multiples = alignMultiples(Plan), Extra;
      erase(Multiples, Cols);
      if (!Multiples.empty())
        Extra.push_back(join(Multiples, ", ") + " a multiple of the chunk");
      for (const std::string &D : Plan.Distinct)
        if (!is_contained(Extra, D))
          Extra.push_back(D);
      std::string SumNote =
          Plan.Sum ? " ('" + Plan.Sum->Acc->getNameAsString() +
                         "' is summed over '" +
                         Plan.Sum->E->getNameAsString() +
                         "' once per chunk, one load per iteration)"
                   : std::string();
      Votes.accept(
          BI, Loc, Kind, {*Edit},
          "chunks of " + std::to_string(Vec) + " consecutive '" +
              L.Idx->getNameAsString() + "' (one row '" +
              L.Row->getNameAsString() + "', " + std::to_string(Vec) +
              " columns) move with 16-byte accesses of " + join(Names, ", ") +
              SumNote +
              " and one division per chunk, when " + Cols +
              " is a multiple of " + std::to_string(Vec) +
              " and the buffers are 16-byte aligned" +
              (Vec8 ? " (chunks of " + std::to_string(Vec8) +
                          " with 8-byte accesses when it is a multiple of " +
                          std::to_string(Vec8) + " and they are 8-byte "
                          "aligned)"
                    : std::string()) +
              (Extra.empty() ? std::string() : ", with " + join(Extra, " and ")) +
              "; otherwise the original loop runs");
    }
  }
}

} // namespace

void FlatVectorizePass::run(PassContext &PC) {
  EditSet ES;
  std::vector<KernelBody> Kernel = kernelBodies(PC.kernel().Decl);
  SiteVotes Votes(Kernel);
  voteOnLoops(PC, Votes, nullptr);
  Votes.resolve(PC, ES);
  // Loops in the functions the kernel calls (rotary embedding's per-head
  // helper): rewritten in the helper, each instantiation voting.
  for (const Helper &H : calledHelpers(PC, Kernel)) {
    SiteVotes HelperVotes(kernelBodies(H.Pattern));
    voteOnLoops(PC, HelperVotes, &H);
    HelperVotes.resolve(PC, ES);
  }
  ES.commit(PC);
}

} // namespace astra
