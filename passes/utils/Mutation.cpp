//===- Mutation.cpp -------------------------------------------------------===//
#include "utils/Mutation.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"

using namespace clang;
using namespace llvm;

namespace astra {

namespace {
class RefFinder : public RecursiveASTVisitor<RefFinder> {
public:
  explicit RefFinder(const VarDecl *V) : V(V) {}
  bool shouldVisitLambdaBody() const { return true; }
  bool VisitDeclRefExpr(DeclRefExpr *E) {
    if (E->getDecl() == V)
      Refs.push_back(E);
    return true;
  }
  const VarDecl *V;
  std::vector<const DeclRefExpr *> Refs;
};
} // namespace

std::vector<const DeclRefExpr *> referencesTo(const Stmt *S, const VarDecl *V) {
  RefFinder F(V);
  F.TraverseStmt(const_cast<Stmt *>(S));
  return F.Refs;
}

/// Whether passing an lvalue to a parameter of type \p T lets the callee
/// change it.
static bool bindsMutably(QualType T) {
  return T->isReferenceType() && !T.getNonReferenceType().isConstQualified();
}

bool isModifyingUse(const DeclRefExpr *DRE, const ParentMap &PM) {
  const Expr *E = DRE;
  bool IsPointer = DRE->getType()->isPointerType();
  while (true) {
    const Stmt *P = PM.getParent(E);
    if (!P)
      return false;
    if (isa<ParenExpr>(P)) {
      E = cast<Expr>(P);
      continue;
    }
    if (const auto *ICE = dyn_cast<ImplicitCastExpr>(P)) {
      switch (ICE->getCastKind()) {
      case CK_LValueToRValue:
        return false;
      case CK_ArrayToPointerDecay:
        // a[k] goes on as a use of the array; any other decay hands out a
        // pointer through which the elements may be written.
        if (const auto *ASE =
                dyn_cast_or_null<ArraySubscriptExpr>(PM.getParent(ICE));
            ASE && ASE->getBase() == ICE) {
          E = ASE;
          continue;
        }
        return true;
      case CK_NoOp:
      case CK_UncheckedDerivedToBase:
      case CK_DerivedToBase:
        E = ICE;
        continue;
      default:
        return false;
      }
    }
    if (const auto *UO = dyn_cast<UnaryOperator>(P)) {
      if (UO->isIncrementDecrementOp() || UO->getOpcode() == UO_AddrOf)
        return true;
      return false;
    }
    if (const auto *BO = dyn_cast<BinaryOperator>(P))
      return BO->isAssignmentOp() && BO->getLHS()->IgnoreParens() == E;
    if (const auto *ME = dyn_cast<MemberExpr>(P)) {
      // A field of a struct variable: writing it writes the variable.
      if (ME->isArrow())
        return false;
      E = ME;
      continue;
    }
    if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(P)) {
      // p[i] = v writes memory, not the pointer; a[i] = v writes array a.
      if (IsPointer)
        return false;
      E = ASE;
      continue;
    }
    if (const auto *MC = dyn_cast<CXXMemberCallExpr>(P)) {
      if (MC->getImplicitObjectArgument()->IgnoreParenImpCasts() ==
          E->IgnoreParenImpCasts()) {
        const CXXMethodDecl *M = MC->getMethodDecl();
        return !M || !M->isConst();
      }
    }
    if (const auto *OC = dyn_cast<CXXOperatorCallExpr>(P)) {
      if (OC->getNumArgs() > 0 && OC->getArg(0) == E) {
        if (OC->isAssignmentOp() || OC->getOperator() == OO_PlusPlus ||
            OC->getOperator() == OO_MinusMinus)
          return true;
        if (const auto *M =
                dyn_cast_or_null<CXXMethodDecl>(OC->getDirectCallee()))
          return !M->isConst();
      }
    }
    if (const auto *CE = dyn_cast<CallExpr>(P)) {
      const FunctionDecl *Callee = CE->getDirectCallee();
      if (!Callee)
        return true;
      unsigned Shift = 0;
      if (isa<CXXOperatorCallExpr>(CE) && isa<CXXMethodDecl>(Callee))
        Shift = 1; // Argument 0 is the object.
      for (unsigned I = Shift; I < CE->getNumArgs(); ++I)
        if (CE->getArg(I) == E) {
          unsigned PI = I - Shift;
          if (PI < Callee->getNumParams())
            return bindsMutably(Callee->getParamDecl(PI)->getType());
          return false; // Variadic: passed by value.
        }
      return false;
    }
    if (const auto *CC = dyn_cast<CXXConstructExpr>(P)) {
      const CXXConstructorDecl *Ctor = CC->getConstructor();
      for (unsigned I = 0; I < CC->getNumArgs(); ++I)
        if (CC->getArg(I) == E)
          return I < Ctor->getNumParams() &&
                 bindsMutably(Ctor->getParamDecl(I)->getType());
      return false;
    }
    if (const auto *DS = dyn_cast<DeclStmt>(P)) {
      for (const Decl *D : DS->decls())
        if (const auto *V = dyn_cast<VarDecl>(D))
          if (V->getInit() == E)
            return bindsMutably(V->getType());
      return false;
    }
    if (isa<LambdaExpr>(P))
      return true; // Captured (possibly by reference).
    if (isa<CXXForRangeStmt>(P))
      return true; // Iterated by (possibly non-const) reference.
    return false;
  }
}

const VarDecl *lvalueVar(const Expr *E, bool ThroughLocalArrays) {
  while (E) {
    E = E->IgnoreParenImpCasts();
    if (const auto *AS = dyn_cast<ArraySubscriptExpr>(E);
        AS && ThroughLocalArrays) {
      const Expr *Base = AS->getBase()->IgnoreParenImpCasts();
      if (!Base->getType()->isArrayType())
        return nullptr;
      E = Base;
      continue;
    }
    if (const auto *ME = dyn_cast<MemberExpr>(E)) {
      if (ME->isArrow())
        return nullptr;
      E = ME->getBase();
      continue;
    }
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E))
      return dyn_cast<VarDecl>(DRE->getDecl());
    return nullptr;
  }
  return nullptr;
}

bool mayModify(const Stmt *S, const VarDecl *V) {
  if (!S)
    return false;
  if (const auto *BO = dyn_cast<BinaryOperator>(S))
    if (BO->isAssignmentOp() && lvalueVar(BO->getLHS()) == V)
      return true;
  if (const auto *UO = dyn_cast<UnaryOperator>(S))
    if ((UO->isIncrementDecrementOp() || UO->getOpcode() == UO_AddrOf) &&
        lvalueVar(UO->getSubExpr()) == V)
      return true;
  if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(S)) {
    const CXXMethodDecl *MD = MCE->getMethodDecl();
    if ((!MD || !MD->isConst()) &&
        lvalueVar(MCE->getImplicitObjectArgument()) == V)
      return true;
  }
  if (const auto *OCE = dyn_cast<CXXOperatorCallExpr>(S))
    if (OCE->isAssignmentOp() && OCE->getNumArgs() &&
        lvalueVar(OCE->getArg(0)) == V)
      return true;
  if (const auto *CE = dyn_cast<CallExpr>(S))
    for (const Expr *A : CE->arguments())
      if (A->isLValue() && lvalueVar(A) == V)
        return true; // Possibly by non-const reference.
  if (const auto *DS = dyn_cast<DeclStmt>(S))
    for (const Decl *D : DS->decls())
      if (const auto *RV = dyn_cast<VarDecl>(D))
        if (RV->getType()->isReferenceType() &&
            !RV->getType().getNonReferenceType().isConstQualified() &&
            RV->getInit() && lvalueVar(RV->getInit()) == V)
          return true;
  if (const auto *L = dyn_cast<LambdaExpr>(S))
    for (const LambdaCapture &C : L->captures())
      if (C.capturesVariable() && C.getCaptureKind() == LCK_ByRef &&
          C.getCapturedVar() == V)
        return true;
  for (const Stmt *C : S->children())
    if (mayModify(C, V))
      return true;
  return false;
}

} // namespace astra
