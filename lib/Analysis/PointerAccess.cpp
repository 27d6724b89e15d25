//===- PointerAccess.cpp --------------------------------------------------===//
#include "astra/Analysis/PointerAccess.h"

#include "clang/AST/Attr.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"

using namespace clang;
using namespace llvm;

namespace astra {

std::string PointerWriteInfo::reason(const ParmVarDecl *P) const {
  auto It = Written.find(P);
  if (It != Written.end())
    return It->second;
  if (Escaped.count(P))
    return "its value escapes the kernel's analysis";
  return "";
}

namespace {

using VarSet = SmallPtrSet<const VarDecl *, 4>;

/// Direct bases of a pointer-valued expression: variables whose value it is
/// computed from. Aliases through locals are resolved by the caller.
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

/// The thread's own local array whose element \p E names (`a[i][j]` with
/// `a` a local array, every level an array, not a pointer); null otherwise.
/// Storing into it writes no buffer (thread-coarsen keeps one pointer per
/// copy in such arrays: `const float *xr[4];`).
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

/// The memory an lvalue names: the pointer expressions it dereferences.
/// Returns false when the lvalue is a plain local (no memory through a
/// pointer is touched).
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

bool isWriteOperator(OverloadedOperatorKind K) {
  switch (K) {
  case OO_Equal:
  case OO_PlusEqual:
  case OO_MinusEqual:
  case OO_StarEqual:
  case OO_SlashEqual:
  case OO_PercentEqual:
  case OO_CaretEqual:
  case OO_AmpEqual:
  case OO_PipeEqual:
  case OO_LessLessEqual:
  case OO_GreaterGreaterEqual:
  case OO_PlusPlus:
  case OO_MinusMinus:
    return true;
  default:
    return false;
  }
}

/// Functions known to only read through their pointer arguments even though
/// their parameters are not declared const-pointee.
bool isKnownReadOnlyBuiltin(StringRef Name) {
  return Name.starts_with("__ldg") || Name.starts_with("__ldcg") ||
         Name.starts_with("__ldca") || Name.starts_with("__ldcs") ||
         Name.starts_with("__ldlu") || Name.starts_with("__ldcv") ||
         Name == "__builtin_prefetch";
}

class WriteFinder : public RecursiveASTVisitor<WriteFinder> {
public:
  WriteFinder(ASTContext &Ctx, const FunctionDecl *FD, unsigned Depth)
      : Ctx(Ctx), FD(FD), Depth(Depth) {}

  bool shouldVisitLambdaBody() const { return true; }

  void run() {
    if (!FD->getBody())
      return;
    // Pass 1: aliases. Iterate until local pointer variables stop gaining
    // bases (chains like q = p + 1; r = q + 2).
    AliasCollector AC(*this);
    for (unsigned Iter = 0; Iter < 8; ++Iter) {
      Changed = false;
      AC.TraverseStmt(FD->getBody());
      if (!Changed)
        break;
    }
    // Pass 2: writes.
    TraverseStmt(FD->getBody());
  }

  /// Resolves variables to the parameters they may point into.
  SmallPtrSet<const ParmVarDecl *, 4> roots(const VarSet &Vars) {
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

  void markWritten(const VarSet &Vars, SourceLocation Loc, StringRef How) {
    for (const ParmVarDecl *P : roots(Vars))
      if (!Info.Written.count(P))
        Info.Written[P] = (How + " at " + locText(Loc)).str();
  }
  void markEscaped(const VarSet &Vars) {
    for (const ParmVarDecl *P : roots(Vars))
      Info.Escaped.insert(P);
  }

  std::string locText(SourceLocation Loc) {
    const SourceManager &SM = Ctx.getSourceManager();
    PresumedLoc PL = SM.getPresumedLoc(SM.getExpansionLoc(Loc));
    if (PL.isInvalid())
      return "?";
    return std::to_string(PL.getLine()) + ":" + std::to_string(PL.getColumn());
  }

  bool VisitBinaryOperator(BinaryOperator *BO) {
    if (BO->isAssignmentOp()) {
      // A pointer stored into a local array of pointers is tracked like a
      // pointer local (AliasCollector); nothing in memory is written.
      if (BO->getRHS()->getType()->isPointerType() &&
          localArrayElement(BO->getLHS()))
        return true;
      VarSet B;
      lvalueBases(BO->getLHS(), B);
      markWritten(B, BO->getOperatorLoc(), "assigned");
      // Storing a pointer into memory (not into a tracked local) escapes it.
      if (BO->getRHS()->getType()->isPointerType() &&
          !isa<DeclRefExpr>(BO->getLHS()->IgnoreParenImpCasts())) {
        VarSet R;
        directBases(BO->getRHS(), R);
        markEscaped(R);
      }
    }
    return true;
  }

  bool VisitUnaryOperator(UnaryOperator *UO) {
    if (UO->isIncrementDecrementOp()) {
      VarSet B;
      lvalueBases(UO->getSubExpr(), B);
      markWritten(B, UO->getOperatorLoc(), "incremented");
    }
    return true;
  }

  bool VisitCXXOperatorCallExpr(CXXOperatorCallExpr *E) {
    if (isWriteOperator(E->getOperator()) && E->getNumArgs() > 0) {
      VarSet B;
      lvalueBases(E->getArg(0), B);
      markWritten(B, E->getOperatorLoc(), "assigned");
    }
    return true;
  }

  bool VisitCXXMemberCallExpr(CXXMemberCallExpr *E) {
    const CXXMethodDecl *M = E->getMethodDecl();
    if (M && !M->isConst()) {
      VarSet B;
      lvalueBases(E->getImplicitObjectArgument(), B);
      markWritten(B, E->getExprLoc(), "non-const method called");
    }
    return true;
  }

  bool VisitVarDecl(VarDecl *V) {
    // Binding a non-const reference to an element lets later writes through
    // the reference reach the buffer.
    if (V->getType()->isReferenceType() &&
        !V->getType().getNonReferenceType().isConstQualified() &&
        V->getInit()) {
      VarSet B;
      lvalueBases(V->getInit(), B);
      markWritten(B, V->getLocation(), "bound to a non-const reference");
    }
    return true;
  }

  bool VisitCallExpr(CallExpr *E) {
    if (isa<CXXOperatorCallExpr>(E) || isa<CUDAKernelCallExpr>(E))
      return true;
    const FunctionDecl *Callee = E->getDirectCallee();
    if (Callee && isKnownReadOnlyBuiltin(Callee->getName()))
      return true;
    for (unsigned I = 0; I < E->getNumArgs(); ++I) {
      const Expr *A = E->getArg(I);
      QualType T = A->getType();
      bool PointerLike = T->isPointerType() || A->isTypeDependent() ||
                         T->isReferenceType();
      if (!PointerLike && !A->isLValue())
        continue;
      VarSet B;
      if (T->isPointerType() || A->isTypeDependent())
        directBases(A, B);
      // An lvalue may be passed by reference, unless it is const.
      if (A->isLValue() && !A->getType().isConstQualified())
        lvalueBases(A, B);
      if (B.empty())
        continue;
      if (!Callee) {
        markWritten(B, A->getExprLoc(), "passed to an unresolved call");
        continue;
      }
      const ParmVarDecl *Param =
          I < Callee->getNumParams() ? Callee->getParamDecl(I) : nullptr;
      if (!Param) {
        markWritten(B, A->getExprLoc(), "passed as a variadic argument");
        continue;
      }
      QualType PT = Param->getType();
      if (PT->isPointerType() && PT->getPointeeType().isConstQualified())
        continue; // const T*: the callee promised to only read.
      if (PT->isReferenceType()) {
        if (PT.getNonReferenceType().isConstQualified())
          continue;
        markWritten(B, A->getExprLoc(),
                    "passed by non-const reference to '" +
                        Callee->getNameAsString() + "'");
        continue;
      }
      if (!PT->isPointerType())
        continue; // By value: a copy.
      // A helper with a body: ask it.
      const FunctionDecl *Def = nullptr;
      if (Callee->hasBody(Def) && Depth < 8) {
        WriteFinder Sub(Ctx, Def, Depth + 1);
        Sub.run();
        const ParmVarDecl *DP = Def->getParamDecl(I);
        if (Sub.Info.isWritten(DP))
          markWritten(B, A->getExprLoc(),
                      "written by '" + Def->getNameAsString() + "' (" +
                          Sub.Info.reason(DP) + ")");
        continue;
      }
      markWritten(B, A->getExprLoc(),
                  "passed to '" + Callee->getNameAsString() +
                      "', which takes a non-const pointer");
    }
    return true;
  }

  bool VisitGCCAsmStmt(GCCAsmStmt *S) {
    for (unsigned I = 0; I < S->getNumOutputs(); ++I) {
      VarSet B;
      lvalueBases(S->getOutputExpr(I), B);
      markWritten(B, S->getAsmLoc(), "an asm output");
    }
    for (unsigned I = 0; I < S->getNumInputs(); ++I) {
      const Expr *In = S->getInputExpr(I);
      if (!In->getType()->isPointerType() && !In->getType()->isIntegerType())
        continue;
      VarSet B;
      directBases(In, B);
      // An address handed to asm may be stored to.
      if (S->isVolatile() || S->getNumClobbers())
        markWritten(B, S->getAsmLoc(), "passed to inline asm");
    }
    return true;
  }

  bool VisitLambdaExpr(LambdaExpr *L) {
    for (const LambdaCapture &C : L->captures())
      if (C.capturesVariable() && C.getCaptureKind() == LCK_ByRef)
        if (auto *V = dyn_cast<VarDecl>(C.getCapturedVar())) {
          VarSet B;
          B.insert(V);
          markEscaped(B);
        }
    return true;
  }

  /// Records which locals hold pointers derived from which variables.
  class AliasCollector : public RecursiveASTVisitor<AliasCollector> {
  public:
    explicit AliasCollector(WriteFinder &W) : W(W) {}
    bool shouldVisitLambdaBody() const { return true; }
    void add(const VarDecl *V, const Expr *From) {
      VarSet B;
      if (V->getType()->isReferenceType())
        lvalueBases(From, B);
      directBases(From, B);
      auto &S = W.Alias[V];
      for (const VarDecl *X : B)
        if (X != V && S.insert(X).second)
          W.Changed = true;
    }
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
    WriteFinder &W;
  };

  ASTContext &Ctx;
  const FunctionDecl *FD;
  unsigned Depth;
  bool Changed = false;
  DenseMap<const VarDecl *, VarSet> Alias;
  PointerWriteInfo Info;
};

} // namespace

SmallPtrSet<const VarDecl *, 4> pointerBases(const Expr *E) {
  VarSet S;
  directBases(E, S);
  return S;
}

PointerWriteInfo analyzePointerWrites(ASTContext &Ctx, const FunctionDecl *FD) {
  const FunctionTemplateDecl *FTD = FD->getDescribedFunctionTemplate();
  bool HasInstantiations = false;
  if (FTD)
    for (const FunctionDecl *Spec : FTD->specializations())
      HasInstantiations |= Spec->getBody() != nullptr;
  PointerWriteInfo Info;
  // Dependent calls in a template's pattern cannot be resolved; where the
  // translation unit instantiates the template, the instantiations (every
  // version of the kernel that exists) give the precise answer.
  if (!HasInstantiations) {
    WriteFinder W(Ctx, FD, 0);
    W.run();
    Info = std::move(W.Info);
  }
  if (!FTD)
    return Info;
  for (const FunctionDecl *Spec : FTD->specializations()) {
    if (!Spec->getBody())
      continue;
    WriteFinder SW(Ctx, Spec, 0);
    SW.run();
    for (unsigned I = 0; I < Spec->getNumParams() && I < FD->getNumParams();
         ++I) {
      const ParmVarDecl *SP = Spec->getParamDecl(I);
      const ParmVarDecl *PP = FD->getParamDecl(I);
      if (SW.Info.Written.count(SP) && !Info.Written.count(PP))
        Info.Written[PP] = SW.Info.Written[SP];
      if (SW.Info.Escaped.count(SP))
        Info.Escaped.insert(PP);
    }
  }
  return Info;
}

} // namespace astra
