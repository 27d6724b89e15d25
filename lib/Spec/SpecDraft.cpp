//===- SpecDraft.cpp - Draft a spec from the AST --------------------------===//
#include "astra/Spec/SpecDraft.h"
#include "astra/Analysis/PointerReads.h"
#include "astra/Frontend/LaunchFacts.h"

#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace clang;
using namespace llvm;

namespace astra {

namespace {

std::string quote(StringRef S) {
  std::string Out = "\"";
  for (char C : S) {
    if (C == '"' || C == '\\')
      Out += '\\';
    if (C == '\n') {
      Out += "\\n";
      continue;
    }
    Out += C;
  }
  return Out + "\"";
}

std::string typeText(const ASTContext &Ctx, QualType T) {
  PrintingPolicy PP(Ctx.getLangOpts());
  PP.SuppressTagKeyword = true;
  return T.getAsString(PP);
}

/// Launches of one kernel in user code.
class LaunchFinder : public RecursiveASTVisitor<LaunchFinder> {
public:
  LaunchFinder(ASTContext &Ctx, const FunctionDecl *Kernel)
      : SM(Ctx.getSourceManager()), Kernel(Kernel->getCanonicalDecl()) {}

  bool TraverseDecl(Decl *D) {
    if (D && !isa<TranslationUnitDecl>(D) &&
        SM.isInSystemHeader(SM.getExpansionLoc(D->getLocation())))
      return true;
    return RecursiveASTVisitor::TraverseDecl(D);
  }

  bool VisitCUDAKernelCallExpr(CUDAKernelCallExpr *E) {
    const FunctionDecl *FD = E->getDirectCallee();
    if (!FD)
      return true;
    const FunctionDecl *Pattern = FD;
    if (const FunctionDecl *P = FD->getTemplateInstantiationPattern())
      Pattern = P;
    if (Pattern->getCanonicalDecl() == Kernel)
      Launches.push_back(E);
    return true;
  }

  const SourceManager &SM;
  const FunctionDecl *Kernel;
  std::vector<const CUDAKernelCallExpr *> Launches;
};

/// Turns the host expressions of a launch configuration into spec
/// expressions over the shape variables.
class LaunchTranslator {
public:
  LaunchTranslator(ASTContext &Ctx, const CUDAKernelCallExpr *Launch,
                   const FunctionDecl *Kernel)
      : Ctx(Ctx), Launch(Launch) {
    // A host variable passed straight to an integer parameter is that
    // parameter's shape variable.
    for (unsigned I = 0; I < Launch->getNumArgs() && I < Kernel->getNumParams();
         ++I) {
      const ParmVarDecl *P = Kernel->getParamDecl(I);
      if (!P->getType()->isIntegerType())
        continue;
      if (auto *DRE =
              dyn_cast<DeclRefExpr>(Launch->getArg(I)->IgnoreParenImpCasts()))
        if (auto *V = dyn_cast<VarDecl>(DRE->getDecl()))
          HostToShape.try_emplace(V, P->getNameAsString());
    }
  }

  /// Up to three dimensions of a grid or block argument.
  std::optional<std::vector<std::string>> dims(const Expr *E) {
    E = E->IgnoreImplicit();
    if (auto *CE = dyn_cast<CXXConstructExpr>(E)) {
      if (CE->getNumArgs() == 1 &&
          Ctx.hasSameUnqualifiedType(CE->getArg(0)->getType(), CE->getType()))
        return dims(CE->getArg(0)); // Copy of a dim3.
      if (CE->getType()->isRecordType() && !CE->getType()->isIntegerType()) {
        std::vector<std::string> Out;
        for (const Expr *A : CE->arguments()) {
          if (isa<CXXDefaultArgExpr>(A))
            break;
          auto T = expr(A);
          if (!T)
            return std::nullopt;
          Out.push_back(*T);
        }
        if (Out.empty())
          Out.push_back("1");
        return Out;
      }
    }
    if (auto *DRE = dyn_cast<DeclRefExpr>(E))
      if (auto *V = dyn_cast<VarDecl>(DRE->getDecl()))
        if (V->getType()->isRecordType()) {
          if (!V->getInit() || isAssignedAfter(V)) {
            Problems.push_back("'" + V->getNameAsString() +
                               "' is set in code this draft does not follow");
            return std::nullopt;
          }
          const Expr *Init = V->getInit()->IgnoreImplicit();
          if (auto *CE = dyn_cast<CXXConstructExpr>(Init))
            if (CE->getNumArgs() == 0 || isa<CXXDefaultArgExpr>(CE->getArg(0))) {
              Problems.push_back("'" + V->getNameAsString() +
                                 "' is default-constructed and set later");
              return std::nullopt;
            }
          return dims(Init);
        }
    auto T = expr(E);
    if (!T)
      return std::nullopt;
    return std::vector<std::string>{*T};
  }

  /// An integer expression.
  std::optional<std::string> expr(const Expr *E) {
    if (auto *PE = dyn_cast<ParenExpr>(E)) {
      auto S = expr(PE->getSubExpr());
      if (!S)
        return std::nullopt;
      return "(" + *S + ")";
    }
    if (!E->isValueDependent() && E->getType()->isIntegerType()) {
      Expr::EvalResult R;
      if (E->EvaluateAsInt(R, Ctx))
        return toString(R.Val.getInt(), 10);
    }
    if (auto *CE = dyn_cast<CastExpr>(E))
      return expr(CE->getSubExpr());
    if (auto *MT = dyn_cast<MaterializeTemporaryExpr>(E))
      return expr(MT->getSubExpr());
    if (auto *FE = dyn_cast<FullExpr>(E))
      return expr(FE->getSubExpr());
    if (auto *BO = dyn_cast<BinaryOperator>(E)) {
      // Arithmetic only: a count is no comparison.
      std::optional<StringRef> Op;
      if (BO->isAdditiveOp() || BO->isMultiplicativeOp())
        Op = specOperator(BO->getOpcode());
      if (!Op) {
        Problems.push_back("operator '" + BO->getOpcodeStr().str() +
                           "' has no spec spelling");
        return std::nullopt;
      }
      auto L = expr(BO->getLHS()), R = expr(BO->getRHS());
      if (!L || !R)
        return std::nullopt;
      return *L + " " + Op->str() + " " + *R;
    }
    if (auto *UO = dyn_cast<UnaryOperator>(E)) {
      if (UO->getOpcode() == UO_Minus || UO->getOpcode() == UO_Plus) {
        auto S = expr(UO->getSubExpr());
        if (!S)
          return std::nullopt;
        return (UO->getOpcode() == UO_Minus ? "-" : "") + *S;
      }
    }
    if (auto *CE = dyn_cast<CallExpr>(E)) {
      const FunctionDecl *F = CE->getDirectCallee();
      StringRef Name = F ? F->getName() : "";
      if ((Name == "min" || Name == "max") && CE->getNumArgs() == 2) {
        auto A = expr(CE->getArg(0)), B = expr(CE->getArg(1));
        if (!A || !B)
          return std::nullopt;
        return Name.str() + "(" + *A + ", " + *B + ")";
      }
      Problems.push_back(F ? "a call to '" + F->getNameAsString() + "'"
                           : std::string("a call"));
      return std::nullopt;
    }
    if (auto *DRE = dyn_cast<DeclRefExpr>(E)) {
      auto *V = dyn_cast<VarDecl>(DRE->getDecl());
      if (V && V->getType()->isIntegerType()) {
        auto It = HostToShape.find(V);
        if (It != HostToShape.end())
          return It->second;
        // A constant local (`const int threads = 256;`): its value.
        if (V->getType().isConstQualified() && V->getInit() &&
            !isa<ParmVarDecl>(V))
          if (auto S = expr(V->getInit()))
            return all_of(*S, [](char C) { return isAlnum(C) || C == '_'; })
                       ? *S
                       : "(" + *S + ")";
        // Another host integer: a size the spec needs as a variable.
        std::string Name = V->getNameAsString();
        if (!is_contained(NewVars, Name))
          NewVars.push_back(Name);
        HostToShape[V] = Name;
        return Name;
      }
      Problems.push_back("'" + DRE->getNameInfo().getAsString() +
                         "' is not an integer variable");
      return std::nullopt;
    }
    Problems.push_back("an expression this draft cannot translate");
    return std::nullopt;
  }

  /// Host variables that became shape variables.
  std::vector<std::string> NewVars;
  std::vector<std::string> Problems;
  /// Kernel parameters whose launch argument is a host variable, by that
  /// variable.
  DenseMap<const VarDecl *, std::string> HostToShape;

private:
  /// Whether \p V is assigned anywhere in its function after being declared
  /// (`dim3 grid(1); grid.x = n;`).
  bool isAssignedAfter(const VarDecl *V) {
    const auto *FD = dyn_cast_or_null<FunctionDecl>(V->getParentFunctionOrMethod());
    if (!FD || !FD->getBody())
      return true;
    struct Finder : RecursiveASTVisitor<Finder> {
      const VarDecl *V;
      bool Found = false;
      bool VisitBinaryOperator(BinaryOperator *BO) {
        if (BO->isAssignmentOp())
          check(BO->getLHS());
        return true;
      }
      bool VisitCXXOperatorCallExpr(CXXOperatorCallExpr *E) {
        if (E->isAssignmentOp() && E->getNumArgs())
          check(E->getArg(0));
        return true;
      }
      void check(const Expr *LHS) {
        LHS = LHS->IgnoreParenImpCasts();
        while (auto *ME = dyn_cast<MemberExpr>(LHS))
          LHS = ME->getBase()->IgnoreParenImpCasts();
        if (auto *DRE = dyn_cast<DeclRefExpr>(LHS))
          Found |= DRE->getDecl() == V;
      }
    } F;
    F.V = V;
    F.TraverseStmt(FD->getBody());
    return F.Found;
  }

  ASTContext &Ctx;
  const CUDAKernelCallExpr *Launch;
};

/// Buffers whose values the kernel uses as indices into other buffers
/// (`out[idx[i]]`, or through a local `int j = idx[i]; out[j]`).
class IndexUseFinder : public RecursiveASTVisitor<IndexUseFinder> {
public:
  explicit IndexUseFinder(const FunctionDecl *FD) : FD(FD) {}

  bool VisitVarDecl(VarDecl *V) {
    if (V->getInit() && V->getType()->isIntegerType())
      for (const ParmVarDecl *P : loadedParams(V->getInit()))
        Holds[V].insert(P);
    return true;
  }
  bool VisitArraySubscriptExpr(ArraySubscriptExpr *E) {
    for (const ParmVarDecl *P : loadedParams(E->getIdx()))
      Index.insert(P);
    return true;
  }

  SmallPtrSet<const ParmVarDecl *, 4> Index;

private:
  /// Parameters whose memory \p E loads, directly or through a local that
  /// holds a loaded value.
  SmallPtrSet<const ParmVarDecl *, 4> loadedParams(const Expr *E) {
    SmallPtrSet<const ParmVarDecl *, 4> Out;
    struct Walk : RecursiveASTVisitor<Walk> {
      IndexUseFinder &F;
      SmallPtrSet<const ParmVarDecl *, 4> &Out;
      Walk(IndexUseFinder &F, SmallPtrSet<const ParmVarDecl *, 4> &Out)
          : F(F), Out(Out) {}
      bool VisitArraySubscriptExpr(ArraySubscriptExpr *A) {
        if (auto *DRE =
                dyn_cast<DeclRefExpr>(A->getBase()->IgnoreParenImpCasts()))
          if (auto *P = dyn_cast<ParmVarDecl>(DRE->getDecl()))
            if (P->getDeclContext() == F.FD)
              Out.insert(P);
        return true;
      }
      bool VisitDeclRefExpr(DeclRefExpr *D) {
        auto It = F.Holds.find(dyn_cast<VarDecl>(D->getDecl()));
        if (It != F.Holds.end())
          Out.insert(It->second.begin(), It->second.end());
        return true;
      }
    } W(*this, Out);
    W.TraverseStmt(const_cast<Expr *>(E));
    return Out;
  }

  const FunctionDecl *FD;
  DenseMap<const VarDecl *, SmallPtrSet<const ParmVarDecl *, 4>> Holds;
};

/// One line of the draft: text and an optional trailing comment.
struct Line {
  std::string Text, Comment;
};

void emitLines(std::string &Out, ArrayRef<Line> Lines, unsigned Indent) {
  std::string Pad(Indent, ' ');
  for (size_t I = 0; I < Lines.size(); ++I) {
    Out += Pad + Lines[I].Text;
    if (I + 1 < Lines.size())
      Out += ",";
    if (!Lines[I].Comment.empty())
      Out += "  // " + Lines[I].Comment;
    Out += "\n";
  }
}

/// A launch dimension list as JSON: "x" or ["x", "y"].
std::string dimsJson(const std::vector<std::string> &D) {
  if (D.size() == 1)
    return quote(D[0]);
  std::vector<std::string> Q;
  for (const std::string &X : D)
    Q.push_back(quote(X));
  return "[" + join(Q, ", ") + "]";
}

std::string draftEntry(ASTContext &Ctx, const SpecTarget &T) {
  const KernelInfo &K = *T.Kernel;
  const FunctionDecl *FD = T.Function;
  PointerReadInfo Reads = analyzePointerReads(Ctx, K.Decl);
  IndexUseFinder Idx(FD);
  Idx.TraverseStmt(FD->getBody());
  // Index-like use is read off the pattern too, for templates.
  IndexUseFinder IdxPattern(K.Decl);
  if (K.Decl != FD)
    IdxPattern.TraverseStmt(K.Decl->getBody());

  // Shape variables: the integer parameters, then host variables of the
  // launch configuration.
  std::vector<Line> Vars;
  for (const ParmVarDecl *P : FD->parameters())
    if (!P->getType()->isPointerType() && P->getType()->isIntegerType() &&
        !P->getType()->isBooleanType())
      Vars.push_back({quote(P->getName()) + ": \"TODO\"",
                      "parameter '" + P->getNameAsString() + "' (" +
                          typeText(Ctx, P->getType()) + ")"});

  // The launch: prefer a site that launches this very instantiation.
  LaunchFinder LF(Ctx, K.Decl);
  LF.TraverseDecl(Ctx.getTranslationUnitDecl());
  const CUDAKernelCallExpr *Launch =
      LF.Launches.empty() ? nullptr : LF.Launches.front();
  for (const CUDAKernelCallExpr *E : LF.Launches)
    if (E->getDirectCallee() == FD) {
      Launch = E;
      break;
    }
  // A launch of another instantiation of a template kernel is only a hint
  // for this one (its sizes may depend on the template arguments): its
  // values are kept, but as TODOs a person has to confirm.
  std::string OtherInstantiation;
  if (Launch && K.isTemplate() && Launch->getDirectCallee() &&
      Launch->getDirectCallee()->getCanonicalDecl() != FD->getCanonicalDecl()) {
    PrintingPolicy PP(Ctx.getLangOpts());
    PP.SuppressTagKeyword = true;
    raw_string_ostream OS(OtherInstantiation);
    Launch->getDirectCallee()->getNameForDiagnostic(OS, PP,
                                                    /*Qualified=*/false);
  }
  Line LaunchLine;
  if (!Launch) {
    LaunchLine = {"\"launch\": {\"grid\": \"TODO\", \"block\": \"TODO\", "
                  "\"shmem\": \"0\"}",
                  "TODO: no launch in this file; grid and block as "
                  "expressions over the shape variables"};
  } else {
    LaunchTranslator LT(Ctx, Launch, FD);
    const CallExpr *Config = Launch->getConfig();
    std::vector<std::string> Parts;
    std::vector<std::string> Todo;
    static const char *const Fields[] = {"grid", "block", "shmem"};
    for (unsigned I = 0; I < 3; ++I) {
      const Expr *A = Config && I < Config->getNumArgs() ? Config->getArg(I)
                                                         : nullptr;
      if (I == 2 && (!A || isa<CXXDefaultArgExpr>(A))) {
        Parts.push_back("\"shmem\": \"0\"");
        continue;
      }
      if (!A) {
        Parts.push_back(quote(Fields[I]) + ": \"TODO\"");
        continue;
      }
      size_t ProblemsBefore = LT.Problems.size();
      std::optional<std::vector<std::string>> D;
      if (I < 2)
        D = LT.dims(A);
      else if (auto S = LT.expr(A))
        D = std::vector<std::string>{*S};
      if (D) {
        if (!OtherInstantiation.empty())
          for (std::string &X : *D)
            X = "TODO: " + X;
        Parts.push_back(quote(Fields[I]) + ": " + dimsJson(*D));
        continue;
      }
      std::string Written = sourceText(Ctx, A->getSourceRange());
      Parts.push_back(quote(Fields[I]) + ": " + quote("TODO: " + Written));
      Todo.push_back(std::string(Fields[I]) + ": " +
                     join(ArrayRef<std::string>(LT.Problems).drop_front(
                              ProblemsBefore),
                          "; "));
    }
    SourcePos Pos = makePos(Ctx.getSourceManager(), Launch->getBeginLoc());
    std::string Comment = "from the launch at " + Pos.str();
    if (!OtherInstantiation.empty())
      Comment = "from the launch of '" + OtherInstantiation + "' at " +
                Pos.str() + "; TODO: that is another instantiation; check "
                "that this one is launched the same way";
    if (!Todo.empty())
      Comment += "; TODO: write in terms of the shape variables (" +
                 join(Todo, "; ") + ")";
    LaunchLine = {"\"launch\": {" + join(Parts, ", ") + "}", Comment};
    for (const std::string &V : LT.NewVars)
      Vars.push_back({quote(V) + ": \"TODO\"",
                      "host variable '" + V + "' in the launch at " +
                          Pos.str()});
  }

  // Arguments.
  std::vector<Line> Args;
  std::string RowPtrArg;
  for (const ParmVarDecl *P : FD->parameters()) {
    unsigned I = P->getFunctionScopeIndex();
    std::string Name = P->getNameAsString();
    QualType Ty = P->getType();
    std::string Type = typeText(Ctx, Ty);
    if (Name.empty()) {
      Args.push_back({quote("TODO_param" + std::to_string(I)) +
                          ": {\"value\": \"TODO\"}",
                      "TODO: parameter " + std::to_string(I) +
                          " has no name; name it in the kernel"});
      continue;
    }
    if (!Ty->isPointerType()) {
      std::optional<SpecType> ST = specTypeOf(Ctx, Ty);
      if (!ST || ST->Any || ST->Lanes != 1) {
        Args.push_back({quote(Name) + ": {\"value\": \"TODO\"}",
                        Type + ": TODO: a spec passes only pointers and "
                               "arithmetic scalars"});
      } else if (Ty->isIntegerType() && !Ty->isBooleanType()) {
        Args.push_back({quote(Name) + ": {\"value\": " + quote(Name) + "}",
                        Type + ": the shape variable '" + Name + "'"});
      } else {
        Args.push_back({quote(Name) + ": {\"value\": \"TODO\"}",
                        Type + ": TODO: a realistic value"});
      }
      continue;
    }
    const KernelParam &KP = K.Params[I];
    const ParmVarDecl *PatternParam = K.Decl->getParamDecl(I);
    std::optional<SpecType> ST = specTypeOf(Ctx, Ty->getPointeeType());
    std::string DType = !ST || ST->Any ? "TODO" : dtypeName(ST->Type).str();
    bool Read = Reads.isRead(PatternParam);
    StringRef Role = KP.Written ? (Read ? "inout" : "output") : "input";
    std::string Why = KP.Written ? (Read ? "written and read (in place)"
                                         : "written, never read")
                                 : "never written";
    std::string Text = quote(Name) + ": {\"dtype\": " + quote(DType) +
                       ", \"count\": \"TODO\", \"role\": " + quote(Role);
    std::string Comment = Type + ": " + Why;
    if (Role != "output") {
      std::string LName = StringRef(Name).lower();
      std::string Init;
      bool IndexLike = Idx.Index.count(P) || IdxPattern.Index.count(PatternParam);
      bool IntType = ST && !ST->Any && !isFloating(ST->Type);
      auto Has = [&](StringRef W) { return StringRef(LName).contains(W); };
      if (IntType && (Has("rowptr") || Has("row_ptr") || Has("indptr"))) {
        Init = "csr_rowptr(TODO: rows, avg_degree, max_degree)";
        RowPtrArg = Name;
        Comment += "; looks like a CSR row pointer";
      } else if (IntType && !RowPtrArg.empty() && (Has("col") || Has("ind"))) {
        Init = "csr_colind(" + RowPtrArg + ", TODO: n)";
        Comment += "; looks like CSR column indices";
      } else if (IntType && IndexLike) {
        Init = "indices_into(TODO: n)";
        Comment += "; its values index another buffer: they are drawn "
                   "from [0, n), so n is the number of valid indices (rows "
                   "of that buffer, for a row index)";
      } else if (ST && !ST->Any) {
        Init = defaultGenerator(ST->Type).Text;
      }
      if (!Init.empty())
        Text += ", \"init\": " + quote(Init);
    }
    if (ST && ST->Lanes > 1)
      Comment += "; count in " + DType + " elements (" +
                 std::to_string(ST->Lanes) + " per " +
                 typeText(Ctx, Ty->getPointeeType().getUnqualifiedType()) +
                 ")";
    if (!ST)
      Comment += "; TODO: no spec dtype describes the pointee";
    Args.push_back({Text + "}", Comment});
  }

  std::string Out;
  Out += "      // " + K.Pos.str() + "\n";
  Out += "      \"shapes\": {\n";
  Out += "        // One set per workload to sweep (\"decode\", \"prefill\", "
         "...); every set\n"
         "        // gives each variable an integer.\n";
  if (Vars.empty()) {
    Out += "        \"default\": {}  // TODO: add the sizes the counts depend "
           "on\n";
  } else {
    Out += "        \"default\": {\n";
    emitLines(Out, Vars, 10);
    Out += "        }\n";
  }
  Out += "      },\n";
  Out += "      // count: elements of the dtype, an expression over the shape "
         "variables.\n";
  Out += "      \"args\": {\n";
  emitLines(Out, Args, 8);
  Out += "      },\n";
  std::vector<Line> Tail = {
      LaunchLine,
      {"\"bytes\": \"auto\"",
       "inputs read once, outputs written once, in-out both; or an "
       "expression"},
      {"\"launch_tunable\": false",
       "true when the launch configuration belongs to the kernel (the "
       "optimizer may change it)"}};
  emitLines(Out, Tail, 6);
  Out += "      // Optional: \"flops\": \"<expression>\" for the roofline, "
         "\"tolerance\": {\"rtol\": ..., \"atol\": ...}\n"
         "      // (default: per dtype), \"adversarial\", \"check\": see "
         "docs/spec-format.md.\n";
  return Out;
}

} // namespace

std::string draftSpecFile(ASTContext &Ctx, ArrayRef<SpecTarget> Targets,
                          StringRef CuFile) {
  std::string Out;
  Out += "// Workload spec for " + CuFile.str() +
         ", drafted by `clang-astra init-spec`.\n";
  Out += "// Every \"TODO\" needs a person: `clang-astra check-spec " +
         CuFile.str() + "`\n// rejects the spec until none is left. The "
                        "format: docs/spec-format.md.\n";
  Out += "{\n  \"version\": 1,\n  \"kernels\": {\n";
  for (size_t I = 0; I < Targets.size(); ++I) {
    Out += "    " + quote(Targets[I].Name) + ": {\n";
    Out += draftEntry(Ctx, Targets[I]);
    Out += "    }";
    Out += I + 1 < Targets.size() ? ",\n" : "\n";
  }
  Out += "  }\n}\n";
  return Out;
}

} // namespace astra
