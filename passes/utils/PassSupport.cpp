//===- PassSupport.cpp ----------------------------------------------------===//
#include "utils/PassSupport.h"
#include "astra/Support/TextSplice.h"
#include "utils/CudaIdioms.h"
#include "utils/Mutation.h"
#include "utils/SourceText.h"

#include "astra/Analysis/PointerAccess.h"
#include "astra/Spec/Spec.h"

#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"
#include "clang/AST/TypeLoc.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/FoldingSet.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSwitch.h"

#include <algorithm>
#include <set>

using namespace clang;
using namespace llvm;

namespace astra {

//===----------------------------------------------------------------------===//
// Edits
//===----------------------------------------------------------------------===//

std::optional<TextEdit> makeEdit(const PassContext &PC, CharSourceRange Range,
                                 StringRef Text) {
  // Text that reaches the AST through a macro (its body or an argument) is
  // never edited: the macro may use it twice, stringize it or be shared.
  if (Range.isInvalid() || Range.getBegin().isMacroID() ||
      Range.getEnd().isMacroID())
    return std::nullopt;
  const SourceManager &SM = PC.sourceManager();
  CharSourceRange FR = Lexer::makeFileCharRange(Range, SM, PC.langOpts());
  if (FR.isInvalid() || !PC.isEditable(FR.getAsRange()))
    return std::nullopt;
  unsigned B = SM.getFileOffset(FR.getBegin());
  unsigned E = SM.getFileOffset(FR.getEnd());
  if (E < B)
    return std::nullopt;
  return TextEdit{FR.getBegin(), E - B, Text.str()};
}

std::optional<TextEdit> makeTokenEdit(const PassContext &PC,
                                      SourceRange TokenRange, StringRef Text) {
  return makeEdit(PC, CharSourceRange::getTokenRange(TokenRange), Text);
}

std::optional<TextEdit> makeInsertBefore(const PassContext &PC,
                                         SourceLocation Loc, StringRef Text) {
  return makeEdit(PC, CharSourceRange::getCharRange(Loc, Loc), Text);
}

std::optional<TextEdit> makeInsertAfterToken(const PassContext &PC,
                                             SourceLocation Loc,
                                             StringRef Text) {
  if (Loc.isInvalid() || Loc.isMacroID())
    return std::nullopt;
  SourceLocation End =
      Lexer::getLocForEndOfToken(Loc, 0, PC.sourceManager(), PC.langOpts());
  if (End.isInvalid())
    return std::nullopt;
  return makeEdit(PC, CharSourceRange::getCharRange(End, End), Text);
}

bool EditSet::addSite(const SourceManager &SM,
                      const std::vector<TextEdit> &Site) {
  std::vector<Entry> New;
  for (const TextEdit &E : Site) {
    auto [File, Offset] = SM.getDecomposedLoc(E.Begin);
    New.push_back({File, Offset, E.Length, E.Text, E.Begin});
  }
  auto Overlap = [](const Entry &A, const Entry &B) {
    if (A.File != B.File)
      return false;
    // Two replacements that share a byte, or an insertion strictly inside a
    // replacement. Insertions at either end of a replacement are fine.
    if (A.Length && B.Length)
      return A.Offset < B.Offset + B.Length && B.Offset < A.Offset + A.Length;
    if (A.Length)
      return B.Offset > A.Offset && B.Offset < A.Offset + A.Length;
    if (B.Length)
      return A.Offset > B.Offset && A.Offset < B.Offset + B.Length;
    return false;
  };
  for (const Entry &N : New)
    for (const Entry &O : Edits)
      if (Overlap(N, O))
        return false;
  Edits.insert(Edits.end(), New.begin(), New.end());
  return true;
}

bool EditSet::commit(PassContext &PC) const {
  std::vector<Entry> Sorted = Edits;
  // By file, then as text splices are applied (spliceBefore): by offset; at
  // one offset insertions first, in the order they were added, then the
  // replacement that starts there.
  std::stable_sort(Sorted.begin(), Sorted.end(),
                   [](const Entry &A, const Entry &B) {
                     if (A.File != B.File)
                       return A.File < B.File;
                     return spliceBefore({A.Offset, A.Length, {}},
                                         {B.Offset, B.Length, {}});
                   });
  bool Ok = true;
  for (size_t I = 0; I < Sorted.size();) {
    // Merge edits that touch (the next begins where this group ends) into
    // one replacement.
    const Entry &First = Sorted[I];
    unsigned End = First.Offset + First.Length;
    std::string Text = First.Text;
    size_t J = I + 1;
    while (J < Sorted.size() && Sorted[J].File == First.File &&
           Sorted[J].Offset == End) {
      Text += Sorted[J].Text;
      End += Sorted[J].Length;
      ++J;
    }
    SourceLocation B = First.Loc;
    Ok &= PC.replace(CharSourceRange::getCharRange(
                         B, B.getLocWithOffset(End - First.Offset)),
                     Text);
    I = J;
  }
  return Ok;
}

std::vector<TextEdit> EditSet::edits() const {
  std::vector<TextEdit> Out;
  for (const Entry &E : Edits)
    Out.push_back({E.Loc, E.Length, E.Text});
  return Out;
}

//===----------------------------------------------------------------------===//
// Template votes
//===----------------------------------------------------------------------===//

std::string instantiationName(const FunctionDecl *D, const LangOptions &LO) {
  std::string S;
  raw_string_ostream OS(S);
  D->getNameForDiagnostic(OS, PrintingPolicy(LO), /*Qualified=*/false);
  return S;
}

std::vector<KernelBody> kernelBodies(const FunctionDecl *FD) {
  std::vector<KernelBody> Bodies;
  if (const FunctionTemplateDecl *FTD = FD->getDescribedFunctionTemplate()) {
    for (const FunctionDecl *Spec : FTD->specializations()) {
      // Explicit specializations have their own text; only instantiations
      // share the pattern's source locations.
      if (!Spec->getBody() || Spec->getTemplateSpecializationKind() ==
                                  TSK_ExplicitSpecialization)
        continue;
      Bodies.push_back(
          {Spec, instantiationName(Spec, Spec->getASTContext().getLangOpts())});
    }
  }
  if (Bodies.empty())
    Bodies.push_back({FD, ""});
  return Bodies;
}

bool neverInstantiated(const std::vector<KernelBody> &Bodies) {
  return Bodies.size() == 1 && Bodies.front().Label.empty() &&
         Bodies.front().FD->getDescribedFunctionTemplate();
}

namespace {
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

const VarDecl *varAtSameLocation(const FunctionDecl *FD, const VarDecl *V) {
  if (const auto *P = dyn_cast<ParmVarDecl>(V)) {
    unsigned I = P->getFunctionScopeIndex();
    return I < FD->getNumParams() ? FD->getParamDecl(I) : nullptr;
  }
  VarAtLocation F(V->getLocation());
  F.TraverseStmt(FD->getBody());
  return F.Found;
}

void SiteVotes::accept(unsigned Body, SourceLocation Loc, StringRef Kind,
                       std::vector<TextEdit> Edits, std::string Message) {
  Site &S = Sites[{Loc.getRawEncoding(), Kind.str()}];
  S.Loc = Loc;
  for (const Vote &V : S.Votes)
    if (V.Body == Body)
      return;
  S.Votes.push_back({Body, true, std::move(Edits), std::move(Message)});
}

void SiteVotes::reject(unsigned Body, SourceLocation Loc, StringRef Kind,
                       std::string Message) {
  Site &S = Sites[{Loc.getRawEncoding(), Kind.str()}];
  S.Loc = Loc;
  for (Vote &V : S.Votes)
    if (V.Body == Body) {
      // A rejection outweighs an acceptance from the same body.
      V = {Body, false, {}, std::move(Message)};
      return;
    }
  S.Votes.push_back({Body, false, {}, std::move(Message)});
}

void SiteVotes::resolve(PassContext &PC, EditSet &ES) const {
  const SourceManager &SM = PC.sourceManager();
  std::vector<const Site *> Order;
  for (const auto &KV : Sites)
    Order.push_back(&KV.second);
  std::stable_sort(Order.begin(), Order.end(),
                   [&](const Site *A, const Site *B) {
                     return SM.isBeforeInTranslationUnit(A->Loc, B->Loc);
                   });
  bool Template = Bodies.size() > 1 || !Bodies.front().Label.empty();
  auto In = [&](unsigned Body) {
    return Template ? "in " + Bodies[Body].Label + ": " : std::string();
  };
  for (const Site *S : Order) {
    const Vote *Bad = nullptr;
    for (const Vote &V : S->Votes)
      if (!V.Ok) {
        Bad = &V;
        break;
      }
    if (Bad) {
      PC.refused(S->Loc, In(Bad->Body) + Bad->Message);
      continue;
    }
    if (S->Votes.size() < Bodies.size()) {
      std::string Missing;
      for (unsigned B = 0; B < Bodies.size(); ++B)
        if (llvm::none_of(S->Votes, [&](const Vote &V) { return V.Body == B; }))
          Missing += (Missing.empty() ? "" : ", ") + Bodies[B].Label;
      PC.refused(S->Loc, "the code is not part of every instantiation (not "
                         "in " + Missing + "); the pattern cannot be "
                         "shown correct for all of them");
      continue;
    }
    const Vote &First = S->Votes.front();
    const Vote *Differs = nullptr;
    for (const Vote &V : S->Votes)
      if (V.Edits != First.Edits) {
        Differs = &V;
        break;
      }
    if (Differs) {
      PC.refused(S->Loc, "instantiations " + Bodies[First.Body].Label +
                             " and " + Bodies[Differs->Body].Label +
                             " need different rewrites here");
      continue;
    }
    if (!ES.addSite(SM, First.Edits)) {
      PC.refused(S->Loc, "the rewrite overlaps another rewrite of this pass; "
                         "run the pass again to apply it");
      continue;
    }
    PC.fired(S->Loc, First.Message);
  }
}

//===----------------------------------------------------------------------===//
// AST queries
//===----------------------------------------------------------------------===//

bool isSystemFunction(const SourceManager &SM, const FunctionDecl *FD) {
  if (!FD)
    return false;
  const FunctionDecl *First = FD->getFirstDecl();
  SourceLocation Loc = First->getLocation();
  if (Loc.isInvalid())
    return FD->getBuiltinID() != 0;
  return SM.isInSystemHeader(SM.getExpansionLoc(Loc));
}

StringRef systemCalleeName(const SourceManager &SM, const CallExpr *CE) {
  const FunctionDecl *FD = CE ? CE->getDirectCallee() : nullptr;
  if (!FD || !FD->getIdentifier() || !isSystemFunction(SM, FD))
    return "";
  const DeclContext *DC = FD->getDeclContext()->getRedeclContext();
  if (!DC->isTranslationUnit() && !DC->isStdNamespace())
    return "";
  return FD->getName();
}

StringRef libraryCalleeName(const SourceManager &SM, const ASTContext &Ctx,
                            const CallExpr *CE) {
  StringRef Name = systemCalleeName(SM, CE);
  if (Name.empty())
    if (const FunctionDecl *Callee = CE->getDirectCallee())
      if (unsigned ID = Callee->getBuiltinID())
        if (Ctx.BuiltinInfo.isConst(ID))
          Name = Callee->getName();
  return Name;
}

std::optional<int64_t>
evalIntAt(const Expr *E,
          function_ref<std::optional<int64_t>(const Expr *, unsigned)> Leaf,
          unsigned Depth) {
  if (!E || Depth > 32)
    return std::nullopt;
  E = E->IgnoreParens();
  if (const auto *IL = dyn_cast<IntegerLiteral>(E))
    return IL->getValue().getLimitedValue(INT64_MAX);
  if (cudaidiom::builtinRef(E->IgnoreParenImpCasts()))
    return Leaf(E, Depth);
  if (const auto *CE = dyn_cast<CastExpr>(E)) {
    if (!CE->getType()->isIntegerType())
      return std::nullopt;
    return evalIntAt(CE->getSubExpr(), Leaf, Depth + 1);
  }
  if (const auto *UO = dyn_cast<UnaryOperator>(E)) {
    auto V = evalIntAt(UO->getSubExpr(), Leaf, Depth + 1);
    if (!V)
      return std::nullopt;
    if (UO->getOpcode() == UO_Minus)
      return -*V;
    if (UO->getOpcode() == UO_Plus)
      return *V;
    return std::nullopt;
  }
  if (const auto *BO = dyn_cast<BinaryOperator>(E)) {
    auto L = evalIntAt(BO->getLHS(), Leaf, Depth + 1);
    auto R = evalIntAt(BO->getRHS(), Leaf, Depth + 1);
    if (!L || !R)
      return std::nullopt;
    switch (BO->getOpcode()) {
    case BO_Add:
      return *L + *R;
    case BO_Sub:
      return *L - *R;
    case BO_Mul:
      return *L * *R;
    case BO_Div:
      return *R ? std::optional<int64_t>(*L / *R) : std::nullopt;
    case BO_Rem:
      return *R ? std::optional<int64_t>(*L % *R) : std::nullopt;
    case BO_Shl:
      return *R >= 0 && *R < 32 ? std::optional<int64_t>(*L << *R)
                                : std::nullopt;
    case BO_Shr:
      return *R >= 0 && *R < 63 ? std::optional<int64_t>(*L >> *R)
                                : std::nullopt;
    default:
      return std::nullopt;
    }
  }
  return Leaf(E, Depth);
}

bool launchArgsMayAlias(const CUDAKernelCallExpr *E, unsigned I, unsigned J) {
  auto BI = pointerBases(E->getArg(I));
  auto BJ = pointerBases(E->getArg(J));
  if (BI.empty() || BJ.empty())
    return true; // Unknown origin (a call, a member): assume the worst.
  for (const VarDecl *V : BI)
    if (BJ.count(V))
      return true;
  return false;
}

std::optional<int64_t> constInt(const ASTContext &Ctx, const Expr *E) {
  Expr::EvalResult R;
  if (!E || E->isValueDependent() || !E->EvaluateAsInt(R, Ctx))
    return std::nullopt;
  return R.Val.getInt().getExtValue();
}

bool isShuffleElementType(QualType T) {
  const auto *BT = T->getAs<BuiltinType>();
  if (!BT)
    return false;
  switch (BT->getKind()) {
  case BuiltinType::Float:
  case BuiltinType::Double:
  case BuiltinType::Int:
  case BuiltinType::UInt:
  case BuiltinType::Long:
  case BuiltinType::ULong:
  case BuiltinType::LongLong:
  case BuiltinType::ULongLong:
    return true;
  default:
    return false;
  }
}

std::string arrayElementTypeText(const PassContext &PC, const VarDecl *V) {
  TypeLoc TL = V->getTypeSourceInfo()->getTypeLoc();
  if (auto ATL = TL.getAs<ArrayTypeLoc>()) {
    std::string T = PC.text(ATL.getElementLoc().getSourceRange());
    if (!T.empty())
      return T;
  }
  QualType Elem =
      PC.astContext().getAsArrayType(V->getType())->getElementType();
  return Elem.getUnqualifiedType().getAsString(
      PC.astContext().getPrintingPolicy());
}

/// Whether a spec entry named \p N describes kernel \p K (or one of its
/// instantiations).
static bool describes(StringRef N, const KernelInfo &K) {
  if (N == K.QualifiedName || N == K.Name)
    return true;
  return (N.consume_front(K.QualifiedName) || N.consume_front(K.Name)) &&
         N.ltrim().starts_with("<");
}

std::vector<const KernelSpec *> specsOf(const PassOptions &O,
                                        const KernelInfo &K) {
  // PassOptions::Spec belongs to the kernel a request is about; a request
  // over a whole file must not apply it to the file's other kernels.
  if (O.Spec)
    return O.Spec->Kernel.empty() || describes(O.Spec->Kernel, K)
               ? std::vector<const KernelSpec *>{O.Spec}
               : std::vector<const KernelSpec *>{};
  std::vector<const KernelSpec *> Out;
  if (!O.Specs)
    return Out;
  for (const KernelSpec &S : O.Specs->Kernels)
    if (describes(S.Kernel, K))
      Out.push_back(&S);
  return Out;
}

static std::string withoutBlanks(StringRef S) {
  std::string R;
  for (char C : S)
    if (C != ' ' && C != '\t')
      R += C;
  return R;
}

const KernelSpec *specForBody(const std::vector<const KernelSpec *> &Specs,
                              StringRef Label) {
  if (Specs.size() == 1)
    return Specs.front();
  std::string Want = withoutBlanks(Label);
  for (const KernelSpec *S : Specs) {
    std::string Have = withoutBlanks(S->Kernel);
    // Spec names may be qualified; labels are not.
    if (Have == Want || StringRef(Have).ends_with("::" + Want))
      return S;
  }
  return nullptr;
}

std::string posText(const PassContext &PC, SourceLocation Loc) {
  return makePos(PC.sourceManager(), Loc).str();
}

bool refuseUnlessAllLaunchesVisible(PassContext &PC, const KernelLaunches &KL,
                                    SourceLocation Loc) {
  if (!KL.allVisible()) {
    PC.refused(KL.HiddenLoc.isValid() ? KL.HiddenLoc : Loc,
               "the launch is not this file's to change: " + KL.Hidden);
    return true;
  }
  for (const LaunchFact &L : KL.Launches)
    if (!L.Chevron) {
      PC.refused(L.E->getBeginLoc(),
                 L.where() + " goes through a launch API, which this pass "
                             "does not edit");
      return true;
    }
  return false;
}

/// Evaluates an integer expression: a constant, or a local variable
/// initialized once and never changed whose initializer evaluates.
std::optional<int64_t> evalLaunchValue(const Expr *E, const ASTContext &Ctx,
                                       unsigned Depth) {
  if (!E || Depth > 8 || E->isValueDependent() || E->isTypeDependent())
    return std::nullopt;
  Expr::EvalResult R;
  if (E->EvaluateAsInt(R, Ctx)) {
    const APSInt &V = R.Val.getInt();
    if (V.getSignificantBits() > 63)
      return std::nullopt;
    return V.getExtValue();
  }
  const auto *DRE = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts());
  const auto *V = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
  if (!V || !V->isLocalVarDecl() || !V->getInit() ||
      V->getType()->isReferenceType())
    return std::nullopt;
  const auto *FD = dyn_cast<FunctionDecl>(V->getDeclContext());
  if (!FD || !FD->getBody() || mayModify(FD->getBody(), V))
    return std::nullopt;
  return evalLaunchValue(V->getInit(), Ctx, Depth + 1);
}

/// The three dimensions of a launch's block argument (a dim3 or an integer
/// converted to one).
std::optional<std::array<int64_t, 3>>
launchBlockDims(const Expr *E, const ASTContext &Ctx, unsigned Depth) {
  if (!E || Depth > 8)
    return std::nullopt;
  E = E->IgnoreImplicit()->IgnoreParens();
  if (const auto *FC = dyn_cast<CXXFunctionalCastExpr>(E))
    return launchBlockDims(FC->getSubExpr(), Ctx, Depth + 1);
  if (const auto *CE = dyn_cast<CXXConstructExpr>(E)) {
    const CXXConstructorDecl *Ctor = CE->getConstructor();
    if (Ctor->isCopyOrMoveConstructor() && CE->getNumArgs() >= 1) {
      // A copy of a local dim3: its initializer, if it never changes.
      const Expr *Src = CE->getArg(0)->IgnoreParenImpCasts();
      const auto *DRE = dyn_cast<DeclRefExpr>(Src);
      const auto *V = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
      if (!V || !V->getInit() || !V->isLocalVarDecl())
        return launchBlockDims(Src, Ctx, Depth + 1);
      const auto *FD = dyn_cast<FunctionDecl>(V->getDeclContext());
      if (!FD || !FD->getBody() || mayModify(FD->getBody(), V))
        return std::nullopt;
      return launchBlockDims(V->getInit(), Ctx, Depth + 1);
    }
    std::array<int64_t, 3> D = {1, 1, 1};
    if (CE->getNumArgs() > 3)
      return std::nullopt;
    for (unsigned I = 0; I < CE->getNumArgs(); ++I) {
      auto V = evalLaunchValue(CE->getArg(I), Ctx);
      if (!V)
        return std::nullopt;
      D[I] = *V;
    }
    return D;
  }
  if (E->getType()->isIntegerType()) {
    if (auto V = evalLaunchValue(E, Ctx))
      return std::array<int64_t, 3>{*V, 1, 1};
    return std::nullopt;
  }
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    const auto *V = dyn_cast<VarDecl>(DRE->getDecl());
    if (V && V->getInit() && V->isLocalVarDecl())
      if (const auto *FD = dyn_cast<FunctionDecl>(V->getDeclContext()))
        if (FD->getBody() && !mayModify(FD->getBody(), V))
          return launchBlockDims(V->getInit(), Ctx, Depth + 1);
  }
  return std::nullopt;
}

const Expr *writtenDim3(const Expr *G) {
  G = G->IgnoreImplicit();
  if (const auto *CE = dyn_cast<CXXConstructExpr>(G))
    if (!isa<CXXTemporaryObjectExpr>(CE) && CE->getNumArgs() >= 1) {
      bool RestDefault = true;
      for (unsigned I = 1; I < CE->getNumArgs(); ++I)
        RestDefault &= isa<CXXDefaultArgExpr>(CE->getArg(I));
      if (RestDefault)
        return CE->getArg(0)->IgnoreImplicit();
    }
  return G;
}

std::optional<LaunchDim> readDim(const PassContext &PC, const Expr *Arg) {
  const Expr *G = writtenDim3(Arg);
  LaunchDim D;
  if (G->getType()->isIntegerType()) {
    D.X = PC.text(G->getSourceRange());
    D.IsInt = D.OneDim = true;
    return D;
  }
  auto FromConstruct = [&](const CXXConstructExpr *CE,
                           std::string Name) -> std::optional<LaunchDim> {
    unsigned Explicit = 0;
    for (unsigned I = 0; I < CE->getNumArgs(); ++I)
      if (!isa<CXXDefaultArgExpr>(CE->getArg(I)))
        Explicit = I + 1;
    if (Explicit == 0)
      return std::nullopt;
    if (!Name.empty()) {
      D.X = Name + ".x";
      D.Rest = ", " + Name + ".y, " + Name + ".z";
    } else {
      D.X = PC.text(CE->getArg(0)->getSourceRange());
      for (unsigned I = 1; I < 3; ++I)
        D.Rest += ", " + (I < Explicit
                              ? PC.text(CE->getArg(I)->getSourceRange())
                              : std::string("1"));
    }
    D.OneDim = Explicit == 1;
    return D;
  };
  const Expr *S = G->IgnoreParens();
  if (const auto *FC = dyn_cast<CXXFunctionalCastExpr>(S))
    S = FC->getSubExpr()->IgnoreImplicit();
  if (const auto *CE = dyn_cast<CXXConstructExpr>(S))
    if (CE->getNumArgs() >= 1)
      return FromConstruct(CE, "");
  if (const auto *DRE = dyn_cast<DeclRefExpr>(S))
    if (const auto *V = dyn_cast<VarDecl>(DRE->getDecl()))
      if (const auto *Host = dyn_cast<FunctionDecl>(V->getDeclContext());
          Host && V->isLocalVarDecl() && V->getInit() && Host->getBody() &&
          !mayModify(Host->getBody(), V))
        if (const auto *CE =
                dyn_cast<CXXConstructExpr>(V->getInit()->IgnoreImplicit()))
          return FromConstruct(CE, V->getName().str());
  return std::nullopt;
}


void localsRead(const Stmt *S, std::set<const VarDecl *> &Out) {
  if (!S)
    return;
  if (const auto *DRE = dyn_cast<DeclRefExpr>(S)) {
    const auto *V = dyn_cast<VarDecl>(DRE->getDecl());
    if (V && V->isLocalVarDecl() && isa<FunctionDecl>(V->getDeclContext()) &&
        Out.insert(V).second)
      localsRead(V->getInit(), Out);
    return;
  }
  for (const Stmt *C : S->children())
    localsRead(C, Out);
}

const DeclRefExpr *
configLocalReadElsewhere(ASTContext &Ctx, const Expr *Arg,
                         ArrayRef<const CUDAKernelCallExpr *> Launches,
                         const VarDecl *&Var) {
  // The locals of Arg, and every local any of the launches' configurations
  // reads (the grid's `blocks` reads the block's `threads`).
  std::set<const VarDecl *> Locals, ConfigLocals;
  localsRead(Arg, Locals);
  std::set<const Stmt *> Configs;
  for (const CUDAKernelCallExpr *L : Launches)
    if (L->getConfig()) {
      Configs.insert(L->getConfig());
      localsRead(L->getConfig(), ConfigLocals);
    }
  for (const VarDecl *V : Locals) {
    const auto *Host = cast<FunctionDecl>(V->getDeclContext());
    for (const DeclRefExpr *R : referencesTo(Host->getBody(), V)) {
      // Up from the read: a configuration of one of the launches, or the
      // initializer of another of the locals, makes it one of theirs.
      bool Theirs = false;
      DynTypedNodeList Ps = Ctx.getParents(*R);
      while (!Theirs && !Ps.empty()) {
        if (const auto *P = Ps[0].get<Stmt>()) {
          Theirs = Configs.count(P) > 0;
          Ps = Ctx.getParents(*P);
        } else if (const auto *D = Ps[0].get<VarDecl>()) {
          Theirs = ConfigLocals.count(D) > 0;
          break;
        } else {
          break;
        }
      }
      if (!Theirs) {
        Var = V;
        return R;
      }
    }
  }
  return nullptr;
}

bool launchDimHasSideEffects(const Expr *Arg, const ASTContext &Ctx) {
  const Expr *W = writtenDim3(Arg)->IgnoreParens();
  if (const auto *FC = dyn_cast<CXXFunctionalCastExpr>(W))
    W = FC->getSubExpr()->IgnoreImplicit();
  if (const auto *CE = dyn_cast<CXXConstructExpr>(W))
    return llvm::any_of(CE->arguments(), [&](const Expr *X) {
      return X->HasSideEffects(Ctx);
    });
  return W->HasSideEffects(Ctx);
}

bool isOwnLocal(const VarDecl *V) {
  return V && V->isLocalVarDecl() && !V->isStaticLocal() &&
         !V->hasAttr<CUDASharedAttr>() && !V->getType()->isReferenceType();
}

bool hasNonLocalEffect(const Stmt *S, const SourceManager &SM) {
  if (!S)
    return false;
  // threadIdx.y and the like call the built-in's accessor: no effect.
  if (isa<PseudoObjectExpr>(S) && cudaidiom::matchBuiltin(cast<Expr>(S)))
    return false;
  if (const auto *BO = dyn_cast<BinaryOperator>(S))
    if (BO->isAssignmentOp() &&
        !isOwnLocal(lvalueVar(BO->getLHS(), /*ThroughLocalArrays=*/true)))
      return true;
  if (const auto *UO = dyn_cast<UnaryOperator>(S))
    if (UO->isIncrementDecrementOp() &&
        !isOwnLocal(lvalueVar(UO->getSubExpr(), /*ThroughLocalArrays=*/true)))
      return true;
  if (const auto *CE = dyn_cast<CallExpr>(S)) {
    StringRef Name = systemCalleeName(SM, CE);
    if (Name.empty() || systemCallHasEffect(Name))
      return true;
  }
  if (const auto *CE = dyn_cast<CXXConstructExpr>(S))
    if (!CE->getConstructor()->isTrivial() &&
        !isSystemFunction(SM, CE->getConstructor()))
      return true;
  if (isa<LambdaExpr>(S) || isa<AsmStmt>(S))
    return true;
  for (const Stmt *C : S->children())
    if (hasNonLocalEffect(C, SM))
      return true;
  return false;
}

bool systemCallHasEffect(StringRef Name) {
  return Name.starts_with("atomic") || Name.starts_with("__atomic") ||
         Name.starts_with("__nv_atomic") || Name.contains("printf") ||
         Name.starts_with("__assert") || Name == "__trap" ||
         Name == "malloc" || Name == "free" || Name.starts_with("__st") ||
         Name.starts_with("__threadfence") || Name.starts_with("__nanosleep");
}

static const Stmt *findEarlyExit(const Stmt *S, bool ContinueExits,
                                 bool InLoop, bool InSwitch) {
  if (!S || isa<LambdaExpr>(S))
    return nullptr;
  if (isa<ReturnStmt>(S) || isa<GotoStmt>(S) || isa<IndirectGotoStmt>(S) ||
      isa<CoreturnStmt>(S))
    return S;
  if (isa<BreakStmt>(S) && !InLoop && !InSwitch)
    return S;
  if (isa<ContinueStmt>(S) && ContinueExits && !InLoop)
    return S;
  bool Loop = InLoop || isa<ForStmt>(S) || isa<WhileStmt>(S) ||
              isa<DoStmt>(S) || isa<CXXForRangeStmt>(S);
  bool Switch = InSwitch || isa<SwitchStmt>(S);
  for (const Stmt *C : S->children())
    if (const Stmt *E = findEarlyExit(C, ContinueExits, Loop, Switch))
      return E;
  return nullptr;
}

const Stmt *findEarlyExit(const Stmt *S, bool ContinueExits) {
  return findEarlyExit(S, ContinueExits, false, false);
}

bool sameExpr(const ASTContext &Ctx, const Expr *A, const Expr *B) {
  llvm::FoldingSetNodeID IA, IB;
  A->IgnoreParenImpCasts()->Profile(IA, Ctx, /*Canonical=*/true);
  B->IgnoreParenImpCasts()->Profile(IB, Ctx, /*Canonical=*/true);
  return IA == IB;
}

bool mentionsDecl(const Stmt *S, const ValueDecl *D) {
  struct Finder : RecursiveASTVisitor<Finder> {
    const ValueDecl *D;
    bool Found = false;
    bool VisitDeclRefExpr(DeclRefExpr *R) {
      Found |= R->getDecl() == D;
      return !Found;
    }
  } F;
  F.D = D;
  F.TraverseStmt(const_cast<Stmt *>(S));
  return F.Found;
}

std::optional<ArgCombine> matchArgCombine(const ASTContext &Ctx,
                                          const IfStmt *If) {
  if (!If || If->getElse() || If->getInit() || If->getConditionVariable())
    return std::nullopt;
  const auto *Then = dyn_cast<CompoundStmt>(If->getThen());
  if (!Then || Then->size() != 2)
    return std::nullopt;
  std::array<const BinaryOperator *, 2> As{};
  for (unsigned I = 0; I < 2; ++I) {
    const auto *E = dyn_cast<Expr>(Then->body_begin()[I]);
    As[I] = E ? dyn_cast<BinaryOperator>(E->IgnoreParenImpCasts()) : nullptr;
    if (!As[I] || As[I]->getOpcode() != BO_Assign)
      return std::nullopt;
  }
  // The new pair is read after the first assignment: it must not read what
  // the step assigns.
  for (const BinaryOperator *L : As) {
    const VarDecl *D = lvalueVar(L->getLHS(), /*ThroughLocalArrays=*/true);
    if (!D || mentionsDecl(As[0]->getRHS(), D) ||
        mentionsDecl(As[1]->getRHS(), D))
      return std::nullopt;
  }
  const auto *Or = dyn_cast<BinaryOperator>(If->getCond()->IgnoreParenImpCasts());
  if (!Or || Or->getOpcode() != BO_LOr)
    return std::nullopt;
  auto Bin = [](const Expr *E, BinaryOperatorKind K) -> const BinaryOperator * {
    const auto *BO = dyn_cast<BinaryOperator>(E->IgnoreParenImpCasts());
    return BO && BO->getOpcode() == K ? BO : nullptr;
  };
  /// `Small < Big` or `Big > Small`.
  auto Less = [&](const Expr *E, const Expr *Small, const Expr *Big) {
    if (const BinaryOperator *BO = Bin(E, BO_LT))
      return sameExpr(Ctx, BO->getLHS(), Small) &&
             sameExpr(Ctx, BO->getRHS(), Big);
    if (const BinaryOperator *BO = Bin(E, BO_GT))
      return sameExpr(Ctx, BO->getLHS(), Big) &&
             sameExpr(Ctx, BO->getRHS(), Small);
    return false;
  };
  auto Equal = [&](const Expr *E, const Expr *A, const Expr *B) {
    const BinaryOperator *BO = Bin(E, BO_EQ);
    return BO && ((sameExpr(Ctx, BO->getLHS(), A) &&
                   sameExpr(Ctx, BO->getRHS(), B)) ||
                  (sameExpr(Ctx, BO->getLHS(), B) &&
                   sameExpr(Ctx, BO->getRHS(), A)));
  };
  for (unsigned VI = 0; VI < 2; ++VI) {
    const BinaryOperator *VA = As[VI], *IA = As[1 - VI];
    const Expr *CurVal = VA->getLHS(), *NewVal = VA->getRHS();
    const Expr *CurIdx = IA->getLHS(), *NewIdx = IA->getRHS();
    if (!CurVal->getType()->isArithmeticType() ||
        !CurIdx->getType()->isIntegerType())
      continue;
    for (unsigned OI = 0; OI < 2; ++OI) {
      const Expr *First = OI ? Or->getRHS() : Or->getLHS();
      const BinaryOperator *And = Bin(OI ? Or->getLHS() : Or->getRHS(), BO_LAnd);
      if (!And)
        continue;
      bool Max = Less(First, CurVal, NewVal);
      if (!Max && !Less(First, NewVal, CurVal))
        continue;
      for (unsigned AI = 0; AI < 2; ++AI) {
        const Expr *Eq = AI ? And->getRHS() : And->getLHS();
        const Expr *Tie = AI ? And->getLHS() : And->getRHS();
        if (Equal(Eq, NewVal, CurVal) && Less(Tie, NewIdx, CurIdx))
          return ArgCombine{Max, CurVal, CurIdx, NewVal, NewIdx};
      }
    }
  }
  return std::nullopt;
}

Use accessUse(const ArraySubscriptExpr *ASE, const ParentMap &PM) {
  const Expr *E = ASE;
  bool ThroughField = false;
  auto Assigned = [&](bool Compound) {
    return Compound || ThroughField ? Use::ReadWrite : Use::Write;
  };
  auto BindUse = [](QualType ParamT) {
    if (!ParamT->isReferenceType())
      return Use::Read;
    return ParamT.getNonReferenceType().isConstQualified() ? Use::Read
                                                           : Use::Escape;
  };
  while (true) {
    const Stmt *P = PM.getParent(E);
    if (!P)
      return Use::Escape;
    if (isa<ParenExpr>(P)) {
      E = cast<Expr>(P);
      continue;
    }
    if (const auto *ICE = dyn_cast<ImplicitCastExpr>(P)) {
      if (ICE->getCastKind() == CK_LValueToRValue)
        return Use::Read;
      if (ICE->getCastKind() == CK_NoOp ||
          ICE->getCastKind() == CK_UncheckedDerivedToBase ||
          ICE->getCastKind() == CK_DerivedToBase) {
        E = ICE;
        continue;
      }
      return Use::Escape;
    }
    if (const auto *ME = dyn_cast<MemberExpr>(P)) {
      if (ME->isArrow())
        return Use::Escape;
      if (isa<FieldDecl>(ME->getMemberDecl())) {
        ThroughField = true;
        E = ME;
        continue;
      }
      const auto *M = dyn_cast<CXXMethodDecl>(ME->getMemberDecl());
      const auto *Call = dyn_cast_or_null<CXXMemberCallExpr>(PM.getParent(ME));
      if (!M || !Call)
        return Use::Escape;
      if (M->isConst())
        return Use::Read;
      if (M->isCopyAssignmentOperator() || M->isMoveAssignmentOperator())
        return Assigned(false);
      return Use::Escape;
    }
    if (const auto *BO = dyn_cast<BinaryOperator>(P)) {
      if (BO->isAssignmentOp() && BO->getLHS() == E)
        return Assigned(BO->isCompoundAssignmentOp());
      return Use::Escape;
    }
    if (const auto *UO = dyn_cast<UnaryOperator>(P))
      return UO->isIncrementDecrementOp() ? Use::ReadWrite : Use::Escape;
    if (const auto *OC = dyn_cast<CXXOperatorCallExpr>(P)) {
      const FunctionDecl *Callee = OC->getDirectCallee();
      if (!Callee)
        return Use::Escape;
      bool Member = isa<CXXMethodDecl>(Callee);
      for (unsigned I = 0; I < OC->getNumArgs(); ++I) {
        if (OC->getArg(I) != E)
          continue;
        if (I == 0 && (OC->isAssignmentOp() ||
                       OC->getOperator() == OO_PlusPlus ||
                       OC->getOperator() == OO_MinusMinus))
          return Assigned(OC->getOperator() != OO_Equal);
        if (Member && I == 0)
          return cast<CXXMethodDecl>(Callee)->isConst() ? Use::Read
                                                        : Use::Escape;
        unsigned PI = Member ? I - 1 : I;
        if (PI < Callee->getNumParams())
          return BindUse(Callee->getParamDecl(PI)->getType());
        return Use::Escape;
      }
      return Use::Escape;
    }
    if (const auto *CE = dyn_cast<CallExpr>(P)) {
      const FunctionDecl *Callee = CE->getDirectCallee();
      for (unsigned I = 0; Callee && I < CE->getNumArgs(); ++I)
        if (CE->getArg(I) == E)
          return I < Callee->getNumParams()
                     ? BindUse(Callee->getParamDecl(I)->getType())
                     : Use::Escape;
      return Use::Escape;
    }
    if (const auto *CC = dyn_cast<CXXConstructExpr>(P)) {
      const CXXConstructorDecl *Ctor = CC->getConstructor();
      for (unsigned I = 0; I < CC->getNumArgs(); ++I)
        if (CC->getArg(I) == E)
          return I < Ctor->getNumParams()
                     ? BindUse(Ctor->getParamDecl(I)->getType())
                     : Use::Escape;
      return Use::Escape;
    }
    if (const auto *DS = dyn_cast<DeclStmt>(P)) {
      for (const Decl *D : DS->decls())
        if (const auto *V = dyn_cast<VarDecl>(D))
          if (V->getInit() == E)
            return BindUse(V->getType());
      return Use::Escape;
    }
    return Use::Escape;
  }
}

bool isVectorizedLoop(const ForStmt *F, const ParentMap &PM) {
  for (const Stmt *S = F; S; S = PM.getParent(S)) {
    const auto *If = dyn_cast<IfStmt>(S);
    if (!If)
      continue;
    const auto *Then = dyn_cast<CompoundStmt>(If->getThen());
    if (!Then || Then->body_empty())
      continue;
    if (const auto *DS = dyn_cast<DeclStmt>(Then->body_front()))
      if (const auto *V = dyn_cast<VarDecl>(*DS->decl_begin()))
        if (V->getName() == "astra_vec")
          return true;
  }
  return false;
}

std::optional<LoopText> loopText(const PassContext &PC, const ForStmt *L,
                                 std::string &Why) {
  const SourceManager &SM = PC.sourceManager();
  const LangOptions &LO = PC.langOpts();
  SourceLocation LoopEnd = endOfStatement(L, SM, LO);
  CharSourceRange Range = Lexer::makeFileCharRange(
      CharSourceRange::getTokenRange(L->getSourceRange()), SM, LO);
  if (L->getForLoc().isMacroID() || Range.isInvalid() ||
      !PC.isEditable(Range.getAsRange()) || LoopEnd.isInvalid() ||
      LoopEnd.isMacroID()) {
    Why = "the loop comes from a macro expansion";
    return std::nullopt;
  }
  auto Offset = [&](SourceLocation Loc) {
    return SM.getFileOffset(SM.getExpansionLoc(Loc));
  };
  FileID FID = SM.getFileID(SM.getExpansionLoc(L->getForLoc()));
  LoopText T;
  T.Buf = SM.getBufferData(FID);
  T.Begin = Offset(L->getForLoc());
  T.End = SM.getFileOffset(LoopEnd);
  T.RParenEnd = SM.getFileOffset(
      Lexer::getLocForEndOfToken(L->getRParenLoc(), 0, SM, LO));
  T.BodyBegin = Offset(L->getBody()->getBeginLoc());
  if (SM.getFileID(LoopEnd) != FID ||
      !(T.Begin < T.RParenEnd && T.RParenEnd <= T.BodyBegin &&
        T.BodyBegin < T.End)) {
    Why = "the loop's text is not in one piece in one file";
    return std::nullopt;
  }
  T.Indent =
      startsLine(L->getForLoc(), SM) ? lineIndent(L->getForLoc(), SM) : "";
  T.Unit = "  ";
  if (const auto *CS = dyn_cast<CompoundStmt>(L->getBody()))
    if (!CS->body_empty())
      if (SourceLocation BL = CS->body_front()->getBeginLoc();
          startsLine(BL, SM)) {
        std::string BI = lineIndent(BL, SM);
        if (BI.size() > T.Indent.size() && StringRef(BI).starts_with(T.Indent))
          T.Unit = BI.substr(T.Indent.size());
      }
  return T;
}

std::string vectorCopyText(StringRef Indent, StringRef Unit, StringRef VT,
                           StringRef Count, StringRef Q, StringRef Dst,
                           StringRef Src) {
  if (Count == "1")
    return (Indent + "*reinterpret_cast<" + VT + " *>(" + Dst +
            ") = *reinterpret_cast<const " + VT + " *>(" + Src + ");\n")
        .str();
  return (Indent + "#pragma unroll\n" + Indent + "for (int " + Q + " = 0; " +
          Q + " < " + Count + "; ++" + Q + ")\n" + Indent + Unit +
          "reinterpret_cast<" + VT + " *>(" + Dst + ")[" + Q + "] = " +
          "reinterpret_cast<const " + VT + " *>(" + Src + ")[" + Q + "];\n")
      .str();
}

std::string operand(StringRef T) {
  if (T.find_first_not_of(
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") ==
      StringRef::npos)
    return T.str();
  return "(" + T.str() + ")";
}

/// The vector width vectorize wrote into \p FD (`constexpr int astra_vec =
/// 4;`), or 0.
int64_t vectorWidth(const FunctionDecl *FD, const ASTContext &Ctx) {
  int64_t W = 0;
  std::vector<const Stmt *> Work = {FD->getBody()};
  while (!Work.empty()) {
    const Stmt *S = Work.back();
    Work.pop_back();
    if (!S)
      continue;
    if (const auto *DS = dyn_cast<DeclStmt>(S))
      for (const Decl *D : DS->decls())
        if (const auto *V = dyn_cast<VarDecl>(D))
          if (V->getName() == "astra_vec" && V->isConstexpr() &&
              V->getInit()) {
            Expr::EvalResult R;
            if (!V->getInit()->isValueDependent() &&
                V->getInit()->EvaluateAsInt(R, Ctx)) {
              int64_t X = R.Val.getInt().getExtValue();
              W = W ? std::min(W, X) : X;
            }
          }
    for (const Stmt *C : S->children())
      Work.push_back(C);
  }
  return W;
}


bool refuseUnlessLaunchIsOwn(PassContext &PC,
                             const std::vector<const KernelSpec *> &Specs,
                             SourceLocation Loc, StringRef Why) {
  if (Specs.empty()) {
    PC.refused(Loc, "no workload spec: " + Why + " (--spec)");
    return true;
  }
  for (const KernelSpec *S : Specs) {
    if (!S->LaunchIsTunable) {
      PC.refused(Loc, S->where("launch") +
                          "the spec does not mark the launch as the "
                          "kernel's own (\"launch_tunable\": true)");
      return true;
    }
    if (S->Launch.Grid[0].empty()) {
      PC.refused(Loc, S->where("launch") + "the spec has no grid");
      return true;
    }
  }
  return false;
}

} // namespace astra
