//===- SpecDraft.cpp - Draft a spec from the AST --------------------------===//
#include "astra/Spec/SpecDraft.h"
#include "astra/Analysis/PointerReads.h"
#include "astra/Capture/Capture.h"
#include "astra/Capture/CaptureFormat.h"
#include "astra/Frontend/LaunchFacts.h"
#include "astra/Spec/Expr.h"

#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>

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

/// The `extern __shared__` array (dynamic shared memory) that \p Kernel or
/// a device function it calls uses, if any: its size is the launch's third
/// argument, which no default of 0 can stand for.
const VarDecl *dynamicSharedArray(const FunctionDecl *Kernel) {
  struct Walk : RecursiveASTVisitor<Walk> {
    SmallPtrSet<const FunctionDecl *, 8> Seen;
    SmallVector<const FunctionDecl *, 8> Work;
    const VarDecl *Found = nullptr;
    bool VisitDeclRefExpr(DeclRefExpr *E) {
      if (auto *V = dyn_cast<VarDecl>(E->getDecl())) {
        if (V->hasAttr<CUDASharedAttr>() && V->hasExternalStorage() &&
            V->getType()->isIncompleteArrayType() && !Found)
          Found = V;
      } else if (auto *F = dyn_cast<FunctionDecl>(E->getDecl())) {
        add(F);
      }
      return true;
    }
    void add(const FunctionDecl *F) {
      const FunctionDecl *Def = nullptr;
      if (F->hasBody(Def) && Seen.insert(Def).second)
        Work.push_back(Def);
    }
  } W;
  W.add(Kernel);
  while (!W.Work.empty() && !W.Found)
    W.TraverseStmt(W.Work.pop_back_val()->getBody());
  return W.Found;
}

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
  const VarDecl *DynShared = dynamicSharedArray(FD);
  std::string NoShmem = DynShared ? "\"shmem\": \"TODO\"" : "\"shmem\": \"0\"";
  std::string ShmemTodo =
      DynShared ? "TODO: shmem: the kernel uses extern __shared__ '" +
                      DynShared->getNameAsString() +
                      "' (dynamic shared memory); its size in bytes"
                : "";
  if (!Launch) {
    LaunchLine = {"\"launch\": {\"grid\": \"TODO\", \"block\": \"TODO\", " +
                      NoShmem + "}",
                  "TODO: no launch in this file; grid and block as "
                  "expressions over the shape variables" +
                      (DynShared ? "; " + ShmemTodo.substr(6) : "")};
  } else {
    LaunchTranslator LT(Ctx, Launch, FD);
    const CallExpr *Config = Launch->getConfig();
    std::vector<std::string> Parts;
    std::vector<std::string> Todo;
    bool ShmemDefaulted = false;
    static const char *const Fields[] = {"grid", "block", "shmem"};
    for (unsigned I = 0; I < 3; ++I) {
      const Expr *A = Config && I < Config->getNumArgs() ? Config->getArg(I)
                                                         : nullptr;
      if (I == 2 && (!A || isa<CXXDefaultArgExpr>(A))) {
        Parts.push_back(NoShmem);
        ShmemDefaulted = true;
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
    if (ShmemDefaulted && DynShared)
      Comment += "; " + ShmemTodo;
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


//===----------------------------------------------------------------------===//
// Drafting from a capture (init-spec --from-capture)
//===----------------------------------------------------------------------===//

/// IEEE half and bfloat16 bits as a double.
double halfToDouble(uint16_t H) {
  int Exp = (H >> 10) & 0x1f, Man = H & 0x3ff;
  double Sign = (H & 0x8000) ? -1 : 1;
  if (Exp == 0)
    return Sign * std::ldexp(Man, -24);
  if (Exp == 31)
    return Man ? NAN : Sign * INFINITY;
  return Sign * std::ldexp(Man + 1024, Exp - 25);
}
double bf16ToDouble(uint16_t B) {
  uint32_t U = uint32_t(B) << 16;
  float F;
  std::memcpy(&F, &U, 4);
  return F;
}

/// Element \p I of \p Data read as \p T, as a double (integers exactly up
/// to 2^53).
double elementAt(const uint8_t *Data, DType T, size_t I) {
  unsigned N = dtypeSize(T);
  const uint8_t *P = Data + I * N;
  uint64_t U = 0;
  std::memcpy(&U, P, N);
  switch (T) {
  case DType::F32: {
    float F;
    std::memcpy(&F, P, 4);
    return F;
  }
  case DType::F64: {
    double D;
    std::memcpy(&D, P, 8);
    return D;
  }
  case DType::F16:
    return halfToDouble(uint16_t(U));
  case DType::BF16:
    return bf16ToDouble(uint16_t(U));
  case DType::FP8E4M3:
  case DType::FP8E5M2:
    return NAN; // Not summarized: the default generator is used.
  default:
    break;
  }
  if (isSigned(T) && N < 8 && (U >> (8 * N - 1)) & 1)
    U |= ~uint64_t(0) << (8 * N);
  return isSigned(T) ? double(int64_t(U)) : double(U);
}

/// A number for a spec expression: integers exactly, reals with 4
/// significant digits (a generator's parameter, not data).
std::string roundedNumber(double V) {
  if (V == std::floor(V) && std::fabs(V) < 1e15)
    return std::to_string(int64_t(V));
  char Buf[32];
  std::snprintf(Buf, sizeof Buf, "%.4g", V);
  return Buf;
}

/// The captured scalar as the exact double it holds.
std::optional<double> scalarReal(const CapturedArg &A, DType T) {
  if (A.Bytes.size() != dtypeSize(T))
    return std::nullopt;
  return elementAt(A.Bytes.data(), T, 0);
}

/// A double written so that it reads back exactly.
std::string exactNumber(double V, DType T) {
  char Buf[40];
  std::snprintf(Buf, sizeof Buf, T == DType::F64 ? "%.17g" : "%.9g", V);
  std::string S = Buf;
  if (StringRef(S).find_first_of(".en") == StringRef::npos)
    S += ".0";
  return S;
}

class CaptureDrafter {
public:
  CaptureDrafter(ASTContext &Ctx, const SpecTarget &T, const CapturedKernel &CK,
                 const Capture &C, StringRef DirInSpec, unsigned MaxSets)
      : Ctx(Ctx), T(T), CK(CK), C(C), DirInSpec(DirInSpec), MaxSets(MaxSets) {}

  Expected<std::string> entry();
  std::vector<std::string> Notes;

private:
  struct Var {
    std::string Name, Comment;
    std::vector<int64_t> Values; ///< One per set.
  };
  std::string addVar(StringRef Base, std::vector<int64_t> Values,
                     std::string Comment);
  const Var *var(StringRef Name) const {
    for (const Var &V : Vars)
      if (V.Name == Name)
        return &V;
    return nullptr;
  }
  std::string countExpr(StringRef Buf, const std::vector<int64_t> &Counts,
                        unsigned NumScalarVars);
  std::string generatorFor(const ParmVarDecl *P, DType Ty, bool IndexLike,
                           const std::vector<int64_t> &Counts,
                           unsigned ArgIndex, std::string &Comment);
  std::string launchField(StringRef Name, ArrayRef<int64_t> Values,
                          std::optional<std::string> FromSite);
  bool matches(StringRef Text, ArrayRef<int64_t> Values) const;

  ASTContext &Ctx;
  const SpecTarget &T;
  const CapturedKernel &CK;
  const Capture &C;
  std::string DirInSpec;
  unsigned MaxSets;
  std::vector<const CapturedConfig *> Sets;
  std::vector<std::string> SetNames;
  std::vector<Var> Vars;
};

std::string CaptureDrafter::addVar(StringRef Base, std::vector<int64_t> Values,
                                   std::string Comment) {
  std::string Name = Base.str();
  for (unsigned I = 2; var(Name); ++I)
    Name = Base.str() + "_" + std::to_string(I);
  Vars.push_back({Name, std::move(Comment), std::move(Values)});
  return Name;
}

bool CaptureDrafter::matches(StringRef Text, ArrayRef<int64_t> Values) const {
  auto E = SpecExpr::parse(Text);
  if (!E) {
    consumeError(E.takeError());
    return false;
  }
  for (size_t S = 0; S < Sets.size(); ++S) {
    Env Env;
    for (const Var &V : Vars)
      Env[V.Name] = Value::ofInt(V.Values[S]);
    auto R = E->evalInt(Env);
    if (!R) {
      consumeError(R.takeError());
      return false;
    }
    if (*R != Values[S])
      return false;
  }
  return true;
}

/// An element count as the shape variables give it in every set: a
/// variable, a product of two, a small multiple of either, a variable plus
/// one (a CSR row pointer), a constant; else a variable of its own.
std::string CaptureDrafter::countExpr(StringRef Buf,
                                      const std::vector<int64_t> &Counts,
                                      unsigned NumScalarVars) {
  std::vector<std::string> Terms;
  for (unsigned I = 0; I < NumScalarVars; ++I)
    if (all_of(Vars[I].Values, [](int64_t X) { return X > 0; }))
      Terms.push_back(Vars[I].Name);
  std::vector<std::string> Products;
  for (size_t I = 0; I < Terms.size(); ++I)
    for (size_t J = I; J < Terms.size(); ++J)
      Products.push_back(Terms[I] + " * " + Terms[J]);
  for (const std::vector<std::string> *L : {&Terms, &Products})
    for (const std::string &E : *L)
      if (matches(E, Counts))
        return E;
  for (const std::vector<std::string> *L : {&Terms, &Products})
    for (const std::string &E : *L)
      for (int K = 2; K <= 8; ++K)
        if (matches(std::to_string(K) + " * " + E, Counts))
          return std::to_string(K) + " * " + E;
  for (const std::string &E : Terms)
    if (matches(E + " + 1", Counts))
      return E + " + 1";
  if (all_of(Counts, [&](int64_t X) { return X == Counts[0]; }))
    return std::to_string(Counts[0]);
  return addVar(Buf.str() + "_count", Counts,
                "elements of '" + Buf.str() + "', from its allocations");
}

std::string CaptureDrafter::generatorFor(const ParmVarDecl *P, DType Ty,
                                         bool IndexLike,
                                         const std::vector<int64_t> &Counts,
                                         unsigned ArgIndex,
                                         std::string &Comment) {
  // The values of the most launched configuration that has them.
  for (size_t S = 0; S < Sets.size(); ++S) {
    const CapturedArg &A = Sets[S]->Args[ArgIndex];
    if (A.Blob.empty())
      continue;
    auto Buf = MemoryBuffer::getFile(C.blobPath(A), false, false);
    if (!Buf)
      break;
    size_t N = std::min<size_t>((*Buf)->getBufferSize() / dtypeSize(Ty),
                                size_t(Counts[S]));
    // A summary, not a copy: the first 16M elements are plenty.
    N = std::min<size_t>(N, size_t(1) << 24);
    if (N == 0)
      break;
    const uint8_t *D =
        reinterpret_cast<const uint8_t *>((*Buf)->getBufferStart());
    double Sum = 0, Sq = 0, Lo = INFINITY, Hi = -INFINITY;
    size_t Finite = 0;
    bool Sorted = true;
    double Prev = -INFINITY;
    for (size_t I = 0; I < N; ++I) {
      double V = elementAt(D, Ty, I);
      if (!std::isfinite(V))
        continue;
      ++Finite;
      Sum += V;
      Sq += V * V;
      Lo = std::min(Lo, V);
      Hi = std::max(Hi, V);
      Sorted &= V >= Prev;
      Prev = V;
    }
    if (!Finite)
      break;
    std::string Where = "values of set '" + SetNames[S] + "'";
    if (isFloating(Ty)) {
      double Mean = Sum / double(Finite);
      double Variance = std::max(0.0, Sq / double(Finite) - Mean * Mean);
      double Std = std::sqrt(Variance);
      Comment += "; other seeds: " + Where + " have mean " +
                 roundedNumber(Mean) + ", std " + roundedNumber(Std);
      if (Std == 0)
        return "constant(" + roundedNumber(Mean) + ")";
      return "normal(" + roundedNumber(Mean) + ", " + roundedNumber(Std) + ")";
    }
    std::string L = roundedNumber(Lo), H = roundedNumber(Hi);
    if (IndexLike && Lo >= 0) {
      Comment += "; other seeds: indices below " + roundedNumber(Hi + 1) +
                 " as the " + Where;
      return "indices_into(" + roundedNumber(Hi + 1) + ")";
    }
    if (Sorted && N > 1) {
      Comment += "; other seeds: sorted in [" + L + ", " + H + "] as the " +
                 Where;
      return "sorted(" + L + ", " + H + ")";
    }
    Comment += "; other seeds: in [" + L + ", " + H + "] as the " + Where;
    return "randint(" + L + ", " + H + ")";
  }
  (void)P;
  return defaultGenerator(Ty).Text;
}

std::string CaptureDrafter::launchField(StringRef Name,
                                        ArrayRef<int64_t> Values,
                                        std::optional<std::string> FromSite) {
  if (FromSite && matches(*FromSite, Values))
    return *FromSite;
  if (all_of(Values, [&](int64_t X) { return X == Values[0]; }))
    return std::to_string(Values[0]);
  return addVar(Name, Values, "the launch's " + Name.str() + " as observed");
}

Expected<std::string> CaptureDrafter::entry() {
  const KernelInfo &K = *T.Kernel;
  const FunctionDecl *FD = T.Function;
  if (CK.Params.size() != FD->getNumParams())
    return createStringError(
        inconvertibleErrorCode(),
        "%s: kernel '%s' takes %u parameters, but the capture of '%s' "
        "recorded %zu: the capture is of another version of the kernel",
        C.Dir.c_str(), T.Name.c_str(), FD->getNumParams(), CK.Symbol.c_str(),
        CK.Params.size());
  uint64_t Total = 0, Covered = 0;
  for (const CapturedConfig &Cfg : CK.Configs) {
    Total += Cfg.goodLaunches();
    if (Cfg.goodLaunches() == 0 || (MaxSets && Sets.size() >= MaxSets))
      continue;
    Sets.push_back(&Cfg);
    Covered += Cfg.goodLaunches();
  }
  if (Sets.empty())
    return createStringError(inconvertibleErrorCode(),
                             "%s: every recorded launch of kernel '%s' was "
                             "refused by the driver; nothing to draft from",
                             C.Dir.c_str(), T.Name.c_str());
  for (size_t S = 0; S < Sets.size(); ++S)
    SetNames.push_back("c" + std::to_string(S + 1));
  if (Covered < Total)
    Notes.push_back("kernel '" + T.Name + "': the " + std::to_string(Sets.size()) +
                    " most launched configurations (--max-sets) cover " +
                    std::to_string(Covered) + " of " + std::to_string(Total) +
                    " launches; the others are neither verified nor timed");
  if (CK.NotRecorded)
    Notes.push_back("kernel '" + T.Name + "': " +
                    std::to_string(CK.NotRecorded) +
                    " launches past --max-launches were counted, not "
                    "recorded; their configurations are not in the spec");

  PointerReadInfo Reads = analyzePointerReads(Ctx, K.Decl);
  IndexUseFinder Idx(FD);
  Idx.TraverseStmt(FD->getBody());
  IndexUseFinder IdxPattern(K.Decl);
  if (K.Decl != FD)
    IdxPattern.TraverseStmt(K.Decl->getBody());

  // A spec names arguments.
  for (const ParmVarDecl *P : FD->parameters())
    if (P->getName().empty())
      return createStringError(inconvertibleErrorCode(),
                               "kernel '%s': parameter %u has no name; name "
                               "it in the kernel (a spec names arguments)",
                               T.Name.c_str(), P->getFunctionScopeIndex());

  // Scalars first: integer parameters become shape variables, the sizes
  // counts are written in.
  std::map<unsigned, Line> ArgLines;
  for (const ParmVarDecl *P : FD->parameters()) {
    unsigned I = P->getFunctionScopeIndex();
    QualType Ty = P->getType();
    if (Ty->isPointerType())
      continue;
    std::string Name = P->getNameAsString(), Type = typeText(Ctx, Ty);
    std::optional<SpecType> ST = specTypeOf(Ctx, Ty);
    if (!ST || ST->Any || ST->Lanes != 1) {
      ArgLines[I] = {quote(Name) + ": {\"value\": \"TODO\"}",
                     Type + ": TODO: the capture has its bytes, but a spec "
                            "passes only arithmetic scalars"};
      continue;
    }
    if (!isFloating(ST->Type)) {
      std::vector<int64_t> Vals;
      for (const CapturedConfig *Cfg : Sets) {
        auto V = Cfg->Args[I].asInt(isSigned(ST->Type));
        Vals.push_back(V ? *V : 0);
      }
      std::string V = addVar(Name, Vals, "parameter '" + Name + "' (" + Type +
                                             ") as launched");
      ArgLines[I] = {quote(Name) + ": {\"value\": " + quote(V) + "}",
                     Type + ": the shape variable '" + V + "'"};
      continue;
    }
    std::vector<double> Distinct;
    std::vector<int64_t> Case;
    for (const CapturedConfig *Cfg : Sets) {
      double V = scalarReal(Cfg->Args[I], ST->Type).value_or(NAN);
      auto It = llvm::find_if(Distinct, [&](double D) {
        return std::memcmp(&D, &V, sizeof D) == 0;
      });
      Case.push_back(It - Distinct.begin());
      if (It == Distinct.end())
        Distinct.push_back(V);
    }
    std::string Value;
    if (Distinct.size() == 1) {
      Value = exactNumber(Distinct[0], ST->Type);
    } else {
      // Shape variables are integers: a variable picks the set's value.
      std::string V = addVar(Name + "_case", Case,
                             "which value of '" + Name + "' the set launches");
      for (size_t D = 0; D + 1 < Distinct.size(); ++D)
        Value += V + " == " + std::to_string(D) + " ? " +
                 exactNumber(Distinct[D], ST->Type) + " : ";
      Value += exactNumber(Distinct.back(), ST->Type);
    }
    ArgLines[I] = {quote(Name) + ": {\"value\": " + quote(Value) + "}",
                   Type + ": as launched"};
  }
  unsigned NumScalarVars = Vars.size();

  // Buffers: counts from the allocations, contents from the blobs.
  std::map<std::string, std::map<std::string, std::string>> SetBlobs;
  for (const ParmVarDecl *P : FD->parameters()) {
    unsigned I = P->getFunctionScopeIndex();
    QualType Ty = P->getType();
    if (!Ty->isPointerType())
      continue;
    std::string Name = P->getNameAsString(), Type = typeText(Ctx, Ty);
    std::optional<SpecType> ST = specTypeOf(Ctx, Ty->getPointeeType());
    if (!ST) {
      ArgLines[I] = {quote(Name) + ": {\"dtype\": \"TODO\", \"count\": "
                                   "\"TODO\"}",
                     Type + ": TODO: no spec dtype describes the pointee"};
      continue;
    }
    DType DT = ST->Any ? DType::U8 : ST->Type;
    std::string Comment = Type;
    if (ST->Any)
      Comment += ": u8, the capture's bytes (a void pointer has no type)";
    const KernelParam &KP = K.Params[I];
    const ParmVarDecl *PatternParam = K.Decl->getParamDecl(I);
    bool Read = Reads.isRead(PatternParam);
    StringRef Role = KP.Written ? (Read ? "inout" : "output") : "input";
    Comment += std::string(": ") +
               (KP.Written ? (Read ? "written and read (in place)"
                                   : "written, never read")
                           : "never written");
    std::vector<int64_t> Counts;
    std::string Missing;
    for (size_t S = 0; S < Sets.size(); ++S) {
      const CapturedArg &A = Sets[S]->Args[I];
      if (!A.Pointer) {
        Missing = "in set '" + SetNames[S] + "' the pointer is " +
                  (all_of(A.Bytes, [](uint8_t B) { return B == 0; })
                       ? std::string("null")
                       : std::string("no memory CUDA knows"));
        break;
      }
      Counts.push_back(int64_t(A.Pointer->extent() / dtypeSize(DT)));
      if (Counts.back() == 0) {
        Missing = "in set '" + SetNames[S] + "' it points less than one "
                  "element before its allocation's end";
        break;
      }
    }
    if (!Missing.empty()) {
      ArgLines[I] = {quote(Name) + ": {\"dtype\": " + quote(dtypeName(DT)) +
                         ", \"count\": \"TODO\", \"role\": " + quote(Role) +
                         "}",
                     Comment + "; TODO: " + Missing +
                         ", which a spec cannot pass"};
      continue;
    }
    std::string Count = countExpr(Name, Counts, NumScalarVars);
    std::string Text = quote(Name) + ": {\"dtype\": " + quote(dtypeName(DT)) +
                       ", \"count\": " + quote(Count) + ", \"role\": " +
                       quote(Role);
    if (Role != "output") {
      bool IndexLike = Idx.Index.count(P) || IdxPattern.Index.count(PatternParam);
      std::string Gen = generatorFor(P, DT, IndexLike, Counts, I, Comment);
      unsigned WithBlob = 0;
      for (size_t S = 0; S < Sets.size(); ++S) {
        const CapturedArg &A = Sets[S]->Args[I];
        if (!A.Blob.empty() &&
            A.BlobSize >= uint64_t(Counts[S]) * dtypeSize(DT)) {
          SetBlobs[SetNames[S]][Name] = A.Blob;
          ++WithBlob;
        }
      }
      if (WithBlob) {
        Gen = "captured(" + Gen + ")";
        Comment += "; the program's own values in " +
                   std::to_string(WithBlob) + " of " +
                   std::to_string(Sets.size()) + " sets";
      } else {
        std::string Why = Sets[0]->Args[I].ContentsMissing;
        Comment += "; no contents captured" + (Why.empty() ? "" : " (" + Why + ")");
      }
      Text += ", \"init\": " + quote(Gen);
    }
    if (ST->Lanes > 1)
      Comment += "; count in " + dtypeName(DT).str() + " elements";
    ArgLines[I] = {Text + "}", Comment};
  }

  // The launch: the launch site's expressions where they give what the
  // program launched, else the observed values.
  LaunchFinder LF(Ctx, K.Decl);
  LF.TraverseDecl(Ctx.getTranslationUnitDecl());
  const CUDAKernelCallExpr *Site = nullptr;
  for (const CUDAKernelCallExpr *E : LF.Launches)
    if (E->getDirectCallee() == FD)
      Site = E;
  std::optional<std::vector<std::string>> SiteDims[2];
  std::optional<std::string> SiteShmem;
  if (Site) {
    LaunchTranslator LT(Ctx, Site, FD);
    const CallExpr *Config = Site->getConfig();
    for (unsigned F = 0; F < 2 && Config && F < Config->getNumArgs(); ++F)
      SiteDims[F] = LT.dims(Config->getArg(F));
    if (Config && Config->getNumArgs() > 2 &&
        !isa<CXXDefaultArgExpr>(Config->getArg(2)))
      SiteShmem = LT.expr(Config->getArg(2));
  }
  std::string LaunchParts[2];
  static const char *const DimNames[] = {"x", "y", "z"};
  for (unsigned F = 0; F < 2; ++F) {
    std::vector<std::string> Dims;
    for (unsigned D = 0; D < 3; ++D) {
      std::vector<int64_t> Vals;
      for (const CapturedConfig *Cfg : Sets)
        Vals.push_back(F == 0 ? Cfg->Grid[D] : Cfg->Block[D]);
      std::optional<std::string> FromSite;
      if (SiteDims[F]) {
        if (D < SiteDims[F]->size())
          FromSite = (*SiteDims[F])[D];
        else
          FromSite = "1";
      }
      Dims.push_back(launchField(std::string(F == 0 ? "grid_" : "block_") +
                                     DimNames[D],
                                 Vals, FromSite));
    }
    while (Dims.size() > 1 && Dims.back() == "1")
      Dims.pop_back();
    LaunchParts[F] = dimsJson(Dims);
  }
  std::vector<int64_t> Shmems;
  for (const CapturedConfig *Cfg : Sets)
    Shmems.push_back(Cfg->Shmem);
  std::string Shmem = launchField("shmem", Shmems, SiteShmem);
  std::vector<int64_t> Blocks;
  for (const CapturedConfig *Cfg : Sets)
    if (!is_contained(Blocks, Cfg->Block[0]))
      Blocks.push_back(Cfg->Block[0]);
  llvm::sort(Blocks);

  // The text.
  std::string Out;
  Out += "      // " + K.Pos.str() + "; from the capture of " + CK.Symbol +
         ": " + std::to_string(Total) + " launches, " +
         std::to_string(CK.Configs.size()) + " configurations\n";
  Out += "      \"shapes\": {\n";
  for (size_t S = 0; S < Sets.size(); ++S) {
    std::vector<std::string> Assign;
    for (const Var &V : Vars)
      Assign.push_back(quote(V.Name) + ": " + std::to_string(V.Values[S]));
    const CapturedConfig &Cfg = *Sets[S];
    char Pct[16];
    std::snprintf(Pct, sizeof Pct, "%.1f",
                  100.0 * double(Cfg.goodLaunches()) / double(Total));
    Out += "        " + quote(SetNames[S]) + ": {" + join(Assign, ", ") + "}" +
           (S + 1 < Sets.size() ? "," : "") + "  // " +
           std::to_string(Cfg.goodLaunches()) +
           (Cfg.goodLaunches() == 1 ? " launch (" : " launches (") + Pct + "%)" +
           (Cfg.Streams.size() > 1
                ? ", on " + std::to_string(Cfg.Streams.size()) + " streams"
                : std::string()) +
           (Cfg.GraphCapture ? ", into a CUDA graph" : "") + "\n";
  }
  Out += "      },\n";
  for (const Var &V : Vars)
    Out += "      // " + V.Name + ": " + V.Comment + "\n";
  Out += "      \"args\": {\n";
  std::vector<Line> Args;
  for (auto &[I, L] : ArgLines)
    Args.push_back(L);
  emitLines(Out, Args, 8);
  Out += "      },\n";
  std::vector<Line> Tail;
  Tail.push_back({"\"launch\": {\"grid\": " + LaunchParts[0] +
                      ", \"block\": " + LaunchParts[1] +
                      ", \"shmem\": " + quote(Shmem) + "}",
                  Site ? "as launched (the launch site's expressions where "
                         "they give it)"
                       : "as launched"});
  std::vector<std::string> BlockText;
  for (int64_t B : Blocks)
    BlockText.push_back(std::to_string(B));
  Tail.push_back({"\"launch_space\": {\"block\": [" + join(BlockText, ", ") +
                      "]}",
                  "the block sizes the program launched"});
  std::vector<std::string> W;
  for (size_t S = 0; S < Sets.size(); ++S)
    W.push_back(quote(SetNames[S]) + ": " +
                std::to_string(Sets[S]->goodLaunches()));
  Tail.push_back({"\"weights\": {" + join(W, ", ") + "}",
                  "launch counts: the weighted speedup is what the program "
                  "gains"});
  if (!SetBlobs.empty()) {
    std::string Sets = "\"capture\": {\"dir\": " + quote(DirInSpec) +
                       ", \"sets\": {";
    std::vector<std::string> Parts;
    for (auto &[Set, Blobs] : SetBlobs) {
      std::vector<std::string> Bs;
      for (auto &[Arg, Blob] : Blobs)
        Bs.push_back(quote(Arg) + ": " + quote(Blob));
      Parts.push_back(quote(Set) + ": {" + join(Bs, ", ") + "}");
    }
    Sets += join(Parts, ", ") + "}}";
    Tail.push_back({Sets, "the program's buffer contents, per shape set"});
  }
  Tail.push_back({"\"bytes\": \"auto\"",
                  "inputs read once, outputs written once, in-out both; or "
                  "an expression"});
  Tail.push_back({"\"launch_tunable\": false",
                  "the program decides its launches"});
  emitLines(Out, Tail, 6);
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


Expected<std::string>
draftSpecFileFromCapture(ASTContext &Ctx, ArrayRef<SpecTarget> Targets,
                         StringRef CuFile, const Capture &C,
                         StringRef DirInSpec, unsigned MaxSets,
                         std::vector<std::string> &Notes) {
  std::string Out;
  Out += "// Workload spec for " + CuFile.str() +
         ", drafted by `clang-astra init-spec --from-capture` from the "
         "program's own launches.\n";
  Out += "// One shape set per distinct launch, weighted by its launch count. "
         "The format:\n// docs/spec-format.md; the capture: docs/capture.md.\n";
  Out += "{\n  \"version\": 1,\n  \"kernels\": {\n";
  for (size_t I = 0; I < Targets.size(); ++I) {
    const CapturedKernel *CK = findCapturedKernel(Ctx, Targets[I], C);
    if (!CK) {
      std::vector<std::string> Have;
      for (const CapturedKernel &K : C.Kernels)
        Have.push_back("'" + K.Name + "'");
      return createStringError(
          inconvertibleErrorCode(),
          "%s: kernel '%s' is not in the capture (it recorded %s); capture "
          "the program again with --kernel '%s'",
          C.Dir.c_str(), Targets[I].Name.c_str(),
          Have.empty() ? "no kernel" : join(Have, ", ").c_str(),
          Targets[I].Name.c_str());
    }
    CaptureDrafter D(Ctx, Targets[I], *CK, C, DirInSpec, MaxSets);
    auto Entry = D.entry();
    if (!Entry)
      return Entry.takeError();
    Notes.insert(Notes.end(), D.Notes.begin(), D.Notes.end());
    Out += "    " + quote(Targets[I].Name) + ": {\n";
    Out += *Entry;
    Out += "    }";
    Out += I + 1 < Targets.size() ? ",\n" : "\n";
  }
  Out += "  }\n}\n";
  return Out;
}

const CapturedKernel *findCapturedKernel(ASTContext &Ctx, const SpecTarget &T,
                                         const Capture &C) {
  if (const CapturedKernel *K = C.find(mangledName(Ctx, T.Function)))
    return K;
  // A symbol the mangler spells otherwise: the name as `list` prints it.
  const CapturedKernel *Found = nullptr;
  for (const CapturedKernel &K : C.Kernels)
    if (capture::withoutSpaces(K.Name) == capture::withoutSpaces(T.Name) ||
        StringRef(capture::withoutSpaces(K.Name))
            .ends_with("::" + capture::withoutSpaces(T.Name))) {
      if (Found)
        return nullptr; // Ambiguous.
      Found = &K;
    }
  return Found;
}

} // namespace astra
