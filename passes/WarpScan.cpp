//===- WarpScan.cpp -------------------------------------------------------===//
//
// Safety argument.
//  What the original computes: with off = 1, 2, 4, ... while off <
//   blockDim.x, every thread reads v = s[tid - off] when tid >= off (zero
//   otherwise), all threads meet at a barrier, each adds v into s[tid], and
//   all meet again. That is the Hillis-Steele (Kogge-Stone) inclusive scan:
//   after the loop s[t] = s0[0] + ... + s0[t] for every t < blockDim.x, for
//   any block size (not only powers of two), behind the barrier of the last
//   step. With one thread the loop runs no step and s[0] stays as it was.
//  What the rewrite computes: every thread reads its own slot s[tid] (the
//   original read other threads' slots in its first step, which needs the
//   barrier before the loop that made them visible; a thread's own store is
//   visible to it without one). Each warp scans its lanes with
//   __shfl_up_sync: after the steps 1, 2, 4, ... below the warp's lane count,
//   lane l holds the sum of lanes 0 .. l. The mask names exactly the lanes
//   of the warp (fewer than 32 only in the last warp of a block whose size is
//   not a multiple of 32), and a lane only adds from a lane below it, which
//   exists. With more than one warp, the last lane of warp k stores the
//   warp's total in a new __shared__ array of 32 (a block has at most 32
//   warps), a barrier, warp 0 (32 lanes: the block has more than 32 threads)
//   scans the totals the same way, a barrier, and every thread of warp k > 0
//   adds the total of warps 0 .. k-1. Every thread stores its prefix sum in
//   s[tid] and a final barrier makes them visible, as the original's last
//   barrier did. The next use of the warp totals (the same code in the next
//   iteration of a loop around it) writes them only after that barrier, so
//   no thread still reads them.
//  Shared memory: the rewrite writes s[tid] for tid < blockDim.x, the slots
//   the original wrote, with the values the original left there (up to
//   rounding, below).
//  Barriers: the original loop has barriers, so every thread of the block
//   already had to reach it; the rewrite's barriers sit under conditions
//   that are the same for every thread of the block (blockDim.x > 32).
//  Order of operations: integer sums are exact; a float or double scan is
//   reassociated (lanes, then warp totals, instead of the doubling steps'
//   pairing), so results may differ in the last bits. The verifier's
//   tolerances decide; docs/passes.md says so.
//  Block shape: the pattern indexes s by threadIdx.x alone, which is only
//   race-free for one-dimensional blocks; kernels that read threadIdx.y or
//   .z are refused. The loop's bound must be blockDim.x itself: with a
//   smaller bound, threads past it still add their partial sums and the
//   original's result there is not a prefix sum the rewrite could repeat.
//  Scope: scans written in the kernel (or an instantiation of a template
//   kernel); a scan in a helper function the kernel calls is not looked
//   for yet.
//
//===----------------------------------------------------------------------===//
#include "WarpScan.h"
#include "utils/CudaIdioms.h"
#include "utils/Mutation.h"
#include "utils/PassSupport.h"
#include "utils/SourceText.h"

#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"

using namespace clang;
using namespace llvm;
using namespace astra::cudaidiom;

namespace astra {

namespace {

/// One scan loop as matched in one body.
struct ScanLoop {
  const VarDecl *Shared = nullptr;
  /// `s[tid]` as the loop writes it: the rewrite stores through the same
  /// text.
  const Expr *Slot = nullptr;
};

/// Identifiers the rewrite declares (fresh: see freshIdentifier).
struct Names {
  std::string Val, Lanes, Mask, Off, Up, Sums, Sum, Warps;
};

bool isZero(const Expr *E, const ASTContext &Ctx) {
  Expr::EvalResult R;
  if (!E || E->isValueDependent() ||
      !E->IgnoreParenImpCasts()->EvaluateAsRValue(R, Ctx))
    return false;
  if (R.Val.isInt())
    return R.Val.getInt().isZero();
  if (R.Val.isFloat())
    return R.Val.getFloat().isZero();
  return false;
}

/// The variable a loop increment doubles (`off <<= 1`, `off *= 2`,
/// `off += off`, `off = off * 2`, `off = 2 * off`, `off = off << 1`).
const VarDecl *doubledVar(const ASTContext &Ctx, const Expr *Inc) {
  const auto *BO =
      Inc ? dyn_cast<BinaryOperator>(Inc->IgnoreParenImpCasts()) : nullptr;
  const VarDecl *V = BO ? lvalueVar(BO->getLHS()) : nullptr;
  if (!V)
    return nullptr;
  auto Is = [&](const Expr *E, int64_t K) { return constInt(Ctx, E) == K; };
  auto IsV = [&](const Expr *E) { return lvalueVar(E) == V; };
  switch (BO->getOpcode()) {
  case BO_ShlAssign:
    return Is(BO->getRHS(), 1) ? V : nullptr;
  case BO_MulAssign:
    return Is(BO->getRHS(), 2) ? V : nullptr;
  case BO_AddAssign:
    return IsV(BO->getRHS()) ? V : nullptr;
  case BO_Assign: {
    const auto *R = dyn_cast<BinaryOperator>(BO->getRHS()->IgnoreParenImpCasts());
    if (!R)
      return nullptr;
    const Expr *A = R->getLHS(), *B = R->getRHS();
    bool Doubles =
        (R->getOpcode() == BO_Shl && IsV(A) && Is(B, 1)) ||
        (R->getOpcode() == BO_Mul && ((IsV(A) && Is(B, 2)) || (IsV(B) && Is(A, 2)))) ||
        (R->getOpcode() == BO_Add && IsV(A) && IsV(B));
    return Doubles ? V : nullptr;
  }
  default:
    return nullptr;
  }
}

/// Matches the scan loops of one body.
class Matcher {
public:
  Matcher(const ASTContext &Ctx, const FunctionDecl *FD) : Ctx(Ctx), FD(FD) {}

  /// Matches \p F, whose increment doubles \p Off. On failure returns
  /// nullopt and sets \p Why.
  std::optional<ScanLoop> match(const ForStmt *F, const VarDecl *Off,
                                std::string &Why);

private:
  bool isTid(const Expr *E) const {
    return readsBuiltinIndex(E, "threadIdx.x", FD);
  }
  bool isOff(const Expr *E) const {
    const auto *DRE = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts());
    return DRE && DRE->getDecl() == Off;
  }
  /// `tid >= off` or `off <= tid`.
  bool isGuard(const Expr *E) const {
    const auto *BO = dyn_cast<BinaryOperator>(E->IgnoreParenImpCasts());
    return BO && ((BO->getOpcode() == BO_GE && isTid(BO->getLHS()) &&
                   isOff(BO->getRHS())) ||
                  (BO->getOpcode() == BO_LE && isOff(BO->getLHS()) &&
                   isTid(BO->getRHS())));
  }
  /// The __shared__ array \p E subscripts with `tid` (\p Back: `tid - off`);
  /// null if it is not such an element.
  const VarDecl *element(const Expr *E, bool Back) const {
    const auto *ASE = dyn_cast<ArraySubscriptExpr>(E->IgnoreParenImpCasts());
    if (!ASE)
      return nullptr;
    const auto *DRE =
        dyn_cast<DeclRefExpr>(ASE->getBase()->IgnoreParenImpCasts());
    const auto *V = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
    if (!V || !V->hasAttr<CUDASharedAttr>() || !V->getType()->isArrayType())
      return nullptr;
    const Expr *I = ASE->getIdx()->IgnoreParenImpCasts();
    if (!Back)
      return isTid(I) ? V : nullptr;
    const auto *Sub = dyn_cast<BinaryOperator>(I);
    return Sub && Sub->getOpcode() == BO_Sub && isTid(Sub->getLHS()) &&
                   isOff(Sub->getRHS())
               ? V
               : nullptr;
  }
  /// `x` or `{ x; }`.
  static const Stmt *single(const Stmt *S) {
    if (const auto *CS = dyn_cast_or_null<CompoundStmt>(S))
      return CS->size() == 1 ? CS->body_front() : nullptr;
    return S;
  }
  /// The read `T v = tid >= off ? s[tid - off] : 0;`, or `T v = 0;` followed
  /// by `if (tid >= off) v = s[tid - off];`. Sets V and the array; returns
  /// how many statements it took, 0 if none matched.
  unsigned matchRead(ArrayRef<const Stmt *> S);
  /// The update `s[tid] += v;` (or `s[tid] = s[tid] + v;`, `= v + s[tid]`),
  /// optionally under `if (tid >= off)`. Sets Slot.
  bool matchUpdate(const Stmt *S);

  const ASTContext &Ctx;
  const FunctionDecl *FD;
  const VarDecl *Off = nullptr;
  const VarDecl *V = nullptr;
  const VarDecl *Shared = nullptr;
  const Expr *Slot = nullptr;
};

unsigned Matcher::matchRead(ArrayRef<const Stmt *> S) {
  const auto *DS = S.empty() ? nullptr : dyn_cast<DeclStmt>(S[0]);
  V = DS && DS->isSingleDecl() ? dyn_cast<VarDecl>(DS->getSingleDecl())
                               : nullptr;
  if (!V || !V->getInit())
    return 0;
  const Expr *Init = V->getInit()->IgnoreParenImpCasts();
  if (const auto *CO = dyn_cast<ConditionalOperator>(Init)) {
    const Expr *C = CO->getCond();
    const Expr *Read = CO->getTrueExpr(), *Zero = CO->getFalseExpr();
    // `tid < off ? 0 : s[tid - off]` reads the same.
    if (const auto *BO = dyn_cast<BinaryOperator>(C->IgnoreParenImpCasts());
        BO && BO->getOpcode() == BO_LT && isTid(BO->getLHS()) &&
        isOff(BO->getRHS()))
      std::swap(Read, Zero);
    else if (!isGuard(C))
      return 0;
    Shared = element(Read, /*Back=*/true);
    return Shared && isZero(Zero, Ctx) ? 1 : 0;
  }
  if (!isZero(Init, Ctx) || S.size() < 2)
    return 0;
  const auto *If = dyn_cast<IfStmt>(S[1]);
  if (!If || If->getElse() || If->getInit() || If->getConditionVariable() ||
      !isGuard(If->getCond()))
    return 0;
  const auto *BO = dyn_cast_or_null<BinaryOperator>(single(If->getThen()));
  if (!BO || BO->getOpcode() != BO_Assign || lvalueVar(BO->getLHS()) != V ||
      !isa<DeclRefExpr>(BO->getLHS()->IgnoreParenImpCasts()))
    return 0;
  Shared = element(BO->getRHS(), /*Back=*/true);
  return Shared ? 2 : 0;
}

bool Matcher::matchUpdate(const Stmt *S) {
  if (const auto *If = dyn_cast_or_null<IfStmt>(S)) {
    if (If->getElse() || If->getInit() || If->getConditionVariable() ||
        !isGuard(If->getCond()))
      return false;
    S = single(If->getThen());
  }
  const auto *BO = dyn_cast_or_null<BinaryOperator>(S);
  if (!BO || element(BO->getLHS(), false) != Shared)
    return false;
  auto IsV = [&](const Expr *E) {
    const auto *DRE = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts());
    return DRE && DRE->getDecl() == V;
  };
  bool Ok = false;
  if (BO->getOpcode() == BO_AddAssign)
    Ok = IsV(BO->getRHS());
  else if (BO->getOpcode() == BO_Assign)
    if (const auto *Add =
            dyn_cast<BinaryOperator>(BO->getRHS()->IgnoreParenImpCasts());
        Add && Add->getOpcode() == BO_Add)
      Ok = (element(Add->getLHS(), false) == Shared && IsV(Add->getRHS())) ||
           (IsV(Add->getLHS()) && element(Add->getRHS(), false) == Shared);
  if (Ok)
    Slot = BO->getLHS();
  return Ok;
}

std::optional<ScanLoop> Matcher::match(const ForStmt *F, const VarDecl *O,
                                       std::string &Why) {
  Off = O;
  const auto *Init = dyn_cast_or_null<DeclStmt>(F->getInit());
  if (!Init || !Init->isSingleDecl() || Init->getSingleDecl() != Off ||
      !Off->getType()->isIntegerType() || constInt(Ctx, Off->getInit()) != 1) {
    Why = "the loop does not declare its integer step variable starting at 1 "
          "in its init (for (int off = 1; ...))";
    return std::nullopt;
  }
  const auto *Cond =
      dyn_cast_or_null<BinaryOperator>(F->getCond() ? F->getCond()->IgnoreParenImpCasts() : nullptr);
  if (!Cond ||
      !((Cond->getOpcode() == BO_LT && isOff(Cond->getLHS()) &&
         readsBuiltinIndex(Cond->getRHS(), "blockDim.x", FD)) ||
        (Cond->getOpcode() == BO_GT && isOff(Cond->getRHS()) &&
         readsBuiltinIndex(Cond->getLHS(), "blockDim.x", FD)))) {
    Why = "the loop condition is not '" + Off->getNameAsString() +
          " < blockDim.x' (through a variable initialized to it, at most): "
          "with another bound the threads past it still add partial sums";
    return std::nullopt;
  }
  const auto *Body = dyn_cast<CompoundStmt>(F->getBody());
  if (!Body) {
    Why = "the loop body is not a { } block";
    return std::nullopt;
  }
  SmallVector<const Stmt *, 6> S(Body->body_begin(), Body->body_end());
  unsigned N = matchRead(S);
  if (!N) {
    Why = "the loop body does not start with 'T v = tid >= " +
          Off->getNameAsString() + " ? s[tid - " + Off->getNameAsString() +
          "] : 0;' (or 'T v = 0; if (tid >= " + Off->getNameAsString() +
          ") v = s[tid - " + Off->getNameAsString() +
          "];') with s a __shared__ array and tid = threadIdx.x";
    return std::nullopt;
  }
  if (S.size() != N + 3 || !isSyncthreadsCall(S[N]) || !matchUpdate(S[N + 1]) ||
      !isSyncthreadsCall(S[N + 2])) {
    Why = "after the read, the loop body is not '__syncthreads(); s[tid] += "
          "v; __syncthreads();' (a scan step without the barrier between "
          "its read and its add races)";
    return std::nullopt;
  }
  QualType Elem = Ctx.getAsArrayType(Shared->getType())->getElementType();
  if (!isShuffleElementType(Elem.getCanonicalType().getUnqualifiedType())) {
    Why = "the elements of '" + Shared->getNameAsString() + "' are " +
          Elem.getAsString() +
          ", not float, double or a 32- or 64-bit integer (the types "
          "__shfl_up_sync moves)";
    return std::nullopt;
  }
  if (!Ctx.hasSameUnqualifiedType(V->getType(), Elem)) {
    Why = "'" + V->getNameAsString() + "' is " + V->getType().getAsString() +
          ", not the element type of '" + Shared->getNameAsString() +
          "' (" + Elem.getAsString() + "): the sums would round differently";
    return std::nullopt;
  }
  return ScanLoop{Shared, Slot};
}

/// The block that replaces the loop.
std::string emit(const PassContext &PC, const ScanLoop &L, const Names &N,
                 StringRef Elem, StringRef Indent) {
  std::string Slot = PC.text(L.Slot->getSourceRange());
  std::string I = Indent.str();
  std::string O;
  raw_string_ostream OS(O);
  OS << "{ // warp-scan: inclusive prefix sums of "
     << L.Shared->getNameAsString()
     << "[0 .. blockDim.x) with warp shuffles, one shared-memory step across "
        "warps\n";
  OS << I << "  " << Elem << " " << N.Val << " = " << Slot << ";\n";
  OS << I << "  {\n";
  OS << I << "    // The lanes of this warp; fewer than 32 only in the last "
             "warp of a block\n";
  OS << I << "    // whose size is not a multiple of 32. The mask names "
             "exactly them.\n";
  OS << I << "    const unsigned " << N.Lanes
     << " = blockDim.x - (threadIdx.x & ~31u) < 32u ? blockDim.x - "
        "(threadIdx.x & ~31u) : 32u;\n";
  OS << I << "    const unsigned " << N.Mask << " = 0xffffffffu >> (32u - "
     << N.Lanes << ");\n";
  OS << I << "    for (unsigned " << N.Off << " = 1u; " << N.Off << " < "
     << N.Lanes << "; " << N.Off << " <<= 1) {\n";
  OS << I << "      const " << Elem << " " << N.Up << " = __shfl_up_sync("
     << N.Mask << ", " << N.Val << ", " << N.Off << ");\n";
  OS << I << "      if ((threadIdx.x & 31u) >= " << N.Off << ")\n";
  OS << I << "        " << N.Val << " += " << N.Up << ";\n";
  OS << I << "    }\n";
  OS << I << "    if (blockDim.x > 32u) {\n";
  OS << I << "      __shared__ " << Elem << " " << N.Sums << "[32];\n";
  OS << I << "      if ((threadIdx.x & 31u) == " << N.Lanes << " - 1u)\n";
  OS << I << "        " << N.Sums << "[threadIdx.x >> 5] = " << N.Val
     << ";\n";
  OS << I << "      __syncthreads();\n";
  OS << I << "      if (threadIdx.x < 32u) {\n";
  OS << I << "        const unsigned " << N.Warps
     << " = (blockDim.x + 31u) >> 5;\n";
  OS << I << "        " << Elem << " " << N.Sum << " = 0;\n";
  OS << I << "        if (threadIdx.x < " << N.Warps << ")\n";
  OS << I << "          " << N.Sum << " = " << N.Sums << "[threadIdx.x];\n";
  OS << I << "        for (unsigned " << N.Off << " = 1u; " << N.Off << " < "
     << N.Warps << "; " << N.Off << " <<= 1) {\n";
  OS << I << "          const " << Elem << " " << N.Up
     << " = __shfl_up_sync(0xffffffffu, " << N.Sum << ", " << N.Off
     << ");\n";
  OS << I << "          if (threadIdx.x >= " << N.Off << ")\n";
  OS << I << "            " << N.Sum << " += " << N.Up << ";\n";
  OS << I << "        }\n";
  OS << I << "        " << N.Sums << "[threadIdx.x] = " << N.Sum << ";\n";
  OS << I << "      }\n";
  OS << I << "      __syncthreads();\n";
  OS << I << "      if (threadIdx.x >= 32u)\n";
  OS << I << "        " << N.Val << " += " << N.Sums
     << "[(threadIdx.x >> 5) - 1u];\n";
  OS << I << "    }\n";
  OS << I << "  }\n";
  OS << I << "  " << Slot << " = " << N.Val << ";\n";
  OS << I << "  __syncthreads();\n";
  OS << I << "}";
  return OS.str();
}

/// The loops of a body whose increment doubles a variable: the candidates.
struct LoopFinder : RecursiveASTVisitor<LoopFinder> {
  explicit LoopFinder(const ASTContext &Ctx) : Ctx(Ctx) {}
  bool VisitForStmt(ForStmt *F) {
    if (const VarDecl *V = doubledVar(Ctx, F->getInc()))
      Loops.push_back({F, V});
    return true;
  }
  const ASTContext &Ctx;
  std::vector<std::pair<const ForStmt *, const VarDecl *>> Loops;
};

} // namespace

void WarpScanPass::run(PassContext &PC) {
  ASTContext &Ctx = PC.astContext();
  const StringRef Kind = "warp-scan";
  Names N{freshIdentifier(Ctx, "astra_ws_val"),
          freshIdentifier(Ctx, "astra_ws_lanes"),
          freshIdentifier(Ctx, "astra_ws_mask"),
          freshIdentifier(Ctx, "astra_ws_off"),
          freshIdentifier(Ctx, "astra_ws_up"),
          freshIdentifier(Ctx, "astra_ws_sums"),
          freshIdentifier(Ctx, "astra_ws_sum"),
          freshIdentifier(Ctx, "astra_ws_warps")};
  EditSet ES;
  SiteVotes Votes(kernelBodies(PC.kernel().Decl));
  for (unsigned BI = 0; BI < Votes.bodies().size(); ++BI) {
    const FunctionDecl *FD = Votes.bodies()[BI].FD;
    Stmt *Body = FD->getBody();
    if (!Body)
      continue;
    LoopFinder LF(Ctx);
    LF.TraverseStmt(Body);
    std::string MultiDim;
    SourceLocation MultiDimAt = findMultiDimIndex(Body, MultiDim);
    Matcher M(Ctx, FD);
    for (auto [F, Off] : LF.Loops) {
      SourceLocation Loc = F->getForLoc();
      std::string Why;
      std::optional<ScanLoop> L = M.match(F, Off, Why);
      if (!L) {
        Votes.reject(BI, Loc, Kind,
                     "not a shared-memory Hillis-Steele scan: " + Why);
        continue;
      }
      std::string Arr = L->Shared->getNameAsString();
      if (MultiDimAt.isValid()) {
        Votes.reject(BI, Loc, Kind,
                     "the kernel reads " + MultiDim + " (at " +
                         posText(PC, MultiDimAt) + "); a scan over " + Arr +
                         "[threadIdx.x] in a multi-dimensional block is not "
                         "handled");
        continue;
      }
      std::optional<TextEdit> Edit =
          makeTokenEdit(PC, F->getSourceRange(),
                        emit(PC, *L, N, arrayElementTypeText(PC, L->Shared),
                             lineIndent(F->getBeginLoc(), PC.sourceManager())));
      if (!Edit) {
        Votes.reject(BI, Loc, Kind,
                     "the loop's text comes from a macro expansion; it "
                     "cannot be rewritten");
        continue;
      }
      std::string Msg =
          "the Hillis-Steele scan of '" + Arr +
          "' over blockDim.x threads (two barriers per step) now scans with "
          "warp shuffles and three barriers; " + Arr +
          "[0 .. blockDim.x) holds the same inclusive prefix sums after a "
          "barrier as before";
      if (Ctx.getAsArrayType(L->Shared->getType())
              ->getElementType()
              ->isFloatingType())
        Msg += " (floating-point additions are reassociated; the sums may "
               "differ in the last bits)";
      Votes.accept(BI, Loc, Kind, {*Edit}, Msg);
    }
  }
  Votes.resolve(PC, ES);
  ES.commit(PC);
}

} // namespace astra
