//===- CudaIdioms.cpp -----------------------------------------------------===//
#include "utils/CudaIdioms.h"

#include "utils/Mutation.h"
#include "utils/PassSupport.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSwitch.h"

using namespace clang;
using namespace llvm;

namespace astra {
namespace cudaidiom {

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

std::string BuiltinRef::name() const {
  const char *V = "";
  switch (Var) {
  case Builtin::None:
    return "";
  case Builtin::ThreadIdx:
    V = "threadIdx.";
    break;
  case Builtin::BlockIdx:
    V = "blockIdx.";
    break;
  case Builtin::BlockDim:
    V = "blockDim.";
    break;
  case Builtin::GridDim:
    V = "gridDim.";
    break;
  }
  return V + std::string(1, Dim);
}

BuiltinRef builtinRef(const Expr *E) {
  if (!E)
    return {};
  if (const auto *POE = dyn_cast<PseudoObjectExpr>(E))
    E = POE->getSyntacticForm()->IgnoreParens();
  if (const auto *P = dyn_cast<MSPropertyRefExpr>(E))
    return matchProperty(P);
  return {};
}

BuiltinRef matchBuiltin(const Expr *E) { return builtinRef(stripIntCasts(E)); }

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

bool isBarrierName(StringRef Name) {
  static const StringRef Prefixes[] = {"__syncthreads", "__syncwarp",
                                       "__barrier", "__nvvm_bar"};
  return startsWithAny(Name, Prefixes) || Name == "sync" ||
         Name == "barrier_wait" || Name == "arrive_and_wait";
}

bool isCollectiveName(StringRef Name) {
  static const StringRef Prefixes[] = {
      "__shfl",      "__ballot",     "__any_sync",   "__all_sync",
      "__uni_sync",  "__activemask", "__match_",     "__reduce_",
      "__nvvm_shfl", "__nvvm_vote",  "__nvvm_match", "__nvvm_redux",
      "__fns",       "__elect"};
  return isBarrierName(Name) || Name == "__any" || Name == "__all" ||
         startsWithAny(Name, Prefixes);
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

bool refersTo(const Expr *E, const VarDecl *V) {
  const auto *DRE = dyn_cast_or_null<DeclRefExpr>(stripIntCasts(E));
  return DRE && DRE->getDecl() == V;
}

bool readsBuiltinIndex(const Expr *E, StringRef Builtin,
                       const FunctionDecl *FD) {
  if (!E)
    return false;
  E = E->IgnoreParenImpCasts();
  if (builtinRef(E).name() == Builtin)
    return true;
  const auto *DRE = dyn_cast<DeclRefExpr>(E);
  const auto *V = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
  return V && V->hasLocalStorage() && !isa<ParmVarDecl>(V) &&
         V->getType()->isIntegerType() && V->getInit() &&
         builtinRef(V->getInit()->IgnoreParenImpCasts()).name() == Builtin &&
         FD && !mayModify(FD->getBody(), V);
}

SourceLocation findMultiDimIndex(const Stmt *S, std::string &What) {
  struct Finder : RecursiveASTVisitor<Finder> {
    bool VisitPseudoObjectExpr(PseudoObjectExpr *E) {
      std::string B = builtinRef(E).name();
      if (B == "threadIdx.y" || B == "threadIdx.z") {
        Found = E->getBeginLoc();
        What = B;
        return false;
      }
      return true;
    }
    SourceLocation Found;
    std::string What;
  } F;
  F.TraverseStmt(const_cast<Stmt *>(S));
  What = F.What;
  return F.Found;
}

namespace {

/// Whether a statement contains a barrier, looking into user functions it
/// calls (a block reduction helper usually holds the __syncthreads()).
class BarrierFinder : public RecursiveASTVisitor<BarrierFinder> {
public:
  BarrierFinder(const SourceManager &SM, unsigned Depth,
                DenseMap<const FunctionDecl *, bool> &Memo)
      : SM(SM), Depth(Depth), Memo(Memo) {}

  bool VisitCallExpr(CallExpr *CE) {
    if (callIsBarrier(CE)) {
      Found = true;
      return false;
    }
    return true;
  }
  bool VisitGCCAsmStmt(GCCAsmStmt *S) {
    StringRef Asm = S->getAsmString();
    if (Asm.contains("bar.") || Asm.contains("barrier"))
      Found = true;
    return !Found;
  }

  bool callIsBarrier(const CallExpr *CE) {
    const FunctionDecl *FD = CE->getDirectCallee();
    if (!FD) {
      // Unresolved (dependent) call: judge by name.
      if (const auto *ULE =
              dyn_cast<UnresolvedLookupExpr>(CE->getCallee()->IgnoreImplicit()))
        return isBarrierName(ULE->getName().getAsString());
      if (const auto *ME = dyn_cast<CXXDependentScopeMemberExpr>(
              CE->getCallee()->IgnoreImplicit()))
        return isBarrierName(ME->getMember().getAsString());
      return false;
    }
    if (FD->getIdentifier() && isBarrierName(FD->getName()))
      return true;
    if (isSystemFunction(SM, FD) || Depth >= 8)
      return false;
    const FunctionDecl *Def = nullptr;
    if (!FD->hasBody(Def))
      return false;
    auto It = Memo.find(Def);
    if (It != Memo.end())
      return It->second;
    Memo[Def] = false; // Recursion guard.
    BarrierFinder Sub(SM, Depth + 1, Memo);
    Sub.TraverseStmt(Def->getBody());
    Memo[Def] = Sub.Found;
    return Sub.Found;
  }

  const SourceManager &SM;
  unsigned Depth;
  DenseMap<const FunctionDecl *, bool> &Memo;
  bool Found = false;
};

} // namespace

bool isBarrierCall(const SourceManager &SM, const Stmt *S) {
  DenseMap<const FunctionDecl *, bool> Memo;
  BarrierFinder BF(SM, 0, Memo);
  if (const auto *CE = dyn_cast_or_null<CallExpr>(S))
    return BF.callIsBarrier(CE);
  if (const auto *AS = dyn_cast_or_null<GCCAsmStmt>(S)) {
    BF.VisitGCCAsmStmt(const_cast<GCCAsmStmt *>(AS));
    return BF.Found;
  }
  return false;
}

bool isSyncthreadsCall(const Stmt *S) {
  const auto *CE = dyn_cast_or_null<CallExpr>(S);
  const FunctionDecl *FD = CE ? CE->getDirectCallee() : nullptr;
  return FD && CE->getNumArgs() == 0 && FD->getIdentifier() &&
         FD->getName() == "__syncthreads";
}

} // namespace cudaidiom
} // namespace astra
