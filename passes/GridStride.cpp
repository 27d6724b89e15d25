//===- GridStride.cpp -----------------------------------------------------===//
//
// Safety argument.
//  The rewritten loop's first iteration is the original kernel's only one:
//  same index, same bounds check, same body. Later iterations run only when
//  the grid does not cover n, i.e. they process elements that the original
//  launch would have given to the blocks blockIdx.x + k * gridDim.x. Such an
//  element is handled exactly as that block's thread threadIdx.x would have
//  handled it, provided the body depends on the block only through i: so the
//  pass refuses bodies that read blockIdx.x or gridDim.x other than in the
//  index, use shared memory (one block would see data meant for another),
//  synchronize (threads of one block would run different iteration counts),
//  return early, or modify i or n.
//  For a 32-bit index the step is computed in 32 bits like the index itself:
//  the loop is exact while n + gridDim.x * blockDim.x fits in the index type
//  (always true under a launch that covers n with n < 2^30); a 64-bit index
//  gets a 64-bit step.
//
//===----------------------------------------------------------------------===//
#include "GridStride.h"

#include "utils/CudaIdioms.h"
#include "utils/Mutation.h"
#include "utils/PassSupport.h"
#include "utils/SourceText.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSwitch.h"

using namespace clang;
using namespace llvm;

namespace astra {

using namespace cudaidiom;

namespace {

/// A one-element-per-thread kernel: `Index = <global thread index>;`
/// followed by its bounds check.
struct Site {
  unsigned DeclPos = 0; ///< Position of the declaration in the body.
  const DeclStmt *Decl = nullptr;
  const VarDecl *Index = nullptr;
  const IfStmt *Guard = nullptr;
  const Expr *Bound = nullptr;
  /// `if (i >= n) return; ...` rather than `if (i < n) { ... }`.
  bool EarlyReturn = false;
};

/// Whether \p S is `return;` or `{ return; }`.
static bool isPlainReturn(const Stmt *S) {
  if (const auto *CS = dyn_cast<CompoundStmt>(S))
    return CS->size() == 1 && isPlainReturn(CS->body_front());
  const auto *R = dyn_cast<ReturnStmt>(S);
  return R && !R->getRetValue();
}

/// Collects the variables of a loop bound, or says why the bound may change
/// while the loop runs (a memory read, a call, a non-constant global).
static bool collectBoundVars(const Expr *E,
                             SmallPtrSetImpl<const VarDecl *> &Vars,
                             std::string &Why) {
  E = E->IgnoreParenImpCasts();
  if (isa<IntegerLiteral, CharacterLiteral, CXXBoolLiteralExpr,
          UnaryExprOrTypeTraitExpr, SubstNonTypeTemplateParmExpr>(E))
    return true;
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    const ValueDecl *D = DRE->getDecl();
    if (isa<EnumConstantDecl, NonTypeTemplateParmDecl>(D))
      return true;
    const auto *V = dyn_cast<VarDecl>(D);
    if (!V) {
      Why = "the bound '" + D->getNameAsString() + "' is not a variable";
      return false;
    }
    if (V->getType()->isReferenceType() || V->getType().isVolatileQualified()) {
      Why = "the bound reads '" + V->getNameAsString() +
            "', a reference or volatile variable that may change";
      return false;
    }
    if (!V->hasLocalStorage() && !V->getType().isConstQualified() &&
        !V->isConstexpr()) {
      Why = "the bound reads the global variable '" + V->getNameAsString() +
            "', which the loop could change";
      return false;
    }
    Vars.insert(V);
    return true;
  }
  if (const auto *ME = dyn_cast<MemberExpr>(E)) {
    if (ME->isArrow()) {
      Why = "the bound reads memory through a pointer";
      return false;
    }
    return collectBoundVars(ME->getBase(), Vars, Why);
  }
  if (const auto *UO = dyn_cast<UnaryOperator>(E)) {
    if (UO->isArithmeticOp())
      return collectBoundVars(UO->getSubExpr(), Vars, Why);
    Why = "the bound reads memory or has side effects";
    return false;
  }
  if (const auto *BO = dyn_cast<BinaryOperator>(E)) {
    if (BO->isAssignmentOp() || BO->getOpcode() == BO_Comma) {
      Why = "the bound has side effects";
      return false;
    }
    return collectBoundVars(BO->getLHS(), Vars, Why) &&
           collectBoundVars(BO->getRHS(), Vars, Why);
  }
  if (const auto *CO = dyn_cast<ConditionalOperator>(E))
    return collectBoundVars(CO->getCond(), Vars, Why) &&
           collectBoundVars(CO->getTrueExpr(), Vars, Why) &&
           collectBoundVars(CO->getFalseExpr(), Vars, Why);
  if (const auto *CE = dyn_cast<ExplicitCastExpr>(E))
    return collectBoundVars(CE->getSubExpr(), Vars, Why);
  Why = "the bound is not a plain expression of variables and constants";
  return false;
}

class GridStrideChecker {
public:
  GridStrideChecker(const FunctionDecl *F, const SourceManager &SM)
      : F(F), Body(dyn_cast_or_null<CompoundStmt>(F->getBody())), SM(SM),
        PM(F->getBody()) {}

  /// Finds the site; returns an empty string, or why there is none (with
  /// \p Loc where the refusal belongs).
  std::string find(Site &S, SourceLocation &Loc) {
    Loc = F->getLocation();
    if (!Body)
      return "the kernel has no body";
    std::string NearMiss;
    for (unsigned I = 0; I < Body->size(); ++I) {
      const auto *DS = dyn_cast<DeclStmt>(Body->body_begin()[I]);
      if (!DS || !DS->isSingleDecl())
        continue;
      const auto *V = dyn_cast<VarDecl>(DS->getSingleDecl());
      if (!V || !V->getInit())
        continue;
      std::string Why;
      if (isGlobalThreadIndex(V->getInit(), &Why)) {
        S.DeclPos = I;
        S.Decl = DS;
        S.Index = V;
        Loc = V->getLocation();
        return checkGuard(S, Loc);
      }
      // An index built from both blockIdx and threadIdx that is not the one
      // this pass knows deserves a precise reason.
      if (NearMiss.empty() &&
          usesBuiltin(V->getInit(), Builtin::BlockIdx, 0) &&
          usesBuiltin(V->getInit(), Builtin::ThreadIdx, 0)) {
        NearMiss = "'" + V->getNameAsString() + "': " + Why;
        Loc = V->getLocation();
      }
    }
    if (!NearMiss.empty())
      return NearMiss;
    if (hasGridStrideLoop())
      return "the kernel already uses a grid-stride loop";
    return "no one-element-per-thread index (`i = blockIdx.x * blockDim.x + "
           "threadIdx.x` followed by `if (i < n)` or `if (i >= n) return;`) "
           "at the top level of the kernel body";
  }

  /// Checks the body guarded by the site: everything that could make a
  /// second iteration differ from the launch of another block.
  std::string checkRegion(const Site &S, SourceLocation &Loc) {
    std::vector<const Stmt *> Region, Suffix;
    unsigned After = S.DeclPos + 2;
    if (S.EarlyReturn) {
      for (unsigned I = After; I < Body->size(); ++I)
        Region.push_back(Body->body_begin()[I]);
    } else {
      Region.push_back(S.Guard->getThen());
      for (unsigned I = After; I < Body->size(); ++I)
        Suffix.push_back(Body->body_begin()[I]);
    }
    std::string Name = S.Index->getNameAsString();

    if (std::string M = findCollective(Body, SM); !M.empty())
      return "the kernel " + M +
             "; threads of a block would run different numbers of iterations";
    if (std::string M = findSharedMemory(Body, SM); !M.empty())
      return "the kernel " + M +
             "; one block would see shared data meant for another block";

    for (const Stmt *R : Region) {
      if (const Stmt *Bad = findJump(R)) {
        Loc = Bad->getBeginLoc();
        return isa<ReturnStmt>(Bad)
                   ? "a `return` inside the guarded code would end the loop "
                     "early for later elements"
                   : "the guarded code uses goto or labels";
      }
      const Expr *At = nullptr;
      if (usesBuiltin(R, Builtin::BlockIdx, 'x', &At) ||
          usesBuiltin(R, Builtin::GridDim, 'x', &At)) {
        Loc = At->getBeginLoc();
        return std::string("the guarded code reads ") +
               (matchBuiltin(At).is(Builtin::BlockIdx, 'x') ? "blockIdx.x"
                                                            : "gridDim.x") +
               " besides the index; in a grid-stride loop a block also "
               "handles other blocks' elements";
      }
    }
    for (const Stmt *R : Suffix)
      if (std::vector<const DeclRefExpr *> Refs = referencesTo(R, S.Index);
          !Refs.empty()) {
        Loc = Refs.front()->getLocation();
        return "'" + Name + "' is used after its bounds check; it would be out "
               "of scope after the loop";
      }

    // i and n must not change inside the loop.
    SmallPtrSet<const VarDecl *, 4> Fixed;
    std::string Why;
    if (!collectBoundVars(S.Bound, Fixed, Why)) {
      Loc = S.Bound->getBeginLoc();
      return Why;
    }
    Fixed.insert(S.Index);
    for (const VarDecl *V : Fixed) {
      // The index must not change anywhere; the bound only inside the loop.
      std::vector<const Stmt *> Where = Region;
      if (V == S.Index)
        Where = {Body};
      for (const Stmt *R : Where)
        for (const DeclRefExpr *Ref : referencesTo(R, V))
          if (isModifyingUse(Ref, PM)) {
            Loc = Ref->getLocation();
            return "'" + V->getNameAsString() +
                   "' is modified (or its address is taken) in the kernel; " +
                   (V == S.Index ? "the loop owns the index"
                                 : "the loop bound must not change");
          }
    }
    return "";
  }

private:
  std::string checkGuard(Site &S, SourceLocation &Loc) {
    std::string Name = S.Index->getNameAsString();
    QualType T = S.Index->getType();
    if (!T->isIntegerType() || T->isBooleanType())
      return "'" + Name + "' does not have an integer type";
    if (S.Index->isStaticLocal())
      return "'" + Name + "' is static";
    if (S.DeclPos + 1 >= Body->size())
      return "'" + Name + "' is not followed by a bounds check";
    const auto *If = dyn_cast<IfStmt>(Body->body_begin()[S.DeclPos + 1]);
    if (!If)
      return "the statement after '" + Name +
             "' is not its bounds check `if (" + Name + " < n)` or `if (" +
             Name + " >= n) return;`";
    Loc = If->getBeginLoc();
    if (If->getInit() || If->getConditionVariable() || If->isConsteval() ||
        If->isConstexpr())
      return "the bounds check has an init statement, a declaration or is "
             "constexpr";
    const auto *Cond =
        dyn_cast<BinaryOperator>(If->getCond()->IgnoreParenImpCasts());
    if (!Cond || !Cond->isComparisonOp())
      return "the condition is not a single comparison of '" + Name +
             "' with a bound";
    BinaryOperatorKind Op = Cond->getOpcode();
    const Expr *L = Cond->getLHS(), *R = Cond->getRHS();
    bool Less = (Op == BO_LT && refersTo(L, S.Index)) ||
                (Op == BO_GT && refersTo(R, S.Index));
    bool NotLess = (Op == BO_GE && refersTo(L, S.Index)) ||
                   (Op == BO_LE && refersTo(R, S.Index));
    if (!Less && !NotLess)
      return "the condition is not `" + Name + " < n` or `" + Name +
             " >= n`";
    S.Bound = refersTo(L, S.Index) ? R : L;
    if (usesBuiltin(S.Bound, Builtin::ThreadIdx, 0) ||
        refersTo(S.Bound, S.Index))
      return "the bound depends on the thread";
    S.Guard = If;
    if (Less) {
      if (If->getElse())
        return "the bounds check has an else branch";
      return "";
    }
    S.EarlyReturn = true;
    if (If->getElse() || !isPlainReturn(If->getThen()))
      return "`if (" + Name + " >= n)` does something other than return";
    if (S.DeclPos + 2 >= Body->size())
      return "nothing follows the bounds check";
    return "";
  }

  /// A return, goto or label under \p S.
  static const Stmt *findJump(const Stmt *S) {
    if (!S)
      return nullptr;
    if (isa<ReturnStmt, GotoStmt, IndirectGotoStmt, LabelStmt>(S))
      return S;
    if (isa<LambdaExpr>(S))
      return nullptr; // A return inside a lambda returns from the lambda.
    for (const Stmt *C : S->children())
      if (const Stmt *J = findJump(C))
        return J;
    return nullptr;
  }

  bool hasGridStrideLoop() const {
    struct Finder : RecursiveASTVisitor<Finder> {
      bool Found = false;
      bool VisitForStmt(ForStmt *FS) {
        if (const auto *CA =
                dyn_cast_or_null<CompoundAssignOperator>(FS->getInc()))
          if (CA->getOpcode() == BO_AddAssign && isGridStrideStep(CA->getRHS()))
            Found = true;
        return !Found;
      }
    } Fi;
    Fi.TraverseStmt(const_cast<CompoundStmt *>(Body));
    return Fi.Found;
  }

  const FunctionDecl *F;
  const CompoundStmt *Body;
  const SourceManager &SM;
  ParentMap PM;
};

} // namespace

void GridStridePass::run(PassContext &PC) {
  const FunctionDecl *FD = PC.kernel().Decl;
  const SourceManager &SM = PC.sourceManager();
  const LangOptions &LO = PC.langOpts();
  ASTContext &Ctx = PC.astContext();

  std::vector<KernelBody> Bodies = kernelBodies(FD);
  if (neverInstantiated(Bodies)) {
    PC.refused(FD->getLocation(),
               "the template is never instantiated in this file, so the "
               "calls in its body cannot be checked");
    return;
  }

  // Find and check the site in every version of the kernel that exists; the
  // text to edit is the same for all (they share source locations).
  Site S;
  for (const KernelBody &KB : Bodies) {
    const FunctionDecl *D = KB.FD;
    GridStrideChecker C(D, SM);
    Site DS;
    SourceLocation Loc;
    std::string Why = C.find(DS, Loc);
    if (Why.empty()) {
      Loc = DS.Index->getLocation();
      Why = C.checkRegion(DS, Loc);
    }
    if (!Why.empty()) {
      if (D != FD)
        Why += " (in " + KB.Label + ")";
      PC.refused(Loc, Why);
      return;
    }
    if (D == Bodies.front().FD)
      S = DS;
  }

  // The pattern's own declaration spells the index type as the user wrote it.
  const VarDecl *PatternIndex = varAtSameLocation(FD, S.Index);
  QualType IndexType = (PatternIndex ? PatternIndex : S.Index)->getType();
  PrintingPolicy PP(LO);
  PP.SuppressTagKeyword = true;
  PP.SuppressUnwrittenScope = true;
  std::string TypeText = IndexType.getUnqualifiedType().getAsString(PP);
  std::string Name = S.Index->getNameAsString();

  SourceRange DeclRange(S.Decl->getBeginLoc(), S.Index->getEndLoc());
  SourceLocation GuardEnd =
      S.EarlyReturn ? endOfStatement(S.Guard, SM, LO)
                    : Lexer::getLocForEndOfToken(S.Guard->getRParenLoc(), 0,
                                                 SM, LO);
  // The index may be spelled with a macro (`int i = GLOBAL_ID;`); the edit
  // starts and ends in plain text.
  if (S.Decl->getBeginLoc().isMacroID() || GuardEnd.isInvalid() ||
      GuardEnd.isMacroID() ||
      (!S.EarlyReturn && S.Guard->getRParenLoc().isMacroID())) {
    PC.refused(S.Index->getLocation(),
               "the index or its bounds check comes from a macro expansion");
    return;
  }

  std::string DeclText;
  if (IndexType.isConstQualified())
    DeclText = TypeText + " " + Name + " = " +
               PC.text(S.Index->getInit()->getSourceRange());
  else
    DeclText = PC.text(DeclRange);
  std::string BoundText = PC.text(S.Bound->getSourceRange());
  std::string CondText = S.EarlyReturn
                             ? Name + " < " + BoundText
                             : PC.text(S.Guard->getCond()->getSourceRange());
  bool Wide = Ctx.getTypeSize(S.Index->getType()) > 32;
  std::string Step = Name + " += " + (Wide ? "(" + TypeText + ")" : "") +
                     "blockDim.x * gridDim.x";
  std::string Header = "for (" + DeclText + "; " + CondText + "; " + Step + ")";
  if (DeclText.empty() || CondText.empty() || BoundText.empty()) {
    PC.refused(S.Index->getLocation(),
               "the index or its bounds check is not plain file text");
    return;
  }

  CharSourceRange HeaderRange =
      CharSourceRange::getCharRange(S.Decl->getBeginLoc(), GuardEnd);
  if (!S.EarlyReturn) {
    if (PC.replace(HeaderRange, Header))
      PC.fired(S.Index->getLocation(),
               "'" + Name + "' < " + BoundText +
                   " now steps by blockDim.x * gridDim.x: a grid-stride loop, "
                   "correct for any grid size");
    return;
  }

  // Early-return form: the rest of the body becomes the loop body, in one
  // replacement (re-indented) so that no half of the edit can land alone.
  const auto *B = cast<CompoundStmt>(FD->getBody());
  SourceLocation DeclLoc = S.Decl->getBeginLoc();
  std::string Indent = startsLine(DeclLoc, SM) ? lineIndent(DeclLoc, SM) : "";
  std::optional<std::string> BraceIndent;
  if (startsLine(B->getRBracLoc(), SM))
    BraceIndent = lineIndent(B->getRBracLoc(), SM);
  std::string Unit = "  ";
  if (BraceIndent && Indent.size() > BraceIndent->size() &&
      StringRef(Indent).starts_with(*BraceIndent))
    Unit = Indent.substr(BraceIndent->size());
  SourceLocation RBrace = SM.getExpansionLoc(B->getRBracLoc());
  auto [FID, RegionBegin] = SM.getDecomposedLoc(GuardEnd);
  unsigned RegionEnd = SM.getFileOffset(RBrace);
  StringRef Buf = SM.getBufferData(FID);
  if (BraceIndent) // Up to the start of the closing brace's line.
    RegionEnd -= BraceIndent->size();
  if (SM.getFileID(RBrace) != FID || RegionEnd < RegionBegin) {
    PC.refused(S.Index->getLocation(),
               "the kernel body does not end in the same file");
    return;
  }
  std::string Text = Header + " {" +
                     reindent(Buf.slice(RegionBegin, RegionEnd), Unit) +
                     (BraceIndent ? Indent + "}\n" : std::string("} "));
  CharSourceRange All = CharSourceRange::getCharRange(
      S.Decl->getBeginLoc(), SM.getComposedLoc(FID, RegionEnd));
  if (PC.replace(All, Text))
    PC.fired(S.Index->getLocation(),
             "early return when '" + Name + "' >= " + BoundText +
                 " replaced by a grid-stride loop over the rest of the "
                 "kernel, correct for any grid size");
}

} // namespace astra
