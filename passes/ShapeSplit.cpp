//===- ShapeSplit.cpp -----------------------------------------------------===//
//
// Safety argument. The clone is the kernel's definition copied token for
// token under a new name (the template header with it), placed right after
// the original, so it computes what the original computes for any launch.
// Each launch statement `k<<<G, B, S, St>>>(args);` becomes
//
//   if ((unsigned long long)|G| * |B| >= Threshold) {
//     <copies of the locals G, B and S read>
//     k_astra_large<<<G, B, S, St>>>(args);
//   } else {
//     <copies of the locals G, B and S read>
//     k<<<G, B, S, St>>>(args);
//   }
//
// (|G|: the grid's x*y*z, |B| the block's). Exactly one branch runs and it
// launches the same configuration with the same arguments as before, so the
// program's behaviour is unchanged. G and B are read twice (condition and
// launch): refused when they have side effects. The locals copied into each
// branch are initialized once and never changed (so each copy holds the
// outer value); they are there so that a later pass that edits a launch's
// configuration where it is declared (block-size changes `const int threads
// = 256;`) changes only its own kernel's launch, never the other branch's
// or the condition, which keeps reading the original configuration.
// Refused besides: launches not all visible (address taken, uninstantiated
// templates), a launch that is not a statement of its own in a block, a
// launch before the kernel's definition (the clone would not be declared
// there), a kernel declared before its definition, a name the clone would
// shadow, and specs without launch_tunable (the spec's launch must be the
// code's for the spec's sets to be split as the launch sites split them).
//
//===----------------------------------------------------------------------===//
#include "ShapeSplit.h"
#include "utils/Mutation.h"
#include "utils/PassSupport.h"
#include "utils/SourceText.h"

#include "astra/Spec/ShapeSplit.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"

#include <algorithm>
#include <set>

using namespace clang;
using namespace llvm;

namespace astra {

/// `(unsigned long long)` factors of the size of launch argument \p Arg: the
/// integer itself, or a dim3's x, y and z.
static std::vector<std::string> sizeFactors(const PassContext &PC,
                                            const Expr *Arg) {
  const Expr *W = writtenDim3(Arg);
  std::string T = operand(PC.text(W->getSourceRange()));
  if (W->getType()->isIntegerType())
    return {T};
  return {T + ".x", T + ".y", T + ".z"};
}

/// Whether \p Name occurs in \p Text at \p Pos as a whole identifier.
static bool wholeWordAt(StringRef Text, size_t Pos, size_t Len) {
  auto IsId = [](char C) { return isAlnum(C) || C == '_'; };
  return (Pos == 0 || !IsId(Text[Pos - 1])) &&
         (Pos + Len >= Text.size() || !IsId(Text[Pos + Len]));
}

void ShapeSplitPass::run(PassContext &PC) {
  const KernelInfo &K = PC.kernel();
  const FunctionDecl *FD = K.Decl;
  ASTContext &Ctx = PC.astContext();
  const SourceManager &SM = PC.sourceManager();
  SourceLocation Loc = FD->getLocation();

  std::vector<const KernelSpec *> Specs = specsOf(PC.options(), K);
  if (refuseUnlessLaunchIsOwn(PC, Specs, Loc,
                              "the shape sets are split by the size of the "
                              "spec's launch"))
    return;
  int64_t At = PC.options().intParam(name(), "at", 0);
  if (At < 0) {
    PC.refused(Loc, "--pass-opt=shape-split.at=" + std::to_string(At) +
                        ": the threshold must be a positive number of "
                        "threads");
    return;
  }
  if (At == 0) {
    auto T = defaultSplitThreshold(Specs);
    if (!T) {
      PC.refused(Loc, toString(T.takeError()));
      return;
    }
    At = *T;
  }
  for (const KernelSpec *S : Specs) {
    KernelSpec Copy = *S;
    auto Clone = splitSpec(Copy, At);
    if (!Clone) {
      PC.refused(Loc, toString(Clone.takeError()));
      return;
    }
  }

  std::string CloneName = FD->getName().str() + SplitCloneSuffix;
  if (!FD->getDeclContext()
           ->getRedeclContext()
           ->lookup(DeclarationName(&Ctx.Idents.get(CloneName)))
           .empty()) {
    PC.refused(Loc, "'" + CloneName +
                        "' is declared already (the kernel was split before)");
    return;
  }
  if (!FD->doesThisDeclarationHaveABody()) {
    PC.refused(Loc, "the kernel's definition is not in this file");
    return;
  }
  const Decl *Whole = FD;
  if (const FunctionTemplateDecl *FTD = FD->getDescribedFunctionTemplate())
    Whole = FTD;
  if (Whole->getPreviousDecl()) {
    PC.refused(Whole->getPreviousDecl()->getLocation(),
               "the kernel is declared before its definition: the clone "
               "would need a declaration there too");
    return;
  }
  // `__global__` is a macro: the definition starts where it is expanded.
  SourceRange Def(SM.getExpansionLoc(Whole->getBeginLoc()),
                  SM.getExpansionLoc(FD->getEndLoc()));
  if (Loc.isMacroID() || FD->getEndLoc().isMacroID() ||
      !SM.isWrittenInSameFile(Def.getBegin(), Def.getEnd())) {
    PC.refused(Loc, "the kernel's definition is not editable file text");
    return;
  }
  std::string DefText =
      Lexer::getSourceText(CharSourceRange::getTokenRange(Def), SM,
                           PC.langOpts())
          .str();
  unsigned NameAt = SM.getFileOffset(SM.getExpansionLoc(Loc)) -
                    SM.getFileOffset(SM.getExpansionLoc(Def.getBegin()));
  if (StringRef(DefText).substr(NameAt, FD->getName().size()) !=
      FD->getName()) {
    PC.refused(Loc, "the kernel's name is not spelled at its declaration");
    return;
  }
  std::string CloneText = DefText.substr(0, NameAt) + CloneName +
                          DefText.substr(NameAt + FD->getName().size());

  KernelLaunches KL = findLaunches(Ctx, FD);
  if (refuseUnlessAllLaunchesVisible(PC, KL, Loc))
    return;

  EditSet ES;
  std::set<unsigned> Seen;
  unsigned Sites = 0;
  std::string Where;
  for (const CUDAKernelCallExpr *L : KL.chevrons()) {
    SourceLocation B = L->getBeginLoc();
    // Instantiations of one launching template share the launch's text.
    if (!Seen.insert(B.getRawEncoding()).second)
      continue;
    if (B.isMacroID()) {
      PC.refused(B, "the launch is inside a macro expansion");
      return;
    }
    if (!SM.isBeforeInTranslationUnit(FD->getEndLoc(), B)) {
      PC.refused(B, "the launch comes before the kernel's definition ends: "
                    "the clone would not be declared there");
      return;
    }
    // The launch must be a statement of its own in a block.
    const Stmt *Top = L;
    const Stmt *Parent = nullptr;
    for (;;) {
      auto Ps = Ctx.getParents(*Top);
      if (Ps.size() != 1) {
        Parent = nullptr;
        break;
      }
      Parent = Ps[0].get<Stmt>();
      if (Parent && isa<Expr>(Parent) &&
          (isa<ExprWithCleanups>(Parent) || isa<ImplicitCastExpr>(Parent) ||
           isa<ConstantExpr>(Parent))) {
        Top = Parent;
        continue;
      }
      break;
    }
    if (!Parent || !isa<CompoundStmt>(Parent)) {
      PC.refused(B, "the launch is not a statement of its own in a block "
                    "(its value used, or the body of an if or a loop "
                    "without braces)");
      return;
    }
    const CallExpr *Config = L->getConfig();
    if (!Config || Config->getNumArgs() < 2) {
      PC.refused(B, "the launch has no visible configuration");
      return;
    }
    const Expr *Grid = Config->getArg(0), *Block = Config->getArg(1);
    if (launchDimHasSideEffects(Grid, Ctx) ||
        launchDimHasSideEffects(Block, Ctx)) {
      PC.refused(B, "the launch's grid or block has side effects: the "
                    "condition would evaluate them again");
      return;
    }
    SourceLocation Semi = Lexer::findLocationAfterToken(
        Top->getEndLoc(), tok::semi, SM, PC.langOpts(),
        /*SkipTrailingWhitespaceAndNewLine=*/false);
    if (Semi.isInvalid()) {
      PC.refused(B, "the launch's ';' is not found");
      return;
    }
    CharSourceRange StmtRange = CharSourceRange::getCharRange(B, Semi);
    std::string Launch =
        Lexer::getSourceText(StmtRange, SM, PC.langOpts()).str();
    if (Launch.empty() || !PC.isEditable(StmtRange.getAsRange())) {
      PC.refused(B, "the launch is not editable file text");
      return;
    }
    size_t Chevrons = Launch.find("<<<");
    size_t NamePos = StringRef::npos;
    for (size_t P = Launch.find(FD->getName().str());
         P != std::string::npos && P < Chevrons;
         P = Launch.find(FD->getName().str(), P + 1))
      if (wholeWordAt(Launch, P, FD->getName().size()))
        NamePos = P;
    if (NamePos == StringRef::npos) {
      PC.refused(B, "the launch does not spell the kernel's name");
      return;
    }
    std::string CloneLaunch = Launch.substr(0, NamePos) + CloneName +
                              Launch.substr(NamePos + FD->getName().size());

    // The locals the configuration reads, copied into each branch in the
    // order they are declared.
    std::set<const VarDecl *> Read;
    for (unsigned I = 0; I < Config->getNumArgs() && I < 3; ++I)
      localsRead(Config->getArg(I), Read);
    std::vector<const VarDecl *> Locals(Read.begin(), Read.end());
    std::sort(Locals.begin(), Locals.end(),
              [&](const VarDecl *X, const VarDecl *Y) {
                return SM.isBeforeInTranslationUnit(X->getBeginLoc(),
                                                    Y->getBeginLoc());
              });
    std::string Copies;
    std::string Indent = lineIndent(B, PC.sourceManager()), Unit = "  ";
    for (const VarDecl *V : Locals) {
      auto Ps = Ctx.getParents(*V);
      const DeclStmt *DS = Ps.size() == 1 ? Ps[0].get<DeclStmt>() : nullptr;
      const auto *Host = cast<FunctionDecl>(V->getDeclContext());
      if (!DS || !DS->isSingleDecl() || !V->getInit() || !Host->getBody() ||
          mayModify(Host->getBody(), V) ||
          // A dim3's constructor is not an effect; its arguments may be.
          launchDimHasSideEffects(V->getInit(), Ctx) ||
          V->getType()->isReferenceType() || V->isStaticLocal()) {
        PC.refused(V->getLocation(),
                   "the launch's configuration reads '" + V->getName().str() +
                       "', which is not a local initialized once, alone in "
                       "its declaration and never changed: it cannot be "
                       "copied into each branch");
        return;
      }
      std::string D = Lexer::getSourceText(
                          CharSourceRange::getTokenRange(DS->getSourceRange()),
                          SM, PC.langOpts())
                          .str();
      if (D.empty() || DS->getBeginLoc().isMacroID()) {
        PC.refused(V->getLocation(), "the declaration of '" +
                                         V->getName().str() +
                                         "' is not editable file text");
        return;
      }
      Copies += Indent + Unit + D + "\n";
    }
    auto Reindent = [&](const std::string &S) {
      std::string Out;
      for (char C : S) {
        Out += C;
        if (C == '\n')
          Out += Unit;
      }
      return Out;
    };
    std::vector<std::string> Factors = sizeFactors(PC, Grid);
    for (std::string &F : sizeFactors(PC, Block))
      Factors.push_back(std::move(F));
    std::string Size = "(unsigned long long)" + join(Factors, " * ");
    std::string Text = "if (" + Size + " >= " + std::to_string(At) +
                       "ull) {\n" + Copies + Indent + Unit +
                       Reindent(CloneLaunch) + "\n" + Indent + "} else {\n" +
                       Copies + Indent + Unit + Reindent(Launch) + "\n" +
                       Indent + "}";
    auto E = makeEdit(PC, StmtRange, Text);
    if (!E) {
      PC.refused(B, "the launch is not editable file text");
      return;
    }
    if (!ES.addSite(SM, {*E})) {
      PC.refused(B, "the edits of this launch overlap another's");
      return;
    }
    ++Sites;
    Where += (Where.empty() ? "" : ", ") + posText(PC, B);
  }
  auto Insert = makeInsertAfterToken(
      PC, FD->getEndLoc(),
      "\n\n// shape-split: " + FD->getName().str() +
          " for launches of " + std::to_string(At) +
          " threads or more (its own code and spec entry).\n" + CloneText);
  if (!Insert || !ES.addSite(SM, {*Insert})) {
    PC.refused(FD->getEndLoc(), "the clone cannot be placed after the "
                                "kernel's definition");
    return;
  }
  if (!ES.commit(PC))
    return;
  PC.setSplitAt(At);
  PC.fired(Loc, "launches of " + std::to_string(At) +
                    " threads or more run the clone '" + CloneName + "' (" +
                    std::to_string(Sites) + " launch site" +
                    (Sites == 1 ? "" : "s") + ": " + Where + ")");
}

} // namespace astra
