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

#include "GridStride.h"
#include "Hoist.h"
#include "PassSupport.h"

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
};

/// A vectorized buffer: the chunk of one pointer parameter at one base.
struct Buffer {
  const ParmVarDecl *Ptr = nullptr;
  std::string Base; ///< Text of the chunk's first element offset.
  std::vector<const ArraySubscriptExpr *> Accesses;
  bool Write = false;
  uint64_t ElemSize = 0;
  std::string Name, Type;
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
  if (!Inc || Inc->getOpcode() != BO_AddAssign ||
      !isGridStrideStep(Inc->getRHS()))
    return false;
  const auto *DS = dyn_cast_or_null<DeclStmt>(F->getInit());
  const VarDecl *Idx =
      DS && DS->isSingleDecl() ? dyn_cast<VarDecl>(DS->getSingleDecl())
                               : nullptr;
  if (!Idx || !Idx->getInit() || !Idx->getType()->isIntegerType() ||
      !refersTo(Inc->getLHS(), Idx) || !isGlobalThreadIndex(Idx->getInit()))
    return false;
  const auto *Body = dyn_cast<CompoundStmt>(F->getBody());
  if (!Body)
    return false;
  // The split: the first two statements, in either order.
  for (const Stmt *S : Body->body()) {
    const auto *D = dyn_cast<DeclStmt>(S);
    const VarDecl *V =
        D && D->isSingleDecl() ? dyn_cast<VarDecl>(D->getSingleDecl())
                               : nullptr;
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

class Planner {
public:
  Planner(PassContext &PC, const FunctionDecl *FD, const FlatLoop &L)
      : PC(PC), Ctx(PC.astContext()), SM(PC.sourceManager()), FD(FD), L(L),
        PM(const_cast<Stmt *>(FD->getBody())) {}

  /// The buffers to vectorize, or empty with \p Why set.
  std::vector<Buffer> plan(std::string &Why);

private:
  bool conditional(const Stmt *S) const;
  /// The chunk base of an index whose element runs with the column (or the
  /// flat index): "astra_idx0", "astra_c0" or "(T) + astra_c0"; empty for
  /// other indices.
  std::string chunkBase(const Expr *Index) const;
  bool rowUniform(const Expr *E) const;

  PassContext &PC;
  const ASTContext &Ctx;
  const SourceManager &SM;
  const FunctionDecl *FD;
  const FlatLoop &L;
  ParentMap PM;
  std::set<const ParmVarDecl *> Dirty; ///< Written or escaping pointers.
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

/// Whether \p E is the same for the VEC elements of one chunk: it reads the
/// row, unchanged parameters (pointers not written in the loop), literals.
bool Planner::rowUniform(const Expr *E) const {
  for (const DeclRefExpr *R : collect<DeclRefExpr>({E})) {
    const ValueDecl *D = R->getDecl();
    if (D == L.Row || isa<EnumConstantDecl>(D))
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

std::string Planner::chunkBase(const Expr *Index) const {
  const Expr *I = stripIntCasts(Index);
  if (refersTo(I, L.Idx))
    return "astra_idx0";
  if (refersTo(I, L.Col))
    return "astra_c0";
  const auto *Add = dyn_cast<BinaryOperator>(I);
  if (!Add || Add->getOpcode() != BO_Add)
    return "";
  const Expr *T = nullptr;
  if (refersTo(Add->getRHS(), L.Col))
    T = Add->getLHS();
  else if (refersTo(Add->getLHS(), L.Col))
    T = Add->getRHS();
  if (!T)
    return "";
  // T must be a multiple of cols (so the chunk stays aligned) that is the
  // same for the whole chunk.
  const auto *Mul = dyn_cast<BinaryOperator>(stripIntCasts(T));
  if (!Mul || Mul->getOpcode() != BO_Mul ||
      !(sameExpr(Ctx, Mul->getRHS(), L.Cols) ||
        sameExpr(Ctx, Mul->getLHS(), L.Cols)))
    return "";
  if (mentionsDecl(T, L.Idx) || mentionsDecl(T, L.Col) || !rowUniform(T))
    return "";
  std::string Text = PC.text(T->getSourceRange());
  if (Text.empty() || !PC.isEditable(T->getSourceRange()))
    return "";
  return Text + " + astra_c0";
}

std::vector<Buffer> Planner::plan(std::string &Why) {
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
  }

  // Which pointer parameters the body writes or lets escape.
  // In source order, so that messages do not depend on addresses.
  std::vector<std::pair<const ParmVarDecl *,
                        std::vector<const ArraySubscriptExpr *>>>
      Uses;
  std::set<const ArraySubscriptExpr *> AsBase;
  for (const ArraySubscriptExpr *A : collect<ArraySubscriptExpr>(Rest)) {
    const auto *R = dyn_cast<DeclRefExpr>(A->getBase()->IgnoreParenImpCasts());
    const auto *P = R ? dyn_cast<ParmVarDecl>(R->getDecl()) : nullptr;
    if (!P || !P->getType()->isPointerType())
      continue;
    auto It = find_if(Uses, [&](const auto &U) { return U.first == P; });
    if (It == Uses.end())
      It = Uses.insert(Uses.end(), {P, {}});
    It->second.push_back(A);
    AsBase.insert(A);
    if (accessUse(A, PM) != Use::Read)
      Dirty.insert(P);
  }
  for (const DeclRefExpr *R : collect<DeclRefExpr>(Rest)) {
    const auto *P = dyn_cast<ParmVarDecl>(R->getDecl());
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

  std::vector<Buffer> Buffers;
  std::vector<std::string> Scalar;
  auto Add = [&](const ParmVarDecl *P, const ArraySubscriptExpr *A,
                 const std::string &Base, bool Write) {
    for (Buffer &B : Buffers)
      if (B.Ptr == P && B.Base == Base && B.Write == Write) {
        B.Accesses.push_back(A);
        return;
      }
    Buffer B;
    B.Ptr = P;
    B.Base = Base;
    B.Write = Write;
    B.Accesses.push_back(A);
    B.ElemSize =
        Ctx.getTypeSizeInChars(P->getType()->getPointeeType()).getQuantity();
    Buffers.push_back(std::move(B));
  };
  for (auto &[P, As] : Uses) {
    QualType Elem = P->getType()->getPointeeType();
    bool Sized = !Elem->isDependentType() && !Elem->isIncompleteType();
    uint64_t Size =
        Sized ? Ctx.getTypeSizeInChars(Elem).getQuantity() : uint64_t(0);
    bool Restrict = P->getType().isRestrictQualified();
    std::string Name = P->getNameAsString();
    if (!Sized || Size == 0 || Size >= 16 || !isPowerOf2_64(Size)) {
      Scalar.push_back("'" + Name + "' (element size)");
      continue;
    }
    if (!Restrict) {
      Scalar.push_back("'" + Name + "' (not __restrict__)");
      continue;
    }
    if (!Dirty.count(P)) {
      for (const ArraySubscriptExpr *A : As) {
        std::string Base = chunkBase(A->getIdx());
        if (Base.empty() || conditional(A)) {
          Scalar.push_back("'" + PC.text(A->getSourceRange()) + "'");
          continue;
        }
        Add(P, A, Base, false);
      }
      continue;
    }
    // A written buffer: one plain unconditional store, its only use.
    const ArraySubscriptExpr *A = As.front();
    std::string Base = chunkBase(A->getIdx());
    if (As.size() != 1 || accessUse(A, PM) != Use::Write || Base.empty() ||
        conditional(A) || referencesTo(L.Loop->getBody(), P).size() != 1) {
      Scalar.push_back("'" + Name + "' (written other than by one plain "
                                    "store at the chunk's element)");
      continue;
    }
    Add(P, A, Base, true);
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
      // on the H100 (session 9): scatter_add's atomics chunked by 4 ran
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
  return Buffers;
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
  std::string write(std::vector<Buffer> &Buffers, unsigned &Vec,
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

std::string Writer::write(std::vector<Buffer> &Buffers, unsigned &Vec,
                          unsigned &Vec8, std::string &Why) {
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
  for (Buffer &B : Buffers) {
    B.Name = Fresh("astra_" + B.Ptr->getNameAsString());
    B.Type = B.Ptr->getType()->getPointeeType().getUnqualifiedType().getAsString(
        PP);
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
  for (const Buffer &B : Buffers)
    for (const ArraySubscriptExpr *A : B.Accesses) {
      CharSourceRange R = Lexer::makeFileCharRange(
          CharSourceRange::getTokenRange(A->getSourceRange()), SM, LO);
      if (R.isInvalid() || !PC.isEditable(R.getAsRange())) {
        Why = "the access '" + PC.text(A->getSourceRange()) +
              "' comes from a macro expansion";
        return "";
      }
      Subs.push_back({SM.getFileOffset(R.getBegin()),
                      SM.getFileOffset(R.getEnd()) -
                          SM.getFileOffset(R.getBegin()),
                      B.Name + "[" + K + "]"});
    }
  llvm::sort(Subs, [](const Sub &X, const Sub &Y) { return X.Off < Y.Off; });
  std::string NewRest;
  unsigned Pos = RestBegin;
  for (const Sub &S : Subs) {
    if (S.Off < Pos || S.Off + S.Len > RestEnd) {
      Why = "two accesses overlap in the text";
      return "";
    }
    NewRest += Buf.slice(Pos, S.Off).str() + S.Text;
    Pos = S.Off + S.Len;
  }
  NewRest += Buf.slice(Pos, RestEnd).str();
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

  // One path per access width: the chunk loop and its tail, for VEC
  // elements moved with accesses of \p Bytes bytes.
  auto Path = [&](unsigned Vec, unsigned Bytes) {
    std::string VT = Bytes == 16 ? "uint4" : "uint2";
    std::string BT = std::to_string(Bytes);
    auto Copy = [&](const Buffer &B, const std::string &Dst,
                    const std::string &Src) {
      return vectorCopyText(In2, U, VT, std::to_string(Vec * B.ElemSize / Bytes),
                            Q, Dst, Src);
    };
    std::vector<std::string> Conds = {operand(Cols) + " % " +
                                      std::to_string(Vec) + " == 0"};
    std::set<const ParmVarDecl *> Checked;
    for (const Buffer &B : Buffers)
      if (Checked.insert(B.Ptr).second)
        Conds.push_back("reinterpret_cast<unsigned long long>(" +
                        B.Ptr->getNameAsString() + ") % " + BT + " == 0");
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
    for (const Buffer &B : Buffers) {
      S += In2 + "alignas(" + BT + ") " + B.Type + " " + B.Name +
           "[astra_vec];\n";
      if (!B.Write)
        S += Copy(B, B.Name,
                  B.Ptr->getNameAsString() + " + " + operand(B.Base));
    }
    S += In2 + "#pragma unroll\n";
    S += In2 + "for (int " + K + " = 0; " + K + " < astra_vec; ++" + K +
         ") {\n";
    if (IdxUsed)
      S += In3 + "const " + IT + " " + L.Idx->getNameAsString() + " = " + I0 +
           " + " + K + ";\n";
    if (ColUsed)
      S += In3 + ColDecl + "\n";
    S += In3 + reindent(NewRest, U + U) + "\n";
    S += In2 + "}\n";
    for (const Buffer &B : Buffers)
      if (B.Write)
        S += Copy(B, B.Ptr->getNameAsString() + " + " + operand(B.Base),
                  B.Name);
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

} // namespace

void FlatVectorizePass::run(PassContext &PC) {
  ASTContext &Ctx = PC.astContext();
  const StringRef Kind = "flat-vectorize";
  EditSet ES;
  SiteVotes Votes(kernelBodies(PC.kernel().Decl));
  for (unsigned BI = 0; BI < Votes.bodies().size(); ++BI) {
    const FunctionDecl *FD = Votes.bodies()[BI].FD;
    Stmt *Body = FD->getBody();
    if (!Body)
      continue;
    LoopFinder LF;
    LF.TraverseStmt(Body);
    ParentMap PM(Body);
    for (const ForStmt *F : LF.Loops) {
      if (isVectorizedLoop(F, PM))
        continue;
      FlatLoop L;
      std::string Why;
      if (!matchLoop(F, FD, Ctx, L, Why))
        continue;
      SourceLocation Loc = F->getForLoc();
      std::vector<Buffer> Buffers;
      if (Why.empty())
        Buffers = Planner(PC, FD, L).plan(Why);
      unsigned Vec = 0, Vec8 = 0;
      std::string Text;
      if (Why.empty())
        Text = Writer(PC, L).write(Buffers, Vec, Vec8, Why);
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
      for (const Buffer &B : Buffers)
        Names.push_back(B.Ptr->getNameAsString() + (B.Write ? " (store)" : ""));
      std::string Cols = PC.text(L.Cols->getSourceRange());
      Votes.accept(
          BI, Loc, Kind, {*Edit},
          "chunks of " + std::to_string(Vec) + " consecutive '" +
              L.Idx->getNameAsString() + "' (one row '" +
              L.Row->getNameAsString() + "', " + std::to_string(Vec) +
              " columns) move with 16-byte accesses of " + join(Names, ", ") +
              " and one division per chunk, when " + Cols +
              " is a multiple of " + std::to_string(Vec) +
              " and the buffers are 16-byte aligned" +
              (Vec8 ? " (chunks of " + std::to_string(Vec8) +
                          " with 8-byte accesses when it is a multiple of " +
                          std::to_string(Vec8) + " and they are 8-byte "
                          "aligned)"
                    : std::string()) +
              "; otherwise the original loop runs");
    }
  }
  Votes.resolve(PC, ES);
  ES.commit(PC);
}

} // namespace astra
