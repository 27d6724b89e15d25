//===- LocalAliases.cpp ---------------------------------------------------===//
#include "LocalAliases.h"

#include "clang/AST/Attr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"

using namespace clang;
using namespace llvm;

namespace astra {
namespace analysis {

void directBases(const Expr *E, VarSet &Out) {
  if (!E)
    return;
  E = E->IgnoreParens();
  if (auto *C = dyn_cast<CastExpr>(E))
    return directBases(C->getSubExpr(), Out);
  if (auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    if (auto *V = dyn_cast<VarDecl>(DRE->getDecl()))
      Out.insert(V);
    return;
  }
  if (auto *BO = dyn_cast<BinaryOperator>(E)) {
    if (BO->isAdditiveOp() || BO->isCompoundAssignmentOp() ||
        BO->getOpcode() == BO_Assign || BO->getOpcode() == BO_Comma) {
      if (BO->getOpcode() != BO_Comma)
        directBases(BO->getLHS(), Out);
      directBases(BO->getRHS(), Out);
    }
    return;
  }
  if (auto *UO = dyn_cast<UnaryOperator>(E)) {
    switch (UO->getOpcode()) {
    case UO_AddrOf:
      // &p[i], &p->x, &*p: the address is inside p's buffer.
      return directBases(UO->getSubExpr(), Out);
    case UO_PreInc:
    case UO_PreDec:
    case UO_PostInc:
    case UO_PostDec:
    case UO_Plus:
      return directBases(UO->getSubExpr(), Out);
    case UO_Deref:
      // *pp where pp points to pointers: the result is not derived from pp's
      // own buffer, but from memory we do not track; treat as pp's.
      return directBases(UO->getSubExpr(), Out);
    default:
      return;
    }
  }
  if (auto *ASE = dyn_cast<ArraySubscriptExpr>(E))
    return directBases(ASE->getBase(), Out);
  if (auto *ME = dyn_cast<MemberExpr>(E))
    return directBases(ME->getBase(), Out);
  if (auto *CO = dyn_cast<AbstractConditionalOperator>(E)) {
    directBases(CO->getTrueExpr(), Out);
    directBases(CO->getFalseExpr(), Out);
    return;
  }
  if (auto *CE = dyn_cast<CallExpr>(E)) {
    // A function returning a pointer may return any pointer it was given.
    for (const Expr *A : CE->arguments())
      if (A->getType()->isPointerType() || A->isTypeDependent())
        directBases(A, Out);
    return;
  }
  if (auto *CE = dyn_cast<CXXNamedCastExpr>(E))
    return directBases(CE->getSubExpr(), Out);
  if (auto *PE = dyn_cast<ParenListExpr>(E)) {
    for (unsigned I = 0; I < PE->getNumExprs(); ++I)
      directBases(PE->getExpr(I), Out);
    return;
  }
  if (auto *CE = dyn_cast<CXXUnresolvedConstructExpr>(E)) {
    for (const Expr *A : CE->arguments())
      directBases(A, Out);
    return;
  }
}

const VarDecl *localArrayElement(const Expr *E) {
  E = E->IgnoreParenImpCasts();
  const auto *ASE = dyn_cast<ArraySubscriptExpr>(E);
  if (!ASE)
    return nullptr;
  while (ASE) {
    const Expr *Base = ASE->getBase()->IgnoreParenImpCasts();
    if (!Base->getType()->isArrayType())
      return nullptr;
    if (const auto *DRE = dyn_cast<DeclRefExpr>(Base)) {
      const auto *V = dyn_cast<VarDecl>(DRE->getDecl());
      if (V && V->isLocalVarDecl() && !V->isStaticLocal() &&
          !V->hasAttr<CUDASharedAttr>())
        return V;
      return nullptr;
    }
    ASE = dyn_cast<ArraySubscriptExpr>(Base);
  }
  return nullptr;
}

void lvalueBases(const Expr *E, VarSet &Out) {
  if (!E)
    return;
  E = E->IgnoreParenImpCasts();
  if (auto *ASE = dyn_cast<ArraySubscriptExpr>(E)) {
    // p[i] or i[p]: whichever side is the pointer.
    directBases(ASE->getBase(), Out);
    return;
  }
  if (auto *UO = dyn_cast<UnaryOperator>(E)) {
    if (UO->getOpcode() == UO_Deref)
      directBases(UO->getSubExpr(), Out);
    return;
  }
  if (auto *ME = dyn_cast<MemberExpr>(E)) {
    if (ME->isArrow())
      directBases(ME->getBase(), Out);
    else
      lvalueBases(ME->getBase(), Out);
    return;
  }
  if (auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    // A write to a reference variable writes what it is bound to; the caller
    // resolves references through the alias map.
    if (auto *V = dyn_cast<VarDecl>(DRE->getDecl()))
      if (V->getType()->isReferenceType())
        Out.insert(V);
    return;
  }
  if (auto *CE = dyn_cast<CXXOperatorCallExpr>(E)) {
    // operator[] or operator* of a wrapper type: conservatively its operands.
    for (const Expr *A : CE->arguments())
      directBases(A, Out);
    return;
  }
  if (auto *CO = dyn_cast<AbstractConditionalOperator>(E)) {
    lvalueBases(CO->getTrueExpr(), Out);
    lvalueBases(CO->getFalseExpr(), Out);
    return;
  }
  // Anything else that is dependent: treat as touching all it mentions.
  if (E->isTypeDependent())
    directBases(E, Out);
}

std::string locText(const ASTContext &Ctx, SourceLocation Loc) {
  const SourceManager &SM = Ctx.getSourceManager();
  PresumedLoc PL = SM.getPresumedLoc(SM.getExpansionLoc(Loc));
  if (PL.isInvalid())
    return "?";
  return std::to_string(PL.getLine()) + ":" + std::to_string(PL.getColumn());
}

namespace {

/// Records which locals hold pointers derived from (or references bound
/// into) which variables; a pointer stored into a local array of pointers
/// makes the array an alias like a pointer local.
class AliasCollector : public RecursiveASTVisitor<AliasCollector> {
public:
  explicit AliasCollector(DenseMap<const VarDecl *, VarSet> &Alias)
      : Alias(Alias) {}
  bool shouldVisitLambdaBody() const { return true; }
  bool Changed = false;

  bool VisitVarDecl(VarDecl *V) {
    if (V->getInit() && !isa<ParmVarDecl>(V))
      add(V, V->getInit());
    return true;
  }
  bool VisitBinaryOperator(BinaryOperator *BO) {
    if (!BO->isAssignmentOp())
      return true;
    if (auto *DRE =
            dyn_cast<DeclRefExpr>(BO->getLHS()->IgnoreParenImpCasts())) {
      if (auto *V = dyn_cast<VarDecl>(DRE->getDecl()))
        add(V, BO->getRHS());
    } else if (BO->getRHS()->getType()->isPointerType()) {
      if (const VarDecl *V = localArrayElement(BO->getLHS()))
        add(V, BO->getRHS());
    }
    return true;
  }

private:
  void add(const VarDecl *V, const Expr *From) {
    VarSet B;
    if (V->getType()->isReferenceType())
      lvalueBases(From, B);
    directBases(From, B);
    VarSet &S = Alias[V];
    for (const VarDecl *X : B)
      if (X != V && S.insert(X).second)
        Changed = true;
  }

  DenseMap<const VarDecl *, VarSet> &Alias;
};

} // namespace

LocalAliases::LocalAliases(const FunctionDecl *FD) : FD(FD) {
  if (!FD->getBody())
    return;
  // Until no local gains a base (chains like q = p + 1; r = q + 2).
  for (unsigned Iter = 0; Iter < 8; ++Iter) {
    AliasCollector AC(Alias);
    AC.TraverseStmt(FD->getBody());
    if (!AC.Changed)
      break;
  }
}

SmallPtrSet<const ParmVarDecl *, 4>
LocalAliases::roots(const VarSet &Vars) const {
  SmallPtrSet<const ParmVarDecl *, 4> R;
  SmallVector<const VarDecl *, 8> Work(Vars.begin(), Vars.end());
  SmallPtrSet<const VarDecl *, 8> Seen;
  while (!Work.empty()) {
    const VarDecl *V = Work.pop_back_val();
    if (!Seen.insert(V).second)
      continue;
    if (auto *P = dyn_cast<ParmVarDecl>(V))
      if (P->getDeclContext() == FD)
        R.insert(P);
    auto It = Alias.find(V);
    if (It != Alias.end())
      Work.append(It->second.begin(), It->second.end());
  }
  return R;
}

} // namespace analysis
} // namespace astra
