//===- Index32.cpp --------------------------------------------------------===//
//
// Safety argument. Narrowing a 64-bit variable or cast to `int` changes the
// type of every expression its value flows into until a 64-bit operand, an
// explicit type or a use that only reads the value (an index, a comparison,
// a conversion to a declared type) stops it. The program keeps its meaning
// when every value along those paths is the same in both programs:
//  - the pass computes, for every shape set of the spec and every launch the
//    program can make there, the range of each expression: sizes from the
//    spec (integer scalar arguments), launch dimensions (threadIdx in
//    [0, blockDim), blockIdx in [0, gridDim)) from the spec's launch and from
//    every configuration the code's launch sites allow (the launch space:
//    a run-time block size at each swept size, each launch site's constant
//    block), and, where the file does not show or cannot reproduce a launch,
//    any launch CUDA allows; compile-time constants; locals contribute the union of everything
//    assigned to them, and the counter of a counted loop (`i < bound`,
//    `i += step`, step >= 0) ranges up to bound - 1 + step. Anything else (a
//    load from memory, an unknown call) makes the range unknown and the pass
//    refuses. Each intermediate range must fit the expression's original type,
//    so the original cannot have wrapped either;
//  - every expression whose type would change must stay in [0, 2^30): then it
//    is exact in int (with a factor-two margin for the odd sizes the
//    verifier adds) and non-negative, so signed and unsigned readings agree;
//  - comparisons whose operand types change are allowed only when the other
//    side is known non-negative or both readings are signed; uses whose
//    meaning depends on the type itself (address taken, `auto`, overloaded or
//    template calls, negation, compound assignment into a 32-bit variable)
//    are refused;
//  - in a template, every instantiation must agree, each with its own spec
//    entry.
// Without a spec nothing bounds the values, and the pass refuses.
//
//===----------------------------------------------------------------------===//
#include "Index32.h"
#include "astra/Spec/LaunchSpace.h"
#include "astra/Spec/Spec.h"
#include "utils/CudaIdioms.h"
#include "utils/Mutation.h"
#include "utils/PassSupport.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMap.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/TypeLoc.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <tuple>

using namespace clang;
using namespace llvm;

namespace astra {

namespace {

using Wide = __int128;
/// Values narrowed to int stay below this: int32 with a factor-two margin.
constexpr Wide Limit = Wide(1) << 30;
/// Beyond this the interval arithmetic gives up (no int128 overflow).
constexpr Wide Huge = Wide(1) << 100;

std::string str(Wide V) {
  if (V == 0)
    return "0";
  bool Neg = V < 0;
  std::string S;
  for (Wide X = Neg ? -V : V; X; X /= 10)
    S.insert(S.begin(), char('0' + int(X % 10)));
  return Neg ? "-" + S : S;
}

struct Range {
  Wide Lo = 0, Hi = 0;
  static Range exact(Wide V) { return {V, V}; }
  Range join(const Range &O) const {
    return {std::min(Lo, O.Lo), std::max(Hi, O.Hi)};
  }
};

std::string shortText(const PassContext &PC, const Stmt *S) {
  std::string T = PC.text(S->getSourceRange());
  for (char &C : T)
    if (C == '\n' || C == '\t')
      C = ' ';
  if (T.size() > 48)
    T = T.substr(0, 45) + "...";
  return T.empty() ? "<macro>" : T;
}

/// What the spec fixes for one shape set.
struct ShapeEnv {
  std::string Name;
  /// The launch: exact where the code shows it, a range otherwise
  /// (Lo <= value <= Hi).
  int64_t BlockLo[3] = {1, 1, 1}, Block[3] = {1, 1, 1};
  int64_t GridLo[3] = {1, 1, 1}, Grid[3] = {1, 1, 1};
  DenseMap<unsigned, int64_t> Scalars; ///< Parameter index -> value.
};

/// \p E with any launch CUDA allows: what holds for launches the code does
/// not show.
void anyLaunch(ShapeEnv &E) {
  for (unsigned I = 0; I < 3; ++I) {
    E.BlockLo[I] = E.GridLo[I] = 1;
    E.Block[I] = MaxBlockDims[I];
    E.Grid[I] = I == 0 ? 2147483647 : 65535;
  }
}

/// One environment per shape set of \p S and launch the program can make
/// there: the spec's launch, each configuration of the code's launch space
/// (astra/Spec/LaunchSpace.h) and, where the code does not show or cannot
/// reproduce a launch, any launch at all. The spec gives sizes; only the
/// code says which launches exist.
Expected<std::vector<ShapeEnv>> shapeEnvs(const KernelSpec &S,
                                          const KernelLaunchFacts &Facts) {
  std::vector<ShapeEnv> Envs;
  auto Add = [&](std::string Name, const Env &Vars, const LaunchSpec &L,
                 bool Any) -> Error {
    ShapeEnv E;
    E.Name = std::move(Name);
    for (unsigned I = 0; I < 3; ++I) {
      for (auto [SE, Out, Field] :
           {std::tuple{&L.Block[I], &E.Block[I], "launch.block"},
            std::tuple{&L.Grid[I], &E.Grid[I], "launch.grid"}}) {
        if (SE->empty())
          continue;
        auto V = SE->evalInt(Vars);
        if (!V)
          return createStringError(
              inconvertibleErrorCode(), "%s: kernel '%s': shape set '%s': %s: %s",
              displayPath(S.SpecPath).c_str(), S.Kernel.c_str(),
              E.Name.c_str(), Field, toString(V.takeError()).c_str());
        *Out = *V;
      }
      E.BlockLo[I] = E.Block[I];
      E.GridLo[I] = E.Grid[I];
    }
    if (Any)
      anyLaunch(E);
    for (const ArgSpec &A : S.Args) {
      if (A.IsBuffer || A.ScalarValue.empty())
        continue;
      auto V = A.ScalarValue.eval(Vars);
      if (!V) {
        consumeError(V.takeError());
        continue;
      }
      if (V->IsInt)
        E.Scalars[A.Index] = V->I;
    }
    Envs.push_back(std::move(E));
    return Error::success();
  };
  for (const ShapeSet &Shape : S.Shapes) {
    auto Plan = planLaunchSpace(S, Facts, Shape);
    if (!Plan)
      return Plan.takeError();
    bool Unknown = !Plan->Complete;
    if (Error E = Add(Shape.Name, Shape.Vars, S.Launch, false))
      return std::move(E);
    for (const LaunchVariant &V : Plan->Variants)
      if (Error E = Add(Shape.Name + "@" + V.Name, V.Vars, V.Launch, false))
        return std::move(E);
    if (Unknown)
      if (Error E = Add(Shape.Name + "@any launch", Shape.Vars, S.Launch, true))
        return std::move(E);
  }
  return Envs;
}

/// Facts about the locals of one body that the range analysis needs.
struct LocalFacts {
  struct Defs {
    std::vector<const Expr *> Values; ///< Initializer and plain assignments.
    std::vector<const Stmt *> Updates; ///< Compound assignments, ++, --.
    bool Escapes = false;
    const DeclStmt *Decl = nullptr;
  };
  DenseMap<const VarDecl *, Defs> Vars;
  DenseMap<const VarDecl *, const ForStmt *> LoopOf;
  DenseMap<const VarDecl *, std::vector<const DeclRefExpr *>> Uses;
  std::vector<const ExplicitCastExpr *> Casts;
};

unsigned intWidth(const ASTContext &Ctx, QualType T) {
  return T->isIntegerType() ? Ctx.getIntWidth(T) : 0;
}

class FactCollector : public RecursiveASTVisitor<FactCollector> {
public:
  FactCollector(const ASTContext &Ctx, LocalFacts &F) : Ctx(Ctx), F(F) {}

  bool VisitDeclStmt(DeclStmt *DS) {
    for (Decl *D : DS->decls())
      if (auto *V = dyn_cast<VarDecl>(D)) {
        F.Vars[V].Decl = DS;
        if (const Expr *Init = V->getInit())
          F.Vars[V].Values.push_back(Init);
        if (V->getType()->isReferenceType() && V->getInit())
          if (const VarDecl *R = lvalueVar(V->getInit()))
            if (!V->getType().getNonReferenceType().isConstQualified())
              F.Vars[R].Escapes = true;
      }
    return true;
  }
  bool VisitForStmt(ForStmt *FS) {
    if (const auto *DS = dyn_cast_or_null<DeclStmt>(FS->getInit()))
      if (DS->isSingleDecl())
        if (const auto *V = dyn_cast<VarDecl>(DS->getSingleDecl()))
          F.LoopOf[V] = FS;
    return true;
  }
  bool VisitBinaryOperator(BinaryOperator *BO) {
    if (!BO->isAssignmentOp())
      return true;
    const auto *DRE = dyn_cast<DeclRefExpr>(BO->getLHS()->IgnoreParens());
    const auto *V = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
    if (!V)
      return true;
    if (BO->getOpcode() == BO_Assign)
      F.Vars[V].Values.push_back(BO->getRHS());
    else
      F.Vars[V].Updates.push_back(BO);
    return true;
  }
  bool VisitUnaryOperator(UnaryOperator *UO) {
    const VarDecl *V = lvalueVar(UO->getSubExpr());
    if (!V)
      return true;
    if (UO->isIncrementDecrementOp())
      F.Vars[V].Updates.push_back(UO);
    else if (UO->getOpcode() == UO_AddrOf)
      F.Vars[V].Escapes = true;
    return true;
  }
  bool VisitCallExpr(CallExpr *CE) {
    for (const Expr *A : CE->arguments())
      if (A->isLValue())
        if (const VarDecl *V = lvalueVar(A))
          F.Vars[V].Escapes = true; // Maybe by non-const reference.
    return true;
  }
  bool VisitLambdaExpr(LambdaExpr *L) {
    for (const LambdaCapture &C : L->captures())
      if (C.capturesVariable() && C.getCaptureKind() == LCK_ByRef)
        if (const auto *V = dyn_cast<VarDecl>(C.getCapturedVar()))
          F.Vars[V].Escapes = true;
    return true;
  }
  bool VisitDeclRefExpr(DeclRefExpr *DRE) {
    if (const auto *V = dyn_cast<VarDecl>(DRE->getDecl()))
      F.Uses[V].push_back(DRE);
    return true;
  }
  bool VisitExplicitCastExpr(ExplicitCastExpr *E) {
    // `(size_t)x` is a NoOp cast around an implicit IntegralCast.
    if ((E->getCastKind() != CK_IntegralCast &&
         E->getCastKind() != CK_NoOp) ||
        E->isTypeDependent())
      return true;
    const Expr *Src = E->getSubExprAsWritten();
    if (intWidth(Ctx, E->getType()) == 64 && Src->getType()->isIntegerType() &&
        intWidth(Ctx, Src->getType()) <= 32)
      F.Casts.push_back(E);
    return true;
  }

private:
  const ASTContext &Ctx;
  LocalFacts &F;
};

/// Interval arithmetic over one body under one shape set.
class RangeAnalyzer {
public:
  RangeAnalyzer(const PassContext &PC, const FunctionDecl *FD,
                const LocalFacts &LF, const ShapeEnv &Env)
      : PC(PC), Ctx(PC.astContext()), SM(PC.sourceManager()), FD(FD), LF(LF),
        Env(Env) {}

  const ShapeEnv &env() const { return Env; }
  /// Why the last query failed.
  std::string Why;

  std::optional<Range> range(const Expr *E) {
    if (!E)
      return fail("an expression is missing");
    E = E->IgnoreParens();
    if (E->isValueDependent() || E->isTypeDependent())
      return fail("'" + shortText(PC, E) + "' depends on a template parameter");
    if (E->getType()->isIntegralOrEnumerationType()) {
      Expr::EvalResult R;
      if (E->EvaluateAsInt(R, Ctx)) {
        const APSInt &V = R.Val.getInt();
        return Range::exact(V.isSigned() ? Wide(V.getSExtValue())
                                         : Wide(V.getZExtValue()));
      }
    }
    std::string B = cudaidiom::builtinRef(E->IgnoreParenImpCasts()).name();
    if (!B.empty())
      return builtin(B);
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
      if (const auto *V = dyn_cast<VarDecl>(DRE->getDecl()))
        return varRange(V);
      return fail("'" + shortText(PC, E) + "' is not a variable");
    }
    if (const auto *CE = dyn_cast<CastExpr>(E))
      return cast(CE);
    if (const auto *BO = dyn_cast<BinaryOperator>(E))
      return binary(BO);
    if (const auto *UO = dyn_cast<UnaryOperator>(E)) {
      switch (UO->getOpcode()) {
      case UO_LNot:
        return Range{0, 1};
      case UO_Plus:
        return range(UO->getSubExpr());
      case UO_Minus: {
        auto R = range(UO->getSubExpr());
        if (!R)
          return R;
        return checked(UO, {-R->Hi, -R->Lo});
      }
      default:
        return fail("'" + shortText(PC, E) + "' is not arithmetic the pass "
                    "bounds");
      }
    }
    if (const auto *CO = dyn_cast<ConditionalOperator>(E)) {
      auto T = range(CO->getTrueExpr());
      if (!T)
        return T;
      auto F = range(CO->getFalseExpr());
      if (!F)
        return F;
      return T->join(*F);
    }
    if (const auto *CE = dyn_cast<CallExpr>(E))
      return call(CE);
    return fail("'" + shortText(PC, E) +
                "' is not computed from values the spec fixes (launch "
                "dimensions, integer scalars, constants)");
  }

  std::optional<Range> varRange(const VarDecl *V) {
    auto It = Memo.find(V);
    if (It != Memo.end()) {
      if (!It->second)
        Why = MemoWhy[V];
      return It->second;
    }
    if (!InProgress.insert(V).second)
      return fail("'" + V->getNameAsString() + "' depends on its own value");
    std::optional<Range> R = computeVar(V);
    InProgress.erase(V);
    Memo[V] = R;
    if (!R)
      MemoWhy[V] = Why;
    return R;
  }

private:
  std::optional<Range> fail(const std::string &W) {
    Why = W;
    return std::nullopt;
  }

  bool fits(const Range &R, QualType T) const {
    if (T->isBooleanType())
      return R.Lo >= 0 && R.Hi <= 1;
    if (!T->isIntegerType())
      return true;
    unsigned W = Ctx.getIntWidth(T);
    Wide Min = T->isSignedIntegerOrEnumerationType() ? -(Wide(1) << (W - 1)) : 0;
    Wide Max = T->isSignedIntegerOrEnumerationType() ? (Wide(1) << (W - 1)) - 1
                                                     : (Wide(1) << W) - 1;
    return R.Lo >= Min && R.Hi <= Max;
  }

  std::optional<Range> checked(const Expr *E, Range R) {
    if (R.Lo < -Huge || R.Hi > Huge || !fits(R, E->getType()))
      return fail("'" + shortText(PC, E) + "' may leave its type '" +
                  E->getType().getAsString() + "' (values up to " + str(R.Hi) +
                  ")");
    return R;
  }

  std::optional<Range> builtin(StringRef B) {
    auto [Var, Field] = B.split('.');
    unsigned D = Field == "x" ? 0 : Field == "y" ? 1 : 2;
    if (Var == "threadIdx")
      return Range{0, Wide(Env.Block[D]) - 1};
    if (Var == "blockIdx")
      return Range{0, Wide(Env.Grid[D]) - 1};
    if (Var == "blockDim")
      return Range{Wide(Env.BlockLo[D]), Wide(Env.Block[D])};
    return Range{Wide(Env.GridLo[D]), Wide(Env.Grid[D])};
  }

  std::optional<Range> cast(const CastExpr *CE) {
    switch (CE->getCastKind()) {
    case CK_IntegralCast:
    case CK_NoOp:
    case CK_LValueToRValue: {
      auto R = range(CE->getSubExpr());
      if (!R)
        return R;
      return checked(CE, *R);
    }
    case CK_IntegralToBoolean:
      return Range{0, 1};
    default:
      return fail("'" + shortText(PC, CE) + "' converts a non-integer value");
    }
  }

  std::optional<Range> binary(const BinaryOperator *BO) {
    BinaryOperatorKind Op = BO->getOpcode();
    if (BO->isComparisonOp() || BO->isLogicalOp())
      return Range{0, 1};
    if (Op == BO_Comma)
      return range(BO->getRHS());
    if (BO->isAssignmentOp())
      return fail("'" + shortText(PC, BO) + "' assigns inside an expression");
    auto L = range(BO->getLHS());
    if (!L)
      return L;
    auto R = range(BO->getRHS());
    if (!R)
      return R;
    Range Out;
    switch (Op) {
    case BO_Add:
      Out = {L->Lo + R->Lo, L->Hi + R->Hi};
      break;
    case BO_Sub:
      Out = {L->Lo - R->Hi, L->Hi - R->Lo};
      break;
    case BO_Mul: {
      Wide P[4] = {L->Lo * R->Lo, L->Lo * R->Hi, L->Hi * R->Lo,
                   L->Hi * R->Hi};
      Out = {*std::min_element(P, P + 4), *std::max_element(P, P + 4)};
      break;
    }
    case BO_Div:
      if (R->Lo <= 0 || L->Lo < 0)
        return fail("'" + shortText(PC, BO) + "' divides a value that may be "
                    "negative or by one that may be zero");
      Out = {L->Lo / R->Hi, L->Hi / R->Lo};
      break;
    case BO_Rem:
      if (R->Lo <= 0 || L->Lo < 0)
        return fail("'" + shortText(PC, BO) + "' takes a remainder of a value "
                    "that may be negative or by one that may be zero");
      Out = {0, std::min(L->Hi, R->Hi - 1)};
      break;
    case BO_Shl:
      if (L->Lo < 0 || R->Lo != R->Hi || R->Lo < 0 || R->Lo > 62)
        return fail("'" + shortText(PC, BO) + "' shifts by an unknown amount");
      Out = {L->Lo << int(R->Lo), L->Hi << int(R->Lo)};
      break;
    case BO_Shr:
      if (L->Lo < 0 || R->Lo < 0 || R->Hi > 127)
        return fail("'" + shortText(PC, BO) + "' shifts a value that may be "
                    "negative");
      Out = {L->Lo >> int(R->Hi), L->Hi >> int(R->Lo)};
      break;
    case BO_And:
      if (L->Lo >= 0 && R->Lo >= 0)
        Out = {0, std::min(L->Hi, R->Hi)};
      else if (L->Lo >= 0 || R->Lo >= 0)
        Out = {0, L->Lo >= 0 ? L->Hi : R->Hi};
      else
        return fail("'" + shortText(PC, BO) + "' masks negative values");
      break;
    case BO_Or:
    case BO_Xor: {
      if (L->Lo < 0 || R->Lo < 0)
        return fail("'" + shortText(PC, BO) + "' combines negative values");
      Wide M = 1;
      while (M <= std::max(L->Hi, R->Hi))
        M <<= 1;
      Out = {0, M - 1};
      break;
    }
    default:
      return fail("'" + shortText(PC, BO) + "' is not arithmetic the pass "
                  "bounds");
    }
    return checked(BO, Out);
  }

  std::optional<Range> call(const CallExpr *CE) {
    StringRef N = systemCalleeName(SM, CE);
    bool IsMin = N == "min" || N == "umin" || N == "llmin" || N == "ullmin";
    bool IsMax = N == "max" || N == "umax" || N == "llmax" || N == "ullmax";
    if ((!IsMin && !IsMax) || CE->getNumArgs() != 2)
      return fail("the call '" + shortText(PC, CE) + "' is not bounded by the "
                  "spec");
    auto A = range(CE->getArg(0));
    if (!A)
      return A;
    auto B = range(CE->getArg(1));
    if (!B)
      return B;
    Range Out = IsMin ? Range{std::min(A->Lo, B->Lo), std::min(A->Hi, B->Hi)}
                      : Range{std::max(A->Lo, B->Lo), std::max(A->Hi, B->Hi)};
    return checked(CE, Out);
  }

  std::optional<Range> computeVar(const VarDecl *V) {
    std::string Name = "'" + V->getNameAsString() + "'";
    if (const auto *P = dyn_cast<ParmVarDecl>(V)) {
      auto It = Env.Scalars.find(P->getFunctionScopeIndex());
      if (P->getDeclContext() != FD || It == Env.Scalars.end())
        return fail("the parameter " + Name +
                    " has no integer value in the spec");
      return Range::exact(It->second);
    }
    if (!V->isLocalVarDecl() || V->isStaticLocal())
      return fail(Name + " is not a local variable");
    auto DI = LF.Vars.find(V);
    if (DI == LF.Vars.end())
      return fail(Name + " has no value the pass sees");
    const LocalFacts::Defs &D = DI->second;
    if (D.Escapes)
      return fail(Name + " may be changed through a reference or pointer");
    std::optional<Range> R;
    auto Loop = LF.LoopOf.find(V);
    if (!D.Updates.empty()) {
      if (Loop == LF.LoopOf.end())
        return fail(Name + " is updated from its own value outside a "
                    "counted loop");
      R = counter(V, Loop->second, D);
    } else {
      if (D.Values.empty())
        return fail(Name + " is never given a value");
      for (const Expr *E : D.Values) {
        auto X = range(E);
        if (!X)
          return X;
        R = R ? R->join(*X) : *X;
      }
    }
    if (R && !fits(*R, V->getType()))
      return fail(Name + " may leave its type");
    return R;
  }

  /// The counter of `for (T v = a; v < b; v += s)` with s >= 0 ranges over
  /// [a, max(a, b - 1 + s)] (b + s for <=).
  std::optional<Range> counter(const VarDecl *V, const ForStmt *FS,
                               const LocalFacts::Defs &D) {
    std::string Name = "'" + V->getNameAsString() + "'";
    if (D.Values.size() != 1 || !V->getInit())
      return fail(Name + " is assigned outside its loop header");
    if (mayModify(FS->getBody(), V))
      return fail(Name + " is changed in the body of its loop");
    const Expr *Inc = FS->getInc() ? FS->getInc()->IgnoreParens() : nullptr;
    const auto *Cond = dyn_cast_or_null<BinaryOperator>(
        FS->getCond() ? FS->getCond()->IgnoreParenImpCasts() : nullptr);
    if (!Inc || !Cond)
      return fail(Name + "'s loop has no condition or step");
    BinaryOperatorKind Op = Cond->getOpcode();
    const Expr *Bound = nullptr;
    if (lvalueVar(Cond->getLHS()) == V && (Op == BO_LT || Op == BO_LE))
      Bound = Cond->getRHS();
    else if (lvalueVar(Cond->getRHS()) == V && (Op == BO_GT || Op == BO_GE)) {
      Bound = Cond->getLHS();
      Op = Op == BO_GT ? BO_LT : BO_LE;
    }
    if (!Bound)
      return fail(Name + "'s loop condition is not '" +
                  V->getNameAsString() + " < bound'");
    std::optional<Range> Step;
    for (const Stmt *U : D.Updates) {
      if (U != Inc)
        return fail(Name + " is updated outside its loop's step");
      std::optional<Range> S;
      if (const auto *UO = dyn_cast<UnaryOperator>(U)) {
        if (!UO->isIncrementOp())
          return fail(Name + " counts down");
        S = Range::exact(1);
      } else if (const auto *CAO = dyn_cast<CompoundAssignOperator>(U)) {
        if (CAO->getOpcode() != BO_AddAssign)
          return fail(Name + "'s step is not an addition");
        S = range(CAO->getRHS());
        if (!S)
          return S;
      }
      if (!S || S->Lo < 0)
        return fail(Name + "'s step may be negative");
      Step = S;
    }
    if (!Step)
      return fail(Name + " has no step");
    auto Start = range(V->getInit());
    if (!Start)
      return Start;
    auto B = range(Bound);
    if (!B)
      return B;
    Wide Last = (Op == BO_LT ? B->Hi - 1 : B->Hi) + Step->Hi;
    return Range{Start->Lo, std::max(Start->Hi, Last)};
  }

  const PassContext &PC;
  const ASTContext &Ctx;
  const SourceManager &SM;
  const FunctionDecl *FD;
  const LocalFacts &LF;
  const ShapeEnv &Env;
  DenseMap<const VarDecl *, std::optional<Range>> Memo;
  DenseMap<const VarDecl *, std::string> MemoWhy;
  SmallPtrSet<const VarDecl *, 8> InProgress;
};

/// One variable or cast the pass may narrow.
struct Candidate {
  const VarDecl *Var = nullptr;
  const ExplicitCastExpr *Cast = nullptr;
  SourceLocation Loc;
  std::optional<TextEdit> Edit;
  std::string Before; ///< The text it replaces, for messages.
  std::optional<Range> Values;
  bool Selected = false;
  /// Refused for how it is written (auto, a macro, ...), before any range
  /// was computed: Why is the whole message.
  bool Structural = false;
  std::string Why; ///< For a refused candidate.
};

/// The analysis of one body (a kernel or one instantiation).
class BodyAnalysis {
public:
  BodyAnalysis(const PassContext &PC, const FunctionDecl *FD,
               const std::vector<ShapeEnv> &Envs)
      : PC(PC), Ctx(PC.astContext()), FD(FD), PM(FD->getBody()) {
    FactCollector(Ctx, Facts).TraverseStmt(FD->getBody());
    for (const ShapeEnv &E : Envs)
      Analyzers.emplace_back(PC, FD, Facts, E);
  }

  std::vector<Candidate> run() {
    std::vector<Candidate> Cands;
    for (const auto &KV : Facts.Vars)
      if (auto C = varCandidate(KV.first, KV.second))
        Cands.push_back(std::move(*C));
    for (const ExplicitCastExpr *E : Facts.Casts)
      Cands.push_back(castCandidate(E));

    for (Candidate &C : Cands) {
      if (!C.Why.empty()) {
        C.Structural = true;
        continue;
      }
      std::string Why;
      C.Values = C.Var ? rangeAllVar(C.Var, Why) : rangeAll(C.Cast, Why);
      if (!C.Values) {
        C.Why = "its values are not bounded by the spec: " + Why;
        continue;
      }
      if (C.Values->Lo < 0 || C.Values->Hi >= Limit) {
        C.Why = "its values reach [" + str(C.Values->Lo) + ", " +
                str(C.Values->Hi) + "], outside [0, 2^30) where int is safe "
                "with margin";
        continue;
      }
      C.Selected = true;
      if (C.Var)
        SelVars.insert(C.Var);
      else
        SelCasts.insert(C.Cast);
    }
    // Every use of a selected candidate must keep its value; dropping one
    // candidate can only make the others' checks easier, so iterate.
    for (bool Changed = true; Changed;) {
      Changed = false;
      for (Candidate &C : Cands) {
        if (!C.Selected)
          continue;
        std::string Why;
        bool Ok = true;
        if (C.Var) {
          auto It = Facts.Uses.find(C.Var);
          if (It != Facts.Uses.end())
            for (const DeclRefExpr *U : It->second)
              if (!(Ok = checkUp(U, Why)))
                break;
        } else {
          Ok = checkUp(C.Cast, Why);
        }
        if (!Ok) {
          C.Selected = false;
          C.Why = Why;
          SelVars.erase(C.Var);
          SelCasts.erase(C.Cast);
          Changed = true;
        }
      }
    }
    return Cands;
  }

private:
  std::optional<Candidate> varCandidate(const VarDecl *V,
                                        const LocalFacts::Defs &D) {
    if (isa<ParmVarDecl>(V) || !V->isLocalVarDecl() || V->isStaticLocal() ||
        intWidth(Ctx, V->getType()) != 64 || V->getType()->isReferenceType())
      return std::nullopt;
    Candidate C;
    C.Var = V;
    C.Loc = V->getLocation();
    std::string Name = "'" + V->getNameAsString() + "'";
    if (V->getType()->getContainedAutoType()) {
      C.Why = Name + " is declared auto; its type comes from its initializer";
      return C;
    }
    if (V->getType()->getAs<SubstTemplateTypeParmType>()) {
      C.Why = Name + "'s type is a template parameter";
      return C;
    }
    if (!D.Decl || !D.Decl->isSingleDecl()) {
      C.Why = Name + " is declared together with other variables";
      return C;
    }
    TypeLoc TL = V->getTypeSourceInfo()->getTypeLoc();
    while (auto QTL = TL.getAs<QualifiedTypeLoc>())
      TL = QTL.getUnqualifiedLoc();
    C.Before = PC.text(TL.getSourceRange()) + " " + V->getNameAsString();
    C.Edit = makeTokenEdit(PC, TL.getSourceRange(), "int");
    if (!C.Edit)
      C.Why = Name + "'s type is spelled inside a macro expansion";
    return C;
  }

  Candidate castCandidate(const ExplicitCastExpr *E) {
    Candidate C;
    C.Cast = E;
    C.Loc = E->getBeginLoc();
    C.Before = shortText(PC, E);
    if (E->getType()->getAs<SubstTemplateTypeParmType>()) {
      C.Why = "the cast's type is a template parameter";
      return C;
    }
    TypeLoc TL = E->getTypeInfoAsWritten()->getTypeLoc();
    while (auto QTL = TL.getAs<QualifiedTypeLoc>())
      TL = QTL.getUnqualifiedLoc();
    C.Edit = makeTokenEdit(PC, TL.getSourceRange(), "int");
    if (!C.Edit)
      C.Why = "the cast is spelled inside a macro expansion";
    return C;
  }

  /// The union over every shape set of \p Query's range; on failure, Why
  /// names the shape set.
  template <typename F>
  std::optional<Range> overShapes(F Query, std::string &Why) {
    std::optional<Range> U;
    for (RangeAnalyzer &A : Analyzers) {
      std::optional<Range> R = Query(A);
      if (!R) {
        Why = "in shape set '" + A.env().Name + "': " + A.Why;
        return std::nullopt;
      }
      U = U ? U->join(*R) : *R;
    }
    if (!U)
      Why = "the spec has no shape sets";
    return U;
  }
  std::optional<Range> rangeAll(const Expr *E, std::string &Why) {
    return overShapes([&](RangeAnalyzer &A) { return A.range(E); }, Why);
  }
  std::optional<Range> rangeAllVar(const VarDecl *V, std::string &Why) {
    return overShapes([&](RangeAnalyzer &A) { return A.varRange(V); }, Why);
  }

  /// Width an expression would have after the selected narrowings: 32 for
  /// int-sized (after promotion), 64 otherwise.
  unsigned newWidth(const Expr *E) const {
    E = E->IgnoreParens();
    auto TypeWidth = [&](QualType T) {
      return T->isIntegerType() && Ctx.getIntWidth(T) <= 32 ? 32u : 64u;
    };
    if (const auto *ICE = dyn_cast<ImplicitCastExpr>(E)) {
      switch (ICE->getCastKind()) {
      case CK_LValueToRValue:
      case CK_NoOp:
      case CK_IntegralCast:
        return newWidth(ICE->getSubExpr());
      default:
        return TypeWidth(E->getType());
      }
    }
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
      if (const auto *V = dyn_cast<VarDecl>(DRE->getDecl()))
        if (SelVars.count(V))
          return 32;
      return TypeWidth(E->getType());
    }
    if (const auto *EC = dyn_cast<ExplicitCastExpr>(E))
      return SelCasts.count(EC) ? 32 : TypeWidth(E->getType());
    if (const auto *BO = dyn_cast<BinaryOperator>(E)) {
      if (BO->getType()->isPointerType())
        return 64;
      if (BO->isComparisonOp() || BO->isLogicalOp())
        return 32;
      if (BO->isAssignmentOp())
        return newWidth(BO->getLHS());
      if (BO->getOpcode() == BO_Comma)
        return newWidth(BO->getRHS());
      if (BO->isShiftOp())
        return newWidth(BO->getLHS());
      return std::max(newWidth(BO->getLHS()), newWidth(BO->getRHS()));
    }
    if (const auto *UO = dyn_cast<UnaryOperator>(E)) {
      if (UO->getOpcode() == UO_LNot)
        return 32;
      if (UO->getOpcode() == UO_Minus || UO->getOpcode() == UO_Plus ||
          UO->getOpcode() == UO_Not || UO->isIncrementDecrementOp())
        return newWidth(UO->getSubExpr());
    }
    if (const auto *CO = dyn_cast<ConditionalOperator>(E))
      return std::max(newWidth(CO->getTrueExpr()),
                      newWidth(CO->getFalseExpr()));
    return TypeWidth(E->getType());
  }

  /// An expression whose type becomes 32-bit must stay in [0, 2^30).
  bool checkChanged(const Expr *E, std::string &Why) {
    std::string RW;
    auto R = rangeAll(E, RW);
    if (!R) {
      Why = "'" + shortText(PC, E) + "' would be computed in 32 bits, but " +
            RW;
      return false;
    }
    if (R->Lo < 0 || R->Hi >= Limit) {
      Why = "'" + shortText(PC, E) + "' would be computed in 32 bits and "
            "reaches [" + str(R->Lo) + ", " + str(R->Hi) + "]";
      return false;
    }
    return true;
  }

  const Stmt *parent(const Stmt *S) const {
    const Stmt *P = PM.getParent(S);
    return P;
  }

  /// Whether the value \p N (narrowed, or computed from narrowed values)
  /// reaches its users unchanged; climbs while the types change.
  bool checkUp(const Expr *N, std::string &Why, unsigned Depth = 0) {
    if (Depth > 64) {
      Why = "the expression is too deep to check";
      return false;
    }
    const Stmt *P = parent(N);
    while (P && isa<ParenExpr>(P)) {
      N = cast<Expr>(P);
      P = parent(P);
    }
    if (!P)
      return true;
    std::string Use = "'" + shortText(PC, P) + "'";
    if (const auto *ICE = dyn_cast<ImplicitCastExpr>(P)) {
      switch (ICE->getCastKind()) {
      case CK_LValueToRValue:
      case CK_NoOp:
        return checkUp(ICE, Why, Depth + 1);
      case CK_IntegralCast: {
        const Stmt *G = parent(ICE);
        while (G && isa<ParenExpr>(G))
          G = parent(G);
        // An operand of arithmetic: the conversion is re-derived from the
        // new types, so keep climbing. Otherwise it converts to a declared
        // type, and an exact non-negative value converts the same way.
        bool Operand =
            G && (isa<ConditionalOperator>(G) || isa<UnaryOperator>(G) ||
                  (isa<BinaryOperator>(G) &&
                   cast<BinaryOperator>(G)->getOpcode() != BO_Assign));
        if (Operand)
          return checkUp(ICE, Why, Depth + 1);
        return destinationOk(G, Why);
      }
      case CK_IntegralToBoolean:
      case CK_IntegralToFloating:
        return true;
      default:
        Why = "it is converted in " + Use;
        return false;
      }
    }
    if (isa<ExplicitCastExpr>(P) || isa<ArraySubscriptExpr>(P))
      return true;
    if (const auto *BO = dyn_cast<BinaryOperator>(P)) {
      bool IsLHS = BO->getLHS() == N;
      if (BO->isAssignmentOp()) {
        if (IsLHS || BO->getOpcode() == BO_Assign)
          return true; // Its own definition, or converted to the target.
        const VarDecl *X = lvalueVar(BO->getLHS());
        if ((X && SelVars.count(X)) || newWidth(BO->getLHS()) == 64)
          return true;
        Why = "it is added into the 32-bit '" + shortText(PC, BO->getLHS()) +
              "' by " + Use;
        return false;
      }
      if (BO->getOpcode() == BO_Comma)
        return IsLHS || checkUp(BO, Why, Depth + 1);
      if (BO->isLogicalOp() || BO->getType()->isPointerType())
        return true;
      if (BO->isComparisonOp()) {
        const Expr *O = IsLHS ? BO->getRHS() : BO->getLHS();
        if (BO->getLHS()->getType()->isSignedIntegerType() &&
            O->IgnoreParenImpCasts()->getType()->isSignedIntegerType())
          return true;
        std::string RW;
        auto R = rangeAll(O, RW);
        if (R && R->Lo >= 0)
          return true;
        Why = "it is compared with '" + shortText(PC, O) +
              "', which may be negative, so the comparison's signedness "
              "could change (" + Use + ")";
        return false;
      }
      if (BO->isShiftOp()) {
        if (!IsLHS)
          return true;
      } else if (newWidth(IsLHS ? BO->getRHS() : BO->getLHS()) == 64) {
        return true; // The other operand keeps it 64-bit.
      }
      return checkChanged(BO, Why) && checkUp(BO, Why, Depth + 1);
    }
    if (const auto *UO = dyn_cast<UnaryOperator>(P)) {
      switch (UO->getOpcode()) {
      case UO_PreInc:
      case UO_PostInc:
      case UO_PreDec:
      case UO_PostDec:
      case UO_LNot:
        return true;
      case UO_Plus:
        return checkUp(UO, Why, Depth + 1);
      case UO_AddrOf:
        Why = "its address is taken (" + Use + ")";
        return false;
      default:
        Why = "it is negated or complemented in " + Use;
        return false;
      }
    }
    if (const auto *CO = dyn_cast<ConditionalOperator>(P)) {
      if (CO->getCond() == N)
        return true;
      const Expr *O =
          CO->getTrueExpr() == N ? CO->getFalseExpr() : CO->getTrueExpr();
      if (newWidth(O) == 64)
        return true;
      return checkChanged(CO, Why) && checkUp(CO, Why, Depth + 1);
    }
    if (const auto *DS = dyn_cast<DeclStmt>(P)) {
      for (const Decl *D : DS->decls())
        if (const auto *W = dyn_cast<VarDecl>(D))
          if (W->getInit() == N) {
            if (W->getType()->getContainedAutoType()) {
              Why = "it initializes the auto variable '" +
                    W->getNameAsString() + "', whose type would change";
              return false;
            }
            if (W->getType()->isReferenceType()) {
              Why = "it initializes the reference '" + W->getNameAsString() +
                    "'";
              return false;
            }
          }
      return true;
    }
    if (isa<IfStmt>(P) || isa<WhileStmt>(P) || isa<DoStmt>(P) ||
        isa<ForStmt>(P) || isa<CompoundStmt>(P))
      return true;
    if (isa<CallExpr>(P))
      return destinationOk(P, Why);
    Why = "it is used in " + Use + ", which the pass does not reason about";
    return false;
  }

  /// A narrowed value converted to a declared type at \p G: fine, unless
  /// \p G is a call whose overload or template deduction may change.
  bool destinationOk(const Stmt *G, std::string &Why) {
    const auto *CE = dyn_cast_or_null<CallExpr>(G);
    if (!CE)
      return true;
    const FunctionDecl *Callee = CE->getDirectCallee();
    if (!Callee) {
      Why = "it is passed to '" + shortText(PC, CE) + "', an indirect call";
      return false;
    }
    if (Callee->getPrimaryTemplate() || Callee->isVariadic()) {
      Why = "it is passed to '" + Callee->getNameAsString() +
            "', whose parameter types follow the argument";
      return false;
    }
    auto Found = Callee->getDeclContext()->getRedeclContext()->lookup(
        Callee->getDeclName());
    unsigned Overloads = 0;
    for (const NamedDecl *D : Found)
      Overloads += isa<FunctionDecl>(D->getUnderlyingDecl()) ||
                   isa<FunctionTemplateDecl>(D->getUnderlyingDecl());
    if (Overloads > 1) {
      Why = "it is passed to '" + Callee->getNameAsString() +
            "', which is overloaded (another overload may be chosen)";
      return false;
    }
    return true;
  }

  const PassContext &PC;
  const ASTContext &Ctx;
  const FunctionDecl *FD;
  ParentMap PM;
  LocalFacts Facts;
  std::vector<RangeAnalyzer> Analyzers;
  SmallPtrSet<const VarDecl *, 8> SelVars;
  SmallPtrSet<const ExplicitCastExpr *, 8> SelCasts;
};

} // namespace

void Index32Pass::run(PassContext &PC) {
  const KernelInfo &K = PC.kernel();
  std::vector<const KernelSpec *> Specs = specsOf(PC.options(), K);
  if (Specs.empty()) {
    PC.refused(K.Decl->getLocation(),
               "index32 needs a workload spec to bound index values (--spec "
               "FILE, or " + K.Pos.File + ".astra.json); none describes '" +
               K.QualifiedName + "'");
    return;
  }
  KernelLaunchFacts Launches = plainFacts(findLaunches(PC.astContext(), K.Decl));
  SiteVotes Votes(kernelBodies(K.Decl));
  for (unsigned B = 0; B < Votes.bodies().size(); ++B) {
    const KernelBody &Body = Votes.bodies()[B];
    const KernelSpec *S =
        Body.Label.empty() ? Specs.front() : specForBody(Specs, Body.Label);
    std::string NoSpec;
    std::vector<ShapeEnv> Envs;
    if (!S) {
      NoSpec = "no spec entry describes the instantiation '" + Body.Label +
               "'";
    } else if (auto E = shapeEnvs(*S, Launches)) {
      Envs = std::move(*E);
      if (Envs.empty())
        NoSpec = "the spec for '" + S->Kernel + "' has no shape sets";
    } else {
      NoSpec = toString(E.takeError());
    }
    BodyAnalysis A(PC, Body.FD, Envs);
    for (const Candidate &C : A.run()) {
      StringRef Kind = C.Var ? "var" : "cast";
      if (!NoSpec.empty()) {
        Votes.reject(B, C.Loc, Kind, NoSpec);
        continue;
      }
      if (C.Structural) {
        Votes.reject(B, C.Loc, Kind, C.Why);
        continue;
      }
      if (!C.Selected) {
        Votes.reject(B, C.Loc, Kind,
                     "'" + C.Before + "' stays 64-bit: " + C.Why);
        continue;
      }
      std::string What =
          C.Var ? "'" + C.Before + "' -> 'int " + C.Var->getNameAsString() +
                      "'"
                : "the cast '" + C.Before + "' -> int";
      Votes.accept(B, C.Loc, Kind, {*C.Edit},
                   What + ": every value it takes and feeds stays in [0, 2^30) " +
                   (S->Shapes.size() == 1
                        ? std::string("in the spec's shape set")
                        : "in all " + std::to_string(S->Shapes.size()) +
                              " shape sets") +
                   (Envs.size() > S->Shapes.size()
                        ? " under all " + std::to_string(Envs.size()) +
                              " launches the code can make there"
                        : std::string()) +
                   " (its own: [" + str(C.Values->Lo) + ", " +
                   str(C.Values->Hi) + "])");
    }
  }
  EditSet ES;
  Votes.resolve(PC, ES);
  ES.commit(PC);
}

} // namespace astra
