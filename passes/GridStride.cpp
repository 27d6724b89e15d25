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
namespace cudaidiom {

//===----------------------------------------------------------------------===//
// Shared recognizers
//===----------------------------------------------------------------------===//

const Expr *stripIntCasts(const Expr *E) {
  while (E) {
    E = E->IgnoreParens();
    const auto *CE = dyn_cast<CastExpr>(E);
    if (!CE)
      return E;
    CastKind K = CE->getCastKind();
    if (K != CK_IntegralCast && K != CK_NoOp && K != CK_LValueToRValue)
      return E;
    if (!CE->getType()->isIntegerType() && K != CK_LValueToRValue &&
        K != CK_NoOp)
      return E;
    E = CE->getSubExpr();
  }
  return E;
}

static BuiltinRef matchProperty(const MSPropertyRefExpr *P) {
  BuiltinRef R;
  const Expr *Base = P->getBaseExpr()->IgnoreImpCasts();
  if (const auto *OVE = dyn_cast<OpaqueValueExpr>(Base))
    Base = OVE->getSourceExpr() ? OVE->getSourceExpr()->IgnoreImpCasts()
                                : Base;
  const auto *DRE = dyn_cast<DeclRefExpr>(Base);
  if (!DRE)
    return R;
  const auto *V = dyn_cast<VarDecl>(DRE->getDecl());
  // Only CUDA's own variables (type __cuda_builtin_*_t), not a user's
  // variable that happens to be called blockIdx.
  if (!V || !StringRef(V->getType().getAsString())
                   .starts_with("const __cuda_builtin_"))
    return R;
  StringRef Prop = P->getPropertyDecl()->getName();
  if (Prop.size() != 1 || Prop[0] < 'x' || Prop[0] > 'z')
    return R;
  R.Var = StringSwitch<Builtin>(V->getName())
              .Case("threadIdx", Builtin::ThreadIdx)
              .Case("blockIdx", Builtin::BlockIdx)
              .Case("blockDim", Builtin::BlockDim)
              .Case("gridDim", Builtin::GridDim)
              .Default(Builtin::None);
  R.Dim = Prop[0];
  return R;
}

BuiltinRef matchBuiltin(const Expr *E) {
  E = stripIntCasts(E);
  if (!E)
    return {};
  if (const auto *POE = dyn_cast<PseudoObjectExpr>(E))
    E = POE->getSyntacticForm()->IgnoreParens();
  if (const auto *P = dyn_cast<MSPropertyRefExpr>(E))
    return matchProperty(P);
  return {};
}

static bool isBuiltin(const Expr *E, Builtin V, char Dim) {
  BuiltinRef R = matchBuiltin(E);
  return R.Var == V && R.Dim == Dim;
}

/// Whether \p E is a product of the built-ins \p A and \p B (either order).
static bool isProductOf(const Expr *E, Builtin A, Builtin B) {
  const auto *Mul = dyn_cast_or_null<BinaryOperator>(stripIntCasts(E));
  if (!Mul || Mul->getOpcode() != BO_Mul)
    return false;
  const Expr *L = Mul->getLHS(), *R = Mul->getRHS();
  return (isBuiltin(L, A, 'x') && isBuiltin(R, B, 'x')) ||
         (isBuiltin(L, B, 'x') && isBuiltin(R, A, 'x'));
}

namespace {
class BuiltinFinder : public RecursiveASTVisitor<BuiltinFinder> {
public:
  BuiltinFinder(Builtin V, char Dim) : V(V), Dim(Dim) {}
  bool VisitMSPropertyRefExpr(MSPropertyRefExpr *P) {
    BuiltinRef R = matchProperty(P);
    if (R.Var == V && (Dim == 0 || R.Dim == Dim)) {
      Found = P;
      return false;
    }
    return true;
  }
  Builtin V;
  char Dim;
  const Expr *Found = nullptr;
};
} // namespace

bool usesBuiltin(const Stmt *S, Builtin V, char Dim, const Expr **At) {
  if (!S)
    return false;
  BuiltinFinder F(V, Dim);
  F.TraverseStmt(const_cast<Stmt *>(S));
  if (At)
    *At = F.Found;
  return F.Found != nullptr;
}

bool isGlobalThreadIndex(const Expr *E, std::string *Why) {
  const auto *Add = dyn_cast_or_null<BinaryOperator>(stripIntCasts(E));
  if (Add && Add->getOpcode() == BO_Add) {
    const Expr *L = Add->getLHS(), *R = Add->getRHS();
    if (isBuiltin(R, Builtin::ThreadIdx, 'x') &&
        isProductOf(L, Builtin::BlockIdx, Builtin::BlockDim))
      return true;
    if (isBuiltin(L, Builtin::ThreadIdx, 'x') &&
        isProductOf(R, Builtin::BlockIdx, Builtin::BlockDim))
      return true;
  }
  if (Why) {
    for (char D : {'y', 'z'})
      for (Builtin B : {Builtin::BlockIdx, Builtin::ThreadIdx})
        if (usesBuiltin(E, B, D)) {
          *Why = std::string("the index uses ") +
                 (B == Builtin::BlockIdx ? "blockIdx." : "threadIdx.") + D +
                 "; only the x dimension is turned into a loop";
          return false;
        }
    *Why = "the index is not blockIdx.x * blockDim.x + threadIdx.x";
  }
  return false;
}

bool isGridStrideStep(const Expr *E) {
  return isProductOf(E, Builtin::BlockDim, Builtin::GridDim);
}

static bool startsWithAny(StringRef Name, ArrayRef<StringRef> Prefixes) {
  for (StringRef P : Prefixes)
    if (Name.starts_with(P))
      return true;
  return false;
}

bool isCollectiveName(StringRef Name) {
  static const StringRef Prefixes[] = {
      "__syncthreads", "__syncwarp",     "__shfl",       "__ballot",
      "__any_sync",    "__all_sync",     "__uni_sync",   "__activemask",
      "__match_",      "__reduce_",      "__barrier",    "__nvvm_bar",
      "__nvvm_shfl",   "__nvvm_vote",    "__nvvm_match", "__nvvm_redux",
      "__fns",         "__nvvm_barrier", "__elect"};
  return Name == "__any" || Name == "__all" || startsWithAny(Name, Prefixes);
}

static bool inNamespace(const Decl *D, StringRef NS) {
  for (const DeclContext *C = D->getDeclContext(); C; C = C->getParent())
    if (const auto *N = dyn_cast<NamespaceDecl>(C))
      if (N->getName() == NS)
        return true;
  return false;
}

namespace {
/// Walks a statement and the bodies of the functions it calls (user code,
/// a bounded depth), calling Check on every node.
template <typename Derived>
class CalleeWalker : public RecursiveASTVisitor<Derived> {
public:
  explicit CalleeWalker(const SourceManager &SM) : SM(SM) {}
  bool shouldVisitLambdaBody() const { return true; }

  bool VisitCallExpr(CallExpr *E) {
    const FunctionDecl *Callee = E->getDirectCallee();
    if (!Callee || Depth >= 8)
      return true;
    const FunctionDecl *Def = nullptr;
    if (!Callee->hasBody(Def) || SM.isInSystemHeader(Def->getLocation()))
      return true;
    if (!Visited.insert(Def).second)
      return true;
    ++Depth;
    bool Continue = static_cast<Derived *>(this)->TraverseStmt(Def->getBody());
    --Depth;
    return Continue;
  }

  std::string at(SourceLocation Loc) const {
    return makePos(SM, Loc).str();
  }

  const SourceManager &SM;
  unsigned Depth = 0;
  SmallPtrSet<const FunctionDecl *, 8> Visited;
  std::string Found;
};

class CollectiveFinder : public CalleeWalker<CollectiveFinder> {
public:
  using CalleeWalker::CalleeWalker;
  bool VisitCallExpr(CallExpr *E) {
    std::string Name;
    const FunctionDecl *Callee = E->getDirectCallee();
    if (Callee) {
      Name = Callee->getNameAsString();
      if (inNamespace(Callee, "cooperative_groups")) {
        Found = "calls cooperative_groups::" + Name + " at " +
                at(E->getBeginLoc());
        return false;
      }
    } else if (const auto *ULE = dyn_cast<UnresolvedLookupExpr>(
                   E->getCallee()->IgnoreImplicit())) {
      Name = ULE->getName().getAsString();
    }
    if (isCollectiveName(Name)) {
      Found = "calls " + Name + " at " + at(E->getBeginLoc());
      return false;
    }
    if (const auto *MC = dyn_cast<CXXMemberCallExpr>(E))
      if (const CXXMethodDecl *M = MC->getMethodDecl())
        if (M->getName() == "sync") {
          Found = "calls .sync() at " + at(E->getBeginLoc());
          return false;
        }
    return CalleeWalker::VisitCallExpr(E);
  }
  bool VisitAsmStmt(AsmStmt *S) {
    if (AllowVectorRed && isVectorRedAsm(S))
      return true;
    Found = "contains inline asm at " + at(S->getBeginLoc()) +
            " (it may synchronize)";
    return false;
  }
  bool AllowVectorRed = false;
};

class SharedFinder : public CalleeWalker<SharedFinder> {
public:
  using CalleeWalker::CalleeWalker;
  bool VisitVarDecl(VarDecl *V) {
    if (V->hasAttr<CUDASharedAttr>()) {
      Found = "declares __shared__ '" + V->getNameAsString() + "' at " +
              at(V->getLocation());
      return false;
    }
    return true;
  }
  bool VisitDeclRefExpr(DeclRefExpr *E) {
    if (const auto *V = dyn_cast<VarDecl>(E->getDecl()))
      if (V->hasAttr<CUDASharedAttr>()) {
        Found = "uses __shared__ '" + V->getNameAsString() + "' at " +
                at(E->getBeginLoc());
        return false;
      }
    return true;
  }
};

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

class VarAtLocation : public RecursiveASTVisitor<VarAtLocation> {
public:
  explicit VarAtLocation(SourceLocation Loc) : Loc(Loc) {}
  bool VisitVarDecl(VarDecl *V) {
    if (V->getLocation() == Loc) {
      Found = V;
      return false;
    }
    return true;
  }
  SourceLocation Loc;
  const VarDecl *Found = nullptr;
};
} // namespace

std::string findCollective(const Stmt *S, const SourceManager &SM,
                           bool AllowVectorRed) {
  CollectiveFinder F(SM);
  F.AllowVectorRed = AllowVectorRed;
  F.TraverseStmt(const_cast<Stmt *>(S));
  return F.Found;
}

std::string vectorRedAsm(unsigned Lanes) {
  std::string Regs;
  for (unsigned L = 0; L < Lanes; ++L)
    Regs += (L ? ", %" : "%") + std::to_string(L + 1);
  return "red.global.add.v" + std::to_string(Lanes) + ".f32 [%0], {" + Regs +
         "};";
}

bool isVectorRedAsm(const Stmt *S) {
  const auto *A = dyn_cast_or_null<GCCAsmStmt>(S);
  if (!A || A->getNumOutputs() != 0)
    return false;
  std::string Asm = A->getAsmString();
  return Asm == vectorRedAsm(4) || Asm == vectorRedAsm(2);
}

std::string findSharedMemory(const Stmt *S, const SourceManager &SM) {
  SharedFinder F(SM);
  F.TraverseStmt(const_cast<Stmt *>(S));
  return F.Found;
}

std::vector<const DeclRefExpr *> referencesTo(const Stmt *S,
                                              const VarDecl *V) {
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

std::vector<const FunctionDecl *> concreteDefinitions(const FunctionDecl *FD) {
  std::vector<const FunctionDecl *> Out;
  const FunctionTemplateDecl *FTD = FD->getDescribedFunctionTemplate();
  if (!FTD) {
    if (FD->getBody())
      Out.push_back(FD);
    return Out;
  }
  for (const FunctionDecl *Spec : FTD->specializations()) {
    // An explicit specialization has its own body, not the pattern's text.
    if (Spec->getTemplateSpecializationKind() == TSK_ExplicitSpecialization)
      continue;
    if (Spec->getBody())
      Out.push_back(Spec);
  }
  return Out;
}

const VarDecl *varAtSameLocation(const FunctionDecl *FD, const VarDecl *V) {
  if (const auto *P = dyn_cast<ParmVarDecl>(V)) {
    unsigned I = P->getFunctionScopeIndex();
    return I < FD->getNumParams() ? FD->getParamDecl(I) : nullptr;
  }
  VarAtLocation F(V->getLocation());
  F.TraverseStmt(FD->getBody());
  return F.Found;
}

/// The statement whose end is the end of \p S (the body of a loop, the last
/// branch of an if, ...).
static const Stmt *trailingStmt(const Stmt *S) {
  while (true) {
    const Stmt *Next = nullptr;
    if (const auto *If = dyn_cast<IfStmt>(S))
      Next = If->getElse() ? If->getElse() : If->getThen();
    else if (const auto *F = dyn_cast<ForStmt>(S))
      Next = F->getBody();
    else if (const auto *W = dyn_cast<WhileStmt>(S))
      Next = W->getBody();
    else if (const auto *R = dyn_cast<CXXForRangeStmt>(S))
      Next = R->getBody();
    else if (const auto *Sw = dyn_cast<SwitchStmt>(S))
      Next = Sw->getBody();
    else if (const auto *L = dyn_cast<LabelStmt>(S))
      Next = L->getSubStmt();
    if (!Next)
      return S;
    S = Next;
  }
}

SourceLocation endOfStatement(const Stmt *S, const SourceManager &SM,
                              const LangOptions &LO) {
  const Stmt *T = trailingStmt(S);
  SourceLocation End = SM.getExpansionRange(T->getEndLoc()).getEnd();
  if (isa<CompoundStmt>(T))
    return Lexer::getLocForEndOfToken(End, 0, SM, LO);
  Token Tok;
  if (!Lexer::getRawToken(End, Tok, SM, LO, /*IgnoreWhiteSpace=*/true) &&
      Tok.is(tok::semi))
    return Tok.getEndLoc();
  std::optional<Token> Next = Lexer::findNextToken(End, SM, LO);
  if (Next && Next->is(tok::semi))
    return Next->getEndLoc();
  return SourceLocation();
}

std::optional<std::string> lineIndent(SourceLocation Loc,
                                      const SourceManager &SM) {
  Loc = SM.getExpansionLoc(Loc);
  auto [FID, Offset] = SM.getDecomposedLoc(Loc);
  bool Invalid = false;
  StringRef Buf = SM.getBufferData(FID, &Invalid);
  if (Invalid || Offset > Buf.size())
    return std::nullopt;
  // StringRef::rfind looks at [0, Offset): a newline just before Loc counts.
  size_t Start = Buf.rfind('\n', Offset);
  Start = Start == StringRef::npos ? 0 : Start + 1;
  StringRef Before = Buf.slice(Start, Offset);
  if (Before.find_first_not_of(" \t") != StringRef::npos)
    return std::nullopt;
  return Before.str();
}

std::string reindent(StringRef Text, StringRef Indent) {
  if (Text.contains("\\\n") || Text.contains("R\""))
    return Text.str();
  std::string Out;
  Out.reserve(Text.size() + Indent.size() * 8);
  for (size_t I = 0; I < Text.size(); ++I) {
    Out += Text[I];
    if (Text[I] != '\n')
      continue;
    size_t J = I + 1;
    while (J < Text.size() && (Text[J] == ' ' || Text[J] == '\t'))
      ++J;
    if (J < Text.size() && Text[J] != '\n' && Text[J] != '\r')
      Out += Indent;
  }
  return Out;
}

std::string instantiationName(const FunctionDecl *D, const LangOptions &LO) {
  std::string S;
  raw_string_ostream OS(S);
  D->getNameForDiagnostic(OS, PrintingPolicy(LO), /*Qualified=*/false);
  return S;
}

bool refersTo(const Expr *E, const VarDecl *V) {
  const auto *DRE = dyn_cast_or_null<DeclRefExpr>(stripIntCasts(E));
  return DRE && DRE->getDecl() == V;
}

} // namespace cudaidiom

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

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
               (isBuiltin(At, Builtin::BlockIdx, 'x') ? "blockIdx.x"
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

  std::vector<const FunctionDecl *> Defs = concreteDefinitions(FD);
  if (Defs.empty()) {
    PC.refused(FD->getLocation(),
               "the template is never instantiated in this file, so the "
               "calls in its body cannot be checked");
    return;
  }

  // Find and check the site in every version of the kernel that exists; the
  // text to edit is the same for all (they share source locations).
  Site S;
  for (const FunctionDecl *D : Defs) {
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
        Why += " (in " + instantiationName(D, LO) + ")";
      PC.refused(Loc, Why);
      return;
    }
    if (D == Defs.front())
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
  std::string Indent = lineIndent(S.Decl->getBeginLoc(), SM).value_or("");
  std::optional<std::string> BraceIndent = lineIndent(B->getRBracLoc(), SM);
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
