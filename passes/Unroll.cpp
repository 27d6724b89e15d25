//===- Unroll.cpp ---------------------------------------------------------===//
//
// Safety argument. `#pragma unroll` is a hint that never changes what a loop
// computes; the risks are performance and toolchain behaviour:
//  - a full unroll of a loop whose trip count is unknown or huge is ignored
//    or blows up code size, so without unroll.factor the pass fires only
//    where it computes the trip count (start, bound and step compile-time
//    constants, the counter not changed in the body; simulated in the
//    counter's type, so wrap-around and infinite loops are refused) and it
//    is at most unroll.max-trip, counting the copies enclosing unrolled
//    loops make;
//  - a loop that already carries a loop pragma (unroll, nounroll, clang
//    loop) keeps the author's choice;
//  - duplicating a barrier that only some threads reach turns a latent
//    divergence bug into a different one, so a loop holding a barrier
//    (directly or in a helper it calls) is refused when any control flow in
//    it depends on the thread (threadIdx, values derived from it, warp
//    intrinsics);
//  - in a template, every instantiation must agree on the same pragma.
//
//===----------------------------------------------------------------------===//
#include "Unroll.h"
#include "utils/CudaIdioms.h"
#include "utils/HelperReach.h"
#include "utils/Mutation.h"
#include "utils/PassSupport.h"

#include "clang/AST/Attr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace clang;
using namespace llvm;
using namespace astra::cudaidiom;

namespace astra {

namespace {

/// Values the pass computes with; wide enough for any 64-bit counter.
using Wide = __int128;

/// Iterations the pass simulates before calling a trip count huge.
constexpr uint64_t SimulationLimit = 1u << 20;

std::string shortText(const PassContext &PC, const Stmt *S) {
  std::string T = PC.text(S->getSourceRange());
  for (char &C : T)
    if (C == '\n' || C == '\t')
      C = ' ';
  if (T.size() > 40)
    T = T.substr(0, 37) + "...";
  return T.empty() ? "<macro>" : T;
}

//===----------------------------------------------------------------------===//
// Thread dependence
//===----------------------------------------------------------------------===//

bool isPerThreadIntrinsic(StringRef N) {
  return N.starts_with("__shfl") || N.starts_with("__ballot") ||
         N.starts_with("atomic") || N.starts_with("__activemask") ||
         N.starts_with("__lane") || N.starts_with("__match") ||
         N.starts_with("__reduce") || N == "__any_sync" ||
         N == "__all_sync" || N == "__uni_sync" || N == "clock" ||
         N == "clock64";
}

/// Which locals may hold different values in different threads of a block:
/// computed from threadIdx, per-thread intrinsics or asm, or assigned under
/// control flow that depends on such values.
class ThreadTaint {
public:
  /// \p Helper: the body is a helper's, whose parameters may differ
  /// between threads (a kernel's are the same for all).
  ThreadTaint(const Stmt *Body, const FunctionDecl *Helper) {
    if (Helper)
      for (const ParmVarDecl *P : Helper->parameters())
        Tainted.insert(P);
    for (unsigned Iter = 0; Iter < 16; ++Iter) {
      Changed = false;
      walk(Body, false);
      if (!Changed)
        break;
    }
  }

  /// Whether \p S reads threadIdx, a thread-dependent local or a per-thread
  /// intrinsic; \p Culprit gets the first such expression.
  bool dependsOnThread(const Stmt *S, const Stmt **Culprit = nullptr) const {
    if (!S)
      return false;
    if (const auto *E = dyn_cast<Expr>(S)) {
      if (builtinRef(E->IgnoreParenImpCasts()).Var ==
          cudaidiom::Builtin::ThreadIdx)
        return found(S, Culprit);
      if (const auto *DRE = dyn_cast<DeclRefExpr>(E))
        if (const auto *V = dyn_cast<VarDecl>(DRE->getDecl()))
          if (Tainted.count(V))
            return found(S, Culprit);
      if (const auto *CE = dyn_cast<CallExpr>(E)) {
        const FunctionDecl *FD = CE->getDirectCallee();
        if (FD && FD->getIdentifier() && isPerThreadIntrinsic(FD->getName()))
          return found(S, Culprit);
      }
    }
    if (isa<AsmStmt>(S))
      return found(S, Culprit);
    for (const Stmt *C : S->children())
      if (dependsOnThread(C, Culprit))
        return true;
    return false;
  }

private:
  static bool found(const Stmt *S, const Stmt **Culprit) {
    if (Culprit)
      *Culprit = S;
    return true;
  }

  void taint(const Expr *LHS) {
    const auto *DRE = dyn_cast<DeclRefExpr>(LHS->IgnoreParenImpCasts());
    if (!DRE)
      return;
    if (const auto *V = dyn_cast<VarDecl>(DRE->getDecl()))
      if (Tainted.insert(V).second)
        Changed = true;
  }

  /// \p Divergent: the statement runs under thread-dependent control flow.
  void walk(const Stmt *S, bool Divergent) {
    if (!S)
      return;
    if (const auto *DS = dyn_cast<DeclStmt>(S)) {
      for (const Decl *D : DS->decls())
        if (const auto *V = dyn_cast<VarDecl>(D))
          if (const Expr *Init = V->getInit()) {
            if ((Divergent || dependsOnThread(Init)) &&
                Tainted.insert(V).second)
              Changed = true;
            walk(Init, Divergent);
          }
      return;
    }
    if (const auto *BO = dyn_cast<BinaryOperator>(S)) {
      if (BO->isAssignmentOp() &&
          (Divergent || dependsOnThread(BO->getRHS()) ||
           (BO->isCompoundAssignmentOp() && dependsOnThread(BO->getLHS()))))
        taint(BO->getLHS());
      if (BO->isLogicalOp()) {
        walk(BO->getLHS(), Divergent);
        walk(BO->getRHS(), Divergent || dependsOnThread(BO->getLHS()));
        return;
      }
    }
    if (const auto *UO = dyn_cast<UnaryOperator>(S))
      if (UO->isIncrementDecrementOp() && Divergent)
        taint(UO->getSubExpr());
    const Expr *Cond = nullptr;
    if (const auto *If = dyn_cast<IfStmt>(S))
      Cond = If->getCond();
    else if (const auto *W = dyn_cast<WhileStmt>(S))
      Cond = W->getCond();
    else if (const auto *D = dyn_cast<DoStmt>(S))
      Cond = D->getCond();
    else if (const auto *F = dyn_cast<ForStmt>(S))
      Cond = F->getCond();
    else if (const auto *Sw = dyn_cast<SwitchStmt>(S))
      Cond = Sw->getCond();
    else if (const auto *CO = dyn_cast<AbstractConditionalOperator>(S))
      Cond = CO->getCond();
    bool Inner = Divergent || (Cond && dependsOnThread(Cond));
    if (const auto *F = dyn_cast<ForStmt>(S)) {
      walk(F->getInit(), Divergent);
      walk(F->getCond(), Divergent);
      walk(F->getInc(), Inner);
      walk(F->getBody(), Inner);
      return;
    }
    for (const Stmt *C : S->children())
      walk(C, C == Cond ? Divergent : Inner);
  }

  SmallPtrSet<const VarDecl *, 16> Tainted;
  bool Changed = false;
};

/// Conditions of control flow inside \p S (and \p S's own).
void controlConditions(const Stmt *S, SmallVectorImpl<const Expr *> &Out) {
  if (!S)
    return;
  if (const auto *If = dyn_cast<IfStmt>(S))
    Out.push_back(If->getCond());
  else if (const auto *W = dyn_cast<WhileStmt>(S))
    Out.push_back(W->getCond());
  else if (const auto *D = dyn_cast<DoStmt>(S))
    Out.push_back(D->getCond());
  else if (const auto *F = dyn_cast<ForStmt>(S)) {
    if (F->getCond())
      Out.push_back(F->getCond());
  } else if (const auto *Sw = dyn_cast<SwitchStmt>(S))
    Out.push_back(Sw->getCond());
  else if (const auto *CO = dyn_cast<AbstractConditionalOperator>(S))
    Out.push_back(CO->getCond());
  else if (const auto *BO = dyn_cast<BinaryOperator>(S))
    if (BO->isLogicalOp())
      Out.push_back(BO->getLHS());
  for (const Stmt *C : S->children())
    controlConditions(C, Out);
}

/// First barrier inside \p S, looking into the helpers it calls.
const Stmt *findBarrier(const SourceManager &SM, const Stmt *S) {
  if (!S)
    return nullptr;
  if ((isa<CallExpr>(S) || isa<GCCAsmStmt>(S)) && isBarrierCall(SM, S))
    return S;
  for (const Stmt *C : S->children())
    if (const Stmt *B = findBarrier(SM, C))
      return B;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Trip counts
//===----------------------------------------------------------------------===//

struct TripCount {
  enum KindT { Unknown, Exact, AtMost, Huge } Kind = Unknown;
  uint64_t N = 0;
  std::string Why; ///< For Unknown: what is not known.
};

TripCount unknown(const std::string &Why) {
  TripCount T;
  T.Why = Why;
  return T;
}

std::optional<Wide> evalInt(const Expr *E, const ASTContext &Ctx) {
  if (!E || E->isValueDependent() || E->isTypeDependent())
    return std::nullopt;
  Expr::EvalResult R;
  if (!E->EvaluateAsInt(R, Ctx))
    return std::nullopt;
  const APSInt &V = R.Val.getInt();
  if (V.getSignificantBits() > 65)
    return std::nullopt;
  return V.isSigned() ? Wide(V.getSExtValue()) : Wide(V.getZExtValue());
}

const VarDecl *refVar(const Expr *E) {
  const auto *DRE = dyn_cast_or_null<DeclRefExpr>(E ? E->IgnoreParenImpCasts()
                                                    : nullptr);
  return DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
}

struct Step {
  BinaryOperatorKind Op = BO_Add; ///< BO_Add, BO_Sub, BO_Mul, BO_Div, BO_Shl, BO_Shr
  Wide By = 0;
};

std::optional<Step> stepOf(const Expr *Inc, const VarDecl *V,
                           const ASTContext &Ctx) {
  if (!Inc)
    return std::nullopt;
  Inc = Inc->IgnoreParens();
  if (const auto *UO = dyn_cast<UnaryOperator>(Inc)) {
    if (!UO->isIncrementDecrementOp() || refVar(UO->getSubExpr()) != V)
      return std::nullopt;
    return Step{UO->isIncrementOp() ? BO_Add : BO_Sub, 1};
  }
  const auto *BO = dyn_cast<BinaryOperator>(Inc);
  if (!BO || refVar(BO->getLHS()) != V)
    return std::nullopt;
  if (const auto *CAO = dyn_cast<CompoundAssignOperator>(BO)) {
    auto By = evalInt(CAO->getRHS(), Ctx);
    if (!By)
      return std::nullopt;
    switch (CAO->getOpcode()) {
    case BO_AddAssign: return Step{BO_Add, *By};
    case BO_SubAssign: return Step{BO_Sub, *By};
    case BO_MulAssign: return Step{BO_Mul, *By};
    case BO_DivAssign: return Step{BO_Div, *By};
    case BO_ShlAssign: return Step{BO_Shl, *By};
    case BO_ShrAssign: return Step{BO_Shr, *By};
    default: return std::nullopt;
    }
  }
  if (BO->getOpcode() != BO_Assign)
    return std::nullopt;
  // i = i + S, i = S + i, i = i * S, i = i - S, i = i / S, i = i >> S
  const auto *R = dyn_cast<BinaryOperator>(BO->getRHS()->IgnoreParenImpCasts());
  if (!R)
    return std::nullopt;
  BinaryOperatorKind Op = R->getOpcode();
  const Expr *Other = nullptr;
  if (refVar(R->getLHS()) == V)
    Other = R->getRHS();
  else if (refVar(R->getRHS()) == V && (Op == BO_Add || Op == BO_Mul))
    Other = R->getLHS();
  if (!Other || (Op != BO_Add && Op != BO_Sub && Op != BO_Mul &&
                 Op != BO_Div && Op != BO_Shl && Op != BO_Shr))
    return std::nullopt;
  auto By = evalInt(Other, Ctx);
  if (!By)
    return std::nullopt;
  return Step{Op, *By};
}

/// Upper bound of `min(a, C)` / `std::min(a, C)`: the smallest constant
/// argument.
std::optional<Wide> minBound(const Expr *E, const ASTContext &Ctx,
                             const SourceManager &SM) {
  const auto *CE = dyn_cast<CallExpr>(E->IgnoreParenImpCasts());
  if (!CE)
    return std::nullopt;
  StringRef N = systemCalleeName(SM, CE);
  if (N != "min" && N != "umin" && N != "llmin" && N != "ullmin")
    return std::nullopt;
  std::optional<Wide> Best;
  for (const Expr *A : CE->arguments())
    if (auto V = evalInt(A, Ctx))
      if (!Best || *V < *Best)
        Best = V;
  return Best;
}

bool compare(BinaryOperatorKind Op, Wide L, Wide R) {
  switch (Op) {
  case BO_LT: return L < R;
  case BO_LE: return L <= R;
  case BO_GT: return L > R;
  case BO_GE: return L >= R;
  case BO_NE: return L != R;
  default: return false;
  }
}

BinaryOperatorKind mirror(BinaryOperatorKind Op) {
  switch (Op) {
  case BO_LT: return BO_GT;
  case BO_LE: return BO_GE;
  case BO_GT: return BO_LT;
  case BO_GE: return BO_LE;
  default: return Op;
  }
}

TripCount forTripCount(const ForStmt *FS, const ASTContext &Ctx,
                       const SourceManager &SM) {
  // The counter and its start.
  const VarDecl *V = nullptr;
  const Expr *StartE = nullptr;
  if (const auto *DS = dyn_cast_or_null<DeclStmt>(FS->getInit())) {
    if (DS->isSingleDecl())
      if ((V = dyn_cast<VarDecl>(DS->getSingleDecl())))
        StartE = V->getInit();
  } else if (const auto *BO = dyn_cast_or_null<BinaryOperator>(FS->getInit())) {
    if (BO->getOpcode() == BO_Assign) {
      V = refVar(BO->getLHS());
      StartE = BO->getRHS();
    }
  }
  if (!V || !StartE || !V->getType()->isIntegerType() ||
      V->getType()->isBooleanType())
    return unknown("the loop header does not initialize one integer counter");
  auto Start = evalInt(StartE, Ctx);
  if (!Start)
    return unknown("the start '" + V->getNameAsString() +
                   "' = ... is not a compile-time constant");

  // The bound.
  const auto *Cond =
      dyn_cast_or_null<BinaryOperator>(FS->getCond()
                                           ? FS->getCond()->IgnoreParenImpCasts()
                                           : nullptr);
  if (!Cond || !Cond->isComparisonOp() || Cond->getOpcode() == BO_EQ)
    return unknown("the condition is not a comparison of the counter");
  BinaryOperatorKind Op = Cond->getOpcode();
  const Expr *BoundE = nullptr;
  if (refVar(Cond->getLHS()) == V) {
    BoundE = Cond->getRHS();
  } else if (refVar(Cond->getRHS()) == V) {
    BoundE = Cond->getLHS();
    Op = mirror(Op);
  } else {
    return unknown("the condition does not compare the counter");
  }
  auto St = stepOf(FS->getInc(), V, Ctx);
  if (!St)
    return unknown("the step is not a compile-time constant update of '" +
                   V->getNameAsString() + "'");
  if (mayModify(FS->getBody(), V) || mayModify(FS->getCond(), V))
    return unknown("the counter '" + V->getNameAsString() +
                   "' is changed inside the loop");
  bool AtMost = false;
  auto Bound = evalInt(BoundE, Ctx);
  if (!Bound) {
    // i < min(n, C) with i growing runs at most as often as i < C.
    bool Growing = (St->Op == BO_Add && St->By > 0) ||
                   (St->Op == BO_Sub && St->By < 0) ||
                   (St->Op == BO_Mul && St->By > 1 && *Start > 0) ||
                   (St->Op == BO_Shl && St->By > 0 && *Start > 0);
    if ((Op == BO_LT || Op == BO_LE) && Growing)
      Bound = minBound(BoundE, Ctx, SM);
    if (!Bound)
      return unknown("the bound is not a compile-time constant");
    AtMost = true;
  }

  // Simulate in the counter's type; the comparison in its own type.
  QualType VT = V->getType();
  unsigned Width = Ctx.getIntWidth(VT);
  bool Signed = VT->isSignedIntegerOrEnumerationType();
  Wide Min = Signed ? -(Wide(1) << (Width - 1)) : 0;
  Wide Max = Signed ? (Wide(1) << (Width - 1)) - 1 : (Wide(1) << Width) - 1;
  bool CmpUnsigned = Cond->getLHS()->getType()->isUnsignedIntegerType();
  Wide Val = *Start;
  if (Val < Min || Val > Max)
    return unknown("the start value does not fit the counter's type");
  uint64_t N = 0;
  while (true) {
    if (CmpUnsigned && (Val < 0 || *Bound < 0))
      return unknown("the comparison mixes signed and unsigned values");
    if (!compare(Op, Val, *Bound))
      break;
    if (++N > SimulationLimit) {
      TripCount T;
      T.Kind = TripCount::Huge;
      T.N = N;
      return T;
    }
    switch (St->Op) {
    case BO_Add: Val += St->By; break;
    case BO_Sub: Val -= St->By; break;
    case BO_Mul: Val *= St->By; break;
    case BO_Div:
      if (St->By == 0)
        return unknown("the step divides by zero");
      Val /= St->By;
      break;
    case BO_Shl:
    case BO_Shr:
      if (St->By < 0 || St->By >= Width)
        return unknown("the step shifts by more than the counter's width");
      Val = St->Op == BO_Shl ? Val << int(St->By) : Val >> int(St->By);
      break;
    default:
      return unknown("unsupported step");
    }
    if (Val < Min || Val > Max)
      return unknown("the counter would overflow its type");
  }
  TripCount T;
  T.Kind = AtMost ? TripCount::AtMost : TripCount::Exact;
  T.N = N;
  return T;
}

TripCount tripCount(const Stmt *Loop, const ASTContext &Ctx,
                    const SourceManager &SM) {
  if (const auto *FS = dyn_cast<ForStmt>(Loop))
    return forTripCount(FS, Ctx, SM);
  if (const auto *RF = dyn_cast<CXXForRangeStmt>(Loop)) {
    QualType RT = RF->getRangeInit()->getType().getNonReferenceType();
    if (const auto *CAT = Ctx.getAsConstantArrayType(RT)) {
      TripCount T;
      T.Kind = TripCount::Exact;
      T.N = CAT->getSize().getZExtValue();
      return T;
    }
    return unknown("the range is not an array of known size");
  }
  return unknown("a while or do loop has no counted header");
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

class UnrollVisitor : public RecursiveASTVisitor<UnrollVisitor> {
public:
  UnrollVisitor(PassContext &PC, SiteVotes &Votes, unsigned Body,
                std::optional<int64_t> Factor, std::string FactorError,
                int64_t MaxTrip, bool Helper)
      : PC(PC), SM(PC.sourceManager()), Votes(Votes), Body(Body),
        Factor(Factor), FactorError(std::move(FactorError)), MaxTrip(MaxTrip),
        Taint(Votes.bodies()[Body].FD->getBody(),
              Helper ? Votes.bodies()[Body].FD : nullptr) {}

  bool TraverseAttributedStmt(AttributedStmt *S) {
    for (const Attr *A : S->getAttrs())
      if (const auto *LH = dyn_cast<LoopHintAttr>(A))
        Pragmas[S->getSubStmt()] = LH;
    return RecursiveASTVisitor::TraverseAttributedStmt(S);
  }
  bool TraverseForStmt(ForStmt *S) {
    return loop(S, [&] { return RecursiveASTVisitor::TraverseForStmt(S); });
  }
  bool TraverseWhileStmt(WhileStmt *S) {
    return loop(S, [&] { return RecursiveASTVisitor::TraverseWhileStmt(S); });
  }
  bool TraverseDoStmt(DoStmt *S) {
    return loop(S, [&] { return RecursiveASTVisitor::TraverseDoStmt(S); });
  }
  bool TraverseCXXForRangeStmt(CXXForRangeStmt *S) {
    return loop(S,
                [&] { return RecursiveASTVisitor::TraverseCXXForRangeStmt(S); });
  }

private:
  template <typename F> bool loop(Stmt *S, F Traverse) {
    uint64_t Copies = decide(S);
    Enclosing.push_back(Copies);
    bool R = Traverse();
    Enclosing.pop_back();
    return R;
  }

  /// Product of the copies enclosing unrolled loops make of this loop.
  uint64_t enclosingCopies() const {
    uint64_t P = 1;
    for (uint64_t C : Enclosing)
      P = std::min<uint64_t>(P * C, uint64_t(1) << 32);
    return P;
  }

  /// Votes on loop \p S; returns how many copies of its body an unroll makes
  /// (1 when it is not unrolled).
  uint64_t decide(const Stmt *S) {
    SourceLocation Loc = S->getBeginLoc();
    auto Reject = [&](const std::string &Why) {
      Votes.reject(Body, Loc, "loop", Why);
      return uint64_t(1);
    };
    if (const LoopHintAttr *LH = Pragmas.lookup(S)) {
      // The author's pragma stays; its copies still count for the loops
      // inside (so that a second run decides as the first did).
      Reject("the loop already carries a loop pragma");
      return pragmaCopies(S, LH);
    }
    if (!FactorError.empty())
      return Reject(FactorError);

    if (const Stmt *Barrier = findBarrier(SM, S)) {
      SmallVector<const Expr *, 8> Conds;
      controlConditions(S, Conds);
      for (const Expr *C : Conds) {
        const Stmt *Culprit = nullptr;
        if (Taint.dependsOnThread(C, &Culprit))
          return Reject("the loop holds a barrier ('" +
                        shortText(PC, Barrier) + "' at " +
                        posText(PC, Barrier->getBeginLoc()) +
                        ") and control flow that depends on the thread ('" +
                        shortText(PC, C) + "' reads '" +
                        shortText(PC, Culprit) + "')");
      }
    }

    TripCount TC = tripCount(S, PC.astContext(), SM);
    uint64_t Outer = enclosingCopies();
    std::string Pragma, Message;
    uint64_t Copies = 1;
    if ((TC.Kind == TripCount::Exact || TC.Kind == TripCount::AtMost) &&
        TC.N <= 1)
      return Reject(TC.N == 0 ? "the loop never runs"
                              : "the loop runs at most once");
    std::string Count =
        TC.Kind == TripCount::AtMost ? "at most " + std::to_string(TC.N)
                                     : std::to_string(TC.N);
    bool Known = TC.Kind == TripCount::Exact || TC.Kind == TripCount::AtMost;
    if (Known && TC.N * Outer <= uint64_t(MaxTrip)) {
      Pragma = "#pragma unroll";
      Copies = TC.N;
      Message = "trip count " + Count + ": fully unrolled";
      if (Outer > 1)
        Message += " (" + std::to_string(TC.N * Outer) +
                   " copies with the enclosing unrolled loops)";
    } else if (Factor) {
      Pragma = "#pragma unroll " + std::to_string(*Factor);
      Copies = uint64_t(*Factor);
      Message = "unrolled by " + std::to_string(*Factor) + " (trip count " +
                (Known ? Count
                 : TC.Kind == TripCount::Huge
                     ? "more than " + std::to_string(SimulationLimit)
                     : "unknown") +
                ")";
    } else if (Known) {
      return Reject("trip count " + Count +
                    (Outer > 1 ? " (" + std::to_string(TC.N * Outer) +
                                     " copies with the enclosing unrolled "
                                     "loops)"
                               : std::string()) +
                    " exceeds unroll.max-trip=" + std::to_string(MaxTrip) +
                    "; --pass-opt=unroll.factor=N unrolls it by N");
    } else if (TC.Kind == TripCount::Huge) {
      return Reject("the trip count exceeds " +
                    std::to_string(SimulationLimit) +
                    " or the loop does not end; --pass-opt=unroll.factor=N "
                    "unrolls it by N");
    } else {
      return Reject("the trip count is not a compile-time constant (" +
                    TC.Why + "); full unrolling needs one, and "
                    "--pass-opt=unroll.factor=N unrolls it by N");
    }

    // The pragma goes on its own line, indented like the loop.
    if (Loc.isMacroID())
      return Reject("the loop comes from a macro expansion");
    auto [File, Offset] = SM.getDecomposedLoc(Loc);
    StringRef Buffer = SM.getBufferData(File);
    size_t LineStart = Buffer.rfind('\n', Offset ? Offset - 1 : 0);
    LineStart = LineStart == StringRef::npos ? 0 : LineStart + 1;
    if (Offset < LineStart)
      LineStart = Offset;
    StringRef Indent = Buffer.slice(LineStart, Offset);
    if (Indent.find_first_not_of(" \t") != StringRef::npos)
      return Reject("the loop does not begin its line; a #pragma needs a "
                    "line of its own");
    auto E = makeInsertBefore(PC, Loc, Pragma + "\n" + Indent.str());
    if (!E)
      return Reject("the loop is not editable text (macro or system header)");
    Votes.accept(Body, Loc, "loop", {*E}, Message);
    return Copies;
  }

  /// How many copies of its body an existing loop pragma asks for.
  uint64_t pragmaCopies(const Stmt *S, const LoopHintAttr *LH) {
    if (LH->getOption() == LoopHintAttr::UnrollCount) {
      if (auto N = evalInt(LH->getValue(), PC.astContext()))
        return *N > 0 ? uint64_t(*N) : 1;
      return 1;
    }
    if (LH->getOption() == LoopHintAttr::Unroll &&
        (LH->getState() == LoopHintAttr::Enable ||
         LH->getState() == LoopHintAttr::Full)) {
      TripCount TC = tripCount(S, PC.astContext(), SM);
      if (TC.Kind == TripCount::Exact || TC.Kind == TripCount::AtMost)
        return std::max<uint64_t>(TC.N, 1);
    }
    return 1;
  }

  PassContext &PC;
  const SourceManager &SM;
  SiteVotes &Votes;
  unsigned Body;
  std::optional<int64_t> Factor;
  std::string FactorError;
  int64_t MaxTrip;
  ThreadTaint Taint;
  DenseMap<const Stmt *, const LoopHintAttr *> Pragmas;
  std::vector<uint64_t> Enclosing;
};

} // namespace

void UnrollPass::run(PassContext &PC) {
  const PassOptions &O = PC.options();
  std::optional<int64_t> Factor;
  std::string FactorError;
  std::string FactorText = O.strParam(name(), "factor", "");
  if (!FactorText.empty()) {
    int64_t F = 0;
    if (StringRef(FactorText).getAsInteger(10, F) || F < 2 || F > 1024)
      FactorError = "--pass-opt=unroll.factor=" + FactorText +
                    " is not an integer from 2 to 1024";
    else
      Factor = F;
  }
  std::string MaxText = O.strParam(name(), "max-trip", "32");
  int64_t MaxTrip = 32;
  if (StringRef(MaxText).getAsInteger(10, MaxTrip) || MaxTrip < 2 ||
      MaxTrip > 4096)
    FactorError = "--pass-opt=unroll.max-trip=" + MaxText +
                  " is not an integer from 2 to 4096";

  auto Visit = [&](std::vector<KernelBody> Bodies, bool Helper,
                   EditSet &ES) {
    SiteVotes Votes(std::move(Bodies));
    for (unsigned B = 0; B < Votes.bodies().size(); ++B) {
      UnrollVisitor V(PC, Votes, B, Factor, FactorError, MaxTrip, Helper);
      V.TraverseStmt(Votes.bodies()[B].FD->getBody());
    }
    Votes.resolve(PC, ES);
  };
  EditSet ES;
  Visit(kernelBodies(PC.kernel().Decl), /*Helper=*/false, ES);
  // Loops in the helpers the kernel calls: a pragma changes no result, and
  // a helper's parameters count as different per thread for the barrier
  // rule.
  HelperReach Reach(PC);
  for (Helper *H : Reach.helpers()) {
    HelperReach::Scope S(PC, *H);
    EditSet HES;
    Visit(H->Bodies, /*Helper=*/true, HES);
    Reach.setEdits(*H, HES);
  }
  Reach.commit(ES);
}

} // namespace astra
