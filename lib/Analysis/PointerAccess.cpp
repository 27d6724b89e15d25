//===- PointerAccess.cpp --------------------------------------------------===//
#include "astra/Analysis/PointerAccess.h"
#include "LocalAliases.h"

#include "clang/AST/Attr.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"

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

using namespace analysis;

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
      : Ctx(Ctx), FD(FD), Depth(Depth), Aliases(FD) {}

  bool shouldVisitLambdaBody() const { return true; }

  void run() {
    if (FD->getBody())
      TraverseStmt(FD->getBody());
  }

  void markWritten(const VarSet &Vars, SourceLocation Loc, StringRef How) {
    for (const ParmVarDecl *P : Aliases.roots(Vars))
      if (!Info.Written.count(P))
        Info.Written[P] = (How + " at " + locText(Ctx, Loc)).str();
  }
  void markEscaped(const VarSet &Vars) {
    for (const ParmVarDecl *P : Aliases.roots(Vars))
      Info.Escaped.insert(P);
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

  ASTContext &Ctx;
  const FunctionDecl *FD;
  unsigned Depth;
  LocalAliases Aliases;
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
