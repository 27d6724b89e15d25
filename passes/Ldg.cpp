//===- Ldg.cpp ------------------------------------------------------------===//
//
// Safety argument. __ldg reads through the non-coherent read-only cache: a
// load returns what memory held when the line was cached, so the buffer must
// not change while the kernel runs. The pass wraps a load only when
//  - every pointer it may come from (through locals, arithmetic and casts)
//    is a kernel parameter the kernel never writes through and that does not
//    escape (analyzePointerWrites, which errs on "written");
//  - that parameter cannot alias a buffer the kernel writes: it is
//    __restrict__ (the programmer's promise), or every launch in the file
//    passes it a pointer derived from variables no written argument shares
//    (and the kernel is used nowhere but in those launches), or the user
//    says so (ldg.assume-noalias=1);
//  - the load reads a whole element of a type some __ldg overload in this
//    translation unit takes (so nothing about which bytes are read changes);
//  - in a template, every instantiation agrees.
// Writes by other kernels running concurrently on the same buffer are the
// caller's business, as with `const __restrict__`.
//
//===----------------------------------------------------------------------===//
#include "Ldg.h"
#include "astra/Analysis/PointerAccess.h"
#include "utils/HelperReach.h"
#include "utils/Mutation.h"
#include "utils/PassSupport.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMap.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <set>

using namespace clang;
using namespace llvm;

namespace astra {

namespace {

using VarSet = SmallPtrSet<const VarDecl *, 4>;

/// Element types some __ldg overload takes in this translation unit.
SmallPtrSet<const Type *, 32> ldgElementTypes(ASTContext &Ctx) {
  SmallPtrSet<const Type *, 32> Types;
  for (NamedDecl *D :
       Ctx.getTranslationUnitDecl()->lookup(&Ctx.Idents.get("__ldg"))) {
    const auto *FD = dyn_cast<FunctionDecl>(D->getUnderlyingDecl());
    if (!FD || FD->getNumParams() != 1)
      continue;
    QualType T = FD->getParamDecl(0)->getType();
    if (!T->isPointerType() || !T->getPointeeType().isConstQualified())
      continue;
    Types.insert(
        Ctx.getCanonicalType(T->getPointeeType().getUnqualifiedType())
            .getTypePtr());
  }
  return Types;
}

/// Where each local pointer variable of a body may point: the variables its
/// values are computed from. A local whose origin is unknown (a call result,
/// a load, its address taken) is marked so.
class LocalPointers : public RecursiveASTVisitor<LocalPointers> {
public:
  bool VisitVarDecl(VarDecl *V) {
    if (isa<ParmVarDecl>(V) || !V->getType()->isPointerType())
      return true;
    Known.insert(V);
    if (const Expr *Init = V->getInit())
      add(V, Init);
    return true;
  }
  bool VisitBinaryOperator(BinaryOperator *BO) {
    if (BO->getOpcode() != BO_Assign)
      return true; // p += n stays inside p's buffer.
    if (const VarDecl *V = localPointer(BO->getLHS()))
      add(V, BO->getRHS());
    return true;
  }
  bool VisitUnaryOperator(UnaryOperator *UO) {
    if (UO->getOpcode() == UO_AddrOf)
      if (const VarDecl *V = localPointer(UO->getSubExpr()))
        Unknown.insert(V); // May be written through a pointer to it.
    return true;
  }
  bool VisitCallExpr(CallExpr *CE) {
    // A local passed as an lvalue may be bound to a non-const reference.
    for (const Expr *A : CE->arguments())
      if (A->isLValue())
        if (const VarDecl *V = localPointer(A))
          Unknown.insert(V);
    return true;
  }

  /// The parameters \p Vars may point into; false when any origin is not a
  /// parameter of \p FD (a local of unknown origin, shared memory, a global).
  bool roots(const VarSet &Vars, const FunctionDecl *FD,
             SmallPtrSetImpl<const ParmVarDecl *> &Out) const {
    SmallVector<const VarDecl *, 8> Work(Vars.begin(), Vars.end());
    VarSet Seen;
    while (!Work.empty()) {
      const VarDecl *V = Work.pop_back_val();
      if (!Seen.insert(V).second)
        continue;
      if (const auto *P = dyn_cast<ParmVarDecl>(V)) {
        if (P->getDeclContext() != FD)
          return false;
        Out.insert(P);
        continue;
      }
      auto It = Bases.find(V);
      if (!Known.count(V) || Unknown.count(V) || It == Bases.end() ||
          It->second.empty())
        return false;
      Work.append(It->second.begin(), It->second.end());
    }
    return !Out.empty();
  }

private:
  const VarDecl *localPointer(const Expr *E) const {
    const auto *DRE = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts());
    const auto *V = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
    if (!V || isa<ParmVarDecl>(V) || !V->getType()->isPointerType())
      return nullptr;
    return V;
  }
  void add(const VarDecl *V, const Expr *From) {
    VarSet B = pointerBases(From);
    if (B.empty())
      Unknown.insert(V);
    Bases[V].insert(B.begin(), B.end());
  }

  VarSet Known, Unknown;
  DenseMap<const VarDecl *, VarSet> Bases;
};

/// Whether the element lvalue \p E is read whole and only read; otherwise
/// \p Why says how it is used.
bool isWholeRead(const Expr *E, const ParentMap &PM, const SourceManager &SM,
                 std::string &Why) {
  const Stmt *Child = E;
  const Stmt *P = PM.getParent(E);
  while (P) {
    if (isa<ParenExpr>(P)) {
      Child = P;
      P = PM.getParent(P);
      continue;
    }
    if (const auto *ICE = dyn_cast<ImplicitCastExpr>(P)) {
      if (ICE->getCastKind() == CK_NoOp) {
        Child = P;
        P = PM.getParent(P);
        continue;
      }
      if (ICE->getCastKind() == CK_LValueToRValue)
        return true;
    }
    break;
  }
  if (!P) {
    Why = "its value is not used";
    return false;
  }
  // Class elements (__half, __nv_bfloat16) are read by a copy, by a const
  // member (operator float() const) or by a library operator taking
  // `const T &`.
  if (const auto *CCE = dyn_cast<CXXConstructExpr>(P)) {
    if (CCE->getConstructor()->isCopyOrMoveConstructor())
      return true;
  } else if (const auto *ME = dyn_cast<MemberExpr>(P)) {
    const auto *MD = dyn_cast<CXXMethodDecl>(ME->getMemberDecl());
    if (MD && MD->isConst() && !ME->isArrow() &&
        isa_and_nonnull<CXXMemberCallExpr>(PM.getParent(ME)))
      return true;
    Why = "only a member of the element is accessed";
    return false;
  } else if (const auto *CE = dyn_cast<CallExpr>(P)) {
    const FunctionDecl *FD = CE->getDirectCallee();
    // Library operators, and the compiler's own copy assignment.
    if (FD && (isSystemFunction(SM, FD) || FD->isImplicit())) {
      unsigned Shift = 0;
      if (const auto *MD = dyn_cast<CXXMethodDecl>(FD))
        if (isa<CXXOperatorCallExpr>(CE) && MD->isInstance()) {
          if (CE->getArg(0) == Child)
            return MD->isConst();
          Shift = 1;
        }
      for (unsigned I = Shift; I < CE->getNumArgs(); ++I) {
        if (CE->getArg(I) != Child || I - Shift >= FD->getNumParams())
          continue;
        QualType PT = FD->getParamDecl(I - Shift)->getType();
        if (PT->isLValueReferenceType() &&
            PT.getNonReferenceType().isConstQualified())
          return true;
      }
    }
  } else if (const auto *UO = dyn_cast<UnaryOperator>(P)) {
    if (UO->getOpcode() == UO_AddrOf) {
      Why = "its address is taken";
      return false;
    }
  } else if (const auto *BO = dyn_cast<BinaryOperator>(P)) {
    if (BO->isAssignmentOp() && BO->getLHS()->IgnoreParens() == Child) {
      Why = "it is assigned";
      return false;
    }
  }
  Why = std::string("it is used as an lvalue (") + P->getStmtClassName() + ")";
  return false;
}

struct ParamVerdict {
  bool Eligible = false;
  std::string Proof; ///< Why it cannot alias a written buffer.
  std::string Refusal; ///< A helper's parameter: why it is not eligible.
};

class LdgVisitor : public RecursiveASTVisitor<LdgVisitor> {
public:
  LdgVisitor(PassContext &PC, SiteVotes &Votes, unsigned Body,
             const std::vector<ParamVerdict> &Params,
             const SmallPtrSet<const Type *, 32> &Types)
      : PC(PC), SM(PC.sourceManager()), Votes(Votes), Body(Body),
        FD(Votes.bodies()[Body].FD), Params(Params), Types(Types),
        PM(FD->getBody()) {
    Locals.TraverseStmt(FD->getBody());
  }

  bool VisitArraySubscriptExpr(ArraySubscriptExpr *E) {
    if (E->getBase()->getType()->isPointerType())
      load(E, E->getBase());
    return true;
  }
  bool VisitUnaryOperator(UnaryOperator *E) {
    if (E->getOpcode() == UO_Deref &&
        E->getSubExpr()->getType()->isPointerType())
      load(E, E->getSubExpr());
    return true;
  }

private:
  void load(const Expr *E, const Expr *Pointer) {
    SmallPtrSet<const ParmVarDecl *, 4> Roots;
    if (!Locals.roots(pointerBases(Pointer), FD, Roots))
      return; // Not (only) through kernel parameters.
    std::string Names;
    std::string Proof;
    for (const ParmVarDecl *P : Roots) {
      unsigned I = P->getFunctionScopeIndex();
      if (I >= Params.size() || !Params[I].Eligible)
        return; // Refused once, at the parameter.
      Names += (Names.empty() ? "'" : ", '") + P->getNameAsString() + "'";
      Proof = Params[I].Proof;
    }
    Names += Roots.size() > 1 ? " are" : " is";
    SourceLocation Loc = E->getBeginLoc();
    std::string Text = PC.text(E->getSourceRange());
    std::string Why;
    if (!isWholeRead(E, PM, SM, Why)) {
      Votes.reject(Body, Loc, "load",
                   "'" + Text + "' is not a plain load: " + Why);
      return;
    }
    QualType T = E->getType();
    if (T->isDependentType()) {
      Votes.reject(Body, Loc, "load",
                   "'" + Text + "' loads a type that depends on a template "
                   "parameter, and no instantiation in this file shows it");
      return;
    }
    if (T.isVolatileQualified()) {
      Votes.reject(Body, Loc, "load", "'" + Text + "' is a volatile load");
      return;
    }
    const Type *Canon =
        PC.astContext().getCanonicalType(T.getUnqualifiedType()).getTypePtr();
    if (!Types.count(Canon)) {
      Votes.reject(Body, Loc, "load",
                   "'" + Text + "' loads '" +
                       T.getUnqualifiedType().getAsString(
                           PC.astContext().getPrintingPolicy()) +
                       "', which no __ldg overload takes");
      return;
    }
    std::optional<TextEdit> Open, Close;
    std::string New;
    if (const auto *UO = dyn_cast<UnaryOperator>(E)) {
      Open = makeTokenEdit(PC, SourceRange(UO->getOperatorLoc()), "__ldg(");
      New = "__ldg(" + PC.text(UO->getSubExpr()->getSourceRange()) + ")";
    } else {
      Open = makeInsertBefore(PC, Loc, "__ldg(&");
      New = "__ldg(&" + Text + ")";
    }
    Close = makeInsertAfterToken(PC, E->getEndLoc(), ")");
    if (!Open || !Close || Text.empty()) {
      Votes.reject(Body, Loc, "load",
                   "the load is spelled inside a macro expansion");
      return;
    }
    Votes.accept(Body, Loc, "load", {*Open, *Close},
                 "'" + Text + "' -> '" + New + "' (" + Names +
                     " never written by the kernel and " + Proof + ")");
  }

  PassContext &PC;
  const SourceManager &SM;
  SiteVotes &Votes;
  unsigned Body;
  const FunctionDecl *FD;
  const std::vector<ParamVerdict> &Params;
  const SmallPtrSet<const Type *, 32> &Types;
  ParentMap PM;
  LocalPointers Locals;
};

/// The verdicts for the pointer parameters of helper body \p Body: a
/// parameter is eligible when the helper never changes or writes through
/// it and every call the kernel's code makes passes it a pointer into
/// eligible kernel parameters (\p Kernel). Refusals are recorded once per
/// parameter (a template helper's instantiations share them).
std::vector<ParamVerdict> helperParams(PassContext &PC,
                                       const HelperReach &Reach,
                                       const FunctionDecl *Body,
                                       const std::vector<ParamVerdict> &Kernel) {
  const FunctionDecl *K = PC.kernel().Decl;
  std::vector<ParamVerdict> Out(Body->getNumParams());
  PointerWriteInfo Writes = analyzePointerWrites(PC.astContext(), Body);
  for (const ParmVarDecl *P : Body->parameters()) {
    QualType T = P->getType();
    if (!T->isPointerType() || T->getPointeeType().isVolatileQualified())
      continue;
    unsigned I = P->getFunctionScopeIndex();
    std::string Name = "'" + P->getNameAsString() + "'";
    if (Writes.isWritten(P)) {
      Out[I].Refusal = Name + " is written (" + Writes.reason(P) +
                       "); its loads stay coherent";
      continue;
    }
    if (mayModify(Body->getBody(), P)) {
      Out[I].Refusal = Name + " is changed in the helper, so what it "
                       "points into is not what the calls pass";
      continue;
    }
    auto Origins = Reach.kernelParams(Body, I);
    if (!Origins) {
      Out[I].Refusal = Name + " is not known to point into kernel "
                       "parameters at every call the kernel makes (a call "
                       "passes a pointer computed otherwise)";
      continue;
    }
    std::string Into, Proof;
    for (unsigned O : *Origins) {
      if (O >= Kernel.size() || O >= K->getNumParams()) {
        Into.clear();
        break;
      }
      std::string KName = "'" + K->getParamDecl(O)->getNameAsString() + "'";
      if (!Kernel[O].Eligible) {
        Out[I].Refusal = Name + " points into the kernel's " + KName +
                         " at some call, which is not read-only for ldg "
                         "(see the kernel's parameter)";
        Into.clear();
        break;
      }
      Into += (Into.empty() ? "" : ", ") + KName;
      Proof = Kernel[O].Proof;
    }
    if (!Into.empty())
      Out[I] = {true,
                "points into the kernel's " + Into + " at every call (" +
                    Proof + ")",
                ""};
  }
  return Out;
}

} // namespace

void LdgPass::run(PassContext &PC) {
  const FunctionDecl *FD = PC.kernel().Decl;
  ASTContext &Ctx = PC.astContext();
  PointerWriteInfo Writes = analyzePointerWrites(Ctx, FD);
  bool AssumeNoAlias = PC.options().intParam(name(), "assume-noalias", 0) != 0;

  // Which pointer parameters may be loaded through __ldg, and why they
  // cannot alias a buffer the kernel writes.
  KernelLaunches KL = findLaunches(Ctx, FD);
  std::string LaunchProblem =
      KL.allVisible() ? std::string()
                      : "the file may not show what every launch passes it (" +
                            KL.Hidden + ")";
  for (const LaunchFact &L : KL.Launches)
    if (LaunchProblem.empty() && !L.Chevron)
      LaunchProblem = L.where() + " passes its arguments through a launch "
                                  "API, where this pass does not follow them";

  std::vector<ParamVerdict> Params(FD->getNumParams());
  for (const ParmVarDecl *P : FD->parameters()) {
    QualType T = P->getType();
    if (!T->isPointerType())
      continue;
    unsigned I = P->getFunctionScopeIndex();
    std::string Name = P->getNameAsString();
    SourceLocation Loc = P->getLocation();
    if (T->getPointeeType().isVolatileQualified()) {
      PC.refused(Loc, "'" + Name + "' points to volatile data");
      continue;
    }
    if (Writes.isWritten(P)) {
      PC.refused(Loc, "'" + Name + "' is written (" + Writes.reason(P) +
                          "); its loads stay coherent");
      continue;
    }
    ParamVerdict &V = Params[I];
    if (T.isRestrictQualified()) {
      V = {true, "__restrict__", ""};
      continue;
    }
    if (AssumeNoAlias) {
      V = {true, "ldg.assume-noalias=1 says it aliases no written buffer", ""};
      continue;
    }
    std::string Why = LaunchProblem;
    for (const CUDAKernelCallExpr *L : KL.chevrons()) {
      if (!Why.empty())
        break;
      for (const ParmVarDecl *Q : FD->parameters()) {
        unsigned J = Q->getFunctionScopeIndex();
        if (Q == P || !Q->getType()->isPointerType() || !Writes.isWritten(Q) ||
            I >= L->getNumArgs() || J >= L->getNumArgs())
          continue;
        if (launchArgsMayAlias(L, I, J)) {
          Why = "the launch at " + posText(PC, L->getBeginLoc()) +
                " may pass '" + Name + "' and the written '" +
                Q->getNameAsString() + "' into one buffer";
          break;
        }
      }
    }
    if (!Why.empty()) {
      PC.refused(Loc, "'" + Name + "' is never written, but it is not "
                          "__restrict__ and " + Why +
                          " (--pass-opt=ldg.assume-noalias=1 asserts that it "
                          "aliases no written buffer)");
      continue;
    }
    V = {true, "no launch passes it a buffer the kernel writes", ""};
  }
  if (llvm::none_of(Params, [](const ParamVerdict &V) { return V.Eligible; }))
    return;

  SmallPtrSet<const Type *, 32> Types = ldgElementTypes(Ctx);
  EditSet ES;
  {
    SiteVotes Votes(kernelBodies(FD));
    for (unsigned B = 0; B < Votes.bodies().size(); ++B) {
      LdgVisitor V(PC, Votes, B, Params, Types);
      V.TraverseStmt(Votes.bodies()[B].FD->getBody());
    }
    Votes.resolve(PC, ES);
  }

  // Loads in the helpers the kernel calls, through a helper's pointer
  // parameter that points into eligible kernel parameters at every call.
  HelperReach Reach(PC);
  for (Helper *H : Reach.helpers()) {
    HelperReach::Scope S(PC, *H);
    SiteVotes Votes(H->Bodies);
    std::set<std::pair<unsigned, std::string>> Said;
    for (unsigned B = 0; B < Votes.bodies().size(); ++B) {
      const FunctionDecl *Body = Votes.bodies()[B].FD;
      std::vector<ParamVerdict> HP = helperParams(PC, Reach, Body, Params);
      for (unsigned I = 0; I < HP.size(); ++I) {
        SourceLocation Loc = Body->getParamDecl(I)->getLocation();
        if (!HP[I].Refusal.empty() &&
            Said.insert({Loc.getRawEncoding(), HP[I].Refusal}).second)
          PC.refused(Loc, HP[I].Refusal);
      }
      LdgVisitor V(PC, Votes, B, HP, Types);
      V.TraverseStmt(Body->getBody());
    }
    EditSet HES;
    Votes.resolve(PC, HES);
    Reach.setEdits(*H, HES);
  }
  Reach.commit(ES);
}

} // namespace astra
