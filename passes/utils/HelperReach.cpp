//===- HelperReach.cpp ----------------------------------------------------===//
//
// Safety argument. A helper's text is changed in place only when nothing but
// the kernel runs it: every reference to it in the translation unit is a
// direct call from the kernel (any instantiation) or from another helper
// that is itself the kernel's alone, it is defined in the main file (a
// header is compiled into other files too), it is not __host__ __device__,
// and with -fgpu-rdc it has internal linkage (other files could call it).
// Everywhere else the original stays byte for byte and the kernel gets a
// copy:
//  - the copy is the definition's text (template header included) with the
//    pass's edits, its name changed to a fresh identifier, `__host__`
//    removed (fast-math intrinsics and __ldg exist on the device only), and
//    its calls of other cloned helpers renamed; it is placed right after the
//    original (same namespace, same names in scope), with a copy of the
//    forward declaration after the original's when there is one;
//  - every call of a cloned helper that the kernel's code makes (the kernel,
//    helpers edited in place, other clones) is renamed, so the kernel runs
//    only copies; a shared helper on the way to a cloned one is cloned too;
//  - one call token names different functions in different instantiations
//    (overloads picked by T): they are cloned together under one name, and
//    overload resolution among the copies picks the copy of what it picked
//    before (the best candidate of a set is the best of any subset holding
//    it);
//  - a helper is not cloned when a copy would not behave like the original
//    for the kernel: a template with explicit specializations (a renamed
//    copy would not have them), a static variable in global memory (the
//    copy would have its own), text from a macro, a call that cannot be
//    renamed (spelled in a macro, found through a using-declaration, before
//    any declaration of the copy), a declaration other than one forward
//    declaration and the definition. Such a helper is left alone with the
//    reason when the pass would need the copy.
// Pointer parameters of helpers map to kernel parameters through the calls
// the kernel's code makes: an argument counts when it is computed from
// parameters of the caller that the caller never changes, through locals it
// never changes.
//
//===----------------------------------------------------------------------===//
#include "utils/HelperReach.h"
#include "astra/Support/TextSplice.h"
#include "utils/Mutation.h"
#include "utils/SourceText.h"

#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <algorithm>

using namespace clang;
using namespace llvm;

namespace astra {

namespace {

/// A function and all its instantiations share one key: the first
/// declaration of the function (of the pattern, for a template).
const FunctionDecl *familyOf(const FunctionDecl *FD) {
  if (const FunctionDecl *P = FD->getTemplateInstantiationPattern())
    FD = P;
  return FD->getCanonicalDecl();
}

/// A reference to a function somewhere in the translation unit.
struct FnUse {
  const FunctionDecl *In = nullptr; ///< Enclosing function; null outside.
  SourceLocation Loc;
  bool Call = false; ///< The callee of a call (not its address).
};

/// Every reference to the functions of \p Wanted in user code, with the
/// function it is in. Template instantiations are visited: their calls
/// name the instantiation they reach.
class UseCollector : public RecursiveASTVisitor<UseCollector> {
public:
  UseCollector(const SourceManager &SM,
               const DenseSet<const FunctionDecl *> &Wanted,
               DenseMap<const FunctionDecl *, std::vector<FnUse>> &Uses)
      : SM(SM), Wanted(Wanted), Uses(Uses) {}

  bool shouldVisitTemplateInstantiations() const { return true; }

  bool TraverseDecl(Decl *D) {
    if (!D)
      return true;
    SourceLocation L = D->getLocation();
    if (!isa<TranslationUnitDecl>(D) && L.isValid() &&
        SM.isInSystemHeader(SM.getExpansionLoc(L)))
      return true;
    const auto *FD = dyn_cast<FunctionDecl>(D);
    if (FD)
      Stack.push_back(FD);
    bool R = RecursiveASTVisitor::TraverseDecl(D);
    if (FD)
      Stack.pop_back();
    return R;
  }
  bool VisitCallExpr(CallExpr *CE) {
    Callees.insert(CE->getCallee()->IgnoreParenImpCasts());
    return true;
  }
  bool VisitDeclRefExpr(DeclRefExpr *E) {
    if (const auto *F = dyn_cast<FunctionDecl>(E->getDecl()))
      note(F, E, E->getLocation());
    return true;
  }
  bool VisitUnresolvedLookupExpr(UnresolvedLookupExpr *E) {
    for (const NamedDecl *D : E->decls()) {
      D = D->getUnderlyingDecl();
      if (const auto *FTD = dyn_cast<FunctionTemplateDecl>(D))
        note(FTD->getTemplatedDecl(), E, E->getNameLoc());
      else if (const auto *F = dyn_cast<FunctionDecl>(D))
        note(F, E, E->getNameLoc());
    }
    return true;
  }

private:
  void note(const FunctionDecl *F, const Expr *E, SourceLocation Loc) {
    const FunctionDecl *Key = familyOf(F);
    if (!Wanted.count(Key))
      return;
    Uses[Key].push_back(
        {Stack.empty() ? nullptr : Stack.back(), Loc, Callees.count(E) != 0});
  }

  const SourceManager &SM;
  const DenseSet<const FunctionDecl *> &Wanted;
  DenseMap<const FunctionDecl *, std::vector<FnUse>> &Uses;
  std::vector<const FunctionDecl *> Stack;
  SmallPtrSet<const Expr *, 32> Callees;
};

/// The calls in one body (a kernel's lambdas included; launches excluded).
class CallFinder : public RecursiveASTVisitor<CallFinder> {
public:
  bool VisitCallExpr(CallExpr *CE) {
    if (!isa<CUDAKernelCallExpr>(CE))
      Calls.push_back(CE);
    return true;
  }
  std::vector<const CallExpr *> Calls;
};

/// Where a declaration's text starts: its template header, else its
/// first specifier (as written in the file).
SourceLocation declBegin(const SourceManager &SM, const FunctionDecl *FD) {
  SourceLocation B = FD->getBeginLoc();
  if (const FunctionTemplateDecl *FTD = FD->getDescribedFunctionTemplate())
    B = FTD->getBeginLoc();
  return SM.getExpansionLoc(B);
}

std::string labelOf(const FunctionDecl *FD) {
  if (!FD->isTemplateInstantiation())
    return "";
  std::string Label;
  raw_string_ostream OS(Label);
  PrintingPolicy PP(FD->getASTContext().getLangOpts());
  PP.SuppressTagKeyword = true;
  FD->getNameForDiagnostic(OS, PP, /*Qualified=*/false);
  return OS.str();
}

/// The file offsets of the `__host__` tokens written between \p Begin and
/// \p End (file locations of one file).
std::vector<unsigned> hostTokens(const SourceManager &SM,
                                 const LangOptions &LO, SourceLocation Begin,
                                 SourceLocation End) {
  std::vector<unsigned> Out;
  auto [FID, BOff] = SM.getDecomposedLoc(Begin);
  unsigned EOff = SM.getFileOffset(End);
  StringRef Buf = SM.getBufferData(FID);
  Lexer L(SM.getLocForStartOfFile(FID), LO, Buf.begin(), Buf.begin() + BOff,
          Buf.end());
  Token T;
  while (true) {
    bool Eof = L.LexFromRawLexer(T);
    unsigned Off = SM.getFileOffset(T.getLocation());
    if (Off >= EOff)
      break;
    if (T.is(tok::raw_identifier) && T.getRawIdentifier() == "__host__")
      Out.push_back(Off);
    if (Eof)
      break;
  }
  return Out;
}

} // namespace

/// One helper family with what HelperReach knows about it.
struct Family : Helper {
  const FunctionDecl *Key = nullptr;
  /// The one forward declaration before the definition, if any.
  const FunctionDecl *Proto = nullptr;
  size_t FirstCall = 0; ///< Index in Impl::Calls of the first call.
  bool Visit = false;   ///< Handed to the pass.
  std::string NotCloneable; ///< Why a copy would not do; empty if it would.
  std::vector<TextEdit> Edits;
};

struct CallSite {
  const FunctionDecl *CallerBody = nullptr;
  const FunctionDecl *CallerKey = nullptr; ///< Null for the kernel.
  const CallExpr *Call = nullptr;
  const DeclRefExpr *Ref = nullptr; ///< The callee's name.
  const FunctionDecl *CalleeBody = nullptr;
  const FunctionDecl *CalleeKey = nullptr;
};

struct HelperReach::Impl {
  PassContext &PC;
  const SourceManager &SM;
  const FunctionDecl *KernelKey;
  std::vector<std::unique_ptr<Family>> Families; ///< In reach order.
  DenseMap<const FunctionDecl *, Family *> ByKey;
  std::vector<CallSite> Calls;
  DenseMap<const FunctionDecl *, const FunctionDecl *> BodyKey;
  /// The functions each call token (raw location of the callee's name)
  /// names in the bodies the kernel reaches.
  DenseMap<unsigned, SmallPtrSet<const FunctionDecl *, 2>> TokenCallees;
  /// Per helper body and parameter: the kernel parameters it points into.
  struct ParamOrigin {
    bool Seen = false, Unknown = false;
    std::set<unsigned> Kernel;
  };
  DenseMap<const FunctionDecl *, std::vector<ParamOrigin>> Origins;
  std::map<std::string, std::string> CloneNames;

  explicit Impl(PassContext &PC)
      : PC(PC), SM(PC.sourceManager()),
        KernelKey(familyOf(PC.kernel().Decl)) {}

  Family *family(const FunctionDecl *Key) const { return ByKey.lookup(Key); }

  std::string where(SourceLocation Loc) const { return posText(PC, Loc); }
  std::string fileOf(const FunctionDecl *D) const {
    return makePos(SM, D->getLocation()).File;
  }

  //===--- Reach ------------------------------------------------------===//

  void reach() {
    FileID Main = SM.getMainFileID();
    FileID KernelFile =
        SM.getFileID(SM.getExpansionLoc(PC.kernel().Decl->getLocation()));
    std::vector<const FunctionDecl *> Work;
    for (const KernelBody &B : kernelBodies(PC.kernel().Decl)) {
      BodyKey[B.FD] = nullptr;
      Work.push_back(B.FD);
    }
    DenseSet<const FunctionDecl *> Noted;
    for (size_t W = 0; W < Work.size(); ++W) {
      const FunctionDecl *Body = Work[W];
      const FunctionDecl *CallerKey = BodyKey.lookup(Body);
      CallFinder CF;
      CF.TraverseStmt(Body->getBody());
      for (const CallExpr *CE : CF.Calls) {
        const FunctionDecl *F = CE->getDirectCallee();
        // What each call token names, in every body: renaming a token
        // renames it for all of them.
        if (const auto *Ref = dyn_cast<DeclRefExpr>(
                CE->getCallee()->IgnoreParenImpCasts());
            Ref && F)
          TokenCallees[Ref->getLocation().getRawEncoding()].insert(
              familyOf(F));
        if (!F || F->getBuiltinID() || isSystemFunction(SM, F))
          continue;
        // Compiler-written members (a struct's copy assignment) are no
        // one's helpers, and a lambda's body is part of the body that
        // defines it.
        if (F->isImplicit() || F->isDefaulted())
          continue;
        if (const auto *MD = dyn_cast<CXXMethodDecl>(F);
            MD && MD->getParent()->isLambda())
          continue;
        const FunctionDecl *Def = nullptr;
        if (!F->hasBody(Def) || !Def->getBody())
          continue;
        const FunctionDecl *Key = familyOf(F);
        FileID DefFile = SM.getFileID(SM.getExpansionLoc(Def->getLocation()));
        bool Reachable = DefFile == Main || DefFile == KernelFile;
        std::string Name = F->getQualifiedNameAsString();
        SourceLocation At = CE->getBeginLoc();
        std::string Why;
        if (isa<CXXMethodDecl>(F)) {
          if (Reachable)
            Why = "'" + Name + "' is a member function; passes reach free "
                  "functions only";
        } else if (F->isOverloadedOperator()) {
          if (Reachable)
            Why = "'" + Name + "' is an operator; passes reach named free "
                  "functions only";
        } else if (!Reachable) {
          Why = "'" + Name + "' is defined in '" + fileOf(Def) +
                "', not in the file being rewritten; it is left as it is";
        } else if (F->isConstexpr()) {
          Why = "'" + Name + "' is constexpr; its body must stay usable in "
                "constant expressions";
        } else if (!F->hasAttr<CUDADeviceAttr>() ||
                   F->hasAttr<CUDAGlobalAttr>()) {
          continue;
        }
        if (isa<CXXMethodDecl>(F) || F->isOverloadedOperator() ||
            !Reachable || F->isConstexpr()) {
          if (!Why.empty() && Noted.insert(Key).second)
            PC.refused(At, "helper not rewritten: " + Why);
          continue;
        }
        Family *Fam = family(Key);
        if (!Fam) {
          auto New = std::make_unique<Family>();
          Fam = New.get();
          Fam->Key = Key;
          Key->hasBody(Fam->Def);
          Fam->Name = Key->getNameAsString();
          Fam->FirstCall = Calls.size();
          ByKey[Key] = Fam;
          Families.push_back(std::move(New));
        }
        CallSite CS;
        CS.CallerBody = Body;
        CS.CallerKey = CallerKey;
        CS.Call = CE;
        CS.Ref = dyn_cast<DeclRefExpr>(CE->getCallee()->IgnoreParenImpCasts());
        CS.CalleeBody = Def;
        CS.CalleeKey = Key;
        Calls.push_back(CS);
        if (!BodyKey.count(Def)) {
          BodyKey[Def] = Key;
          Fam->Bodies.push_back({Def, labelOf(Def)});
          Work.push_back(Def);
        }
      }
    }
  }

  //===--- Ownership --------------------------------------------------===//

  std::string callerText(const FunctionDecl *In) const {
    std::string N = "'" + In->getQualifiedNameAsString() + "'";
    if (In->hasAttr<CUDAGlobalAttr>())
      return "the kernel " + N;
    bool Device = In->hasAttr<CUDADeviceAttr>() &&
                  !In->getAttr<CUDADeviceAttr>()->isImplicit();
    if (!Device)
      return "host function " + N;
    return N;
  }

  void ownership() {
    DenseSet<const FunctionDecl *> Wanted;
    for (auto &F : Families)
      Wanted.insert(F->Key);
    DenseMap<const FunctionDecl *, std::vector<FnUse>> Uses;
    UseCollector UC(SM, Wanted, Uses);
    UC.TraverseDecl(PC.astContext().getTranslationUnitDecl());
    bool Rdc = PC.langOpts().GPURelocatableDeviceCode;

    for (auto &FP : Families) {
      Family &F = *FP;
      const FunctionDecl *Def = F.Def;
      auto Share = [&](std::string Why) {
        if (!F.Shared) {
          F.Shared = true;
          F.SharedWhy = std::move(Why);
        }
      };
      if (const auto *H = Def->getAttr<CUDAHostAttr>(); H && !H->isImplicit())
        Share("it is __host__ __device__ (host code keeps the original, and "
              "the copy is __device__ only)");
      if (SM.getFileID(SM.getExpansionLoc(Def->getLocation())) !=
          SM.getMainFileID())
        Share("it is defined in the header '" + fileOf(Def) +
              "', which other files may include");
      if (Rdc && Def->isExternallyVisible())
        Share("the file is compiled with -fgpu-rdc and '" + F.Name +
              "' has external linkage, so code in other files may call it");
      if (const FunctionTemplateDecl *FTD = Def->getDescribedFunctionTemplate())
        for (const FunctionDecl *S : FTD->specializations()) {
          TemplateSpecializationKind K = S->getTemplateSpecializationKind();
          if (K == TSK_ExplicitInstantiationDefinition ||
              K == TSK_ExplicitInstantiationDeclaration)
            Share("it is explicitly instantiated at " +
                  where(S->getPointOfInstantiation()));
        }
      for (const FnUse &U : Uses.lookup(F.Key)) {
        if (!U.Call) {
          Share("its address is taken at " + where(U.Loc));
          continue;
        }
        if (!U.In) {
          Share("it is called outside any function at " + where(U.Loc));
          continue;
        }
        const FunctionDecl *InKey = familyOf(U.In);
        if (InKey == KernelKey || family(InKey))
          continue;
        Share(callerText(U.In) + " also calls it (at " + where(U.Loc) + ")");
      }
    }
    // A helper called by a helper that is not the kernel's alone is not
    // the kernel's alone either.
    for (bool Changed = true; Changed;) {
      Changed = false;
      for (auto &FP : Families) {
        if (FP->Shared)
          continue;
        for (const FnUse &U : Uses.lookup(FP->Key)) {
          const Family *Caller = U.In ? family(familyOf(U.In)) : nullptr;
          if (Caller && Caller != FP.get() && Caller->Shared) {
            FP->Shared = true;
            FP->SharedWhy = "its caller '" + Caller->Name +
                            "' is not the kernel's alone (" +
                            Caller->SharedWhy + ")";
            Changed = true;
            break;
          }
        }
      }
    }
  }

  //===--- Cloning ----------------------------------------------------===//

  /// Where the copy is declared: after the forward declaration, else after
  /// the definition.
  SourceLocation declaredAt(const Family &F) const {
    const FunctionDecl *D = F.Proto ? F.Proto : F.Def;
    return SM.getExpansionLoc(D->getEndLoc());
  }

  bool inDefinition(const Family &F, SourceLocation Loc) const {
    SourceLocation B = declBegin(SM, F.Def);
    SourceLocation E = SM.getExpansionLoc(F.Def->getEndLoc());
    Loc = SM.getExpansionLoc(Loc);
    return !SM.isBeforeInTranslationUnit(Loc, B) &&
           !SM.isBeforeInTranslationUnit(E, Loc);
  }

  /// Whether \p D's text (from its template header or first specifier to
  /// its last token) is plain text of one file.
  bool plainText(const FunctionDecl *D) const {
    SourceLocation B = declBegin(SM, D);
    SourceLocation N = D->getLocation();
    SourceLocation E = D->getEndLoc();
    if (N.isMacroID() || E.isMacroID() || B.isInvalid())
      return false;
    FileID FB = SM.getFileID(B);
    return FB == SM.getFileID(N) && FB == SM.getFileID(E) &&
           !SM.isInSystemHeader(B);
  }

  std::string localCloneProblem(Family &F) {
    const FunctionDecl *Def = F.Def;
    if (!plainText(Def))
      return "its text comes from a macro expansion";
    if (const FunctionTemplateDecl *FTD = Def->getDescribedFunctionTemplate())
      for (const FunctionDecl *S : FTD->specializations())
        if (S->getTemplateSpecializationKind() == TSK_ExplicitSpecialization)
          return "it has an explicit specialization (at " +
                 where(S->getLocation()) +
                 "), which a renamed copy would not have";
    for (const FunctionDecl *R : Def->redecls()) {
      if (R == Def)
        continue;
      if (F.Proto)
        return "it is declared more than once before its definition";
      F.Proto = R;
    }
    if (F.Proto) {
      if (!plainText(F.Proto) ||
          SM.getFileID(declBegin(SM, F.Proto)) !=
              SM.getFileID(declBegin(SM, Def)) ||
          !SM.isBeforeInTranslationUnit(F.Proto->getLocation(),
                                        Def->getLocation()))
        return "its forward declaration (at " +
               where(F.Proto->getLocation()) +
               ") is not plain text before the definition in the same file";
      if (Lexer::findLocationAfterToken(SM.getExpansionLoc(
                                            F.Proto->getEndLoc()),
                                        tok::semi, SM, PC.langOpts(), false)
              .isInvalid())
        return "its forward declaration does not end in ';'";
    }
    // A static variable in global memory would have a second instance.
    struct StaticFinder : RecursiveASTVisitor<StaticFinder> {
      const VarDecl *Found = nullptr;
      bool VisitVarDecl(VarDecl *V) {
        if (!Found && V->isStaticLocal() && !V->hasAttr<CUDASharedAttr>() &&
            !V->getType().isConstQualified() && !V->isConstexpr())
          Found = V;
        return true;
      }
    } SF;
    SF.TraverseStmt(Def->getBody());
    if (SF.Found)
      return "it declares the static variable '" +
             SF.Found->getNameAsString() +
             "', of which a copy would have its own instance";
    // __host__ must be removable where it is written.
    for (const FunctionDecl *D : {F.Proto, Def}) {
      if (!D)
        continue;
      const auto *H = D->getAttr<CUDAHostAttr>();
      if (!H || H->isImplicit() || H->isInherited())
        continue;
      if (hostTokens(SM, PC.langOpts(), declBegin(SM, D), D->getLocation())
              .empty())
        return "'__host__' is spelled through a macro, and the copy must be "
               "__device__ only";
    }
    // Every call the kernel's code makes of it must be renamable.
    SourceLocation At = declaredAt(F);
    for (const CallSite &CS : Calls) {
      if (CS.CalleeKey != F.Key)
        continue;
      std::string Pos = where(CS.Call->getBeginLoc());
      if (!CS.Ref)
        return "the call at " + Pos + " does not name it";
      if (isa<UsingShadowDecl>(CS.Ref->getFoundDecl()))
        return "the call at " + Pos + " names it through a using-declaration";
      if (!makeTokenEdit(PC, SourceRange(CS.Ref->getLocation()), "x"))
        return "the call at " + Pos + " is spelled inside a macro expansion";
      for (const FunctionDecl *Other :
           TokenCallees.lookup(CS.Ref->getLocation().getRawEncoding()))
        if (!family(Other))
          return "the call at " + Pos + " reaches '" +
                 Other->getQualifiedNameAsString() +
                 "' in another instantiation, which is not copied with it";
      if (!inDefinition(F, CS.Ref->getLocation()) &&
          !SM.isBeforeInTranslationUnit(At, SM.getExpansionLoc(
                                                CS.Ref->getLocation())))
        return "the call at " + Pos +
               " comes before the point where a copy would be declared";
    }
    return "";
  }

  /// The helpers that are cloned when \p Seeds are: shared callers in the
  /// kernel's code, and the other functions one call token names in other
  /// instantiations. With \p Why, the reason each joined.
  std::vector<Family *>
  cloneClosure(std::vector<Family *> Seeds,
               std::map<const Family *, std::string> *Why = nullptr) const {
    std::vector<Family *> Out;
    DenseSet<const Family *> In;
    auto Add = [&](Family *F, std::string Reason) {
      if (!In.insert(F).second)
        return;
      Out.push_back(F);
      if (Why)
        (*Why)[F] = std::move(Reason);
    };
    for (Family *F : Seeds)
      Add(F, "because " + F->SharedWhy);
    for (size_t I = 0; I < Out.size(); ++I) {
      const Family *M = Out[I];
      for (const CallSite &CS : Calls) {
        if (CS.CalleeKey != M->Key)
          continue;
        if (CS.CallerKey) {
          Family *Caller = family(CS.CallerKey);
          if (Caller->Shared)
            Add(Caller, "because it calls '" + M->Name + "' (at " +
                            where(CS.Call->getBeginLoc()) +
                            "), which is cloned, and " + Caller->SharedWhy);
        }
        if (!CS.Ref)
          continue;
        SourceLocation L = CS.Ref->getLocation();
        for (const FunctionDecl *Other :
             TokenCallees.lookup(L.getRawEncoding()))
          if (Other != M->Key)
            if (Family *S = family(Other))
              Add(S, "because the call at " + where(L) +
                         " reaches it in one instantiation and the cloned '" +
                         M->Name + "' in another");
      }
    }
    return Out;
  }

  void decide() {
    for (auto &FP : Families)
      FP->NotCloneable = localCloneProblem(*FP);
    const KernelInfo &K = PC.kernel();
    std::string Suffix = "_astra_" + K.Decl->getNameAsString();
    unsigned Same = 0, Index = 0;
    for (const KernelInfo &O : PC.allKernels())
      if (O.Name == K.Name) {
        ++Same;
        if (O.Decl == K.Decl)
          Index = Same;
      }
    if (Same > 1)
      Suffix += "_" + std::to_string(Index);
    for (auto &FP : Families) {
      Family &F = *FP;
      std::string Base = F.Name + Suffix;
      auto It = CloneNames.find(Base);
      if (It == CloneNames.end())
        It = CloneNames
                 .emplace(Base, freshIdentifier(PC.astContext(), Base))
                 .first;
      F.CloneName = It->second;
      const CallSite &First = Calls[F.FirstCall];
      std::string From =
          First.CallerKey
              ? "'" + family(First.CallerKey)->Name + "' at " +
                    where(First.Call->getBeginLoc())
              : "the kernel at " + where(First.Call->getBeginLoc());
      F.Prefix = "in helper '" + F.Name + "' (called from " + From;
      if (!F.Shared) {
        F.Visit = true;
        F.Prefix += "): ";
        continue;
      }
      std::string Problem;
      for (const Family *M : cloneClosure({&F}))
        if (!M->NotCloneable.empty()) {
          Problem = M == &F ? M->NotCloneable
                            : "it would be cloned with '" + M->Name +
                                  "', and " + M->NotCloneable;
          break;
        }
      if (!Problem.empty()) {
        PC.refused(First.Call->getBeginLoc(),
                   "helper '" + F.Name + "' is left as it is: " +
                       F.SharedWhy + ", so a change would go into a copy "
                       "for the kernel, but " + Problem);
        continue;
      }
      F.Visit = true;
      // True whether or not this site changes: the copy is made when any
      // does.
      F.Prefix += "; its changes go into a copy, '" + F.CloneName +
                  "', because " + F.SharedWhy + "): ";
    }
  }

  //===--- Parameters -------------------------------------------------===//

  /// The parameters of \p Body that pointer \p E points into: \p E is
  /// computed from them by pointer arithmetic, casts, `&p[i]` and `?:`,
  /// directly or through locals, and \p Body changes none of them. False
  /// for anything else (a pointer loaded from memory, `ptrs[0]`, points
  /// wherever that memory says, not into `ptrs`).
  bool argRoots(const FunctionDecl *Body, const Expr *E,
                SmallVectorImpl<unsigned> &Out, unsigned Depth = 0) const {
    if (!E || Depth > 16)
      return false;
    E = E->IgnoreParens();
    if (const auto *C = dyn_cast<CastExpr>(E)) {
      switch (C->getCastKind()) {
      case CK_LValueToRValue: // Reading the pointer variable.
      case CK_NoOp:           // Adding const.
      case CK_BitCast:        // To another pointer type, same buffer.
        return argRoots(Body, C->getSubExpr(), Out, Depth + 1);
      default:
        return false;
      }
    }
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
      const auto *V = dyn_cast<VarDecl>(DRE->getDecl());
      if (!V || !V->getType()->isPointerType() ||
          mayModify(Body->getBody(), V))
        return false;
      if (const auto *P = dyn_cast<ParmVarDecl>(V)) {
        if (P->getDeclContext() != Body)
          return false;
        Out.push_back(P->getFunctionScopeIndex());
        return true;
      }
      return V->hasLocalStorage() && V->getInit() &&
             argRoots(Body, V->getInit(), Out, Depth + 1);
    }
    if (const auto *BO = dyn_cast<BinaryOperator>(E)) {
      if (!BO->isAdditiveOp())
        return false;
      const Expr *Ptr = BO->getLHS()->getType()->isPointerType()
                            ? BO->getLHS()
                            : BO->getRHS();
      return Ptr->getType()->isPointerType() &&
             argRoots(Body, Ptr, Out, Depth + 1);
    }
    if (const auto *UO = dyn_cast<UnaryOperator>(E)) {
      if (UO->getOpcode() != UO_AddrOf)
        return false;
      const Expr *Sub = UO->getSubExpr()->IgnoreParens();
      if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(Sub))
        return ASE->getBase()->getType()->isPointerType() &&
               argRoots(Body, ASE->getBase(), Out, Depth + 1);
      if (const auto *D = dyn_cast<UnaryOperator>(Sub))
        return D->getOpcode() == UO_Deref &&
               argRoots(Body, D->getSubExpr(), Out, Depth + 1);
      return false;
    }
    if (const auto *CO = dyn_cast<ConditionalOperator>(E))
      return argRoots(Body, CO->getTrueExpr(), Out, Depth + 1) &&
             argRoots(Body, CO->getFalseExpr(), Out, Depth + 1);
    return false;
  }

  void parameters() {
    unsigned KernelParams = PC.kernel().Decl->getNumParams();
    for (bool Changed = true; Changed;) {
      Changed = false;
      for (const CallSite &CS : Calls) {
        std::vector<ParamOrigin> &To = Origins[CS.CalleeBody];
        To.resize(CS.CalleeBody->getNumParams());
        for (unsigned I = 0; I < CS.CalleeBody->getNumParams(); ++I) {
          if (!CS.CalleeBody->getParamDecl(I)->getType()->isPointerType() ||
              To[I].Unknown)
            continue;
          ParamOrigin New;
          New.Seen = true;
          SmallVector<unsigned, 4> Roots;
          if (I >= CS.Call->getNumArgs() ||
              !argRoots(CS.CallerBody, CS.Call->getArg(I), Roots)) {
            New.Unknown = true;
          } else if (!CS.CallerKey) {
            for (unsigned R : Roots)
              if (R < KernelParams &&
                  CS.CallerBody->getNumParams() == KernelParams)
                New.Kernel.insert(R);
              else
                New.Unknown = true;
          } else {
            auto It = Origins.find(CS.CallerBody);
            for (unsigned R : Roots) {
              if (It == Origins.end() || R >= It->second.size() ||
                  !It->second[R].Seen) {
                New.Seen = false; // Not known yet: the next round.
                break;
              }
              if (It->second[R].Unknown)
                New.Unknown = true;
              New.Kernel.insert(It->second[R].Kernel.begin(),
                                It->second[R].Kernel.end());
            }
          }
          if (!New.Seen)
            continue;
          ParamOrigin &O = To[I];
          bool Grew = !O.Seen || (New.Unknown && !O.Unknown);
          O.Seen = true;
          O.Unknown |= New.Unknown;
          for (unsigned K : New.Kernel)
            Grew |= O.Kernel.insert(K).second;
          Changed |= Grew;
        }
      }
    }
  }

  //===--- Commit -----------------------------------------------------===//

  /// The text of \p D with \p Edits applied (file edits inside it) and its
  /// name and `__host__` edited; false when an edit falls outside it or
  /// two overlap.
  bool cloneText(const FunctionDecl *D, const std::string &Name,
                 const std::vector<TextEdit> &Edits, std::string &Out) const {
    SourceLocation B = declBegin(SM, D);
    SourceLocation E = Lexer::getLocForEndOfToken(
        SM.getExpansionLoc(D->getEndLoc()), 0, SM, PC.langOpts());
    auto [FID, BOff] = SM.getDecomposedLoc(B);
    unsigned EOff = SM.getFileOffset(E);
    StringRef Buf = SM.getBufferData(FID);
    std::vector<Splice> Slice;
    for (const TextEdit &T : Edits) {
      auto [TF, TOff] = SM.getDecomposedLoc(T.Begin);
      if (TF != FID || TOff < BOff || TOff + T.Length > EOff)
        return false;
      Slice.push_back({TOff, T.Length, T.Text});
    }
    unsigned NameOff = SM.getFileOffset(D->getLocation());
    Slice.push_back({NameOff, unsigned(D->getName().size()), Name});
    for (unsigned H :
         hostTokens(SM, PC.langOpts(), B, D->getLocation())) {
      unsigned Len = 8; // "__host__"
      while (H + Len < Buf.size() && (Buf[H + Len] == ' ' ||
                                      Buf[H + Len] == '\t'))
        ++Len;
      Slice.push_back({H, Len, ""});
    }
    std::optional<std::string> Text =
        spliceText(Buf, BOff, EOff, std::move(Slice));
    if (!Text)
      return false;
    Out = std::move(*Text);
    return true;
  }

  /// An insertion of \p Text on its own lines after the token at \p Last
  /// (after the end of its line when only blanks or a comment follow).
  TextEdit insertAfter(SourceLocation AfterLast, const std::string &Text) const {
    auto [FID, Off] = SM.getDecomposedLoc(AfterLast);
    StringRef Buf = SM.getBufferData(FID);
    size_t P = Off;
    while (P < Buf.size() && (Buf[P] == ' ' || Buf[P] == '\t'))
      ++P;
    if (Buf.substr(P).starts_with("//"))
      P = std::min(Buf.find('\n', P), Buf.size());
    if (P < Buf.size() && Buf[P] == '\r')
      ++P;
    if (P < Buf.size() && Buf[P] == '\n')
      return {SM.getComposedLoc(FID, P + 1), 0, "\n" + Text + "\n"};
    return {AfterLast, 0, "\n\n" + Text + "\n"};
  }
};

HelperReach::HelperReach(PassContext &PC)
    : PC(PC), I(std::make_unique<Impl>(PC)) {
  I->reach();
  if (I->Families.empty())
    return;
  I->ownership();
  I->decide();
  I->parameters();
}

HelperReach::~HelperReach() = default;

std::vector<Helper *> HelperReach::helpers() {
  std::vector<Helper *> Out;
  for (auto &F : I->Families)
    if (F->Visit)
      Out.push_back(F.get());
  return Out;
}

HelperReach::Scope::Scope(PassContext &PC, const Helper &H) : PC(PC) {
  PC.setMessagePrefix(H.Prefix);
}
HelperReach::Scope::~Scope() { PC.setMessagePrefix(""); }

std::optional<SmallVector<unsigned, 2>>
HelperReach::kernelParams(const FunctionDecl *Body, unsigned Param) const {
  auto It = I->Origins.find(Body);
  if (It == I->Origins.end() || Param >= It->second.size())
    return std::nullopt;
  const Impl::ParamOrigin &O = It->second[Param];
  if (!O.Seen || O.Unknown || O.Kernel.empty())
    return std::nullopt;
  return SmallVector<unsigned, 2>(O.Kernel.begin(), O.Kernel.end());
}

void HelperReach::setEdits(const Helper &H, const EditSet &ES) {
  static_cast<Family &>(const_cast<Helper &>(H)).Edits = ES.edits();
}

bool HelperReach::commit(const EditSet &KernelEdits) {
  const SourceManager &SM = PC.sourceManager();
  // The shared helpers the pass changed, and what must be cloned with them.
  std::vector<Family *> Seeds;
  for (auto &F : I->Families)
    if (F->Visit && F->Shared && !F->Edits.empty())
      Seeds.push_back(F.get());
  std::map<const Family *, std::string> Why;
  std::vector<Family *> Cloned = I->cloneClosure(Seeds, &Why);
  DenseSet<const FunctionDecl *> IsCloned;
  for (const Family *F : Cloned)
    IsCloned.insert(F->Key);

  // Calls of cloned helpers in the kernel's code now name the copies: in
  // the kernel and the helpers edited in place (with a message), in the
  // copies (in their text).
  std::vector<TextEdit> InPlace = KernelEdits.edits();
  std::map<const FunctionDecl *, std::vector<TextEdit>> CloneEdits;
  std::set<std::pair<const FunctionDecl *, unsigned>> Renamed;
  std::vector<std::pair<const CallSite *, TextEdit>> Redirects;
  for (const CallSite &CS : I->Calls) {
    if (!IsCloned.count(CS.CalleeKey))
      continue;
    SourceLocation L = CS.Ref->getLocation();
    if (!Renamed.insert({CS.CallerKey, L.getRawEncoding()}).second)
      continue;
    std::optional<TextEdit> E = makeTokenEdit(
        PC, SourceRange(L), I->family(CS.CalleeKey)->CloneName);
    if (!E) { // Checked by localCloneProblem.
      PC.refused(L, "the call cannot be renamed; only the kernel itself is "
                    "changed");
      return KernelEdits.commit(PC);
    }
    if (CS.CallerKey && IsCloned.count(CS.CallerKey))
      CloneEdits[CS.CallerKey].push_back(*E);
    else
      Redirects.push_back({&CS, *E});
  }

  EditSet All;
  bool Ok = true;
  for (const TextEdit &E : InPlace)
    Ok &= All.addSite(SM, {E});
  for (auto &F : I->Families)
    if (F->Visit && !IsCloned.count(F->Key))
      for (const TextEdit &E : F->Edits)
        Ok &= All.addSite(SM, {E});
  // Messages are recorded once every edit is known to fit.
  struct Message {
    std::string Prefix;
    SourceLocation Loc;
    std::string Text;
  };
  std::vector<Message> Fired;
  for (auto &[CS, E] : Redirects) {
    Ok &= All.addSite(SM, {E});
    const Family *Callee = I->family(CS->CalleeKey);
    Fired.push_back({CS->CallerKey ? I->family(CS->CallerKey)->Prefix : "",
                     CS->Ref->getLocation(),
                     "the call of '" + Callee->Name + "' now calls '" +
                         Callee->CloneName + "', the kernel's copy of it"});
  }
  for (Family *F : Cloned) {
    std::vector<TextEdit> Edits = F->Edits;
    for (const TextEdit &E : CloneEdits[F->Key])
      Edits.push_back(E);
    std::string Def, Proto;
    if (!I->cloneText(F->Def, F->CloneName, Edits, Def) ||
        (F->Proto && !I->cloneText(F->Proto, F->CloneName, {}, Proto))) {
      Ok = false;
      continue;
    }
    Ok &= All.addSite(
        SM, {I->insertAfter(Lexer::getLocForEndOfToken(
                                SM.getExpansionLoc(F->Def->getEndLoc()), 0, SM,
                                PC.langOpts()),
                            Def)});
    if (F->Proto) {
      SourceLocation Semi = Lexer::findLocationAfterToken(
          SM.getExpansionLoc(F->Proto->getEndLoc()), tok::semi, SM,
          PC.langOpts(), false);
      TextEdit E = I->insertAfter(Semi, Proto + ";");
      // On its own line right after the original's, without a blank line.
      if (StringRef(E.Text).starts_with("\n\n"))
        E.Text = E.Text.substr(1);
      else if (StringRef(E.Text).starts_with("\n"))
        E.Text = E.Text.substr(1);
      Ok &= All.addSite(SM, {E});
    }
    Fired.push_back(
        {"", F->Def->getLocation(),
             "helper '" + F->Name + "' cloned as '" + F->CloneName +
                 "' (placed after it) for the kernel " + Why[F] +
                 "; the kernel's code calls the copy and the original stays "
                 "as it was" +
                 (F->Edits.empty() ? " (the copy differs only in the calls "
                                     "it makes)"
                                   : "")});
  }
  if (!Ok) {
    // Cannot happen for edits the passes make (each function's own edits
    // do not overlap, and functions do not overlap); the kernel's own edits
    // stand alone.
    PC.refused(PC.kernel().Decl->getLocation(),
               "the edits of the kernel's helpers overlap; only the kernel "
               "itself is changed");
    return KernelEdits.commit(PC);
  }
  for (const Message &M : Fired) {
    PC.setMessagePrefix(M.Prefix);
    PC.fired(M.Loc, M.Text);
  }
  PC.setMessagePrefix("");
  return All.commit(PC);
}

} // namespace astra
