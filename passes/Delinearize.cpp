//===- Delinearize.cpp ----------------------------------------------------===//
//
// Safety argument. The kernel's body is, at its top level:
//   P...                          (no effect, no built-in index)
//   T idx = blockIdx.x * blockDim.x + threadIdx.x;   (never changed)
//   M...                          (no effect, reads neither idx nor an index)
//   if (idx >= N) return;         (the guard)
//   R...                          (the rest)
// where N is, through casts and unchanged locals, a product with the
// factors A and B (C: the other factors), and idx is read in R only as
// `idx % A` (x), `(idx / A) % B` (y), `idx / (A * B)` or `idx / A / B` (z),
// or as itself. A, B, C are integer expressions over parameters and
// constants that nothing changes. For 0 <= idx < N = C * B * A the three
// reads are the coordinates of idx = (z * B + y) * A + x.
//
// The rewritten body keeps P and M and then, under a condition G that the
// launch sites test on the same values (delinearizeCondition: A, B, C > 0
// and the 3-D grid within CUDA's limits), either
//  - 3-D: x = blockIdx.x * blockDim.x + threadIdx.x, y likewise, z =
//    blockIdx.z; valid = x < A && y < B; idx = (z * B + y') * A + x' with
//    x', y' clamped into [0, A) and [0, B) (z < C by the grid); the three
//    reads become x', y', z; or
//  - flat: f = blockIdx.x * (blockDim.x * blockDim.y) + threadIdx.y *
//    blockDim.x + threadIdx.x (the same flat numbering over 2-D blocks);
//    valid = f < N; idx = min(f, N - 1) (after returning when N <= 0, where
//    the original returns from every thread);
// and then R in which every top-level statement with an effect runs only
// when valid. A thread that is valid is exactly one original thread (every
// idx below N once: the 3-D grid covers [0, A) x [0, B) x [0, C), the flat
// grid at least the original's G * X0 threads). A thread that is not valid
// computes what the original thread of its clamped idx computes (the reads
// of R see a valid idx) and has no effect: its loads are loads that thread
// makes, its loops end where that thread's do. R may not return, and
// declarations in R may not have effects (they cannot be wrapped).
// Refused besides: barriers, warp collectives, shared memory, inline asm
// (threads and blocks are grouped differently), built-in indices read
// other than in idx, calls of user functions that read them, template
// kernels, __launch_bounds__ (the block changes), launches not all visible
// or not 1-D with a constant block, and specs that do not mark the launch
// as the kernel's own.
//
//===----------------------------------------------------------------------===//
#include "Delinearize.h"
#include "astra/Support/TextSplice.h"
#include "utils/CudaIdioms.h"
#include "utils/Mutation.h"
#include "utils/PassSupport.h"
#include "utils/SourceText.h"

#include "astra/Spec/LaunchTuning.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMap.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"

#include <algorithm>
#include <set>

using namespace clang;
using namespace llvm;

namespace astra {

using namespace cudaidiom;

namespace {

/// An integer expression over the kernel's parameters and constants, as
/// text (locals that never change are replaced by their initializers);
/// nullopt when it reads anything else.
std::optional<std::string> paramExpr(const Expr *E, const FunctionDecl *FD,
                                     unsigned Depth = 0) {
  if (!E || Depth > 8)
    return std::nullopt;
  E = stripIntCasts(E);
  if (!E->getType()->isIntegerType())
    return std::nullopt;
  if (const auto *IL = dyn_cast<IntegerLiteral>(E))
    return std::to_string(IL->getValue().getSExtValue());
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    if (const auto *P = dyn_cast<ParmVarDecl>(DRE->getDecl())) {
      if (!P->getType()->isIntegerType() || mayModify(FD->getBody(), P))
        return std::nullopt;
      return P->getName().str();
    }
    const auto *V = dyn_cast<VarDecl>(DRE->getDecl());
    if (!V || !V->isLocalVarDecl() || V->isStaticLocal() || !V->getInit() ||
        V->getType()->isReferenceType() || mayModify(FD->getBody(), V))
      return std::nullopt;
    auto S = paramExpr(V->getInit(), FD, Depth + 1);
    return S ? std::optional<std::string>("(" + *S + ")") : std::nullopt;
  }
  if (const auto *BO = dyn_cast<BinaryOperator>(E)) {
    StringRef Op;
    switch (BO->getOpcode()) {
    case BO_Add: Op = " + "; break;
    case BO_Sub: Op = " - "; break;
    case BO_Mul: Op = " * "; break;
    case BO_Div: Op = " / "; break;
    case BO_Rem: Op = " % "; break;
    default: return std::nullopt;
    }
    auto L = paramExpr(BO->getLHS(), FD, Depth + 1);
    auto R = paramExpr(BO->getRHS(), FD, Depth + 1);
    if (!L || !R)
      return std::nullopt;
    return "(" + *L + Op.str() + *R + ")";
  }
  return std::nullopt;
}

/// The factors of a product, through casts and unchanged locals, each as
/// paramExpr text; nullopt when a factor is not a paramExpr.
std::optional<std::vector<std::string>> factors(const Expr *E,
                                                const FunctionDecl *FD,
                                                unsigned Depth = 0) {
  if (!E || Depth > 8)
    return std::nullopt;
  E = stripIntCasts(E);
  if (const auto *BO = dyn_cast<BinaryOperator>(E);
      BO && BO->getOpcode() == BO_Mul) {
    auto L = factors(BO->getLHS(), FD, Depth + 1);
    auto R = factors(BO->getRHS(), FD, Depth + 1);
    if (!L || !R)
      return std::nullopt;
    L->insert(L->end(), R->begin(), R->end());
    return L;
  }
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E))
    if (const auto *V = dyn_cast<VarDecl>(DRE->getDecl());
        V && V->isLocalVarDecl() && V->getInit() &&
        !V->getType()->isReferenceType() && !mayModify(FD->getBody(), V)) {
      const Expr *I = stripIntCasts(V->getInit());
      if (const auto *BO = dyn_cast<BinaryOperator>(I);
          BO && BO->getOpcode() == BO_Mul)
        return factors(I, FD, Depth + 1);
    }
  auto S = paramExpr(E, FD, Depth);
  if (!S)
    return std::nullopt;
  return std::vector<std::string>{*S};
}

/// Removes one \p F from \p Fs; false when there is none.
bool takeFactor(std::vector<std::string> &Fs, const std::string &F) {
  auto It = llvm::find(Fs, F);
  if (It == Fs.end())
    return false;
  Fs.erase(It);
  return true;
}

/// The parent of \p E through parentheses and integer casts.
const Stmt *realParent(const Expr *E, const ParentMap &PM,
                       const Expr **Child) {
  const Stmt *P = PM.getParent(E);
  const Expr *C = E;
  while (P && (isa<ParenExpr>(P) || isa<ImplicitCastExpr>(P) ||
               (isa<ExplicitCastExpr>(P) &&
                cast<Expr>(P)->getType()->isIntegerType()))) {
    C = cast<Expr>(P);
    P = PM.getParent(P);
  }
  *Child = C;
  return P;
}

/// What a read of the flat index is.
struct IndexRead {
  enum Kind { X, Y, Z, Plain } K = Plain;
  const Expr *E = nullptr; ///< The whole read (`idx % A`, ...).
};

/// Whether \p S reads any built-in index (threadIdx, blockIdx, blockDim,
/// gridDim), here or in a user function it calls.
bool readsAnyIndex(const Stmt *S, const SourceManager &SM, unsigned Depth = 0) {
  if (!S || Depth > 4)
    return false;
  for (Builtin B : {Builtin::ThreadIdx, Builtin::BlockIdx, Builtin::BlockDim,
                    Builtin::GridDim})
    if (usesBuiltin(S, B, 0))
      return true;
  std::vector<const Stmt *> Work = {S};
  while (!Work.empty()) {
    const Stmt *T = Work.back();
    Work.pop_back();
    if (!T)
      continue;
    if (const auto *CE = dyn_cast<CallExpr>(T))
      if (const FunctionDecl *F = CE->getDirectCallee();
          F && !isSystemFunction(SM, F)) {
        const FunctionDecl *Def = nullptr;
        if (!F->hasBody(Def) || readsAnyIndex(Def->getBody(), SM, Depth + 1))
          return true;
      }
    for (const Stmt *C : T->children())
      Work.push_back(C);
  }
  return false;
}

/// Whether \p S may read memory other than the thread's own locals: a
/// dereference, a subscript of a pointer, `->`, a call of a user function.
bool readsMemory(const Stmt *S, const SourceManager &SM) {
  if (!S)
    return false;
  if (const auto *AS = dyn_cast<ArraySubscriptExpr>(S)) {
    const Expr *Base = AS->getBase()->IgnoreParenImpCasts();
    if (!Base->getType()->isArrayType() ||
        !isOwnLocal(lvalueVar(Base, /*ThroughLocalArrays=*/true)))
      return true;
  }
  if (const auto *UO = dyn_cast<UnaryOperator>(S);
      UO && UO->getOpcode() == UO_Deref)
    return true;
  if (const auto *ME = dyn_cast<MemberExpr>(S); ME && ME->isArrow())
    return true;
  if (const auto *CE = dyn_cast<CallExpr>(S))
    if (!isa<PseudoObjectExpr>(S) && systemCalleeName(SM, CE).empty() &&
        !matchBuiltin(CE))
      return true;
  for (const Stmt *C : S->children())
    if (readsMemory(C, SM))
      return true;
  return false;
}

} // namespace

void DelinearizePass::run(PassContext &PC) {
  const KernelInfo &K = PC.kernel();
  const FunctionDecl *FD = K.Decl;
  ASTContext &Ctx = PC.astContext();
  const SourceManager &SM = PC.sourceManager();
  SourceLocation Loc = FD->getLocation();

  int64_t Bx = PC.options().intParam(name(), "x", 128);
  int64_t By = PC.options().intParam(name(), "y", 4);
  if (Bx < 32 || Bx % 32 || By < 1 || Bx * By > 1024)
    return PC.refused(Loc, "--pass-opt=delinearize.x=" + std::to_string(Bx) +
                               " and .y=" + std::to_string(By) +
                               ": x must be a multiple of 32 and x * y at "
                               "most 1024");
  if (FD->isTemplateInstantiation() || FD->getDescribedFunctionTemplate() ||
      FD->isDependentContext())
    return PC.refused(Loc, "a template kernel (not analyzed yet)");
  const auto *Body = dyn_cast_or_null<CompoundStmt>(FD->getBody());
  if (!Body)
    return PC.refused(Loc, "the kernel has no body here");
  if (FD->hasAttr<CUDALaunchBoundsAttr>())
    return PC.refused(Loc, "the kernel has __launch_bounds__: the block "
                           "changes");
  std::string C = findCollective(Body, SM);
  if (!C.empty())
    return PC.refused(Loc, "the kernel " + C +
                               ": threads are grouped differently");
  std::string Sh = findSharedMemory(Body, SM);
  if (!Sh.empty())
    return PC.refused(Loc, "the kernel " + Sh +
                               ": blocks hold other threads");

  // The flat index, the statements around it and the guard.
  std::vector<const Stmt *> Top(Body->body_begin(), Body->body_end());
  const VarDecl *Idx = nullptr;
  size_t IdxAt = 0, GuardAt = 0;
  for (size_t I = 0; I < Top.size() && !Idx; ++I)
    if (const auto *DS = dyn_cast<DeclStmt>(Top[I]); DS && DS->isSingleDecl())
      if (const auto *V = dyn_cast<VarDecl>(DS->getSingleDecl());
          V && V->getInit() && V->getType()->isIntegerType() &&
          isGlobalThreadIndex(stripIntCasts(V->getInit()))) {
        Idx = V;
        IdxAt = I;
      }
  if (!Idx)
    return PC.refused(Loc, "no top-level `idx = blockIdx.x * blockDim.x + "
                           "threadIdx.x` declared alone");
  if (mayModify(Body, Idx))
    return PC.refused(Idx->getLocation(), "the flat index '" +
                                              Idx->getName() + "' changes");
  const Expr *Bound = nullptr;
  for (size_t I = IdxAt + 1; I < Top.size() && !Bound; ++I) {
    const auto *If = dyn_cast<IfStmt>(Top[I]);
    const Stmt *Then = If ? If->getThen() : nullptr;
    if (const auto *CS = dyn_cast_or_null<CompoundStmt>(Then);
        CS && CS->size() == 1)
      Then = CS->body_front();
    const auto *Cond =
        If ? dyn_cast<BinaryOperator>(If->getCond()->IgnoreParenImpCasts())
           : nullptr;
    if (If && !If->getElse() && !If->getInit() && Then &&
        isa<ReturnStmt>(Then) && Cond && Cond->getOpcode() == BO_GE &&
        refersTo(Cond->getLHS(), Idx)) {
      Bound = Cond->getRHS();
      GuardAt = I;
      break;
    }
    if (!referencesTo(Top[I], Idx).empty())
      return PC.refused(Top[I]->getBeginLoc(),
                        "the flat index is read before the guard "
                        "`if (" + Idx->getName().str() + " >= N) return;`");
  }
  if (!Bound)
    return PC.refused(Idx->getLocation(),
                      "no top-level guard `if (" + Idx->getName().str() +
                          " >= N) return;` after the flat index");
  for (size_t I = 0; I < GuardAt; ++I) {
    if (I == IdxAt)
      continue;
    if (hasNonLocalEffect(Top[I], SM) || readsAnyIndex(Top[I], SM))
      return PC.refused(Top[I]->getBeginLoc(),
                        "a statement before the guard has an effect or reads "
                        "a built-in index (the threads change)");
  }
  if (GuardAt + 1 >= Top.size())
    return PC.refused(Loc, "nothing after the guard");

  // The reads of idx after the guard.
  ParentMap PM(const_cast<CompoundStmt *>(Body));
  std::vector<IndexRead> Reads;
  std::optional<std::string> A, B;
  std::vector<std::vector<std::string>> ZDivisors;
  for (size_t I = GuardAt + 1; I < Top.size(); ++I)
    for (const DeclRefExpr *DRE : referencesTo(Top[I], Idx)) {
      const Expr *Ch = nullptr;
      const Stmt *P = realParent(DRE, PM, &Ch);
      IndexRead R;
      R.E = DRE;
      const auto *BO = dyn_cast_or_null<BinaryOperator>(P);
      if (BO && BO->getLHS() == Ch && BO->getOpcode() == BO_Rem) {
        auto D = paramExpr(BO->getRHS(), FD);
        if (!D || (A && *A != *D))
          return PC.refused(BO->getBeginLoc(),
                            "a remainder of the flat index by another "
                            "divisor (or one that is not a parameter "
                            "expression)");
        A = D;
        R = {IndexRead::X, BO};
      } else if (BO && BO->getLHS() == Ch && BO->getOpcode() == BO_Div) {
        auto D = paramExpr(BO->getRHS(), FD);
        const Expr *Ch2 = nullptr;
        const auto *BO2 =
            dyn_cast_or_null<BinaryOperator>(realParent(BO, PM, &Ch2));
        if (D && BO2 && BO2->getLHS() == Ch2 &&
            BO2->getOpcode() == BO_Rem) { // (idx / A) % B
          auto M = paramExpr(BO2->getRHS(), FD);
          if (!M || (A && *A != *D) || (B && *B != *M))
            return PC.refused(BO2->getBeginLoc(),
                              "`(idx / A) % B` with another A or B");
          A = D;
          B = M;
          R = {IndexRead::Y, BO2};
        } else if (D && BO2 && BO2->getLHS() == Ch2 &&
                   BO2->getOpcode() == BO_Div) { // idx / A / B
          auto M = paramExpr(BO2->getRHS(), FD);
          if (!M)
            return PC.refused(BO2->getBeginLoc(),
                              "a divisor that is not a parameter expression");
          ZDivisors.push_back({*D, *M});
          R = {IndexRead::Z, BO2};
        } else {
          auto Fs = factors(BO->getRHS(), FD);
          if (!Fs)
            return PC.refused(BO->getBeginLoc(),
                              "a divisor that is not a parameter expression");
          ZDivisors.push_back(*Fs);
          R = {IndexRead::Z, BO};
        }
      }
      Reads.push_back(R);
    }
  if (!A || !B)
    return PC.refused(Idx->getLocation(),
                      "the flat index is not split as `idx % A` and "
                      "`(idx / A) % B`");
  for (const auto &Fs : ZDivisors) {
    std::vector<std::string> Rest = Fs;
    if (!takeFactor(Rest, *A) || !takeFactor(Rest, *B) || !Rest.empty())
      return PC.refused(Idx->getLocation(),
                        "a division of the flat index by something other "
                        "than A * B (" + *A + " * " + *B + ")");
  }
  auto NFs = factors(Bound, FD);
  if (!NFs || !takeFactor(*NFs, *A) || !takeFactor(*NFs, *B))
    return PC.refused(Bound->getBeginLoc(),
                      "the guard's bound is not a product of " + *A + ", " +
                          *B + " and the rest");
  std::string Cz = NFs->empty() ? "1" : "";
  for (const std::string &F : *NFs)
    Cz += (Cz.empty() ? "" : " * ") + F;

  // The rest: no return, no effect in a declaration, no built-in index.
  // A thread past the edge skips the statements with an effect (Wrapped)
  // but runs the others: after the first effect, those may not read memory
  // (it could read what the element's own thread is writing, a race the
  // original does not have; a loop bound read that way could run long).
  std::vector<bool> Wrapped(Top.size(), false);
  bool Written = false;
  for (size_t I = GuardAt + 1; I < Top.size(); ++I) {
    const Stmt *S = Top[I];
    if (findEarlyExit(S, /*ContinueExits=*/false) ||
        (isa<ReturnStmt>(S)))
      return PC.refused(S->getBeginLoc(),
                        "a return or goto after the guard (a thread past the "
                        "edge must run to the end)");
    if (isa<DeclStmt>(S) && hasNonLocalEffect(S, SM))
      return PC.refused(S->getBeginLoc(),
                        "a declaration with an effect after the guard (it "
                        "cannot be made conditional)");
    if (readsAnyIndex(S, SM))
      return PC.refused(S->getBeginLoc(),
                        "a built-in index read after the guard other than "
                        "through the flat index");
    Wrapped[I] = !isa<DeclStmt>(S) && hasNonLocalEffect(S, SM);
    if (Written && !Wrapped[I] && readsMemory(S, SM))
      return PC.refused(S->getBeginLoc(),
                        "a read of memory after a store (a thread past the "
                        "edge, which skips the store, would still read)");
    Written = Written || Wrapped[I];
  }

  std::vector<const KernelSpec *> Specs = specsOf(PC.options(), K);
  if (refuseUnlessLaunchIsOwn(PC, Specs, Loc,
                              "the launch to change is the spec's launch "
                              "too"))
    return;
  Delinearized D{*A, *B, Cz, Bx, By};
  for (const KernelSpec *S : Specs) {
    LaunchChange Change;
    Change.Grid3 = D;
    if (auto L = changedLaunch(*S, Change); !L)
      return PC.refused(Loc, toString(L.takeError()));
  }

  // The kernel's text.
  auto Off = [&](SourceLocation L) -> std::optional<unsigned> {
    if (!L.isValid() || !L.isFileID() || !PC.isEditable(SourceRange(L, L)))
      return std::nullopt;
    return SM.getFileOffset(L);
  };
  auto EndOff = [&](const Stmt *S) -> std::optional<unsigned> {
    return Off(endOfStatement(S, SM, PC.langOpts()));
  };
  auto TokEnd = [&](const Expr *E) -> std::optional<unsigned> {
    return Off(Lexer::getLocForEndOfToken(E->getEndLoc(), 0, SM,
                                          PC.langOpts()));
  };
  auto IdxB = Off(Top[IdxAt]->getBeginLoc()), IdxE = EndOff(Top[IdxAt]);
  auto GB = Off(Top[GuardAt]->getBeginLoc());
  auto RB = Off(Top[GuardAt + 1]->getBeginLoc()), RE = EndOff(Top.back());
  if (!IdxB || !IdxE || !GB || !RB || !RE)
    return PC.refused(Loc, "the kernel's statements are not editable file "
                           "text (a macro?)");
  FileID File = SM.getFileID(SM.getFileLoc(FD->getLocation()));
  StringRef Buf = SM.getBufferData(File);

  PrintingPolicy Policy = Ctx.getPrintingPolicy();
  Policy.SuppressTagKeyword = true;
  std::string IT = Idx->getType().getUnqualifiedType().getAsString(Policy);
  std::string Ap = "((long long)(" + *A + "))",
              Bp = "((long long)(" + *B + "))",
              Cp = "((long long)(" + Cz + "))";
  std::string NT = PC.text(Bound->getSourceRange());

  // Both branches run the rest with its effects under astra_valid; the 3-D
  // branch also reads the coordinates where the code divided idx. A wrap
  // and a read may start at one offset (spliceText puts the insertion
  // first).
  std::vector<Splice> Grid3Repl, Wrap;
  for (size_t I = GuardAt + 1; I < Top.size(); ++I) {
    const Stmt *S = Top[I];
    if (!Wrapped[I])
      continue;
    auto SB = Off(S->getBeginLoc()), SE = EndOff(S);
    if (!SB || !SE)
      return PC.refused(S->getBeginLoc(), "this statement is not editable "
                                          "file text");
    Wrap.push_back({*SB, 0, "if (astra_valid) { "});
    Wrap.push_back({*SE, 0, " }"});
  }
  Grid3Repl = Wrap;
  const std::string Xc = "(astra_x < " + Ap + " ? astra_x : " + Ap + " - 1)",
                    Yc = "(astra_y < " + Bp + " ? astra_y : " + Bp + " - 1)";
  unsigned Coords = 0;
  for (const IndexRead &R : Reads) {
    if (R.K == IndexRead::Plain)
      continue;
    auto EB = Off(R.E->getBeginLoc()), EE = TokEnd(R.E);
    if (!EB || !EE)
      return PC.refused(R.E->getBeginLoc(), "this read of the flat index is "
                                            "not editable file text");
    std::string T = R.E->getType().getUnqualifiedType().getAsString(Policy);
    std::string V = R.K == IndexRead::X   ? Xc
                    : R.K == IndexRead::Y ? Yc
                                          : std::string("blockIdx.z");
    Grid3Repl.push_back({*EB, *EE - *EB, "((" + T + ")" + V + ")"});
    ++Coords;
  }
  // The statements between the index and the guard stay where the index
  // was declared (its line's indentation is kept for the first of them).
  std::string Middle = Buf.slice(*IdxE, *GB).ltrim().str();
  std::optional<std::string> Rest3 = spliceText(Buf, *RB, *RE, Grid3Repl);
  std::optional<std::string> RestFlat = spliceText(Buf, *RB, *RE, Wrap);
  if (!Rest3 || !RestFlat)
    return PC.refused(Loc, "two reads of the flat index overlap");
  std::string Cond = delinearizeCondition(Ap, Bp, Cp, Bx, By);
  std::string Text =
      Middle + "if (" + Cond + ") {\n" +
      "    const long long astra_x = (long long)blockIdx.x * blockDim.x + "
      "threadIdx.x;\n"
      "    const long long astra_y = (long long)blockIdx.y * blockDim.y + "
      "threadIdx.y;\n"
      "    const bool astra_valid = astra_x < " + Ap + " && astra_y < " + Bp +
      ";\n"
      "    const " + IT + " " + Idx->getName().str() + " = (" + IT +
      ")(((long long)blockIdx.z * " + Bp + " + " + Yc + ") * " + Ap + " + " +
      Xc + ");\n    " +
      *Rest3 + "\n  } else {\n" +
      "    if (!((" + NT + ") > 0))\n      return;\n" +
      "    const long long astra_flat = (long long)blockIdx.x * (blockDim.x * "
      "blockDim.y) + (threadIdx.y * blockDim.x + threadIdx.x);\n"
      "    const bool astra_valid = astra_flat < (" + NT + ");\n" +
      "    const " + IT + " " + Idx->getName().str() + " = (" + IT +
      ")(astra_flat < (" + NT + ") ? astra_flat : (" + NT + ") - 1);\n    " +
      *RestFlat + "\n  }";
  std::vector<TextEdit> Out;
  Out.push_back({SM.getComposedLoc(File, *IdxB), *RE - *IdxB, Text});

  // The launch sites.
  KernelLaunches KL = findLaunches(Ctx, FD);
  if (refuseUnlessAllLaunchesVisible(PC, KL, Loc))
    return;
  unsigned Sites = 0;
  std::string Where;
  const std::string X = std::to_string(Bx), Y = std::to_string(By),
                    XY = std::to_string(Bx * By);
  for (const CUDAKernelCallExpr *L : KL.chevrons()) {
    const CallExpr *Config = L->getConfig();
    SourceLocation At = L->getBeginLoc();
    if (!Config || Config->getNumArgs() < 2)
      return PC.refused(At, "the launch has no visible configuration");
    auto BD = launchBlockDims(Config->getArg(1), Ctx);
    if (!BD || (*BD)[1] != 1 || (*BD)[2] != 1)
      return PC.refused(At, "the launch's block is not a 1-D compile-time "
                            "constant");
    const Expr *G = writtenDim3(Config->getArg(0));
    auto GD = readDim(PC, Config->getArg(0));
    if (!GD || !GD->OneDim || launchDimHasSideEffects(Config->getArg(0), Ctx))
      return PC.refused(At, "the launch's grid is not 1-D (an integer, "
                            "`dim3(x)` or a dim3 local of one size) without "
                            "side effects");
    std::map<std::string, std::string> Subst;
    for (unsigned I = 0; I < FD->getNumParams() && I < L->getNumArgs(); ++I) {
      const Expr *Arg = L->getArg(I);
      if (Arg->HasSideEffects(Ctx))
        return PC.refused(At, "a launch argument has side effects (the grid "
                              "reads it again)");
      Subst[FD->getParamDecl(I)->getName().str()] =
          "((" +
          FD->getParamDecl(I)->getType().getUnqualifiedType().getAsString(
              Policy) +
          ")(" + PC.text(Arg->getSourceRange()) + "))";
    }
    std::string AL = "((long long)(" + substituteNames(*A, Subst) + "))",
                BL = "((long long)(" + substituteNames(*B, Subst) + "))",
                CL = "((long long)(" + substituteNames(Cz, Subst) + "))";
    std::string LCond = delinearizeCondition(AL, BL, CL, Bx, By);
    std::string NewGrid =
        "((" + LCond + ") ? dim3((" + AL + " + " + std::to_string(Bx - 1) +
        ") / " + X + ", (" + BL + " + " + std::to_string(By - 1) + ") / " + Y +
        ", " + CL + ") : dim3(((long long)(" + GD->X +
        ") * " + std::to_string((*BD)[0]) + " + " +
        std::to_string(Bx * By - 1) + ") / " + XY + "))";
    auto GEd = makeTokenEdit(PC, G->getSourceRange(), NewGrid);
    auto BEd = makeTokenEdit(PC, writtenDim3(Config->getArg(1))->getSourceRange(),
                             "dim3(" + X + ", " + Y + ")");
    if (!GEd || !BEd)
      return PC.refused(At, "the launch's grid or block is not editable file "
                            "text");
    Out.push_back(*GEd);
    Out.push_back(*BEd);
    ++Sites;
    Where += (Where.empty() ? "" : ", ") + posText(PC, At);
  }
  EditSet ES;
  if (!ES.addSite(SM, Out))
    return PC.refused(Loc, "the edits overlap (an internal error)");
  if (ES.commit(PC)) {
    PC.setDelinearized(D);
    PC.fired(Loc, "3-D grid (x over " + *A + ", y over " + *B + ", z over " +
                      Cz + ") of " + X + " x " + Y + " blocks at " +
                      std::to_string(Sites) + " launch site" +
                      (Sites == 1 ? "" : "s") + " (" + Where + "), " +
                      std::to_string(Coords) + " coordinate read" +
                      (Coords == 1 ? "" : "s") + " replaced");
  }
}

} // namespace astra
