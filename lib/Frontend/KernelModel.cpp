//===- KernelModel.cpp ----------------------------------------------------===//
#include "astra/Frontend/KernelModel.h"
#include "astra/Analysis/PointerAccess.h"
#include "astra/Frontend/LaunchFacts.h"

#include "clang/AST/Attr.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/Mangle.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace clang;
using namespace llvm;

namespace astra {

std::string SourcePos::str() const {
  return File + ":" + std::to_string(Line) + ":" + std::to_string(Column);
}

std::string displayPath(StringRef Path) {
  SmallString<256> Abs(Path);
  sys::fs::make_absolute(Abs);
  sys::path::remove_dots(Abs, /*remove_dot_dot=*/true);
  SmallString<256> Cwd;
  if (!sys::fs::current_path(Cwd)) {
    sys::path::remove_dots(Cwd, true);
    StringRef A(Abs);
    if (A.consume_front(Cwd) && (A.empty() || sys::path::is_separator(A[0]))) {
      A = A.ltrim("/");
      if (!A.empty())
        return A.str();
    }
  }
  return std::string(Abs);
}

SourcePos makePos(const SourceManager &SM, SourceLocation Loc) {
  SourcePos P;
  if (Loc.isInvalid())
    return P;
  // A name that is a macro argument is shown where it is spelled; anything
  // else from a macro, at the macro's expansion.
  SourceLocation E = SM.getFileLoc(Loc);
  PresumedLoc PL = SM.getPresumedLoc(E, /*UseLineDirectives=*/false);
  if (PL.isInvalid())
    return P;
  P.File = displayPath(PL.getFilename());
  P.Line = PL.getLine();
  P.Column = PL.getColumn();
  return P;
}

std::string mangledName(ASTContext &Ctx, const FunctionDecl *FD) {
  std::unique_ptr<MangleContext> MC(Ctx.createMangleContext());
  std::string S;
  raw_string_ostream OS(S);
  if (MC->shouldMangleDeclName(FD))
    MC->mangleName(GlobalDecl(FD), OS);
  else
    OS << FD->getName();
  return S;
}

std::string sourceText(const ASTContext &Ctx, SourceRange R) {
  const SourceManager &SM = Ctx.getSourceManager();
  CharSourceRange CR = Lexer::makeFileCharRange(
      CharSourceRange::getTokenRange(R), SM, Ctx.getLangOpts());
  if (CR.isInvalid())
    return "";
  return Lexer::getSourceText(CR, SM, Ctx.getLangOpts()).str();
}

static std::string typeText(const ASTContext &Ctx, QualType T) {
  PrintingPolicy PP(Ctx.getLangOpts());
  PP.SuppressTagKeyword = true;
  return T.getAsString(PP);
}

/// Name of the outermost macro whose expansion produced \p Loc, if any.
static std::string outermostMacro(const ASTContext &Ctx, SourceLocation Loc) {
  const SourceManager &SM = Ctx.getSourceManager();
  std::string Name;
  while (Loc.isMacroID()) {
    StringRef N = Lexer::getImmediateMacroName(Loc, SM, Ctx.getLangOpts());
    if (!N.empty())
      Name = N.str();
    Loc = SM.getImmediateMacroCallerLoc(Loc);
  }
  return Name;
}

static bool isUserCode(const SourceManager &SM, SourceLocation Loc) {
  return Loc.isValid() && !SM.isInSystemHeader(SM.getExpansionLoc(Loc));
}

namespace {

/// Finds kernels and launch sites in one walk over user code.
class KernelFinder : public RecursiveASTVisitor<KernelFinder> {
public:
  explicit KernelFinder(ASTContext &Ctx) : Ctx(Ctx), SM(Ctx.getSourceManager()) {}

  bool TraverseDecl(Decl *D) {
    if (!D)
      return true;
    if (!isa<TranslationUnitDecl>(D) && !isUserCode(SM, D->getLocation()))
      return true;
    if (auto *FD = dyn_cast<FunctionDecl>(D)) {
      const FunctionDecl *Saved = CurrentFunction;
      CurrentFunction = FD;
      bool R = RecursiveASTVisitor::TraverseDecl(D);
      CurrentFunction = Saved;
      return R;
    }
    return RecursiveASTVisitor::TraverseDecl(D);
  }

  bool VisitFunctionDecl(FunctionDecl *FD) {
    if (!FD->hasAttr<CUDAGlobalAttr>() || !FD->doesThisDeclarationHaveABody())
      return true;
    if (FD->isTemplateInstantiation() ||
        FD->getTemplatedKind() ==
            FunctionDecl::TK_FunctionTemplateSpecialization)
      return true; // Reported under its template.
    Kernels.push_back(FD);
    return true;
  }

  bool VisitCUDAKernelCallExpr(CUDAKernelCallExpr *E) {
    Launches.push_back({E, CurrentFunction});
    return true;
  }

  bool VisitCallExpr(CallExpr *E) {
    const Expr *F = nullptr;
    if (!isa<CUDAKernelCallExpr>(E) && launchApiCall(E, F))
      ApiLaunches.push_back({E, CurrentFunction});
    return true;
  }

  ASTContext &Ctx;
  SourceManager &SM;
  const FunctionDecl *CurrentFunction = nullptr;
  std::vector<const FunctionDecl *> Kernels;
  std::vector<std::pair<const CUDAKernelCallExpr *, const FunctionDecl *>>
      Launches;
  std::vector<std::pair<const CallExpr *, const FunctionDecl *>> ApiLaunches;
};

/// Collects user-code functions called from a body, transitively.
class CalleeCollector : public RecursiveASTVisitor<CalleeCollector> {
public:
  CalleeCollector(ASTContext &Ctx, std::vector<DeviceCallee> &Out)
      : Ctx(Ctx), Out(Out) {}

  void addBody(const FunctionDecl *FD) {
    if (FD && FD->getBody())
      TraverseStmt(FD->getBody());
  }

  bool VisitCallExpr(CallExpr *E) {
    note(E->getDirectCallee());
    return true;
  }
  bool VisitCXXConstructExpr(CXXConstructExpr *E) {
    note(E->getConstructor());
    return true;
  }
  bool VisitDeclRefExpr(DeclRefExpr *E) {
    // Covers calls in dependent code, where the callee is not yet resolved
    // but the name is bound to a function.
    if (auto *FD = dyn_cast<FunctionDecl>(E->getDecl()))
      note(FD);
    return true;
  }
  bool VisitUnresolvedLookupExpr(UnresolvedLookupExpr *E) {
    for (NamedDecl *D : E->decls()) {
      if (auto *FTD = dyn_cast<FunctionTemplateDecl>(D))
        note(FTD->getTemplatedDecl());
      else if (auto *FD = dyn_cast<FunctionDecl>(D))
        note(FD);
    }
    return true;
  }

private:
  void note(const FunctionDecl *FD) {
    if (!FD)
      return;
    const FunctionDecl *Pattern = FD;
    if (const FunctionDecl *P = FD->getTemplateInstantiationPattern())
      Pattern = P;
    const FunctionDecl *Def = nullptr;
    if (!Pattern->hasBody(Def))
      return;
    if (!isUserCode(Ctx.getSourceManager(), Def->getLocation()))
      return;
    if (Def->hasAttr<CUDAGlobalAttr>())
      return;
    if (!Seen.insert(Def->getCanonicalDecl()).second)
      return;
    PrintingPolicy PP(Ctx.getLangOpts());
    Out.push_back({Def->getQualifiedNameAsString(),
                   makePos(Ctx.getSourceManager(), Def->getLocation()), Def});
    addBody(Def);
    // Instantiations carry resolved calls that dependent code does not.
    if (FD != Def)
      addBody(FD);
  }

  ASTContext &Ctx;
  std::vector<DeviceCallee> &Out;
  SmallPtrSet<const Decl *, 16> Seen;
};

} // namespace

/// The kernel a launch expression calls, as the pattern definition.
static const FunctionDecl *launchedKernel(const CUDAKernelCallExpr *E,
                                          std::string *Name) {
  if (const FunctionDecl *FD = E->getDirectCallee()) {
    if (const FunctionDecl *P = FD->getTemplateInstantiationPattern())
      FD = P;
    *Name = FD->getQualifiedNameAsString();
    const FunctionDecl *Def = nullptr;
    return FD->hasBody(Def) ? Def : FD;
  }
  const Expr *Callee = E->getCallee()->IgnoreImplicit();
  if (auto *ULE = dyn_cast<UnresolvedLookupExpr>(Callee)) {
    *Name = ULE->getName().getAsString();
    for (NamedDecl *D : ULE->decls())
      if (auto *FTD = dyn_cast<FunctionTemplateDecl>(D))
        return FTD->getTemplatedDecl();
      else if (auto *FD = dyn_cast<FunctionDecl>(D))
        return FD;
  }
  if (auto *DRE = dyn_cast<DeclRefExpr>(Callee))
    if (auto *FD = dyn_cast<FunctionDecl>(DRE->getDecl())) {
      *Name = FD->getQualifiedNameAsString();
      return FD;
    }
  return nullptr;
}

static std::string explicitTemplateArgs(const ASTContext &Ctx,
                                        const CUDAKernelCallExpr *E) {
  const Expr *Callee = E->getCallee()->IgnoreImplicit();
  SourceLocation L, R;
  if (auto *DRE = dyn_cast<DeclRefExpr>(Callee)) {
    if (!DRE->hasExplicitTemplateArgs())
      return "";
    L = DRE->getLAngleLoc();
    R = DRE->getRAngleLoc();
  } else if (auto *ULE = dyn_cast<UnresolvedLookupExpr>(Callee)) {
    if (!ULE->hasExplicitTemplateArgs())
      return "";
    L = ULE->getLAngleLoc();
    R = ULE->getRAngleLoc();
  } else {
    return "";
  }
  return sourceText(Ctx, SourceRange(L, R));
}

static std::optional<std::string> configArg(const ASTContext &Ctx,
                                            const CallExpr *Config, unsigned I) {
  if (!Config || I >= Config->getNumArgs())
    return std::nullopt;
  const Expr *A = Config->getArg(I);
  if (isa<CXXDefaultArgExpr>(A))
    return std::nullopt;
  std::string T = sourceText(Ctx, A->getSourceRange());
  if (T.empty())
    return std::nullopt;
  return T;
}

std::vector<KernelInfo> collectKernels(ASTContext &Ctx) {
  KernelFinder Finder(Ctx);
  Finder.TraverseDecl(Ctx.getTranslationUnitDecl());
  const SourceManager &SM = Ctx.getSourceManager();

  std::vector<KernelInfo> Result;
  DenseMap<const Decl *, size_t> Index;
  for (const FunctionDecl *FD : Finder.Kernels) {
    KernelInfo K;
    K.Decl = FD;
    K.Name = FD->getNameAsString();
    K.QualifiedName = FD->getQualifiedNameAsString();
    K.Pos = makePos(SM, FD->getLocation());
    K.InMainFile = SM.isInMainFile(SM.getExpansionLoc(FD->getLocation()));
    K.Macro = outermostMacro(Ctx, FD->getLocation());
    if (K.Macro.empty() && FD->getBody())
      K.Macro = outermostMacro(Ctx, FD->getBody()->getBeginLoc());
    if (const auto *LB = FD->getAttr<CUDALaunchBoundsAttr>()) {
      K.LaunchBounds = sourceText(Ctx, LB->getMaxThreads()->getSourceRange());
      if (LB->getMinBlocks())
        K.LaunchBounds +=
            ", " + sourceText(Ctx, LB->getMinBlocks()->getSourceRange());
    }

    PointerWriteInfo Writes = analyzePointerWrites(Ctx, FD);
    for (const ParmVarDecl *P : FD->parameters()) {
      KernelParam KP;
      KP.Index = P->getFunctionScopeIndex();
      KP.Name = P->getNameAsString();
      QualType T = P->getType();
      KP.Type = typeText(Ctx, T);
      if (T->isPointerType()) {
        KP.IsPointer = true;
        QualType Pointee = T->getPointeeType();
        KP.PointeeType = typeText(Ctx, Pointee);
        KP.PointeeConst = Pointee.isConstQualified();
        KP.Restrict = T.isRestrictQualified();
        KP.Written = Writes.isWritten(P);
      }
      K.Params.push_back(std::move(KP));
    }

    if (const FunctionTemplateDecl *FTD = FD->getDescribedFunctionTemplate()) {
      for (const NamedDecl *TP : *FTD->getTemplateParameters()) {
        TemplateParam T;
        T.Name = TP->getNameAsString();
        T.Text = sourceText(Ctx, TP->getSourceRange());
        if (isa<TemplateTypeParmDecl>(TP))
          T.Kind = "type";
        else if (isa<NonTypeTemplateParmDecl>(TP))
          T.Kind = "non-type";
        else
          T.Kind = "template";
        K.TemplateParams.push_back(std::move(T));
      }
      PrintingPolicy PP(Ctx.getLangOpts());
      PP.SuppressTagKeyword = true;
      for (const FunctionDecl *Spec : FTD->specializations()) {
        Instantiation I;
        std::string S;
        raw_string_ostream OS(S);
        Spec->getNameForDiagnostic(OS, PP, /*Qualified=*/false);
        I.Name = S;
        I.MangledName = mangledName(Ctx, Spec);
        TemplateSpecializationKind TSK = Spec->getTemplateSpecializationKind();
        I.Explicit = TSK == TSK_ExplicitSpecialization ||
                     TSK == TSK_ExplicitInstantiationDefinition ||
                     TSK == TSK_ExplicitInstantiationDeclaration;
        K.Instantiations.push_back(std::move(I));
      }
    } else {
      K.MangledName = mangledName(Ctx, FD);
    }

    CalleeCollector CC(Ctx, K.Callees);
    CC.addBody(FD);
    if (const FunctionTemplateDecl *FTD = FD->getDescribedFunctionTemplate())
      for (const FunctionDecl *Spec : FTD->specializations())
        CC.addBody(Spec);

    Index[FD->getCanonicalDecl()] = Result.size();
    Result.push_back(std::move(K));
  }

  for (auto &[E, Caller] : Finder.Launches) {
    std::string Name;
    const FunctionDecl *Target = launchedKernel(E, &Name);
    auto It = Target ? Index.find(Target->getCanonicalDecl()) : Index.end();
    if (It == Index.end()) {
      // A kernel declared here but defined elsewhere: match by name.
      for (size_t I = 0; I < Result.size(); ++I)
        if (Result[I].QualifiedName == Name) {
          It = Index.find(Result[I].Decl->getCanonicalDecl());
          break;
        }
    }
    if (It == Index.end())
      continue;
    LaunchSite L;
    L.Pos = makePos(SM, E->getBeginLoc());
    L.Caller = Caller ? Caller->getQualifiedNameAsString() : "";
    L.TemplateArgs = explicitTemplateArgs(Ctx, E);
    const CallExpr *Config = E->getConfig();
    L.Grid = configArg(Ctx, Config, 0).value_or("");
    L.Block = configArg(Ctx, Config, 1).value_or("");
    L.Shmem = configArg(Ctx, Config, 2);
    L.Stream = configArg(Ctx, Config, 3);
    for (const Expr *A : E->arguments())
      if (!isa<CXXDefaultArgExpr>(A))
        L.Args.push_back(sourceText(Ctx, A->getSourceRange()));
    L.InMacro = E->getBeginLoc().isMacroID() || E->getEndLoc().isMacroID();
    if (!L.InMacro) {
      L.BeginOffset = SM.getFileOffset(E->getBeginLoc());
      L.EndOffset = SM.getFileOffset(Lexer::getLocForEndOfToken(
          E->getEndLoc(), 0, SM, Ctx.getLangOpts()));
    }
    Result[It->second].LaunchSites.push_back(std::move(L));
  }
  for (auto &[E, Caller] : Finder.ApiLaunches) {
    const Expr *F = nullptr;
    auto Api = launchApiCall(E, F);
    const auto *DRE = dyn_cast_or_null<DeclRefExpr>(F);
    const auto *FD = DRE ? dyn_cast<FunctionDecl>(DRE->getDecl()) : nullptr;
    if (!FD)
      continue;
    if (const FunctionDecl *P = FD->getTemplateInstantiationPattern())
      FD = P;
    auto It = Index.find(FD->getCanonicalDecl());
    if (It == Index.end())
      continue;
    LaunchSite L;
    L.Api = launchApiName(*Api).str();
    L.Pos = makePos(SM, E->getBeginLoc());
    L.Caller = Caller ? Caller->getQualifiedNameAsString() : "";
    if (*Api == LaunchApi::LaunchKernelEx) {
      L.Grid = sourceText(Ctx, E->getArg(0)->getSourceRange());
      for (unsigned I = 2; I < E->getNumArgs(); ++I)
        L.Args.push_back(sourceText(Ctx, E->getArg(I)->getSourceRange()));
    } else if (E->getNumArgs() >= 3) {
      L.Grid = sourceText(Ctx, E->getArg(1)->getSourceRange());
      L.Block = sourceText(Ctx, E->getArg(2)->getSourceRange());
      if (E->getNumArgs() >= 5 && !isa<CXXDefaultArgExpr>(E->getArg(4)))
        L.Shmem = sourceText(Ctx, E->getArg(4)->getSourceRange());
      if (E->getNumArgs() >= 6 && !isa<CXXDefaultArgExpr>(E->getArg(5)))
        L.Stream = sourceText(Ctx, E->getArg(5)->getSourceRange());
    }
    L.InMacro = E->getBeginLoc().isMacroID() || E->getEndLoc().isMacroID();
    Result[It->second].LaunchSites.push_back(std::move(L));
  }
  return Result;
}

} // namespace astra
