//===- RestrictConst.cpp --------------------------------------------------===//
//
// Safety argument.
//  const: adding const to the pointee of a parameter that is never written
//   through keeps every read; it changes the kernel's type (and mangled name),
//   so the pass refuses when anything depends on the exact type: another
//   declaration of the kernel, an explicit instantiation or specialization,
//   or a use of the kernel other than a launch (its address taken, also by
//   name in a template never instantiated here, as dispatch macros do for
//   cudaLaunchKernelEx).
//  __restrict__: a top-level qualifier of a parameter; it does not change the
//   kernel's type. It promises that the buffers do not overlap, which only
//   callers can keep: the pass fires only when the file shows every launch
//   (astra/Frontend/LaunchFacts.h: none hidden behind a function pointer, a
//   template never instantiated, a header declaration or C linkage; each a
//   `<<<>>>` whose arguments it can follow) and no launch passes two
//   arguments derived from the same variable. The option
//   restrict-const.assume-noalias=1 states the promise for kernels with no
//   launch site in the file.
//
//===----------------------------------------------------------------------===//
#include "RestrictConst.h"
#include "utils/PassSupport.h"
#include "astra/Analysis/PointerAccess.h"

#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/TypeLoc.h"
#include "clang/Lex/Lexer.h"

using namespace clang;
using namespace llvm;

namespace astra {

void RestrictConstPass::run(PassContext &PC) {
  const KernelInfo &K = PC.kernel();
  const FunctionDecl *FD = K.Decl;
  ASTContext &Ctx = PC.astContext();
  PointerWriteInfo Writes = analyzePointerWrites(Ctx, FD);

  // Why the kernel's type must not change, if it must not.
  std::string TypeFrozen;
  for (const FunctionDecl *R : FD->redecls())
    if (R != FD) {
      TypeFrozen = "the kernel is declared again at " +
                   makePos(PC.sourceManager(), R->getLocation()).str() +
                   "; changing its parameter types would split the two";
      break;
    }
  if (TypeFrozen.empty())
    for (const Instantiation &I : K.Instantiations)
      if (I.Explicit) {
        TypeFrozen = "the template has an explicit instantiation or "
                     "specialization (" + I.Name + ") that names its types";
        break;
      }
  // Every use of the kernel (astra/Frontend/LaunchFacts.h): a use other
  // than a launch (a function pointer, `auto k = kernel<T>;` for
  // cudaLaunchKernelEx, a name in a template never instantiated here)
  // depends on its exact type.
  KernelLaunches KL = findLaunches(Ctx, FD);
  if (TypeFrozen.empty() && KL.AddressTaken)
    TypeFrozen = KL.Hidden;
  bool AssumeNoAlias =
      PC.options().intParam(name(), "assume-noalias", 0) != 0;

  for (const ParmVarDecl *P : FD->parameters()) {
    QualType T = P->getType();
    if (!T->isPointerType())
      continue;
    SourceLocation Loc = P->getLocation();
    TypeLoc TL = P->getTypeSourceInfo()->getTypeLoc();
    // Look through qualifiers (an existing __restrict__ or const pointer).
    while (auto QTL = TL.getAs<QualifiedTypeLoc>())
      TL = QTL.getUnqualifiedLoc();
    auto PTL = TL.getAs<PointerTypeLoc>();
    if (!PTL) {
      PC.refused(Loc, "parameter '" + P->getName() +
                          "' has a pointer type spelled through a typedef or "
                          "macro; its pointee cannot be edited");
      continue;
    }
    QualType Pointee = T->getPointeeType();
    std::string Name = P->getNameAsString();

    // const on the pointee.
    if (!Pointee.isConstQualified()) {
      if (Writes.isWritten(P)) {
        PC.refused(Loc, "'" + Name + "' is written (" + Writes.reason(P) +
                            "); it stays non-const");
      } else if (Pointee->isPointerType()) {
        PC.refused(Loc, "'" + Name + "' points to pointers; const there "
                            "would not change what the kernel reads");
      } else if (Pointee.isVolatileQualified()) {
        PC.refused(Loc, "'" + Name + "' points to volatile data");
      } else if (!TypeFrozen.empty()) {
        PC.refused(Loc, "'" + Name + "' could be const, but " + TypeFrozen);
      } else if (!PC.isEditable(PTL.getSourceRange())) {
        PC.refused(Loc, "'" + Name + "' is declared inside a macro");
      } else {
        SourceLocation Begin = PTL.getPointeeLoc().getBeginLoc();
        if (PC.insertBefore(Begin, "const "))
          PC.fired(Loc, "'" + Name + "' is only read: now points to const");
      }
    }

    // __restrict__ on the pointer.
    if (T.isRestrictQualified())
      continue;
    std::string Why;
    // Only callers keep the promise: every launch must be here, as a
    // `<<<>>>` whose arguments this pass can follow.
    if (!AssumeNoAlias && !KL.allVisible())
      Why = KL.Hidden + ", so '" + Name + "' may alias another argument "
            "there (pass --pass-opt=restrict-const.assume-noalias=1 to "
            "assert it never does)";
    for (const LaunchFact &L : KL.Launches)
      if (Why.empty() && !AssumeNoAlias && !L.Chevron)
        Why = L.where() + " passes the arguments through a launch API, "
              "where this pass does not follow them";
    for (const CUDAKernelCallExpr *E : KL.chevrons()) {
      if (!Why.empty())
        break;
      unsigned I = P->getFunctionScopeIndex();
      if (I >= E->getNumArgs())
        continue;
      for (const ParmVarDecl *Q : FD->parameters()) {
        unsigned J = Q->getFunctionScopeIndex();
        if (Q == P || !Q->getType()->isPointerType() || J >= E->getNumArgs())
          continue;
        if (launchArgsMayAlias(E, I, J)) {
          Why = "the launch at " +
                makePos(PC.sourceManager(), E->getBeginLoc()).str() +
                " may pass '" + Name + "' and '" + Q->getNameAsString() +
                "' into the same buffer";
          break;
        }
      }
      if (!Why.empty())
        break;
    }
    if (Why.empty() && Writes.Escaped.count(P))
      Why = "'" + Name + "' escapes the kernel's analysis";
    if (!Why.empty()) {
      PC.refused(Loc, "no __restrict__: " + Why);
      continue;
    }
    // `float *x` -> `float *__restrict__ x`: right after the '*'.
    if (!PC.isEditable(PTL.getStarLoc())) {
      PC.refused(Loc, "'" + Name + "' is declared inside a macro");
      continue;
    }
    if (PC.insertAfterToken(PTL.getStarLoc(), "__restrict__ "))
      PC.fired(Loc, "'" + Name + "' does not alias other arguments at any "
                        "launch: now __restrict__");
  }
}

} // namespace astra
