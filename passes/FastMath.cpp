//===- FastMath.cpp -------------------------------------------------------===//
//
// Safety argument. None of these rewrites keeps results bit for bit: each
// trades accuracy for speed (error bounds in docs/passes.md), and the
// verifier's tolerances decide whether a candidate keeps them. What the pass
// does guarantee:
//  - only calls that resolve to the library functions (declared in a system
//    header: the CUDA headers or clang's CUDA wrappers) are renamed, never a
//    user function that shares the name;
//  - a call is rewritten only where its arguments are float values (a double
//    value, even one the call itself narrows, needs --allow-double), and in a
//    template only where every instantiation agrees;
//  - __powf only where its known failure (NaN for a negative base, where
//    powf has a real result for integer exponents) cannot happen: a positive
//    constant base, unless fast-math.pow=1;
//  - double literals become float only inside an expression whose double
//    result is narrowed to float anyway, and only when every other operand is
//    a float value promoted to double, a small integer literal or double
//    math this pass also narrows: the double math was an accident of the
//    literal's type, not a request for precision (an explicit cast to double
//    or a double variable keeps the whole expression as it is).
//
//===----------------------------------------------------------------------===//
#include "FastMath.h"
#include "utils/HelperReach.h"
#include "utils/PassSupport.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSwitch.h"

using namespace clang;
using namespace llvm;

namespace astra {

namespace {

bool isFloat(QualType T) {
  return !T.isNull() && T->isSpecificBuiltinType(BuiltinType::Float);
}
bool isDouble(QualType T) {
  return !T.isNull() && (T->isSpecificBuiltinType(BuiltinType::Double) ||
                         T->isSpecificBuiltinType(BuiltinType::LongDouble));
}

/// Fast intrinsic for a float math call, by the name the call resolves to
/// (C names and the float overloads of the C++ names); empty if none.
StringRef fastName(StringRef Name) {
  return StringSwitch<StringRef>(Name)
      .Case("expf", "__expf")
      .Case("exp", "__expf")
      .Case("exp10f", "__exp10f")
      .Case("exp10", "__exp10f")
      .Case("logf", "__logf")
      .Case("log", "__logf")
      .Case("log2f", "__log2f")
      .Case("log2", "__log2f")
      .Case("log10f", "__log10f")
      .Case("log10", "__log10f")
      .Case("sinf", "__sinf")
      .Case("sin", "__sinf")
      .Case("cosf", "__cosf")
      .Case("cos", "__cosf")
      .Case("tanf", "__tanf")
      .Case("tan", "__tanf")
      .Case("powf", "__powf")
      .Case("pow", "__powf")
      .Case("sincosf", "__sincosf")
      .Default("");
}

/// Float replacement of a double math function inside an expression that is
/// narrowed to float: the fast intrinsic where there is one, else the float
/// library function.
StringRef floatNameForDouble(StringRef Name) {
  StringRef Fast = fastName(Name);
  if (!Fast.empty() && Name != "pow")
    return Fast;
  return StringSwitch<StringRef>(Name)
      .Case("pow", "powf")
      .Case("sqrt", "sqrtf")
      .Case("rsqrt", "rsqrtf")
      .Case("fabs", "fabsf")
      .Case("fmin", "fminf")
      .Case("fmax", "fmaxf")
      .Case("floor", "floorf")
      .Case("ceil", "ceilf")
      .Case("exp2", "exp2f")
      .Case("tanh", "tanhf")
      .Case("erf", "erff")
      .Case("fma", "fmaf")
      .Default("");
}

bool isMathName(StringRef Name) {
  return !fastName(Name).empty() || !floatNameForDouble(Name).empty() ||
         Name == "sqrtf";
}

/// The function's signature is all float (pointers to float for sincosf).
bool hasFloatSignature(const FunctionDecl *FD) {
  if (!isFloat(FD->getReturnType()) && !FD->getReturnType()->isVoidType())
    return false;
  for (const ParmVarDecl *P : FD->parameters()) {
    QualType T = P->getType();
    if (T->isPointerType())
      T = T->getPointeeType();
    if (!isFloat(T.getUnqualifiedType()))
      return false;
  }
  return FD->getNumParams() > 0;
}

bool hasDoubleSignature(const FunctionDecl *FD) {
  if (!FD->getReturnType()->isSpecificBuiltinType(BuiltinType::Double))
    return false;
  for (const ParmVarDecl *P : FD->parameters())
    if (!P->getType()->isSpecificBuiltinType(BuiltinType::Double))
      return false;
  return FD->getNumParams() > 0;
}

/// A positive constant: the one base for which __powf(x, y) agrees with
/// powf(x, y) in kind (no NaN where powf is real, no 0^0 difference).
bool isPositiveConstant(const Expr *E) {
  E = E->IgnoreParenImpCasts();
  if (const auto *FL = dyn_cast<FloatingLiteral>(E))
    return !FL->getValue().isNegative() && FL->getValue().isNonZero() &&
           FL->getValue().isFinite();
  if (const auto *IL = dyn_cast<IntegerLiteral>(E))
    return IL->getValue().getBoolValue() && !IL->getValue().isNegative();
  return false;
}

/// Exactly 1 (1.0f, 1.f, 1).
bool isOne(const Expr *E) {
  E = E->IgnoreParenImpCasts();
  if (const auto *FL = dyn_cast<FloatingLiteral>(E))
    return FL->getValue().isExactlyValue(1.0);
  if (const auto *IL = dyn_cast<IntegerLiteral>(E))
    return IL->getValue() == 1;
  return false;
}

/// A power of two constant (a division by it is already exact and the
/// compiler turns it into a multiplication).
bool isPowerOfTwoConstant(const Expr *E) {
  E = E->IgnoreParenImpCasts();
  if (const auto *FL = dyn_cast<FloatingLiteral>(E)) {
    APFloat V = FL->getValue();
    if (!V.isFiniteNonZero())
      return false;
    return V.getExactLog2Abs() != INT_MIN;
  }
  if (const auto *IL = dyn_cast<IntegerLiteral>(E))
    return IL->getValue().isPowerOf2();
  return false;
}

/// The callee of a direct call by name (std::exp, ::expf, expf).
const DeclRefExpr *calleeRef(const CallExpr *CE) {
  return dyn_cast<DeclRefExpr>(CE->getCallee()->IgnoreParenImpCasts());
}

std::string shortText(const PassContext &PC, const Expr *E) {
  std::string T = PC.text(E->getSourceRange());
  if (T.empty())
    return "<macro>";
  // One line, at most 40 characters.
  for (char &C : T)
    if (C == '\n' || C == '\t')
      C = ' ';
  if (T.size() > 40)
    T = T.substr(0, 37) + "...";
  return T;
}

class FastMathVisitor : public RecursiveASTVisitor<FastMathVisitor> {
public:
  FastMathVisitor(PassContext &PC, SiteVotes &Votes, unsigned Body)
      : PC(PC), SM(PC.sourceManager()), Votes(Votes), Body(Body),
        AllowDouble(PC.options().AllowDouble),
        AnyPow(PC.options().intParam("fast-math", "pow", 0) != 0) {}

  bool VisitCallExpr(CallExpr *CE) {
    if (Handled.count(CE) || isa<CXXOperatorCallExpr>(CE) ||
        isa<CUDAKernelCallExpr>(CE))
      return true;
    const FunctionDecl *FD = CE->getDirectCallee();
    if (!FD) {
      if (const auto *ULE = dyn_cast<UnresolvedLookupExpr>(
              CE->getCallee()->IgnoreParenImpCasts()))
        if (isMathName(ULE->getName().getAsString()))
          Votes.reject(Body, ULE->getNameLoc(), "call",
                       "'" + ULE->getName().getAsString() +
                           "(...)' depends on a template parameter and no "
                           "instantiation in this file shows its type");
      return true;
    }
    if (!FD->getIdentifier() || !isMathName(FD->getName()))
      return true;
    StringRef Name = FD->getName();
    const DeclRefExpr *DRE = calleeRef(CE);
    SourceLocation Loc = DRE ? DRE->getLocation() : CE->getBeginLoc();
    if (systemCalleeName(SM, CE).empty()) {
      if (!isSystemFunction(SM, FD))
        Votes.reject(Body, Loc, "call",
                     "'" + FD->getQualifiedNameAsString() +
                         "' is a user function (declared at " +
                         posText(PC, FD->getLocation()) +
                         "), not the CUDA math function");
      return true;
    }
    if (!DRE) {
      Votes.reject(Body, Loc, "call",
                   "'" + Name.str() + "' is called through an expression; "
                   "only direct calls are renamed");
      return true;
    }
    if (hasFloatSignature(FD))
      return mathCall(CE, DRE, Name, /*Double=*/false);
    if (hasDoubleSignature(FD))
      return mathCall(CE, DRE, Name, /*Double=*/true);
    return true;
  }

  /// expf(x), exp(float), sinf(x), ... or, with \p Double, exp(double),
  /// pow(double, double), ...: renamed to the fast float intrinsic.
  bool mathCall(const CallExpr *CE, const DeclRefExpr *DRE, StringRef Name,
                bool Double) {
    StringRef Fast = fastName(Name);
    if (Fast.empty())
      return true; // sqrtf and friends: already as fast as they get here.
    SourceLocation Loc = DRE->getLocation();
    std::string Refusal, Note;
    if (Double && !AllowDouble)
      Refusal = "'" + Name.str() + "' computes in double on the double "
                "value '" + shortText(PC, CE->getArg(0)) +
                "'; fast-math rewrites double math only with --allow-double";
    for (const Expr *A : CE->arguments()) {
      const Expr *Src = A->IgnoreParenImpCasts();
      if (Refusal.empty() && !Double && !AllowDouble &&
          isDouble(Src->getType()))
        Refusal = "the argument '" + shortText(PC, Src) + "' of '" +
                  Name.str() + "' is a double value; fast-math narrows "
                  "double values only with --allow-double";
    }
    if (Refusal.empty() && !powIsSafe(CE, Name, Note))
      Refusal = Note;
    std::optional<TextEdit> E;
    if (Refusal.empty() &&
        !(E = makeTokenEdit(PC, DRE->getSourceRange(), Fast)))
      Refusal = "'" + Name.str() + "' is spelled inside a macro expansion";
    if (!Refusal.empty()) {
      Votes.reject(Body, Loc, "call", Refusal);
      return true;
    }
    Votes.accept(Body, Loc, "call", {*E},
                 "'" + PC.text(DRE->getSourceRange()) + "' " +
                     (Double ? "on a double " : "") + "-> '" + Fast.str() +
                     "' (" +
                     (Double ? "--allow-double: computed in float"
                             : "fast approximate " + Fast.drop_front(2).str()) +
                     ")" + Note);
    return true;
  }

  /// __powf(x, y) = exp2(y * log2(x)): NaN for x < 0 and for x = y = 0.
  bool powIsSafe(const CallExpr *CE, StringRef Name, std::string &Why) {
    if (Name != "powf" && Name != "pow")
      return true;
    if (isPositiveConstant(CE->getArg(0)))
      return true;
    if (AnyPow) {
      Why = " (fast-math.pow=1: the base is not known to be positive)";
      return true;
    }
    Why = "'" + Name.str() + "(" + shortText(PC, CE->getArg(0)) +
          ", ...)': __powf returns NaN for a negative base (where " +
          Name.str() + " is real for integer exponents) and for 0^0; the "
          "base is not a positive constant (--pass-opt=fast-math.pow=1 "
          "allows it)";
    return false;
  }

  bool VisitBinaryOperator(BinaryOperator *BO) {
    if (BO->getOpcode() == BO_Div)
      return division(BO);
    return true;
  }

  bool VisitCompoundAssignOperator(CompoundAssignOperator *CAO) {
    if (CAO->getOpcode() != BO_DivAssign || !isFloat(CAO->getType()) ||
        !isFloat(CAO->getComputationResultType()) ||
        !isFloat(CAO->getRHS()->getType()))
      return true;
    SourceLocation Loc = CAO->getOperatorLoc();
    const auto *DRE =
        dyn_cast<DeclRefExpr>(CAO->getLHS()->IgnoreParenImpCasts());
    if (!DRE || DRE->hasQualifier() || !isa<VarDecl>(DRE->getDecl())) {
      Votes.reject(Body, Loc, "div",
                   "'" + shortText(PC, CAO) + "': '/=' is rewritten only "
                   "when its left side is a plain variable (it is repeated)");
      return true;
    }
    if (isPowerOfTwoConstant(CAO->getRHS())) {
      Votes.reject(Body, Loc, "div", powerOfTwoReason(CAO->getRHS()));
      return true;
    }
    std::string Var = DRE->getDecl()->getNameAsString();
    auto Op = makeTokenEdit(PC, SourceRange(Loc, Loc),
                            "= __fdividef(" + Var + ",");
    auto Close = makeInsertAfterToken(PC, CAO->getRHS()->getEndLoc(), ")");
    if (!Op || !Close) {
      Votes.reject(Body, Loc, "div",
                   "the division is spelled inside a macro expansion");
      return true;
    }
    Votes.accept(Body, Loc, "div", {*Op, *Close},
                 "'" + shortText(PC, CAO) + "' -> '" + Var +
                     " = __fdividef(" + Var + ", ...)' (approximate float "
                     "division)");
    return true;
  }

  std::string powerOfTwoReason(const Expr *D) {
    return "dividing by the power of two '" + shortText(PC, D) +
           "' is exact and the compiler already multiplies instead";
  }

  bool division(BinaryOperator *BO) {
    if (!isFloat(BO->getType()) || !isFloat(BO->getLHS()->getType()) ||
        !isFloat(BO->getRHS()->getType()))
      return true;
    SourceLocation Loc = BO->getOperatorLoc();
    const Expr *L = BO->getLHS(), *R = BO->getRHS();

    // 1.0f / sqrtf(x) -> rsqrtf(x)
    if (isOne(L)) {
      if (const auto *CE = dyn_cast<CallExpr>(R->IgnoreImpCasts())) {
        StringRef N = systemCalleeName(SM, CE);
        const DeclRefExpr *DRE = calleeRef(CE);
        if ((N == "sqrtf" || N == "sqrt") && DRE &&
            hasFloatSignature(CE->getDirectCallee())) {
          Handled.insert(CE);
          const Expr *Arg = CE->getArg(0)->IgnoreParenImpCasts();
          if (isDouble(Arg->getType()) && !AllowDouble) {
            Votes.reject(Body, Loc, "div",
                         "the argument '" + shortText(PC, Arg) +
                             "' of '" + N.str() + "' is a double value; "
                             "fast-math narrows double values only with "
                             "--allow-double");
            return true;
          }
          auto E = makeEdit(PC,
                            CharSourceRange::getTokenRange(L->getBeginLoc(),
                                                           DRE->getEndLoc()),
                            "rsqrtf");
          if (!E) {
            Votes.reject(Body, Loc, "div",
                         "the expression is spelled inside a macro expansion");
            return true;
          }
          Votes.accept(Body, Loc, "div", {*E},
                       "'" + shortText(PC, BO) +
                           "' -> 'rsqrtf(...)' (one approximate reciprocal "
                           "square root instead of a square root and a "
                           "division)");
          return true;
        }
      }
    }

    if (isPowerOfTwoConstant(R)) {
      Votes.reject(Body, Loc, "div", powerOfTwoReason(R));
      return true;
    }
    // x / y -> __fdividef(x, y): the operator (with the blanks before it)
    // becomes a comma; the operands keep their text.
    auto Open = makeInsertBefore(PC, L->getBeginLoc(), "__fdividef(");
    auto Close = makeInsertAfterToken(PC, R->getEndLoc(), ")");
    std::optional<TextEdit> Comma;
    SourceLocation LEnd =
        Lexer::getLocForEndOfToken(L->getEndLoc(), 0, SM, PC.langOpts());
    if (LEnd.isValid() && LEnd.isFileID() && Loc.isFileID() &&
        SM.getFileID(LEnd) == SM.getFileID(Loc) &&
        SM.getFileOffset(LEnd) <= SM.getFileOffset(Loc)) {
      StringRef Between(SM.getCharacterData(LEnd),
                        SM.getFileOffset(Loc) - SM.getFileOffset(LEnd));
      if (Between.find_first_not_of(" \t") == StringRef::npos)
        Comma = makeEdit(PC,
                         CharSourceRange::getCharRange(
                             LEnd, Loc.getLocWithOffset(1)),
                         ",");
    }
    if (!Comma)
      Comma = makeTokenEdit(PC, SourceRange(Loc, Loc), ",");
    if (!Open || !Close || !Comma) {
      Votes.reject(Body, Loc, "div",
                   "the division is spelled inside a macro expansion");
      return true;
    }
    Votes.accept(Body, Loc, "div", {*Open, *Comma, *Close},
                 "'" + shortText(PC, BO) +
                     "' -> '__fdividef(...)' (approximate float division)");
    return true;
  }

  /// A double expression narrowed to float: `float y = x * 0.5`.
  bool VisitCastExpr(CastExpr *CE) {
    if (CE->getCastKind() != CK_FloatingCast || !isFloat(CE->getType()))
      return true;
    const Expr *Sub = CE->getSubExpr()->IgnoreParens();
    if (!Sub->getType()->isSpecificBuiltinType(BuiltinType::Double))
      return true;
    if (!isa<BinaryOperator>(Sub) && !isa<UnaryOperator>(Sub) &&
        !isa<ConditionalOperator>(Sub) && !isa<CallExpr>(Sub))
      return true; // A plain value narrowed: nothing computed in double.
    Tree T;
    walk(Sub, T);
    SourceLocation Loc = Sub->getBeginLoc();
    // Only double math that float values got into by accident (a literal's
    // type, a double overload) is this pass's business; the double calls in
    // it are judged with the expression.
    bool Accidental = T.FloatLeaves && (T.Literals || !T.Calls.empty());
    if (Accidental)
      for (const CallExpr *C : T.Calls)
        Handled.insert(C);
    if (!T.Problem.empty()) {
      if (Accidental)
        Votes.reject(Body, Loc, "float-expr",
                     "'" + shortText(PC, Sub) + "' stays double: " +
                         T.Problem);
      return true;
    }
    if (T.Edits.empty() || !Accidental)
      return true;
    Votes.accept(Body, Loc, "float-expr", T.Edits,
                 "'" + shortText(PC, Sub) + "' is narrowed to float: now "
                 "computed in float (" + T.Summary + ")");
    return true;
  }

  struct Tree {
    std::vector<TextEdit> Edits;
    std::vector<const CallExpr *> Calls;
    std::string Summary, Problem;
    unsigned FloatLeaves = 0, Literals = 0;
    void note(const std::string &S) {
      Summary += (Summary.empty() ? "" : ", ") + S;
    }
    void fail(const std::string &S) {
      if (Problem.empty())
        Problem = S;
    }
  };

  void walk(const Expr *E, Tree &T) {
    E = E->IgnoreParens();
    if (const auto *BO = dyn_cast<BinaryOperator>(E)) {
      BinaryOperatorKind Op = BO->getOpcode();
      if (Op == BO_Add || Op == BO_Sub || Op == BO_Mul || Op == BO_Div) {
        walk(BO->getLHS(), T);
        walk(BO->getRHS(), T);
        return;
      }
    } else if (const auto *UO = dyn_cast<UnaryOperator>(E)) {
      if (UO->getOpcode() == UO_Minus || UO->getOpcode() == UO_Plus) {
        walk(UO->getSubExpr(), T);
        return;
      }
    } else if (const auto *CO = dyn_cast<ConditionalOperator>(E)) {
      walk(CO->getTrueExpr(), T);
      walk(CO->getFalseExpr(), T);
      return;
    } else if (const auto *ICE = dyn_cast<ImplicitCastExpr>(E)) {
      const Expr *Src = ICE->getSubExpr();
      if (ICE->getCastKind() == CK_FloatingCast && isFloat(Src->getType())) {
        ++T.FloatLeaves; // A float value promoted: stays as it is.
        return;
      }
      if (ICE->getCastKind() == CK_IntegralToFloating) {
        if (const auto *IL =
                dyn_cast<IntegerLiteral>(Src->IgnoreParenImpCasts()))
          if (IL->getValue().getActiveBits() <= 24)
            return; // Exact in float too.
        T.fail("the integer '" + shortText(PC, Src) +
               "' would be converted to float instead of double (inexact "
               "above 2^24)");
        return;
      }
    } else if (const auto *FL = dyn_cast<FloatingLiteral>(E)) {
      literal(FL, T);
      return;
    } else if (const auto *CE = dyn_cast<CallExpr>(E)) {
      call(CE, T);
      return;
    }
    if (isa<ExplicitCastExpr>(E))
      T.fail("the explicit cast '" + shortText(PC, E) +
             "' asks for double math");
    else
      T.fail("'" + shortText(PC, E) + "' is a double value");
  }

  void literal(const FloatingLiteral *FL, Tree &T) {
    if (!FL->getType()->isSpecificBuiltinType(BuiltinType::Double)) {
      T.fail("the literal '" + shortText(PC, FL) + "' is long double");
      return;
    }
    APFloat V = FL->getValue();
    APFloat F = V;
    bool LosesInfo = false;
    F.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &LosesInfo);
    if ((F.isInfinity() && !V.isInfinity()) || (F.isZero() && !V.isZero()) ||
        (F.isDenormal() && !V.isDenormal())) {
      T.fail("the literal '" + shortText(PC, FL) + "' is outside float's "
             "normal range");
      return;
    }
    auto E = makeInsertAfterToken(PC, FL->getLocation(), "f");
    if (!E) {
      T.fail("the literal '" + shortText(PC, FL) +
             "' comes from a macro expansion");
      return;
    }
    ++T.Literals;
    T.Edits.push_back(*E);
    T.note(PC.text(FL->getSourceRange()) + " -> " +
           PC.text(FL->getSourceRange()) + "f");
  }

  void call(const CallExpr *CE, Tree &T) {
    const FunctionDecl *FD = CE->getDirectCallee();
    StringRef Name = systemCalleeName(SM, CE);
    StringRef To = Name.empty() ? StringRef() : floatNameForDouble(Name);
    const DeclRefExpr *DRE = calleeRef(CE);
    if (To.empty() || !FD || !hasDoubleSignature(FD) || !DRE) {
      T.fail("'" + shortText(PC, CE) + "' is a double value");
      return;
    }
    T.Calls.push_back(CE);
    if (Name == "pow" && !isPositiveConstant(CE->getArg(0)) && !AnyPow)
      To = "powf"; // __powf only where it is safe (see powIsSafe).
    else if (Name == "pow")
      To = "__powf";
    auto E = makeTokenEdit(PC, DRE->getSourceRange(), To);
    if (!E) {
      T.fail("'" + Name.str() + "' is spelled inside a macro expansion");
      return;
    }
    T.Edits.push_back(*E);
    T.note(PC.text(DRE->getSourceRange()) + " -> " + To.str());
    for (const Expr *A : CE->arguments())
      walk(A, T);
  }

private:
  PassContext &PC;
  const SourceManager &SM;
  SiteVotes &Votes;
  unsigned Body;
  bool AllowDouble, AnyPow;
  SmallPtrSet<const CallExpr *, 8> Handled;
};

} // namespace

/// Visits \p Bodies (a kernel's or a helper's) and collects the sites
/// every body accepts into \p ES.
static void rewriteBodies(PassContext &PC, std::vector<KernelBody> Bodies,
                          EditSet &ES) {
  SiteVotes Votes(std::move(Bodies));
  for (unsigned B = 0; B < Votes.bodies().size(); ++B) {
    FastMathVisitor V(PC, Votes, B);
    V.TraverseStmt(Votes.bodies()[B].FD->getBody());
  }
  Votes.resolve(PC, ES);
}

void FastMathPass::run(PassContext &PC) {
  // Every rewrite is local to its expression: helpers the kernel calls are
  // rewritten like its own body (in a copy where other code calls them).
  EditSet ES;
  rewriteBodies(PC, kernelBodies(PC.kernel().Decl), ES);
  HelperReach Reach(PC);
  for (Helper *H : Reach.helpers()) {
    HelperReach::Scope S(PC, *H);
    EditSet HES;
    rewriteBodies(PC, H->Bodies, HES);
    Reach.setEdits(*H, HES);
  }
  Reach.commit(ES);
}

} // namespace astra
