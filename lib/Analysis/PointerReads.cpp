//===- PointerReads.cpp ---------------------------------------------------===//
#include "astra/Analysis/PointerReads.h"
#include "astra/Analysis/PointerAccess.h"

#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"

using namespace clang;
using namespace llvm;

namespace astra {

namespace {

using VarSet = SmallPtrSet<const VarDecl *, 4>;

void addAll(VarSet &To, const SmallPtrSetImpl<const VarDecl *> &From) {
  To.insert(From.begin(), From.end());
}

/// The variables whose memory the lvalue \p E names: the pointer a
/// subscript, `*` or `->` goes through, or a reference variable.
void memoryBases(const Expr *E, VarSet &Out) {
  if (!E)
    return;
  E = E->IgnoreParenImpCasts();
  if (auto *ASE = dyn_cast<ArraySubscriptExpr>(E))
    return addAll(Out, pointerBases(ASE->getBase()));
  if (auto *UO = dyn_cast<UnaryOperator>(E)) {
    if (UO->getOpcode() == UO_Deref)
      addAll(Out, pointerBases(UO->getSubExpr()));
    return;
  }
  if (auto *ME = dyn_cast<MemberExpr>(E)) {
    if (ME->isArrow())
      return addAll(Out, pointerBases(ME->getBase()));
    return memoryBases(ME->getBase(), Out);
  }
  if (auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    if (auto *V = dyn_cast<VarDecl>(DRE->getDecl()))
      if (V->getType()->isReferenceType())
        Out.insert(V);
    return;
  }
  if (auto *CO = dyn_cast<AbstractConditionalOperator>(E)) {
    memoryBases(CO->getTrueExpr(), Out);
    memoryBases(CO->getFalseExpr(), Out);
    return;
  }
  if (auto *CE = dyn_cast<CXXOperatorCallExpr>(E)) {
    for (const Expr *A : CE->arguments())
      addAll(Out, pointerBases(A));
    return;
  }
  if (E->isTypeDependent())
    addAll(Out, pointerBases(E));
}

class ReadFinder : public RecursiveASTVisitor<ReadFinder> {
public:
  ReadFinder(ASTContext &Ctx, const FunctionDecl *FD, unsigned Depth)
      : Ctx(Ctx), FD(FD), Depth(Depth) {}

  bool shouldVisitLambdaBody() const { return true; }

  void run() {
    if (!FD->getBody())
      return;
    // Aliases first (until no local gains a base: q = p + 1; r = q + 2),
    // then the reads.
    for (unsigned Iter = 0; Iter < 8; ++Iter) {
      Changed = false;
      AliasCollector(*this).TraverseStmt(FD->getBody());
      if (!Changed)
        break;
    }
    TraverseStmt(FD->getBody());
  }

  PointerReadInfo Info;

  // --- Reads -----------------------------------------------------------------
  bool VisitImplicitCastExpr(ImplicitCastExpr *E) {
    if (E->getCastKind() == CK_LValueToRValue)
      markMemory(E->getSubExpr(), E->getExprLoc(), "read");
    return true;
  }

  bool VisitBinaryOperator(BinaryOperator *BO) {
    if (BO->isCompoundAssignmentOp())
      markMemory(BO->getLHS(), BO->getOperatorLoc(), "read-modify-write");
    // A pointer stored to memory may be read through by anyone later.
    if (BO->isAssignmentOp() && BO->getRHS()->getType()->isPointerType() &&
        !isa<DeclRefExpr>(BO->getLHS()->IgnoreParenImpCasts()))
      markPointer(BO->getRHS(), BO->getOperatorLoc(), "stored to memory");
    return true;
  }

  bool VisitUnaryOperator(UnaryOperator *UO) {
    if (UO->isIncrementDecrementOp())
      markMemory(UO->getSubExpr(), UO->getOperatorLoc(), "incremented");
    return true;
  }

  /// Class-type copies (`__half v = in[i];`) read without an
  /// lvalue-to-rvalue conversion.
  bool VisitCXXConstructExpr(CXXConstructExpr *E) {
    for (const Expr *A : E->arguments())
      if (A->isGLValue())
        markMemory(A, A->getExprLoc(), "copied");
    return true;
  }

  bool VisitCXXOperatorCallExpr(CXXOperatorCallExpr *E) {
    // Plain `=` only writes its left side; every other operand, and the
    // left side of any other operator, is read.
    for (unsigned I = 0; I < E->getNumArgs(); ++I)
      if (I > 0 || E->getOperator() != OO_Equal)
        markMemory(E->getArg(I), E->getOperatorLoc(), "used by an operator");
    return true;
  }

  bool VisitCXXMemberCallExpr(CXXMemberCallExpr *E) {
    markMemory(E->getImplicitObjectArgument(), E->getExprLoc(),
               "a method is called on it");
    return true;
  }

  bool VisitCallExpr(CallExpr *E) {
    if (isa<CXXOperatorCallExpr>(E) || isa<CUDAKernelCallExpr>(E))
      return true;
    const FunctionDecl *Callee = E->getDirectCallee();
    for (unsigned I = 0; I < E->getNumArgs(); ++I) {
      const Expr *A = E->getArg(I);
      const ParmVarDecl *Param =
          Callee && I < Callee->getNumParams() ? Callee->getParamDecl(I)
                                               : nullptr;
      // An lvalue bound to a reference parameter is read by the callee.
      if (A->isGLValue() && (!Param || Param->getType()->isReferenceType()))
        markMemory(A, A->getExprLoc(), "passed by reference");
      if (!A->getType()->isPointerType() && !A->isTypeDependent())
        continue;
      const FunctionDecl *Def = nullptr;
      if (Param && Callee->hasBody(Def) && Depth < 8 &&
          I < Def->getNumParams()) {
        ReadFinder Sub(Ctx, Def, Depth + 1);
        Sub.run();
        const ParmVarDecl *DP = Def->getParamDecl(I);
        if (Sub.Info.isRead(DP))
          markPointer(A, A->getExprLoc(),
                      "read by '" + Def->getNameAsString() + "' (" +
                          Sub.Info.reason(DP) + ")");
        continue;
      }
      markPointer(A, A->getExprLoc(),
                  Callee ? "passed to '" + Callee->getNameAsString() + "'"
                         : std::string("passed to an unresolved call"));
    }
    return true;
  }

  bool VisitGCCAsmStmt(GCCAsmStmt *S) {
    for (unsigned I = 0; I < S->getNumInputs(); ++I) {
      markPointer(S->getInputExpr(I), S->getAsmLoc(), "passed to inline asm");
      markMemory(S->getInputExpr(I), S->getAsmLoc(), "an asm input");
    }
    return true;
  }

  bool VisitLambdaExpr(LambdaExpr *L) {
    for (const LambdaCapture &C : L->captures())
      if (C.capturesVariable() && C.getCaptureKind() == LCK_ByRef)
        if (auto *V = dyn_cast<VarDecl>(C.getCapturedVar())) {
          VarSet B;
          B.insert(V);
          mark(B, L->getBeginLoc(), "captured by reference");
        }
    return true;
  }

private:
  void markMemory(const Expr *LValue, SourceLocation Loc, StringRef How) {
    VarSet B;
    memoryBases(LValue, B);
    mark(B, Loc, How);
  }
  void markPointer(const Expr *Ptr, SourceLocation Loc, const Twine &How) {
    VarSet B;
    addAll(B, pointerBases(Ptr));
    mark(B, Loc, How);
  }

  void mark(const VarSet &Vars, SourceLocation Loc, const Twine &How) {
    for (const ParmVarDecl *P : roots(Vars))
      if (!Info.Read.count(P))
        Info.Read[P] = (How + " at " + locText(Loc)).str();
  }

  /// Resolves variables to the parameters they may point into.
  SmallPtrSet<const ParmVarDecl *, 4> roots(const VarSet &Vars) {
    SmallPtrSet<const ParmVarDecl *, 4> R;
    SmallVector<const VarDecl *, 8> Work(Vars.begin(), Vars.end());
    VarSet Seen;
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

  std::string locText(SourceLocation Loc) {
    const SourceManager &SM = Ctx.getSourceManager();
    PresumedLoc PL = SM.getPresumedLoc(SM.getExpansionLoc(Loc));
    if (PL.isInvalid())
      return "?";
    return std::to_string(PL.getLine()) + ":" + std::to_string(PL.getColumn());
  }

  /// Records which locals hold pointers into (or references to) which
  /// variables.
  class AliasCollector : public RecursiveASTVisitor<AliasCollector> {
  public:
    explicit AliasCollector(ReadFinder &R) : R(R) {}
    bool shouldVisitLambdaBody() const { return true; }
    void add(const VarDecl *V, const Expr *From) {
      VarSet B;
      if (V->getType()->isReferenceType())
        memoryBases(From, B);
      addAll(B, pointerBases(From));
      VarSet &S = R.Alias[V];
      for (const VarDecl *X : B)
        if (X != V && S.insert(X).second)
          R.Changed = true;
    }
    bool VisitVarDecl(VarDecl *V) {
      if (V->getInit() && !isa<ParmVarDecl>(V))
        add(V, V->getInit());
      return true;
    }
    bool VisitBinaryOperator(BinaryOperator *BO) {
      if (BO->isAssignmentOp())
        if (auto *DRE =
                dyn_cast<DeclRefExpr>(BO->getLHS()->IgnoreParenImpCasts()))
          if (auto *V = dyn_cast<VarDecl>(DRE->getDecl()))
            add(V, BO->getRHS());
      return true;
    }

  private:
    ReadFinder &R;
  };

  ASTContext &Ctx;
  const FunctionDecl *FD;
  unsigned Depth;
  bool Changed = false;
  DenseMap<const VarDecl *, VarSet> Alias;
};

} // namespace

PointerReadInfo analyzePointerReads(ASTContext &Ctx, const FunctionDecl *FD) {
  const FunctionTemplateDecl *FTD = FD->getDescribedFunctionTemplate();
  PointerReadInfo Info;
  if (!FTD) {
    ReadFinder R(Ctx, FD, 0);
    R.run();
    return std::move(R.Info);
  }
  // Dependent code has no lvalue-to-rvalue conversions to find; the
  // instantiations show every read.
  bool Any = false;
  for (const FunctionDecl *Spec : FTD->specializations()) {
    if (!Spec->getBody())
      continue;
    Any = true;
    ReadFinder R(Ctx, Spec, 0);
    R.run();
    for (unsigned I = 0; I < Spec->getNumParams() && I < FD->getNumParams();
         ++I) {
      auto It = R.Info.Read.find(Spec->getParamDecl(I));
      if (It != R.Info.Read.end())
        Info.Read.try_emplace(FD->getParamDecl(I), It->second);
    }
  }
  if (!Any)
    for (const ParmVarDecl *P : FD->parameters())
      if (P->getType()->isPointerType() || P->getType()->isDependentType())
        Info.Read[P] = "a template without instantiations cannot be analyzed";
  return Info;
}

} // namespace astra
