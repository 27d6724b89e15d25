//===- PointerReads.cpp ---------------------------------------------------===//
#include "astra/Analysis/PointerReads.h"
#include "LocalAliases.h"

#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"

using namespace clang;
using namespace llvm;

namespace astra {

namespace {

using namespace analysis;

class ReadFinder : public RecursiveASTVisitor<ReadFinder> {
public:
  ReadFinder(ASTContext &Ctx, const FunctionDecl *FD, unsigned Depth)
      : Ctx(Ctx), FD(FD), Depth(Depth), Aliases(FD) {}

  bool shouldVisitLambdaBody() const { return true; }

  void run() {
    if (FD->getBody())
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
    lvalueBases(LValue, B);
    mark(B, Loc, How);
  }
  void markPointer(const Expr *Ptr, SourceLocation Loc, const Twine &How) {
    VarSet B;
    directBases(Ptr, B);
    mark(B, Loc, How);
  }

  void mark(const VarSet &Vars, SourceLocation Loc, const Twine &How) {
    for (const ParmVarDecl *P : Aliases.roots(Vars))
      if (!Info.Read.count(P))
        Info.Read[P] = (How + " at " + locText(Ctx, Loc)).str();
  }

  ASTContext &Ctx;
  const FunctionDecl *FD;
  unsigned Depth;
  LocalAliases Aliases;
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
