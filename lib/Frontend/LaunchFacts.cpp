//===- LaunchFacts.cpp ----------------------------------------------------===//
//
// Soundness: every fact here is something the code proves for every
// execution, never a guess. Where a value is not a constant, a local
// initialized once and never changed (ExprMutationAnalyzer), or built from
// those by min/max/*/<</?:, it is unknown, and passes that need it refuse.
// A launch that this translation unit cannot show makes `Hidden` non-empty:
// the kernel's address turned into a function pointer, a launch or a use in
// a template never instantiated here, a declaration in a header (other
// translation units can include it and launch the kernel), C linkage
// (driver-API programs launch such kernels by name), or no launch at all.
//
//===----------------------------------------------------------------------===//
#include "astra/Frontend/LaunchFacts.h"

#include "clang/AST/Attr.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Analysis/Analyses/ExprMutationAnalyzer.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <numeric>
#include <mutex>
#include <set>

using namespace clang;
using namespace llvm;

namespace astra {

StringRef launchApiName(LaunchApi A) {
  switch (A) {
  case LaunchApi::Chevron: return "<<<>>>";
  case LaunchApi::LaunchKernel: return "cudaLaunchKernel";
  case LaunchApi::LaunchCooperativeKernel: return "cudaLaunchCooperativeKernel";
  case LaunchApi::LaunchKernelEx: return "cudaLaunchKernelEx";
  }
  return "";
}

IntFacts IntFacts::constant(int64_t V) {
  IntFacts F;
  F.Constant = V;
  F.Max = V;
  F.MultipleOf = V == 0 ? 1 : (V < 0 ? -V : V);
  F.PowerOfTwo = V > 0 && isPowerOf2_64(uint64_t(V));
  return F;
}

IntFacts IntFacts::unknown(std::string Why) {
  IntFacts F;
  F.Unknown = std::move(Why);
  return F;
}

std::optional<std::array<int64_t, 3>> BlockFacts::constant() const {
  if (!Readable)
    return std::nullopt;
  std::array<int64_t, 3> D;
  for (unsigned I = 0; I < 3; ++I) {
    if (!Dim[I].Constant)
      return std::nullopt;
    D[I] = *Dim[I].Constant;
  }
  return D;
}

int64_t BlockFacts::maxThreads() const {
  if (!Readable)
    return MaxBlockThreads;
  int64_t T = 1;
  for (unsigned I = 0; I < 3; ++I) {
    int64_t M = std::min(Dim[I].Max, MaxBlockDims[I]);
    if (M < 1)
      return 0;
    T *= M;
  }
  return std::min(T, MaxBlockThreads);
}

bool BlockFacts::bounded() const {
  if (!Readable)
    return false;
  int64_t T = 1;
  for (unsigned I = 0; I < 3; ++I) {
    if (Dim[I].Max == INT64_MAX)
      return false;
    if (Dim[I].Max > MaxBlockThreads)
      return false;
    T *= std::max<int64_t>(Dim[I].Max, 1);
  }
  return true;
}

std::string BlockFacts::unknown() const {
  if (!Readable)
    return "its configuration struct";
  for (unsigned I = 0; I < 3; ++I)
    if (!Dim[I].Constant)
      return Dim[I].Unknown.empty() ? std::string("a value") : Dim[I].Unknown;
  return "";
}

std::string LaunchSiteFacts::where() const {
  std::string W = "the launch at " + Pos.str();
  if (Api != LaunchApi::Chevron)
    W += " (" + launchApiName(Api).str() + ")";
  return W;
}

std::vector<const CUDAKernelCallExpr *> LaunchFacts::chevrons() const {
  std::vector<const CUDAKernelCallExpr *> Out;
  for (const LaunchFact &L : Launches)
    if (L.Chevron)
      Out.push_back(L.Chevron);
  return Out;
}

std::optional<int64_t> LaunchFacts::maxThreads(std::string *Why) const {
  auto Fail = [&](std::string W) -> std::optional<int64_t> {
    if (Why)
      *Why = std::move(W);
    return std::nullopt;
  };
  if (!allVisible())
    return Fail(Hidden);
  int64_t Max = 0;
  for (const LaunchFact &L : Launches) {
    if (!L.Block.Readable)
      return Fail(L.where() + " keeps its block in a configuration struct "
                              "this analysis does not read");
    if (!L.Block.bounded())
      return Fail(L.where() + " passes a block size known only at run time (" +
                  L.Block.unknown() + ") with no bound in the code");
    Max = std::max(Max, L.Block.maxThreads());
  }
  return Max;
}

bool LaunchFacts::blockXPowerOfTwo(std::string *Why) const {
  auto Fail = [&](std::string W) {
    if (Why)
      *Why = std::move(W);
    return false;
  };
  if (!allVisible())
    return Fail(Hidden);
  for (const LaunchFact &L : Launches) {
    if (!L.Block.Readable)
      return Fail(L.where() + " keeps its block in a configuration struct "
                              "this analysis does not read");
    if (!L.Block.Dim[0].PowerOfTwo)
      return Fail(L.where() + " passes a block x size (" +
                  (L.Block.Dim[0].Constant
                       ? std::to_string(*L.Block.Dim[0].Constant)
                       : L.Block.Dim[0].Unknown) +
                  ") that the code does not show to be a power of two");
  }
  return true;
}

std::optional<std::vector<std::array<int64_t, 3>>>
LaunchFacts::constantBlocks() const {
  if (!allVisible())
    return std::nullopt;
  std::vector<std::array<int64_t, 3>> Out;
  for (const LaunchFact &L : Launches) {
    auto C = L.Block.constant();
    if (!C)
      return std::nullopt;
    if (std::find(Out.begin(), Out.end(), *C) == Out.end())
      Out.push_back(*C);
  }
  return Out;
}

KernelLaunchFacts plainFacts(const LaunchFacts &F) {
  KernelLaunchFacts P;
  for (const LaunchFact &L : F.Launches)
    P.Sites.push_back(L);
  P.Hidden = F.Hidden;
  P.LaunchBoundsMax = F.LaunchBoundsMax;
  return P;
}

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

namespace {

constexpr unsigned MaxDepth = 12;

/// \p E without parentheses and the wrappers a full expression or a
/// temporary bound to a reference adds (`std::min(d, 512)` binds 512).
const Expr *bare(const Expr *E) {
  while (true) {
    const Expr *Next = E->IgnoreParens();
    if (const auto *FE = dyn_cast<FullExpr>(Next))
      Next = FE->getSubExpr();
    if (const auto *MT = dyn_cast<MaterializeTemporaryExpr>(Next))
      Next = MT->getSubExpr();
    if (Next == E)
      return E;
    E = Next;
  }
}

std::string quoted(const NamedDecl *D) {
  return "'" + D->getNameAsString() + "'";
}

/// The function whose body declares \p V.
const FunctionDecl *ownerFunction(const VarDecl *V) {
  return dyn_cast_or_null<FunctionDecl>(V->getParentFunctionOrMethod());
}

/// Which locals are initialized once and never changed after (their
/// initializer is their value wherever they are read), with one
/// ExprMutationAnalyzer per function body and each answer remembered.
class Locals {
public:
  explicit Locals(ASTContext &Ctx) : Ctx(Ctx) {}
  ASTContext &context() const { return Ctx; }

  bool unchanging(const VarDecl *V) {
    if (!V || isa<ParmVarDecl>(V) || !V->isLocalVarDecl() || !V->getInit() ||
        V->getType()->isReferenceType() || V->isStaticLocal())
      return false;
    auto [It, New] = Memo.try_emplace(V, false);
    if (!New)
      return It->second;
    const FunctionDecl *FD = ownerFunction(V);
    if (!FD || !FD->getBody())
      return false;
    auto &EMA = Analyzers[FD->getBody()];
    if (!EMA)
      EMA = std::make_unique<ExprMutationAnalyzer>(*FD->getBody(), Ctx);
    bool R = !EMA->isMutated(V);
    Memo[V] = R;
    return R;
  }

private:
  ASTContext &Ctx;
  DenseMap<const VarDecl *, bool> Memo;
  DenseMap<const Stmt *, std::unique_ptr<ExprMutationAnalyzer>> Analyzers;
};

/// Why the value of \p V is not known, for messages.
std::string unknownVar(const VarDecl *V, ASTContext &Ctx) {
  if (const auto *P = dyn_cast<ParmVarDecl>(V)) {
    const auto *FD = dyn_cast_or_null<FunctionDecl>(P->getDeclContext());
    return quoted(V) + ", a parameter of " +
           (FD ? quoted(FD) : std::string("its function"));
  }
  if (V->isLocalVarDecl() && V->getInit())
    return quoted(V) + ", changed after its initialization";
  return quoted(V);
}

bool isNamed(const FunctionDecl *FD, std::initializer_list<StringRef> Names) {
  if (!FD || !FD->getIdentifier())
    return false;
  StringRef N = FD->getName();
  for (StringRef M : Names)
    if (N == M)
      return true;
  return false;
}

int64_t gcd64(int64_t A, int64_t B) {
  return std::gcd(A < 0 ? -A : A, B < 0 ? -B : B);
}

/// Both values possible: what holds for either.
IntFacts join(const IntFacts &A, const IntFacts &B) {
  if (A.Constant && B.Constant && *A.Constant == *B.Constant)
    return A;
  IntFacts R;
  R.Max = std::max(A.Max, B.Max);
  R.MultipleOf = gcd64(A.MultipleOf, B.MultipleOf);
  if (R.MultipleOf == 0)
    R.MultipleOf = 1;
  R.PowerOfTwo = A.PowerOfTwo && B.PowerOfTwo;
  R.Unknown = !A.Constant ? A.Unknown : B.Unknown;
  if (R.Unknown.empty())
    R.Unknown = "one of two values";
  return R;
}

int64_t satMul(int64_t A, int64_t B) {
  if (A == INT64_MAX || B == INT64_MAX || A < 0 || B < 0)
    return INT64_MAX;
  int64_t R;
  if (MulOverflow(A, B, R))
    return INT64_MAX;
  return R;
}

class IntEvaluator {
public:
  explicit IntEvaluator(Locals &Locs) : Ctx(Locs.context()), Locs(Locs) {}

  IntFacts eval(const Expr *E, unsigned Depth = 0) {
    if (!E)
      return IntFacts::unknown("a value");
    if (Depth > MaxDepth)
      return IntFacts::unknown("an expression nested too deeply");
    E = bare(E);
    if (E->isValueDependent() || E->isTypeDependent())
      return IntFacts::unknown("a value that depends on a template parameter");
    Expr::EvalResult R;
    if (E->EvaluateAsInt(R, Ctx)) {
      const APSInt &V = R.Val.getInt();
      if (V.getSignificantBits() <= 63)
        return IntFacts::constant(V.getExtValue());
    }
    if (const auto *CE = dyn_cast<CastExpr>(E))
      if (CE->getType()->isIntegerType() &&
          CE->getSubExpr()->getType()->isIntegerType())
        return eval(CE->getSubExpr(), Depth + 1);
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
      const auto *V = dyn_cast<VarDecl>(DRE->getDecl());
      if (!V)
        return IntFacts::unknown("'" + DRE->getNameInfo().getAsString() + "'");
      if (Locs.unchanging(V))
        return eval(V->getInit(), Depth + 1);
      return IntFacts::unknown(unknownVar(V, Ctx));
    }
    if (const auto *CO = dyn_cast<ConditionalOperator>(E))
      return conditional(CO, Depth);
    if (const auto *BO = dyn_cast<BinaryOperator>(E))
      return binary(BO, Depth);
    if (const auto *Call = dyn_cast<CallExpr>(E)) {
      const FunctionDecl *FD = Call->getDirectCallee();
      if (isNamed(FD, {"min", "max", "umin", "umax", "llmin", "llmax",
                       "ullmin", "ullmax"}) &&
          Call->getNumArgs() == 2) {
        IntFacts A = eval(Call->getArg(0), Depth + 1);
        IntFacts B = eval(Call->getArg(1), Depth + 1);
        return FD->getName().ends_with("min") ? minOf(A, B) : maxOf(A, B);
      }
      std::string Name = FD ? FD->getNameAsString() : std::string("a function");
      return IntFacts::unknown("the result of '" + Name + "'");
    }
    return IntFacts::unknown("an expression the analysis does not follow");
  }

private:
  static IntFacts minOf(const IntFacts &A, const IntFacts &B) {
    if (A.Constant && B.Constant)
      return IntFacts::constant(std::min(*A.Constant, *B.Constant));
    IntFacts R = join(A, B);
    R.Max = std::min(A.Max, B.Max);
    return R;
  }
  static IntFacts maxOf(const IntFacts &A, const IntFacts &B) {
    if (A.Constant && B.Constant)
      return IntFacts::constant(std::max(*A.Constant, *B.Constant));
    return join(A, B);
  }

  /// `a < b ? a : b` is min(a, b) (and the other orders and max likewise);
  /// any other conditional is one of its two arms.
  IntFacts conditional(const ConditionalOperator *CO, unsigned Depth) {
    IntFacts T = eval(CO->getTrueExpr(), Depth + 1);
    IntFacts F = eval(CO->getFalseExpr(), Depth + 1);
    if (const auto *Cmp =
            dyn_cast<BinaryOperator>(CO->getCond()->IgnoreParenImpCasts()))
      if (Cmp->isRelationalOp()) {
        auto Same = [&](const Expr *X, const Expr *Y) {
          X = X->IgnoreParenImpCasts();
          Y = Y->IgnoreParenImpCasts();
          llvm::FoldingSetNodeID IX, IY;
          X->Profile(IX, Ctx, true);
          Y->Profile(IY, Ctx, true);
          return IX == IY;
        };
        const Expr *L = Cmp->getLHS(), *Rt = Cmp->getRHS();
        bool Less = Cmp->getOpcode() == BO_LT || Cmp->getOpcode() == BO_LE;
        bool TakesLhs = Same(CO->getTrueExpr(), L) && Same(CO->getFalseExpr(), Rt);
        bool TakesRhs = Same(CO->getTrueExpr(), Rt) && Same(CO->getFalseExpr(), L);
        if ((TakesLhs && Less) || (TakesRhs && !Less))
          return minOf(T, F);
      }
    return join(T, F);
  }

  IntFacts binary(const BinaryOperator *BO, unsigned Depth) {
    IntFacts A = eval(BO->getLHS(), Depth + 1);
    IntFacts B = eval(BO->getRHS(), Depth + 1);
    IntFacts R;
    R.Unknown = !A.Constant ? A.Unknown : B.Unknown;
    switch (BO->getOpcode()) {
    case BO_Mul:
      R.MultipleOf = satMul(A.MultipleOf, B.MultipleOf);
      R.Max = satMul(A.Max, B.Max);
      R.PowerOfTwo = A.PowerOfTwo && B.PowerOfTwo;
      if (R.MultipleOf <= 0 || R.MultipleOf > (int64_t(1) << 40))
        R.MultipleOf = 1;
      return R;
    case BO_Shl:
      if (B.Constant && *B.Constant >= 0 && *B.Constant < 40) {
        int64_t F = int64_t(1) << *B.Constant;
        R.MultipleOf = satMul(A.MultipleOf, F);
        if (R.MultipleOf > (int64_t(1) << 40))
          R.MultipleOf = 1;
        R.Max = satMul(A.Max, F);
        R.PowerOfTwo = A.PowerOfTwo;
      } else if (A.Constant && *A.Constant == 1) {
        R.PowerOfTwo = true;
        R.Max = B.Max < 62 ? int64_t(1) << B.Max : INT64_MAX;
      }
      return R;
    case BO_Div:
      if (B.Constant && *B.Constant > 0) {
        R.Max = A.Max == INT64_MAX ? INT64_MAX : A.Max / *B.Constant;
        if (A.MultipleOf % *B.Constant == 0)
          R.MultipleOf = A.MultipleOf / *B.Constant;
      }
      return R;
    case BO_Add:
      R.Max = (A.Max == INT64_MAX || B.Max == INT64_MAX) ? INT64_MAX
                                                          : A.Max + B.Max;
      R.MultipleOf = std::max<int64_t>(gcd64(A.MultipleOf, B.MultipleOf), 1);
      return R;
    case BO_And:
      if (B.Constant && *B.Constant >= 0)
        R.Max = *B.Constant;
      else if (A.Constant && *A.Constant >= 0)
        R.Max = *A.Constant;
      return R;
    default:
      return R;
    }
  }

  ASTContext &Ctx;
  Locals &Locs;
};

//===----------------------------------------------------------------------===//
// Blocks
//===----------------------------------------------------------------------===//

/// The dim3 (or integer) expression a launch argument holds: through
/// implicit conversions, functional casts and copies of unchanging locals.
const Expr *dim3Source(const Expr *E, Locals &Locs, unsigned Depth = 0) {
  while (E && Depth++ < MaxDepth) {
    E = E->IgnoreImplicit()->IgnoreParens();
    if (const auto *FC = dyn_cast<CXXFunctionalCastExpr>(E)) {
      E = FC->getSubExpr();
      continue;
    }
    if (const auto *CE = dyn_cast<CXXConstructExpr>(E))
      if (CE->getConstructor()->isCopyOrMoveConstructor() &&
          CE->getNumArgs() >= 1) {
        E = CE->getArg(0);
        continue;
      }
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E))
      if (const auto *V = dyn_cast<VarDecl>(DRE->getDecl()))
        if (!V->getType()->isIntegerType() && Locs.unchanging(V)) {
          E = V->getInit();
          continue;
        }
    return E;
  }
  return E;
}

/// The x, y and z of a dim3 constructed at \p E (missing or defaulted: 1),
/// or {E} for an integer.
std::optional<std::array<const Expr *, 3>> dim3Parts(const Expr *E,
                                                     Locals &Locs) {
  E = dim3Source(E, Locs);
  if (!E)
    return std::nullopt;
  std::array<const Expr *, 3> P = {nullptr, nullptr, nullptr};
  if (const auto *CE = dyn_cast<CXXConstructExpr>(E)) {
    if (CE->getNumArgs() > 3)
      return std::nullopt;
    for (unsigned I = 0; I < CE->getNumArgs(); ++I)
      if (!isa<CXXDefaultArgExpr>(CE->getArg(I)))
        P[I] = CE->getArg(I);
    if (CE->getNumArgs() == 0)
      return std::nullopt; // dim3() is (1, 1, 1) but nobody launches that.
    return P;
  }
  if (E->getType()->isIntegerType()) {
    P[0] = E;
    return P;
  }
  return std::nullopt;
}

BlockFacts blockFacts(const Expr *Arg, Locals &Locs) {
  BlockFacts B;
  if (!Arg)
    return B;
  B.Readable = true;
  auto Parts = dim3Parts(Arg, Locs);
  if (!Parts) {
    std::string Why;
    if (const auto *DRE =
            dyn_cast<DeclRefExpr>(dim3Source(Arg, Locs)->IgnoreParenImpCasts()))
      if (const auto *V = dyn_cast<VarDecl>(DRE->getDecl()))
        Why = unknownVar(V, Locs.context());
    for (unsigned I = 0; I < 3; ++I)
      B.Dim[I] = IntFacts::unknown(Why.empty() ? "a dim3 value" : Why);
    return B;
  }
  IntEvaluator Ev(Locs);
  for (unsigned I = 0; I < 3; ++I)
    B.Dim[I] = (*Parts)[I] ? Ev.eval((*Parts)[I]) : IntFacts::constant(1);
  return B;
}

//===----------------------------------------------------------------------===//
// Spec expressions
//===----------------------------------------------------------------------===//

/// Writes a launch's configuration as spec expressions over the kernel's
/// parameters (see LaunchExprs).
class SpecWriter {
public:
  SpecWriter(Locals &Locs, const FunctionDecl *Kernel,
             ArrayRef<const Expr *> KernelArgs)
      : Ctx(Locs.context()), Locs(Locs) {
    // A variable passed as is for a parameter is that parameter.
    for (unsigned I = 0; I < KernelArgs.size() && I < Kernel->getNumParams();
         ++I) {
      const Expr *A = KernelArgs[I] ? KernelArgs[I]->IgnoreParenImpCasts()
                                    : nullptr;
      if (const auto *DRE = dyn_cast_or_null<DeclRefExpr>(A))
        if (const auto *V = dyn_cast<VarDecl>(DRE->getDecl()))
          if (Kernel->getParamDecl(I)->getType()->isIntegerType() &&
              !Passed.count(V))
            Passed[V] = Kernel->getParamDecl(I)->getNameAsString();
    }
  }

  /// The one variable of \p E (followed through unchanging locals) that the
  /// launch does not pass to the kernel, when there is exactly one.
  const VarDecl *freeVariable(const Expr *E) {
    std::set<const VarDecl *> Vars;
    bool Other = false;
    collectLeaves(E, Vars, Other, 0);
    if (Other || Vars.size() != 1)
      return nullptr;
    return *Vars.begin();
  }

  void setFree(const VarDecl *V) { Free = V; }

  std::optional<std::string> write(const Expr *E) {
    Why.clear();
    return text(E, 0);
  }
  std::string why() const { return Why; }

  /// A dim3 (or integer) launch argument's three parts.
  bool writeDim3(const Expr *Arg, std::string Out[3]) {
    auto Parts = dim3Parts(Arg, Locs);
    if (!Parts) {
      Why = "a dim3 whose parts the analysis does not see";
      return false;
    }
    for (unsigned I = 0; I < 3; ++I) {
      if (!(*Parts)[I]) {
        Out[I] = "1";
        continue;
      }
      auto T = text((*Parts)[I], 0);
      if (!T)
        return false;
      Out[I] = *T;
    }
    return true;
  }

private:
  void collectLeaves(const Expr *E, std::set<const VarDecl *> &Vars,
                     bool &Other, unsigned Depth) {
    if (!E || Depth > MaxDepth) {
      Other = true;
      return;
    }
    E = E->IgnoreParenImpCasts();
    Expr::EvalResult R;
    if (!E->isValueDependent() && E->EvaluateAsInt(R, Ctx))
      return;
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
      const auto *V = dyn_cast<VarDecl>(DRE->getDecl());
      if (!V) {
        Other = true;
        return;
      }
      if (Passed.count(V))
        return;
      if (Locs.unchanging(V)) {
        collectLeaves(V->getInit(), Vars, Other, Depth + 1);
        return;
      }
      Vars.insert(V);
      return;
    }
    if (isa<MemberExpr>(E) || isa<ArraySubscriptExpr>(E) ||
        isa<UnaryOperator>(E) && cast<UnaryOperator>(E)->getOpcode() == UO_Deref) {
      Other = true;
      return;
    }
    for (const Stmt *C : E->children())
      if (const auto *CE = dyn_cast_or_null<Expr>(C))
        collectLeaves(CE, Vars, Other, Depth + 1);
  }

  std::optional<std::string> fail(const Expr *E, StringRef What) {
    if (Why.empty())
      Why = What.str();
    return std::nullopt;
  }

  std::optional<std::string> text(const Expr *E, unsigned Depth) {
    if (!E)
      return fail(E, "a missing value");
    if (Depth > MaxDepth)
      return fail(E, "an expression nested too deeply");
    E = bare(E);
    if (E->isValueDependent() || E->isTypeDependent())
      return fail(E, "a value that depends on a template parameter");
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts()))
      if (const auto *P = dyn_cast<ParmVarDecl>(DRE->getDecl()))
        if (auto It = Inlined.find(P); It != Inlined.end())
          return It->second;
    Expr::EvalResult R;
    if (E->getType()->isIntegerType() && E->EvaluateAsInt(R, Ctx)) {
      const APSInt &V = R.Val.getInt();
      if (V.getSignificantBits() > 63)
        return fail(E, "a constant out of range");
      int64_t I = V.getExtValue();
      return I < 0 ? "(" + std::to_string(I) + ")" : std::to_string(I);
    }
    if (const auto *FL = dyn_cast<FloatingLiteral>(E)) {
      SmallString<32> S;
      FL->getValue().toString(S);
      if (!StringRef(S).contains_insensitive("e") && !StringRef(S).contains('.'))
        S += ".0";
      return std::string(S);
    }
    if (const auto *CE = dyn_cast<CastExpr>(E)) {
      QualType To = CE->getType(), From = CE->getSubExpr()->getType();
      auto Sub = text(CE->getSubExpr(), Depth + 1);
      if (!Sub)
        return Sub;
      if (To->isIntegerType() && From->isRealFloatingType())
        return "floor(" + *Sub + ")";
      if (To->isRealFloatingType() && From->isIntegerType())
        return "(" + *Sub + " * 1.0)";
      if ((To->isIntegerType() || To->isRealFloatingType() ||
           To->isBooleanType()) &&
          (From->isIntegerType() || From->isRealFloatingType() ||
           From->isBooleanType()))
        return Sub;
      return fail(E, "a conversion the analysis does not follow");
    }
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
      const auto *V = dyn_cast<VarDecl>(DRE->getDecl());
      if (!V)
        return fail(E, "'" + DRE->getNameInfo().getAsString() + "'");
      if (V == Free)
        return std::string("$B");
      if (auto It = Passed.find(V); It != Passed.end())
        return It->second;
      if (Locs.unchanging(V))
        return text(V->getInit(), Depth + 1);
      return fail(E, unknownVar(V, Ctx) + ", which the launch does not pass "
                                          "to the kernel");
    }
    if (const auto *ME = dyn_cast<MemberExpr>(E)) {
      // block.x of an unchanging local dim3.
      StringRef Field = ME->getMemberDecl()->getName();
      int Idx = Field == "x" ? 0 : Field == "y" ? 1 : Field == "z" ? 2 : -1;
      if (Idx >= 0 && !ME->isArrow()) {
        const Expr *Base = ME->getBase()->IgnoreParenImpCasts();
        if (const auto *DRE = dyn_cast<DeclRefExpr>(Base))
          if (const auto *V = dyn_cast<VarDecl>(DRE->getDecl()))
            if (Locs.unchanging(V))
              if (auto Parts = dim3Parts(V->getInit(), Locs))
                return (*Parts)[Idx] ? text((*Parts)[Idx], Depth + 1)
                                     : std::optional<std::string>("1");
      }
      return fail(E, "the member '" + Field.str() + "'");
    }
    if (const auto *UO = dyn_cast<UnaryOperator>(E)) {
      auto Sub = text(UO->getSubExpr(), Depth + 1);
      if (!Sub)
        return Sub;
      switch (UO->getOpcode()) {
      case UO_Minus: return "(-" + *Sub + ")";
      case UO_Plus: return Sub;
      case UO_LNot: return "(!" + *Sub + ")";
      default: return fail(E, "an operator the spec has no equivalent for");
      }
    }
    if (const auto *BO = dyn_cast<BinaryOperator>(E)) {
      std::optional<StringRef> Op = specOperator(BO->getOpcode());
      if (!Op)
        return fail(E, "the operator '" + BO->getOpcodeStr().str() +
                           "', which the spec has no equivalent for");
      auto L = text(BO->getLHS(), Depth + 1);
      if (!L)
        return L;
      auto Rt = text(BO->getRHS(), Depth + 1);
      if (!Rt)
        return Rt;
      return "(" + *L + " " + Op->str() + " " + *Rt + ")";
    }
    if (const auto *CO = dyn_cast<ConditionalOperator>(E)) {
      auto C = text(CO->getCond(), Depth + 1);
      auto T = C ? text(CO->getTrueExpr(), Depth + 1) : std::nullopt;
      auto F = T ? text(CO->getFalseExpr(), Depth + 1) : std::nullopt;
      if (!F)
        return F;
      return "(" + *C + " ? " + *T + " : " + *F + ")";
    }
    if (const auto *Call = dyn_cast<CallExpr>(E))
      return call(Call, Depth);
    return fail(E, "an expression the spec cannot write");
  }

  std::optional<std::string> call(const CallExpr *Call, unsigned Depth) {
    const FunctionDecl *FD = Call->getDirectCallee();
    if (!FD)
      return fail(Call, "a call through a pointer");
    std::vector<std::string> Args;
    for (const Expr *A : Call->arguments()) {
      auto T = text(A, Depth + 1);
      if (!T)
        return T;
      Args.push_back(*T);
    }
    auto Fn = [&](StringRef F) {
      std::string S = F.str() + "(";
      for (size_t I = 0; I < Args.size(); ++I)
        S += (I ? ", " : "") + Args[I];
      return S + ")";
    };
    if (isNamed(FD, {"min", "fmin", "fminf", "umin", "llmin", "ullmin"}) &&
        Args.size() == 2)
      return Fn("min");
    if (isNamed(FD, {"max", "fmax", "fmaxf", "umax", "llmax", "ullmax"}) &&
        Args.size() == 2)
      return Fn("max");
    if (isNamed(FD, {"ceil", "ceilf"}) && Args.size() == 1)
      return Fn("ceil");
    if (isNamed(FD, {"floor", "floorf"}) && Args.size() == 1)
      return Fn("floor");
    // A user function whose body is one return statement, inlined
    // (ceil_div(a, b), DIV_UP written as a function).
    const FunctionDecl *Def = nullptr;
    if (FD->hasBody(Def) && Def->getNumParams() == Args.size() &&
        !Ctx.getSourceManager().isInSystemHeader(Def->getLocation()))
      if (const auto *Body = dyn_cast_or_null<CompoundStmt>(Def->getBody()))
        if (Body->size() == 1)
          if (const auto *Ret = dyn_cast<ReturnStmt>(Body->body_front())) {
            auto Saved = Inlined;
            for (unsigned I = 0; I < Args.size(); ++I)
              Inlined[Def->getParamDecl(I)] = isAtom(Args[I])
                                                  ? Args[I]
                                                  : "(" + Args[I] + ")";
            auto T = text(Ret->getRetValue(), Depth + 1);
            Inlined = std::move(Saved);
            return T;
          }
    return fail(Call, "the result of '" + FD->getNameAsString() + "'");
  }

  /// A name, a number or `$B`: needs no parentheses as an operand.
  static bool isAtom(StringRef T) {
    return !T.empty() && all_of(T, [](char C) {
      return isAlnum(C) || C == '_' || C == '$' || C == '.';
    });
  }

  ASTContext &Ctx;
  Locals &Locs;
  DenseMap<const VarDecl *, std::string> Passed;
  DenseMap<const ParmVarDecl *, std::string> Inlined;
  const VarDecl *Free = nullptr;
  std::string Why;
};

//===----------------------------------------------------------------------===//
// Finding launches
//===----------------------------------------------------------------------===//

/// Strips casts and `&` from a launch API's function argument.
const Expr *functionOperand(const Expr *E) {
  while (E) {
    E = E->IgnoreParenCasts();
    if (const auto *UO = dyn_cast<UnaryOperator>(E))
      if (UO->getOpcode() == UO_AddrOf) {
        E = UO->getSubExpr();
        continue;
      }
    return E;
  }
  return E;
}

std::optional<LaunchApi> launchApi(const FunctionDecl *FD,
                                   unsigned &FuncArg) {
  if (!FD || !FD->getIdentifier())
    return std::nullopt;
  StringRef N = FD->getName();
  FuncArg = 0;
  if (N == "cudaLaunchKernel")
    return LaunchApi::LaunchKernel;
  if (N == "cudaLaunchCooperativeKernel")
    return LaunchApi::LaunchCooperativeKernel;
  if (N == "cudaLaunchKernelEx" || N == "cudaLaunchKernelExC") {
    FuncArg = 1;
    return LaunchApi::LaunchKernelEx;
  }
  return std::nullopt;
}

/// A launch found in the translation unit.
struct FoundLaunch {
  const Expr *E;
  LaunchApi Api;
  const CUDAKernelCallExpr *Chevron;
  const FunctionDecl *Caller;
};

/// What the translation unit shows of one kernel: its launches, and its
/// other uses (a function pointer made of it, a use in a template).
struct KernelSites {
  std::vector<FoundLaunch> Launches;
  /// Non-dependent launches in a template's pattern: its instantiations
  /// show them too (with their values); kept only if none does.
  std::vector<FoundLaunch> PatternLaunches;
  /// `<<<>>>` launches whose callee is still a name (a dependent call).
  std::vector<const CUDAKernelCallExpr *> PatternChevrons;
  struct Use {
    const Expr *E;
    bool InPattern;
    unsigned Order; ///< Of the traversal: uses by decl and by name merge.
  };
  std::vector<Use> OtherUses;
};

/// The launches and uses of every kernel of a translation unit, from one
/// traversal of it: a file of many kernels is traversed once, not once per
/// kernel (with the CUDA headers, each traversal costs tens of
/// milliseconds). Kernels are keyed by canonical declaration; dependent
/// launches and uses, which name a kernel before it is resolved, by name.
struct LaunchIndex {
  DenseMap<const FunctionDecl *, KernelSites> ByKernel;
  DenseMap<DeclarationName, KernelSites> ByName;
};

class SiteCollector : public RecursiveASTVisitor<SiteCollector> {
public:
  /// Collects the sites of the functions \p Wanted accepts (given a
  /// canonical declaration).
  SiteCollector(LaunchIndex &Index,
                function_ref<bool(const FunctionDecl *)> Wanted)
      : Index(Index), Wanted(Wanted) {}
  bool shouldVisitTemplateInstantiations() const { return true; }

  /// The key of the kernel \p D refers to (an instantiation counts as its
  /// pattern), or null when it is not a wanted function.
  const FunctionDecl *kernelOf(const Decl *D) const {
    const auto *FD = dyn_cast_or_null<FunctionDecl>(D);
    if (!FD)
      return nullptr;
    const FunctionDecl *P = FD->getTemplateInstantiationPattern();
    const FunctionDecl *C = (P ? P : FD)->getCanonicalDecl();
    return Wanted(C) ? C : nullptr;
  }

  bool TraverseFunctionDecl(FunctionDecl *FD) { return inFunction(FD, [&] {
      return RecursiveASTVisitor::TraverseFunctionDecl(FD); }); }
  bool TraverseCXXMethodDecl(CXXMethodDecl *FD) { return inFunction(FD, [&] {
      return RecursiveASTVisitor::TraverseCXXMethodDecl(FD); }); }

  template <typename F> bool inFunction(FunctionDecl *FD, F Traverse) {
    const FunctionDecl *Saved = Current;
    Current = FD;
    bool R = Traverse();
    Current = Saved;
    return R;
  }

  bool dependent() const { return Current && Current->isDependentContext(); }

  bool VisitCUDAKernelCallExpr(CUDAKernelCallExpr *E) {
    const Expr *Callee = E->getCallee()->IgnoreImplicit();
    if (const FunctionDecl *K = kernelOf(E->getDirectCallee())) {
      Consumed.insert(Callee);
      add(K, E, LaunchApi::Chevron, E);
      return true;
    }
    if (const auto *ULE = dyn_cast<UnresolvedLookupExpr>(Callee)) {
      Consumed.insert(Callee);
      Index.ByName[ULE->getName()].PatternChevrons.push_back(E);
    }
    return true;
  }

  bool VisitCallExpr(CallExpr *E) {
    if (isa<CUDAKernelCallExpr>(E))
      return true;
    const Expr *F = nullptr;
    auto Api = launchApiCall(E, F);
    if (!Api)
      return true;
    if (const auto *DRE = dyn_cast_or_null<DeclRefExpr>(F))
      if (const FunctionDecl *K = kernelOf(DRE->getDecl())) {
        Consumed.insert(DRE);
        add(K, E, *Api, nullptr);
      }
    return true;
  }

  bool VisitDeclRefExpr(DeclRefExpr *E) {
    if (const FunctionDecl *K = kernelOf(E->getDecl()))
      if (!Consumed.count(E))
        Index.ByKernel[K].OtherUses.push_back({E, dependent(), Order++});
    return true;
  }

  bool VisitOverloadExpr(OverloadExpr *E) {
    if (!Consumed.count(E))
      Index.ByName[E->getName()].OtherUses.push_back({E, true, Order++});
    return true;
  }

private:
  void add(const FunctionDecl *K, const Expr *E, LaunchApi Api,
           const CUDAKernelCallExpr *Chevron) {
    KernelSites &S = Index.ByKernel[K];
    (dependent() ? S.PatternLaunches : S.Launches)
        .push_back({E, Api, Chevron, Current});
  }

  LaunchIndex &Index;
  function_ref<bool(const FunctionDecl *)> Wanted;
  const FunctionDecl *Current = nullptr;
  SmallPtrSet<const Expr *, 8> Consumed;
  unsigned Order = 0;
};

/// Functions the shared index covers: every kernel. analyzeLaunches of any
/// other function traverses the translation unit for it alone.
bool isIndexed(const FunctionDecl *Canonical) {
  return Canonical->hasAttr<CUDAGlobalAttr>();
}

/// The index of \p Ctx's translation unit, built on first use and freed
/// with the context. The AST does not change after the parse, so the index
/// stays true for the context's life.
const LaunchIndex &launchIndex(ASTContext &Ctx) {
  // Never destroyed: a context may outlive static destructors.
  static auto *M = new std::mutex;
  static auto *Indexes =
      new DenseMap<const ASTContext *, std::unique_ptr<LaunchIndex>>;
  {
    std::lock_guard<std::mutex> L(*M);
    auto It = Indexes->find(&Ctx);
    if (It != Indexes->end())
      return *It->second;
  }
  // Built outside the lock: threads (rewrite -j) parse contexts of their
  // own, and one context is used by one thread.
  auto Index = std::make_unique<LaunchIndex>();
  SiteCollector(*Index, isIndexed).TraverseDecl(Ctx.getTranslationUnitDecl());
  std::lock_guard<std::mutex> L(*M);
  Ctx.AddDeallocation(
      [](void *C) {
        std::lock_guard<std::mutex> L(*M);
        Indexes->erase(static_cast<const ASTContext *>(C));
      },
      &Ctx);
  return *((*Indexes)[&Ctx] = std::move(Index));
}

/// The sites of \p Kernel: its own, and the dependent ones that name it.
KernelSites sitesOf(ASTContext &Ctx, const FunctionDecl *Kernel) {
  const FunctionDecl *K = Kernel->getCanonicalDecl();
  LaunchIndex Own;
  const LaunchIndex *Index = &Own;
  if (isIndexed(K))
    Index = &launchIndex(Ctx);
  else
    SiteCollector(Own, [&](const FunctionDecl *C) { return C == K; })
        .TraverseDecl(Ctx.getTranslationUnitDecl());
  KernelSites S;
  auto Named = Index->ByName.find(Kernel->getDeclName());
  auto Mine = Index->ByKernel.find(K);
  if (Mine != Index->ByKernel.end())
    S = Mine->second;
  if (Named != Index->ByName.end()) {
    S.PatternChevrons = Named->second.PatternChevrons;
    std::vector<KernelSites::Use> Uses;
    std::merge(S.OtherUses.begin(), S.OtherUses.end(),
               Named->second.OtherUses.begin(), Named->second.OtherUses.end(),
               std::back_inserter(Uses),
               [](const KernelSites::Use &A, const KernelSites::Use &B) {
                 return A.Order < B.Order;
               });
    S.OtherUses = std::move(Uses);
  }
  return S;
}

std::string posOf(const SourceManager &SM, SourceLocation L) {
  return makePos(SM, L).str();
}

} // namespace

std::optional<StringRef> specOperator(BinaryOperatorKind Op) {
  switch (Op) {
  case BO_Add: return StringRef("+");
  case BO_Sub: return StringRef("-");
  case BO_Mul: return StringRef("*");
  case BO_Div: return StringRef("/");
  case BO_Rem: return StringRef("%");
  case BO_LT: return StringRef("<");
  case BO_GT: return StringRef(">");
  case BO_LE: return StringRef("<=");
  case BO_GE: return StringRef(">=");
  case BO_EQ: return StringRef("==");
  case BO_NE: return StringRef("!=");
  case BO_LAnd: return StringRef("&&");
  case BO_LOr: return StringRef("||");
  default: return std::nullopt;
  }
}

std::optional<LaunchApi> launchApiCall(const CallExpr *CE,
                                       const Expr *&Function) {
  unsigned FuncArg = 0;
  auto Api = launchApi(CE ? CE->getDirectCallee() : nullptr, FuncArg);
  if (!Api || CE->getNumArgs() <= FuncArg)
    return std::nullopt;
  Function = functionOperand(CE->getArg(FuncArg));
  return Api;
}

IntFacts intFacts(const Expr *E, ASTContext &Ctx) {
  Locals Locs(Ctx);
  return IntEvaluator(Locs).eval(E);
}

LaunchFacts analyzeLaunches(ASTContext &Ctx, const FunctionDecl *Kernel) {
  const SourceManager &SM = Ctx.getSourceManager();
  LaunchFacts F;
  if (!Kernel)
    return F;
  const FunctionDecl *Def = nullptr;
  if (!Kernel->hasBody(Def))
    Def = Kernel;
  if (const auto *LB = Def->getAttr<CUDALaunchBoundsAttr>())
    if (auto V = intFacts(LB->getMaxThreads(), Ctx).Constant)
      F.LaunchBoundsMax = *V;

  KernelSites Fd = sitesOf(Ctx, Kernel);
  Locals Locs(Ctx);

  // Source locations the instantiations cover.
  std::set<unsigned> Covered;
  for (const auto &L : Fd.Launches)
    Covered.insert(L.E->getBeginLoc().getRawEncoding());
  for (const auto &U : Fd.OtherUses)
    if (!U.InPattern)
      Covered.insert(U.E->getBeginLoc().getRawEncoding());
  std::vector<FoundLaunch> All = Fd.Launches;
  for (const auto &L : Fd.PatternLaunches)
    if (!Covered.count(L.E->getBeginLoc().getRawEncoding()))
      All.push_back(L);
  // The same launch seen twice (a template instantiated twice at one
  // location gives one entry per instantiation: both are kept, their values
  // may differ).

  for (const FoundLaunch &L : All) {
    LaunchFact LF;
    LF.Api = L.Api;
    LF.E = L.E;
    LF.Chevron = L.Chevron;
    LF.Pos = makePos(SM, L.E->getBeginLoc());
    LF.Caller = L.Caller ? L.Caller->getQualifiedNameAsString() : "";
    LF.InMacro = L.E->getBeginLoc().isMacroID() || L.E->getEndLoc().isMacroID();

    // The configuration and the arguments, by API.
    const Expr *Grid = nullptr, *Block = nullptr, *Shmem = nullptr;
    std::vector<const Expr *> Args;
    const FunctionDecl *Callee = nullptr;
    if (L.Chevron) {
      const CallExpr *Config = L.Chevron->getConfig();
      if (Config && Config->getNumArgs() >= 2) {
        Grid = Config->getArg(0);
        Block = Config->getArg(1);
        if (Config->getNumArgs() >= 3 && !isa<CXXDefaultArgExpr>(Config->getArg(2)))
          Shmem = Config->getArg(2);
      }
      for (const Expr *A : L.Chevron->arguments())
        Args.push_back(A);
      Callee = L.Chevron->getDirectCallee();
    } else {
      const auto *CE = cast<CallExpr>(L.E);
      if (L.Api != LaunchApi::LaunchKernelEx && CE->getNumArgs() >= 3) {
        Grid = CE->getArg(1);
        Block = CE->getArg(2);
        if (CE->getNumArgs() >= 5 && !isa<CXXDefaultArgExpr>(CE->getArg(4)))
          Shmem = CE->getArg(4);
      }
      if (const auto *DRE =
              dyn_cast<DeclRefExpr>(functionOperand(CE->getArg(
                  L.Api == LaunchApi::LaunchKernelEx ? 1 : 0))))
        Callee = dyn_cast<FunctionDecl>(DRE->getDecl());
      if (L.Api == LaunchApi::LaunchKernelEx)
        for (unsigned I = 2; I < CE->getNumArgs(); ++I)
          Args.push_back(CE->getArg(I));
    }
    if (!Callee)
      Callee = Kernel;

    LF.Block = blockFacts(Block, Locs);
    if (!Block) {
      LF.Exprs.Why = "the launch's configuration is in a cudaLaunchConfig_t";
      F.Launches.push_back(std::move(LF));
      continue;
    }
    SpecWriter W(Locs, Callee, Args);
    if (auto Parts = dim3Parts(Block, Locs); Parts && (*Parts)[0] &&
                                            !LF.Block.Dim[0].Constant)
      if (const VarDecl *V = W.freeVariable((*Parts)[0])) {
        W.setFree(V);
        LF.FreeBlockVar = V->getNameAsString();
      }
    bool Ok = W.writeDim3(Block, LF.Exprs.Block);
    if (Ok)
      Ok = W.writeDim3(Grid, LF.Exprs.Grid);
    if (Ok) {
      if (!Shmem) {
        LF.Exprs.Shmem = "0";
      } else if (auto T = W.write(Shmem)) {
        LF.Exprs.Shmem = *T;
      } else {
        Ok = false;
      }
    }
    if (!Ok) {
      LF.Exprs.Why = W.why();
      for (unsigned I = 0; I < 3; ++I)
        LF.Exprs.Grid[I].clear(), LF.Exprs.Block[I].clear();
      LF.Exprs.Shmem.clear();
      // The block alone may still be writable (a grid from a struct).
      SpecWriter WB(Locs, Callee, Args);
      if (!LF.FreeBlockVar.empty())
        if (auto Parts = dim3Parts(Block, Locs); Parts && (*Parts)[0])
          WB.setFree(WB.freeVariable((*Parts)[0]));
      if (!WB.writeDim3(Block, LF.Exprs.Block))
        for (unsigned I = 0; I < 3; ++I)
          LF.Exprs.Block[I].clear();
    }
    F.Launches.push_back(std::move(LF));
  }

  // Why the file may not show every launch: the first reason, in the order
  // a user can act on.
  auto Hide = [&](SourceLocation Loc, std::string Why) {
    if (F.Hidden.empty()) {
      F.Hidden = std::move(Why);
      F.HiddenLoc = Loc;
    }
  };
  for (const auto &[Use, InPattern, Order] : Fd.OtherUses) {
    if (InPattern && Covered.count(Use->getBeginLoc().getRawEncoding()))
      continue;
    if (!F.AddressTaken)
      F.AddressTaken = Use;
    Hide(Use->getBeginLoc(),
         "the kernel is named at " + posOf(SM, Use->getBeginLoc()) +
             (InPattern ? " in a template never instantiated here"
                        : " other than in a launch (a function pointer: "
                          "launches through it are not visible)"));
  }
  for (const CUDAKernelCallExpr *E : Fd.PatternChevrons) {
    // A dependent launch whose instantiations all show it resolved is
    // covered; only a template never instantiated here leaves it unknown.
    bool Resolved = false;
    for (const auto &L : Fd.Launches)
      Resolved |= L.E->getBeginLoc() == E->getBeginLoc();
    if (!Resolved) {
      if (!F.Unresolved)
        F.Unresolved = E;
      Hide(E->getBeginLoc(), "the launch at " + posOf(SM, E->getBeginLoc()) +
                                 " is in a template never instantiated here");
    }
  }
  FileID Main = SM.getMainFileID();
  for (const FunctionDecl *R : Kernel->redecls()) {
    FileID In = SM.getFileID(SM.getExpansionLoc(R->getLocation()));
    if (In != Main)
      Hide(R->getLocation(),
           "the kernel is declared in " + posOf(SM, R->getLocation()) +
               ", a file other translation units can include and launch it "
               "from");
  }
  if (Kernel->isExternC() || Def->isExternC())
    Hide(Def->getLocation(),
         "the kernel has C linkage (extern \"C\"): programs launch such "
         "kernels by name through the driver API (cuModuleGetFunction), "
         "which this file does not show");
  if (F.Launches.empty())
    Hide(Def->getLocation(), "no launch of the kernel in this file");
  return F;
}

} // namespace astra
