//===- Vectorize.cpp ------------------------------------------------------===//
//
// The rewrite, for loop variable j over [start, n) with stride S:
//
//   if (<every accessed p + base is 16-byte aligned>) {
//     constexpr int astra_vec = 16 / <smallest element size>;
//     for (jv = start; jv < n / astra_vec; jv += S) {
//       <one aligned buffer of astra_vec elements per (p, base), filled with
//        uint4 copies when the body reads it>
//       #pragma unroll
//       for (int astra_k = 0; astra_k < astra_vec; ++astra_k) {
//         j = jv * astra_vec + astra_k;
//         <body, with p[base + j] replaced by the buffer's element astra_k>
//       }
//       <uint4 stores of every written buffer>
//     }
//     for (j = n / astra_vec * astra_vec + start; j < n; j += S) <body>
//   } else {
//     <the original loop>
//   }
//
// Safety argument. Each element index j in [0, n) is still processed exactly
// once, by the vector loop (chunk j / astra_vec) or by the tail; only which
// thread processes it changes. That is invisible when the body computes
// element j from j and from values that are the same for every thread that
// shares the loop: the pass refuses bodies that read threadIdx.x (or, in a
// grid-stride loop, blockIdx.x and shared memory) other than through j, read
// variables not provably the same for those threads, call functions that
// could tell threads apart or have side effects, and loops that only some of
// the threads reach. Moving the accesses of a chunk together changes their
// order between elements, so no element may be touched by two iterations:
// every global access is p[base + j] with base the same in every iteration,
// a pointer written at one base is accessed at no other, and written
// pointers do not overlap other accessed pointers (both __restrict__).
// Elements a chunk does not write keep their value because a conditionally
// written buffer is loaded first. A per-thread reduction (sum += ...) is
// allowed: the block still combines all elements, but each thread adds a
// different subset, so float sums are reassociated
// (vectorize.reductions=0 refuses such loops).
//
// Arg reductions. `if (E > best) { best = E; best_index = J; }` (`<` for
// arg-min; E the same expression twice or a local holding it; J the loop
// index plus a uniform offset) reduces a (value, index) pair. With the
// strict comparison a thread keeps the FIRST extremum of its elements in the
// order it visits them, and that order stays ascending in j (chunks
// ascending, astra_k ascending within one, the tail last), so each thread's
// pair is the lowest index of its subset's extremum. If the pairs are then
// combined keeping the larger (smaller) value and, on equal values, the
// lower index, the block's pair is the lowest index of the extremum over all
// elements, whichever thread saw which: the combine is commutative and
// associative, and the lowest index always wins its ties. So the pass
// requires both halves to flow after the loop only into combinations (as
// for other reductions) and their first use to be one helper call whose
// body, or a function it calls, contains that combine step (see
// matchArgCombine, shared with warp-reduce); it refuses `>=`/`<=` (they keep
// the LAST extremum, whose index depends on the split), an index that is
// not j plus a uniform value (it must grow with j), and a helper without the
// lower-index tie-break. The check is on the helper's body containing the
// combine, not a proof that the combine is applied to these two values.
// NaN: `E > best` is false for a NaN element, so NaNs are skipped in every
// split and no NaN reaches the combine unless best starts as one (then every
// thread passes the same pair). Elements equal to the initial value never
// replace it, in every split alike.
//
//===----------------------------------------------------------------------===//
#include "Vectorize.h"
#include "astra/Analysis/PointerAccess.h"
#include "utils/CudaIdioms.h"
#include "utils/Mutation.h"
#include "utils/PassSupport.h"
#include "utils/SourceText.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMap.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/FoldingSet.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <map>
#include <set>

using namespace clang;
using namespace llvm;

namespace astra {

using namespace cudaidiom;

namespace {

enum class LoopKind { Block, Grid };

/// The accesses p[base + j] with one pointer p and one base.
struct Group {
  const VarDecl *Ptr = nullptr;
  std::string Key; ///< Identifies base structurally.
  std::vector<const ArraySubscriptExpr *> Accesses;
  const DeclRefExpr *FirstJ = nullptr; ///< j in the first access's index.
  /// The expression whose text holds FirstJ: the first access's index, or
  /// the initializer of the local it names (`i = row * n + j; p[i]`).
  const Expr *JHolder = nullptr;
  bool Read = false, Written = false, CondWritten = false;
  uint64_t ElemSize = 0;
  /// Loaded before the element loop: read, or not written in every iteration
  /// (its unwritten elements must be stored back unchanged).
  bool needsLoad() const { return Read || CondWritten; }
};

struct LoopPlan {
  const ForStmt *Loop = nullptr;
  LoopKind Kind = LoopKind::Block;
  const VarDecl *J = nullptr;
  const Expr *Start = nullptr, *Bound = nullptr, *Step = nullptr;
  std::vector<Group> Groups;
  std::vector<std::string> Reductions; ///< Accumulator names.
  bool FloatReduction = false;
  /// "arg-max into (best, best_index)" for each arg reduction.
  std::vector<std::string> ArgReductions;
  unsigned Vec = 0;
};

struct Options {
  unsigned Bytes = 16;
  bool Reductions = true;
  bool AssumeNoAlias = false;
};

/// Reads the pass options; an unusable value is an error the user sees.
std::string parseOptions(const PassOptions &PO, Options &O) {
  std::string Bytes = PO.strParam("vectorize", "bytes", "16");
  if (Bytes == "16")
    O.Bytes = 16;
  else if (Bytes == "8")
    O.Bytes = 8;
  else
    return "--pass-opt=vectorize.bytes=" + Bytes + " is not 8 or 16";
  for (auto [Key, Field] :
       {std::pair<const char *, bool *>{"reductions", &O.Reductions},
        {"assume-noalias", &O.AssumeNoAlias}}) {
    std::string V = PO.strParam("vectorize", Key, *Field ? "1" : "0");
    if (V != "0" && V != "1")
      return "--pass-opt=vectorize." + std::string(Key) + "=" + V +
             " is not 0 or 1";
    *Field = V == "1";
  }
  return "";
}

/// Library functions with effects beyond their value (or that read
/// per-thread state), which an element loop must not reorder or repeat.
bool isImpureLibraryName(StringRef N) {
  static const StringRef Prefixes[] = {
      "atomic", "__atomic", "__nv_atomic", "printf", "vprintf", "malloc",
      "free",   "__trap",   "__brkpt",     "assert", "__assert", "clock",
      "__nanosleep", "__threadfence", "__prof_trigger", "curand", "__st",
      "__ld",   "__cvta",   "__isShared",  "__isGlobal", "__nvvm_read"};
  for (StringRef P : Prefixes)
    if (N.starts_with(P))
      return true;
  return false;
}

bool inRange(const SourceManager &SM, SourceRange Outer, SourceLocation L) {
  SourceLocation B = SM.getExpansionLoc(Outer.getBegin());
  SourceLocation E = SM.getExpansionLoc(Outer.getEnd());
  L = SM.getExpansionLoc(L);
  return !SM.isBeforeInTranslationUnit(L, B) &&
         !SM.isBeforeInTranslationUnit(E, L);
}

/// The header of a stride loop: `for (T j = start; j < n; j += S)` with
/// start/S threadIdx.x/blockDim.x or the global thread index and
/// blockDim.x * gridDim.x. Returns false when \p FS is not a stride loop at
/// all, true with \p Why set when it nearly is.
bool matchHeader(const ForStmt *FS, const FunctionDecl *FD, LoopPlan &P,
                 std::string &Why) {
  const auto *Inc = dyn_cast_or_null<CompoundAssignOperator>(FS->getInc());
  if (!Inc || Inc->getOpcode() != BO_AddAssign)
    return false;
  const Expr *Step = Inc->getRHS();
  bool BlockStep = matchBuiltin(Step).is(Builtin::BlockDim, 'x');
  bool GridStep = isGridStrideStep(Step);
  if (!BlockStep && !GridStep)
    return false;
  const auto *DS = dyn_cast_or_null<DeclStmt>(FS->getInit());
  const VarDecl *J =
      DS && DS->isSingleDecl() ? dyn_cast<VarDecl>(DS->getSingleDecl())
                               : nullptr;
  if (!J || !J->getInit() || !J->getType()->isIntegerType()) {
    Why = "the loop variable is not one integer declared and initialized in "
          "the loop header";
    return true;
  }
  if (!refersTo(Inc->getLHS(), J)) {
    Why = "the increment does not step the loop variable";
    return true;
  }
  P.Loop = FS;
  P.J = J;
  P.Start = J->getInit();
  P.Step = Step;
  // The start may be a copy of the thread index (`const int tid =
  // threadIdx.x;`, never changed).
  if (BlockStep && (matchBuiltin(P.Start).is(Builtin::ThreadIdx, 'x') ||
                    readsBuiltinIndex(P.Start, "threadIdx.x", FD))) {
    P.Kind = LoopKind::Block;
  } else if (GridStep && isGlobalThreadIndex(P.Start)) {
    P.Kind = LoopKind::Grid;
  } else {
    Why = BlockStep ? "the loop steps by blockDim.x but does not start at "
                      "threadIdx.x"
                    : "the loop steps by blockDim.x * gridDim.x but does not "
                      "start at blockIdx.x * blockDim.x + threadIdx.x";
    return true;
  }
  const auto *Cond = dyn_cast_or_null<BinaryOperator>(
      FS->getCond() ? FS->getCond()->IgnoreParenImpCasts() : nullptr);
  if (Cond && Cond->getOpcode() == BO_LT && refersTo(Cond->getLHS(), J))
    P.Bound = Cond->getRHS();
  else if (Cond && Cond->getOpcode() == BO_GT && refersTo(Cond->getRHS(), J))
    P.Bound = Cond->getLHS();
  else
    Why = "the condition is not `" + J->getNameAsString() + " < n`";
  return true;
}

/// One term of an index sum.
struct Term {
  bool Negated;
  const Expr *E;
};

/// Splits an index into +/- terms; \p JRef gets the one occurrence of j,
/// which must be added (coefficient 1), and \p JHolder the expression whose
/// text holds it. False when the index is not `base + j` in that sense.
/// \p Expand gives the initializer of a local that stands for part of the
/// index (`const int64_t i = row * n + j;` declared in the loop and never
/// changed), or null: its terms are the index's.
bool splitIndex(const Expr *E, const VarDecl *J, bool Neg,
                std::vector<Term> &Terms, const DeclRefExpr *&JRef,
                const Expr *&JHolder, const Expr *Holder,
                function_ref<const Expr *(const VarDecl *)> Expand) {
  const Expr *S = stripIntCasts(E);
  if (const auto *D = dyn_cast<DeclRefExpr>(S); D && D->getDecl() == J) {
    if (Neg || JRef)
      return false;
    JRef = D;
    JHolder = Holder;
    return true;
  }
  if (const auto *D = dyn_cast<DeclRefExpr>(S))
    if (const auto *V = dyn_cast<VarDecl>(D->getDecl()))
      if (const Expr *Init = Expand(V); Init && !referencesTo(Init, J).empty())
        return splitIndex(Init, J, Neg, Terms, JRef, JHolder, Init, Expand);
  if (const auto *BO = dyn_cast<BinaryOperator>(S)) {
    if (BO->getOpcode() == BO_Add)
      return splitIndex(BO->getLHS(), J, Neg, Terms, JRef, JHolder, Holder,
                        Expand) &&
             splitIndex(BO->getRHS(), J, Neg, Terms, JRef, JHolder, Holder,
                        Expand);
    if (BO->getOpcode() == BO_Sub)
      return splitIndex(BO->getLHS(), J, Neg, Terms, JRef, JHolder, Holder,
                        Expand) &&
             splitIndex(BO->getRHS(), J, !Neg, Terms, JRef, JHolder, Holder,
                        Expand);
  }
  if (!referencesTo(S, J).empty())
    return false;
  Terms.push_back({Neg, S});
  return true;
}

bool splitIndex(const Expr *E, const VarDecl *J, bool Neg,
                std::vector<Term> &Terms, const DeclRefExpr *&JRef) {
  const Expr *Holder = nullptr;
  return splitIndex(E, J, Neg, Terms, JRef, Holder, E,
                    [](const VarDecl *) -> const Expr * { return nullptr; });
}

//===----------------------------------------------------------------------===//
// Analysis of one loop in one concrete definition
//===----------------------------------------------------------------------===//

/// A per-thread arg-max (arg-min) update in a loop body:
/// `if (E > Val) { Val = E; Idx = J; }` (`<` for arg-min), E the same
/// expression twice, J the loop index plus a uniform offset.
struct ArgUpdate {
  const IfStmt *If = nullptr;
  const VarDecl *Val = nullptr, *Idx = nullptr;
  bool Max = true;
  /// The references to Val and Idx the update makes (the only ones allowed).
  const DeclRefExpr *ValCmp = nullptr, *ValSet = nullptr, *IdxSet = nullptr;
};

class LoopAnalyzer {
public:
  LoopAnalyzer(ASTContext &Ctx, const FunctionDecl *F, const Options &O)
      : Ctx(Ctx), SM(Ctx.getSourceManager()), F(F), Body(F->getBody()),
        PM(F->getBody()), Opt(O) {}

  const ParentMap &parents() const { return PM; }
  /// Source text of \p S, for messages.
  std::string text(const Stmt *S) const;

  /// Checks a loop whose header matched; an empty result means it can be
  /// vectorized as \p P now describes.
  std::string analyze(LoopPlan &P, SourceLocation &Loc);

  bool modified(const VarDecl *V) {
    auto [It, New] = Modified.try_emplace(V, false);
    if (New)
      for (const DeclRefExpr *R : referencesTo(Body, V))
        if (isModifyingUse(R, PM)) {
          It->second = true;
          break;
        }
    return It->second;
  }

  /// Whether every thread sharing a loop of kind \p K sees the same value of
  /// \p E (evaluated anywhere in the kernel).
  bool uniform(const Expr *E, LoopKind K);
  bool uniformVar(const VarDecl *V, LoopKind K);
  /// Whether calling \p FD has no effect but its value, and the value
  /// depends only on the arguments.
  bool pureCallee(const FunctionDecl *FD, unsigned Depth = 0);
  /// Whether \p FD returns the same value to every thread of a block that
  /// calls it, whatever the arguments: a block-wide reduction helper
  /// (`block_reduce_sum(v)`) whose every return reads shared memory at an
  /// index the same for every thread (`return s[0];`, `const float r =
  /// s[0]; ...; return r;`) or calls such a helper.
  bool blockUniformCallee(const FunctionDecl *FD);

  /// Whether the statement holding \p E runs in every iteration of \p L.
  bool unconditional(const Expr *E, const ForStmt *L) const;
  /// Whether \p S (a break or continue) belongs to \p L.
  bool targetsLoop(const Stmt *S, const ForStmt *L) const;
  /// Why some threads of the loop's partition may not reach \p L; empty if
  /// they all do.
  std::string reachability(const LoopPlan &P, SourceLocation &Loc);

  ASTContext &Ctx;
  const SourceManager &SM;
  const FunctionDecl *F;
  const Stmt *Body;
  ParentMap PM;
  const Options &Opt;

private:
  std::string checkReductions(LoopPlan &P,
                              const SmallPtrSetImpl<const VarDecl *> &Vars,
                              SourceLocation &Loc);
  std::string checkAliasing(const LoopPlan &P);
  /// Why the per-thread partial result \p V of a reduction loop may reach
  /// the kernel's output other than combined across threads; empty if not.
  std::string checkCombined(const LoopPlan &P, const VarDecl *V,
                            SourceLocation &Loc);
  bool combiningCall(const CallExpr *CE) const;
  /// The combining call whose arguments hold \p E; null if none.
  const CallExpr *enclosingCombiningCall(const Expr *E) const;
  /// Whether passing \p R to a combining call hands its value to the
  /// combination and has the callee write the combined result back into it:
  /// the argument binds a non-const reference parameter that the callee's
  /// body assigns as one of its top-level statements.
  bool combinedInPlace(const DeclRefExpr *R) const;
  /// The arg-reduction updates in the loop among the accumulators \p Vars;
  /// a message when one is nearly one but unsound.
  std::string matchArgUpdates(const LoopPlan &P,
                              const SmallPtrSetImpl<const VarDecl *> &Vars,
                              std::vector<ArgUpdate> &Out,
                              SourceLocation &Loc);
  /// Why the pair of \p U may be combined across threads other than by the
  /// lexicographic combine that makes the result independent of which
  /// thread saw which elements; empty if it is combined so.
  std::string checkArgCombined(const LoopPlan &P, const ArgUpdate &U,
                               SourceLocation &Loc);

  DenseMap<const VarDecl *, bool> Modified;
  std::map<std::pair<const VarDecl *, int>, bool> UniformMemo;
  SmallPtrSet<const VarDecl *, 8> InProgress;
  DenseMap<const FunctionDecl *, bool> PureMemo;
  DenseMap<const FunctionDecl *, bool> BlockUniformMemo;
  /// False while judging a helper's body for blockUniformCallee: its
  /// parameters hold each thread's own argument.
  bool ParamsUniform = true;
  /// How many helpers deep blockUniformCallee has gone to build this
  /// analyzer (a helper calling a helper), so that recursion ends.
  unsigned HelperDepth = 0;
};

bool LoopAnalyzer::uniformVar(const VarDecl *V, LoopKind K) {
  if (InProgress.count(V))
    return true; // Induction: uniform if all its definitions are.
  auto Key = std::make_pair(V, int(K));
  if (auto It = UniformMemo.find(Key); It != UniformMemo.end())
    return It->second;
  bool R = false;
  QualType T = V->getType();
  if (V->hasAttr<CUDASharedAttr>())
    R = K == LoopKind::Block; // Read after a barrier; body writes refused.
  else if (V->hasAttr<CUDAConstantAttr>())
    R = true;
  else if (!V->hasLocalStorage())
    R = T.isConstQualified() || V->isConstexpr();
  else if (T->isReferenceType())
    R = false;
  else if (isa<ParmVarDecl>(V))
    R = ParamsUniform && !modified(V);
  else {
    InProgress.insert(V);
    if (!modified(V)) {
      R = V->getInit() && uniform(V->getInit(), K);
    } else {
      // The variable of an enclosing loop (`for (t = blockIdx.x; t < T;
      // t += gridDim.x)`): uniform when it starts and steps uniformly.
      R = false;
      std::vector<const DeclRefExpr *> Refs = referencesTo(Body, V);
      const ForStmt *Owner = nullptr;
      for (const DeclRefExpr *Ref : Refs) {
        if (!isModifyingUse(Ref, PM))
          continue;
        const Stmt *S = Ref;
        const ForStmt *FS = nullptr;
        while ((S = PM.getParent(S)))
          if ((FS = dyn_cast<ForStmt>(S)))
            break;
        if (!FS || !FS->getInc() ||
            !inRange(SM, FS->getInc()->getSourceRange(), Ref->getBeginLoc())) {
          Owner = nullptr;
          break;
        }
        const auto *Init = dyn_cast_or_null<DeclStmt>(FS->getInit());
        if (!Init || !Init->isSingleDecl() || Init->getSingleDecl() != V ||
            (Owner && Owner != FS)) {
          Owner = nullptr;
          break;
        }
        Owner = FS;
      }
      if (Owner && V->getInit() && uniform(V->getInit(), K)) {
        const Expr *Inc = cast<Expr>(Owner->getInc())->IgnoreParens();
        if (const auto *BO = dyn_cast<BinaryOperator>(Inc))
          R = BO->isAssignmentOp() && refersTo(BO->getLHS(), V) &&
              uniform(BO->getRHS(), K);
        else if (const auto *UO = dyn_cast<UnaryOperator>(Inc))
          R = UO->isIncrementDecrementOp();
      }
    }
    InProgress.erase(V);
  }
  // A result that leaned on an in-progress assumption is not kept.
  if (InProgress.empty())
    UniformMemo[Key] = R;
  return R;
}

bool LoopAnalyzer::uniform(const Expr *E, LoopKind K) {
  if (!E)
    return false;
  E = E->IgnoreParens();
  if (isa<IntegerLiteral, FloatingLiteral, CharacterLiteral,
          CXXBoolLiteralExpr, CXXNullPtrLiteralExpr, UnaryExprOrTypeTraitExpr,
          clang::StringLiteral>(E))
    return true;
  if (const auto *S = dyn_cast<SubstNonTypeTemplateParmExpr>(E))
    return uniform(S->getReplacement(), K);
  if (BuiltinRef B = matchBuiltin(E)) {
    if (B.Var == Builtin::ThreadIdx && B.Dim == 'x')
      return false;
    if (B.Var == Builtin::BlockIdx && B.Dim == 'x')
      return K == LoopKind::Block;
    return true;
  }
  if (const auto *CE = dyn_cast<CastExpr>(E))
    return uniform(CE->getSubExpr(), K);
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    const ValueDecl *D = DRE->getDecl();
    if (isa<EnumConstantDecl, NonTypeTemplateParmDecl, FunctionDecl>(D))
      return true;
    const auto *V = dyn_cast<VarDecl>(D);
    return V && uniformVar(V, K);
  }
  if (const auto *ME = dyn_cast<MemberExpr>(E)) {
    if (isa<CXXMethodDecl>(ME->getMemberDecl()))
      return false; // Handled by the enclosing call.
    return uniform(ME->getBase(), K);
  }
  if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(E))
    return uniform(ASE->getBase(), K) && uniform(ASE->getIdx(), K);
  if (const auto *UO = dyn_cast<UnaryOperator>(E))
    return !UO->isIncrementDecrementOp() && uniform(UO->getSubExpr(), K);
  if (const auto *BO = dyn_cast<BinaryOperator>(E))
    return !BO->isAssignmentOp() && BO->getOpcode() != BO_Comma &&
           uniform(BO->getLHS(), K) && uniform(BO->getRHS(), K);
  if (const auto *CO = dyn_cast<ConditionalOperator>(E))
    return uniform(CO->getCond(), K) && uniform(CO->getTrueExpr(), K) &&
           uniform(CO->getFalseExpr(), K);
  if (const auto *ILE = dyn_cast<InitListExpr>(E)) {
    for (const Expr *I : ILE->inits())
      if (!uniform(I, K))
        return false;
    return true;
  }
  if (const auto *MTE = dyn_cast<MaterializeTemporaryExpr>(E))
    return uniform(MTE->getSubExpr(), K);
  if (const auto *EWC = dyn_cast<ExprWithCleanups>(E))
    return uniform(EWC->getSubExpr(), K);
  if (const auto *BTE = dyn_cast<CXXBindTemporaryExpr>(E))
    return uniform(BTE->getSubExpr(), K);
  if (const auto *CE = dyn_cast<CallExpr>(E)) {
    // A block-wide reduction's result: the same in every thread of the
    // block whatever each passed, so uniform for a block-stride loop (not
    // across the blocks of a grid-stride one).
    if (K == LoopKind::Block && blockUniformCallee(CE->getDirectCallee()))
      return true;
    if (!pureCallee(CE->getDirectCallee()))
      return false;
    if (const auto *MC = dyn_cast<CXXMemberCallExpr>(CE))
      if (!uniform(MC->getImplicitObjectArgument(), K))
        return false;
    for (const Expr *A : CE->arguments())
      if (!uniform(A, K))
        return false;
    return true;
  }
  if (const auto *CC = dyn_cast<CXXConstructExpr>(E)) {
    if (!pureCallee(CC->getConstructor()))
      return false;
    for (const Expr *A : CC->arguments())
      if (!uniform(A, K))
        return false;
    return true;
  }
  return false;
}

namespace {
/// Looks for anything in a callee's body that makes calls to it more than a
/// function of its arguments.
class PurityChecker : public RecursiveASTVisitor<PurityChecker> {
public:
  PurityChecker(LoopAnalyzer &A, unsigned Depth) : A(A), Depth(Depth) {}
  bool VisitDeclRefExpr(DeclRefExpr *E) {
    if (const auto *V = dyn_cast<VarDecl>(E->getDecl()))
      if (V->hasAttr<CUDASharedAttr>() ||
          (!V->hasLocalStorage() && !V->hasAttr<CUDAConstantAttr>() &&
           !V->getType().isConstQualified() && !V->isConstexpr()))
        Pure = false;
    return Pure;
  }
  bool VisitMSPropertyRefExpr(MSPropertyRefExpr *E) {
    BuiltinRef B = matchBuiltin(E);
    if (B.Var == Builtin::ThreadIdx || B.Var == Builtin::BlockIdx)
      Pure = false;
    return Pure;
  }
  bool VisitAsmStmt(AsmStmt *) { return Pure = false; }
  bool VisitLambdaExpr(LambdaExpr *) { return Pure = false; }
  bool VisitCallExpr(CallExpr *E) {
    Pure = A.pureCallee(E->getDirectCallee(), Depth + 1);
    return Pure;
  }
  bool VisitCXXConstructExpr(CXXConstructExpr *E) {
    Pure = A.pureCallee(E->getConstructor(), Depth + 1);
    return Pure;
  }
  bool VisitVarDecl(VarDecl *V) {
    if (V->isStaticLocal() || V->hasAttr<CUDASharedAttr>())
      Pure = false;
    return Pure;
  }
  /// Writes must go to the callee's own locals.
  bool writesLocal(const Expr *LHS) {
    const Expr *E = LHS->IgnoreParenImpCasts();
    while (true) {
      if (const auto *ME = dyn_cast<MemberExpr>(E)) {
        if (ME->isArrow())
          return false;
        E = ME->getBase()->IgnoreParenImpCasts();
      } else if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(E)) {
        if (!ASE->getBase()->IgnoreParenImpCasts()->getType()->isArrayType())
          return false;
        E = ASE->getBase()->IgnoreParenImpCasts();
      } else {
        break;
      }
    }
    const auto *DRE = dyn_cast<DeclRefExpr>(E);
    const auto *V = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
    return V && V->hasLocalStorage() && !V->getType()->isReferenceType() &&
           !V->getType()->isPointerType();
  }
  bool VisitBinaryOperator(BinaryOperator *BO) {
    if (BO->isAssignmentOp() && !writesLocal(BO->getLHS()))
      Pure = false;
    return Pure;
  }
  bool VisitUnaryOperator(UnaryOperator *UO) {
    if (UO->isIncrementDecrementOp() && !writesLocal(UO->getSubExpr()))
      Pure = false;
    return Pure;
  }
  bool VisitCXXOperatorCallExpr(CXXOperatorCallExpr *E) {
    if ((E->isAssignmentOp() || E->getOperator() == OO_PlusPlus ||
         E->getOperator() == OO_MinusMinus) &&
        E->getNumArgs() > 0 && !writesLocal(E->getArg(0)))
      Pure = false;
    return Pure; // The callee is checked by VisitCallExpr.
  }
  LoopAnalyzer &A;
  unsigned Depth;
  bool Pure = true;
};
} // namespace

bool LoopAnalyzer::pureCallee(const FunctionDecl *FD, unsigned Depth) {
  if (!FD)
    return false;
  if (isSystemFunction(SM, FD)) {
    if (FD->getIdentifier() && isImpureLibraryName(FD->getName()))
      return false;
    for (const DeclContext *C = FD->getDeclContext(); C; C = C->getParent())
      if (const auto *NS = dyn_cast<NamespaceDecl>(C))
        if (NS->getName() == "cooperative_groups")
          return false;
    // Methods of CUDA's types: conversions and operators; static ones are
    // the getters behind threadIdx.x & co. (their values are judged where
    // the built-in is read).
    if (const auto *M = dyn_cast<CXXMethodDecl>(FD))
      return M->isConst() || M->isStatic() || isa<CXXConstructorDecl>(M) ||
             M->isCopyAssignmentOperator() || M->isMoveAssignmentOperator() ||
             M->isOverloadedOperator();
    return true;
  }
  if (const auto *M = dyn_cast<CXXMethodDecl>(FD))
    if (M->getParent()->isLambda())
      return false;
  // Implicit copies and moves of plain structs only copy their members.
  if (FD->isTrivial())
    return true;
  auto It = PureMemo.find(FD);
  if (It != PureMemo.end())
    return It->second;
  const FunctionDecl *Def = nullptr;
  if (Depth >= 8 || !FD->hasBody(Def) || FD->isVariadic())
    return false;
  PureMemo[FD] = true; // Recursion: assume pure until shown otherwise.
  PurityChecker PC(*this, Depth);
  PC.TraverseStmt(Def->getBody());
  PureMemo[FD] = PC.Pure;
  return PC.Pure;
}

bool LoopAnalyzer::blockUniformCallee(const FunctionDecl *FD) {
  const FunctionDecl *Def = nullptr;
  if (!FD || HelperDepth >= 4 || isSystemFunction(SM, FD) ||
      !FD->hasBody(Def) || isa<CXXMethodDecl>(FD) ||
      !FD->getReturnType()->isScalarType())
    return false;
  auto [It, New] = BlockUniformMemo.try_emplace(FD, false);
  if (!New)
    return It->second; // Recursion: not shown.
  // Judged like a kernel body, with one difference: the parameters hold
  // each thread's own argument. A read of shared memory at a uniform index
  // counts as uniform here for the reason it does in a kernel's block-stride
  // loop: the program is race-free, so the threads read it after the
  // barrier that follows its last write (block_reduce's `buf[0]`). A return
  // of another helper's result is judged by the same rule, one level deeper.
  LoopAnalyzer Helper(Ctx, Def, Opt);
  Helper.ParamsUniform = false;
  Helper.HelperDepth = HelperDepth + 1;
  struct Returns : RecursiveASTVisitor<Returns> {
    bool VisitReturnStmt(ReturnStmt *R) {
      Values.push_back(R->getRetValue());
      return true;
    }
    bool TraverseLambdaExpr(LambdaExpr *) { return true; }
    std::vector<const Expr *> Values;
  } Rets;
  Rets.TraverseStmt(Def->getBody());
  bool R = !Rets.Values.empty() &&
           llvm::all_of(Rets.Values, [&](const Expr *V) {
             return Helper.uniform(V, LoopKind::Block);
           });
  BlockUniformMemo[FD] = R;
  return R;
}

bool LoopAnalyzer::unconditional(const Expr *E, const ForStmt *L) const {
  for (const Stmt *S = PM.getParent(E); S && S != L; S = PM.getParent(S)) {
    if (isa<IfStmt, SwitchStmt, SwitchCase, WhileStmt, DoStmt, ForStmt,
            CXXForRangeStmt, AbstractConditionalOperator, LambdaExpr>(S))
      return false;
    if (const auto *BO = dyn_cast<BinaryOperator>(S))
      if (BO->isLogicalOp())
        return false;
  }
  return true;
}

bool LoopAnalyzer::targetsLoop(const Stmt *S, const ForStmt *L) const {
  bool IsBreak = isa<BreakStmt>(S);
  for (const Stmt *P = PM.getParent(S); P; P = PM.getParent(P)) {
    if (P == L)
      return true;
    if (isa<ForStmt, WhileStmt, DoStmt, CXXForRangeStmt>(P) ||
        (IsBreak && isa<SwitchStmt>(P)))
      return false;
  }
  return false;
}

namespace {
/// Walks a loop body and records what it does with memory and variables.
class BodyChecker : public RecursiveASTVisitor<BodyChecker> {
public:
  BodyChecker(LoopAnalyzer &A, LoopPlan &P)
      : A(A), P(P), BodyRange(P.Loop->getBody()->getSourceRange()) {}

  bool fail(SourceLocation L, const Twine &Msg) {
    if (Why.empty()) {
      Why = Msg.str();
      Loc = L;
    }
    return false;
  }

  bool declaredInBody(const VarDecl *V) const {
    return inRange(A.SM, BodyRange, V->getLocation());
  }

  bool TraverseArraySubscriptExpr(ArraySubscriptExpr *ASE) {
    const auto *Base =
        dyn_cast<DeclRefExpr>(ASE->getBase()->IgnoreParenImpCasts());
    const auto *V = Base ? dyn_cast<VarDecl>(Base->getDecl()) : nullptr;
    if (V && V->getType()->isPointerType() && !declaredInBody(V) &&
        !V->hasAttr<CUDASharedAttr>()) {
      if (!access(ASE, V))
        return false;
      return TraverseStmt(ASE->getIdx());
    }
    return RecursiveASTVisitor::TraverseArraySubscriptExpr(ASE);
  }

  bool access(const ArraySubscriptExpr *ASE, const VarDecl *V) {
    std::string Name = V->getNameAsString();
    SourceLocation L = ASE->getBeginLoc();
    QualType Elem = V->getType()->getPointeeType();
    if (Elem.isVolatileQualified())
      return fail(L, "'" + Name + "' points to volatile data");
    if (Elem->isIncompleteType() || Elem->isDependentType())
      return fail(L, "the element type of '" + Name + "' is not known");
    if (!A.uniformVar(V, P.Kind))
      return fail(L, "'" + Name + "' is not the same pointer for every "
                     "iteration and thread (it is assigned, or computed "
                     "from the thread index)");
    std::vector<Term> Terms;
    const DeclRefExpr *JRef = nullptr;
    const Expr *JHolder = nullptr;
    // A local of the body that holds the index (or part of it), never
    // changed: its initializer's terms are the index's.
    auto Expand = [&](const VarDecl *IV) -> const Expr * {
      if (!IV->getInit() || !IV->getType()->isIntegerType() ||
          !declaredInBody(IV) || IV->isStaticLocal() ||
          mayModify(P.Loop->getBody(), IV))
        return nullptr;
      return IV->getInit();
    };
    if (!splitIndex(ASE->getIdx(), P.J, false, Terms, JRef, JHolder,
                    ASE->getIdx(), Expand) ||
        !JRef)
      return fail(L, "'" + A.text(ASE) + "' is not " + Name + "[base + " +
                         P.J->getNameAsString() +
                         "]: strided, indirect or scaled accesses are not "
                         "vectorized");
    std::string Key;
    std::vector<std::string> Keys;
    for (const Term &T : Terms) {
      if (!A.uniform(T.E, P.Kind))
        return fail(T.E->getBeginLoc(),
                    "the offset of '" + A.text(ASE) +
                        "' is not the same for every iteration and thread");
      FoldingSetNodeID ID;
      T.E->Profile(ID, A.Ctx, /*Canonical=*/true);
      Keys.push_back((T.Negated ? "-" : "+") + utohexstr(ID.ComputeHash()));
    }
    llvm::sort(Keys);
    Key = join(Keys, ",");
    Use U = accessUse(ASE, A.PM);
    if (U == Use::Escape)
      return fail(L, "'" + A.text(ASE) +
                         "' is used other than read or assigned (address "
                         "taken, bound to a reference, or passed to a "
                         "non-const reference)");
    Group *G = nullptr;
    for (Group &X : P.Groups)
      if (X.Ptr == V && X.Key == Key)
        G = &X;
    if (!G) {
      P.Groups.push_back({});
      G = &P.Groups.back();
      G->Ptr = V;
      G->Key = Key;
      G->FirstJ = JRef;
      G->JHolder = JHolder;
      G->ElemSize = A.Ctx.getTypeSizeInChars(Elem).getQuantity();
    }
    G->Accesses.push_back(ASE);
    if (U == Use::Read || U == Use::ReadWrite)
      G->Read = true;
    if (U == Use::Write || U == Use::ReadWrite) {
      G->Written = true;
      if (!A.unconditional(ASE, P.Loop))
        G->CondWritten = true;
    }
    return true;
  }

  bool VisitDeclRefExpr(DeclRefExpr *E) {
    const auto *V = dyn_cast<VarDecl>(E->getDecl());
    if (!V)
      return true;
    std::string Name = V->getNameAsString();
    SourceLocation L = E->getLocation();
    if (V == P.J) {
      if (isModifyingUse(E, A.PM))
        return fail(L, "the loop variable '" + Name + "' is modified in the "
                       "body");
      return true;
    }
    if (declaredInBody(V)) {
      if (V->isStaticLocal())
        return fail(L, "static variable '" + Name + "' in the loop body");
      return true;
    }
    if (V->hasAttr<CUDASharedAttr>()) {
      if (P.Kind == LoopKind::Grid)
        return fail(L, "the body uses __shared__ '" + Name +
                           "'; in a grid-stride loop an element may move to "
                           "another block");
      if (isModifyingUse(E, A.PM))
        return fail(L, "the body writes __shared__ '" + Name + "'");
      return true;
    }
    if (V->getType()->isPointerType())
      return fail(L, "'" + Name + "' is used other than as " + Name +
                         "[base + " + P.J->getNameAsString() + "]");
    if (V->getType()->isReferenceType())
      return fail(L, "the body uses the reference '" + Name + "'");
    if (!V->hasLocalStorage() && !V->hasAttr<CUDAConstantAttr>() &&
        !V->getType().isConstQualified() && !V->isConstexpr())
      return fail(L, "the body uses the global variable '" + Name + "'");
    if (isModifyingUse(E, A.PM)) {
      if (V->getType()->isArrayType())
        return fail(L, "the body writes the array '" + Name +
                           "' declared outside the loop");
      Accumulators.insert(V);
    } else {
      OuterReads.push_back(E);
    }
    return true;
  }

  bool VisitPseudoObjectExpr(PseudoObjectExpr *E) {
    BuiltinRef B = matchBuiltin(E);
    if (B.Var == Builtin::ThreadIdx && B.Dim == 'x')
      return fail(E->getBeginLoc(),
                  "the body reads threadIdx.x other than through '" +
                      P.J->getNameAsString() +
                      "'; vector chunks go to different threads");
    if (B.Var == Builtin::BlockIdx && B.Dim == 'x' && P.Kind == LoopKind::Grid)
      return fail(E->getBeginLoc(),
                  "the body reads blockIdx.x other than through '" +
                      P.J->getNameAsString() + "'");
    return true;
  }
  bool VisitUnaryOperator(UnaryOperator *UO) {
    if (UO->getOpcode() == UO_Deref)
      return fail(UO->getBeginLoc(), "the body dereferences a pointer; only "
                                     "p[base + j] accesses are vectorized");
    return true;
  }
  bool VisitMemberExpr(MemberExpr *ME) {
    if (ME->isArrow())
      return fail(ME->getBeginLoc(), "the body reads memory through '->'");
    return true;
  }
  bool VisitCallExpr(CallExpr *E) {
    const FunctionDecl *Callee = E->getDirectCallee();
    if (!Callee)
      return fail(E->getBeginLoc(), "the body calls through a function "
                                    "pointer");
    if (!A.pureCallee(Callee))
      return fail(E->getBeginLoc(),
                  "the body calls '" + Callee->getNameAsString() +
                      "', which may have side effects or depend on the "
                      "thread");
    return true;
  }
  bool VisitCXXConstructExpr(CXXConstructExpr *E) {
    if (!A.pureCallee(E->getConstructor()))
      return fail(E->getBeginLoc(), "the body constructs an object whose "
                                    "constructor may have side effects");
    return true;
  }
  bool VisitReturnStmt(ReturnStmt *S) {
    return fail(S->getBeginLoc(), "the body returns from the kernel");
  }
  bool VisitGotoStmt(GotoStmt *S) {
    return fail(S->getBeginLoc(), "the body uses goto");
  }
  bool VisitIndirectGotoStmt(IndirectGotoStmt *S) {
    return fail(S->getBeginLoc(), "the body uses goto");
  }
  bool VisitLabelStmt(LabelStmt *S) {
    return fail(S->getBeginLoc(), "the body has a label");
  }
  bool VisitBreakStmt(BreakStmt *S) {
    if (A.targetsLoop(S, P.Loop))
      return fail(S->getBeginLoc(), "the body leaves the loop with break");
    return true;
  }
  bool VisitContinueStmt(ContinueStmt *S) {
    if (A.targetsLoop(S, P.Loop))
      HasContinue = true;
    return true;
  }
  bool VisitAsmStmt(AsmStmt *S) {
    return fail(S->getBeginLoc(), "the body contains inline asm");
  }
  bool VisitLambdaExpr(LambdaExpr *E) {
    return fail(E->getBeginLoc(), "the body defines a lambda");
  }
  bool VisitVarDecl(VarDecl *V) {
    if (V->hasAttr<CUDASharedAttr>())
      return fail(V->getLocation(), "the body declares __shared__ memory");
    return true;
  }

  LoopAnalyzer &A;
  LoopPlan &P;
  SourceRange BodyRange;
  std::string Why;
  SourceLocation Loc;
  bool HasContinue = false;
  SmallPtrSet<const VarDecl *, 4> Accumulators;
  std::vector<const DeclRefExpr *> OuterReads;
};
} // namespace

std::string LoopAnalyzer::checkReductions(
    LoopPlan &P, const SmallPtrSetImpl<const VarDecl *> &Vars,
    SourceLocation &Loc) {
  const Stmt *LB = P.Loop->getBody();
  std::vector<ArgUpdate> Args;
  if (std::string W = matchArgUpdates(P, Vars, Args, Loc); !W.empty())
    return W;
  for (const VarDecl *V : Vars) {
    std::string Name = V->getNameAsString();
    QualType T = V->getType();
    Loc = V->getLocation();
    if (!T->isArithmeticType() || !T->isBuiltinType())
      return "'" + Name + "' is assigned in every iteration and is not a "
             "scalar reduction (its value would carry between elements)";
    const ArgUpdate *Arg = nullptr;
    for (const ArgUpdate &U : Args)
      if (U.Val == V || U.Idx == V)
        Arg = &U;
    // Each update must be one of: v op= e; v = v op e; v = e op v;
    // v = max(v, e) (min, fmaxf, fminf, ...); with e free of v.
    SmallPtrSet<const DeclRefExpr *, 8> Allowed;
    std::string Family;
    std::string Bad;
    auto IsV = [&](const Expr *E) { return refersTo(E, V); };
    auto Free = [&](const Expr *E) { return referencesTo(E, V).empty(); };
    auto Note = [&](StringRef F) {
      if (Family.empty())
        Family = F.str();
      else if (Family != F)
        Bad = "'" + Name + "' is combined with different operators";
    };
    struct Finder : RecursiveASTVisitor<Finder> {
      std::vector<const BinaryOperator *> Assigns;
      bool VisitBinaryOperator(BinaryOperator *BO) {
        if (BO->isAssignmentOp())
          Assigns.push_back(BO);
        return true;
      }
    } Fi;
    if (Arg) {
      // Half of a (value, index) pair: its only uses are the update's.
      Family = Arg->Max ? "argmax" : "argmin";
      Allowed.insert(V == Arg->Val ? Arg->ValCmp : Arg->IdxSet);
      Allowed.insert(V == Arg->Val ? Arg->ValSet : Arg->IdxSet);
    } else {
      Fi.TraverseStmt(const_cast<Stmt *>(LB));
    }
    for (const BinaryOperator *BO : Fi.Assigns) {
      if (!IsV(BO->getLHS()))
        continue;
      const auto *LHS = cast<DeclRefExpr>(stripIntCasts(BO->getLHS()));
      if (const auto *CA = dyn_cast<CompoundAssignOperator>(BO)) {
        StringRef F;
        switch (CA->getOpcode()) {
        case BO_AddAssign:
        case BO_SubAssign:
          F = "+";
          break;
        case BO_MulAssign:
          F = "*";
          break;
        case BO_OrAssign:
          F = "|";
          break;
        case BO_AndAssign:
          F = "&";
          break;
        case BO_XorAssign:
          F = "^";
          break;
        default:
          break;
        }
        if (!F.empty() && Free(CA->getRHS())) {
          Note(F);
          Allowed.insert(LHS);
        }
        continue;
      }
      const Expr *R = BO->getRHS()->IgnoreParenImpCasts();
      if (const auto *Op = dyn_cast<BinaryOperator>(R)) {
        const Expr *OL = Op->getLHS(), *OR = Op->getRHS();
        BinaryOperatorKind K = Op->getOpcode();
        bool Comm = K == BO_Add || K == BO_Mul || K == BO_Or || K == BO_And ||
                    K == BO_Xor;
        const Expr *Acc = nullptr;
        if ((Comm || K == BO_Sub) && IsV(OL) && Free(OR))
          Acc = OL;
        else if (Comm && IsV(OR) && Free(OL))
          Acc = OR;
        if (Acc) {
          Note(K == BO_Sub || K == BO_Add ? "+"
                                          : BinaryOperator::getOpcodeStr(K));
          Allowed.insert(LHS);
          Allowed.insert(cast<DeclRefExpr>(stripIntCasts(Acc)));
        }
        continue;
      }
      if (const auto *CE = dyn_cast<CallExpr>(R)) {
        const FunctionDecl *FD = CE->getDirectCallee();
        StringRef FN = FD && FD->getIdentifier() ? FD->getName() : "";
        bool Max = FN == "max" || FN == "fmaxf" || FN == "fmax";
        bool Min = FN == "min" || FN == "fminf" || FN == "fmin";
        if ((Max || Min) && CE->getNumArgs() == 2) {
          const Expr *A0 = CE->getArg(0), *A1 = CE->getArg(1);
          const Expr *Acc = IsV(A0) && Free(A1)   ? A0
                            : IsV(A1) && Free(A0) ? A1
                                                  : nullptr;
          if (Acc) {
            Note(Max ? "max" : "min");
            Allowed.insert(LHS);
            Allowed.insert(cast<DeclRefExpr>(stripIntCasts(Acc)));
          }
        }
      }
    }
    if (!Bad.empty())
      return Bad;
    for (const DeclRefExpr *Ref : referencesTo(LB, V))
      if (!Allowed.count(Ref)) {
        Loc = Ref->getLocation();
        return "'" + Name + "' is assigned in the loop and used other than "
               "as a reduction (v += e, v = max(v, e), ...); its value "
               "would carry between elements";
      }
    if (!Opt.Reductions)
      return "the loop reduces into '" + Name +
             "' (refused: vectorize.reductions=0)";
    if (std::string W = checkCombined(P, V, Loc); !W.empty())
      return W;
    if (Arg)
      continue; // Checked as a pair below.
    P.Reductions.push_back(Name);
    if (T->isFloatingType() && (Family == "+" || Family == "*"))
      P.FloatReduction = true;
  }
  // Both halves of each pair are only combined across threads; now the
  // combination itself.
  for (const ArgUpdate &U : Args) {
    if (std::string W = checkArgCombined(P, U, Loc); !W.empty())
      return W;
    P.ArgReductions.push_back(std::string(U.Max ? "arg-max" : "arg-min") +
                              " into (" + U.Val->getNameAsString() + ", " +
                              U.Idx->getNameAsString() + ")");
  }
  return "";
}

/// Calls that combine per-thread values across threads: shuffles and other
/// collectives, atomics, CUB and cooperative-groups operations, and the
/// kernel's own helpers (blockReduceSum and the like).
bool LoopAnalyzer::combiningCall(const CallExpr *CE) const {
  const FunctionDecl *FD = CE->getDirectCallee();
  if (!FD)
    return false;
  StringRef Name = FD->getIdentifier() ? FD->getName() : "";
  if (isCollectiveName(Name) || Name.starts_with("atomic"))
    return true;
  for (const DeclContext *C = FD->getDeclContext(); C; C = C->getParent())
    if (const auto *NS = dyn_cast<NamespaceDecl>(C))
      if (NS->getName() == "cub" || NS->getName() == "cooperative_groups")
        return true;
  return !isSystemFunction(SM, FD);
}

std::string LoopAnalyzer::checkCombined(const LoopPlan &P, const VarDecl *V,
                                        SourceLocation &Loc) {
  // Each thread now accumulates a different subset of the elements, so only
  // the combination over all threads is unchanged: after the loop the value
  // may only flow into such a combination until it is replaced.
  SourceLocation LoopEnd = SM.getExpansionLoc(P.Loop->getEndLoc());
  std::vector<const DeclRefExpr *> After;
  for (const DeclRefExpr *R : referencesTo(Body, V))
    if (SM.isBeforeInTranslationUnit(LoopEnd,
                                     SM.getExpansionLoc(R->getLocation())))
      After.push_back(R);
  llvm::sort(After, [&](const DeclRefExpr *A, const DeclRefExpr *B) {
    return SM.isBeforeInTranslationUnit(SM.getExpansionLoc(A->getLocation()),
                                        SM.getExpansionLoc(B->getLocation()));
  });
  auto HasCombiningCall = [&](const Stmt *S) {
    struct Finder : RecursiveASTVisitor<Finder> {
      const LoopAnalyzer &A;
      bool Found = false;
      explicit Finder(const LoopAnalyzer &A) : A(A) {}
      bool VisitCallExpr(CallExpr *CE) {
        Found |= A.combiningCall(CE);
        return !Found;
      }
    } Fi(*this);
    Fi.TraverseStmt(const_cast<Stmt *>(S));
    return Fi.Found;
  };
  auto IsSharedLValue = [](const Expr *E) {
    while (true) {
      E = E->IgnoreParenImpCasts();
      if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(E))
        E = ASE->getBase();
      else if (const auto *ME = dyn_cast<MemberExpr>(E))
        E = ME->getBase();
      else
        break;
    }
    const auto *DRE = dyn_cast<DeclRefExpr>(E);
    const auto *SV = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
    return SV && SV->hasAttr<CUDASharedAttr>();
  };
  for (const DeclRefExpr *R : After) {
    if (isModifyingUse(R, PM)) {
      // `v = reduce(v)`, `v += __shfl_xor_sync(.., v, ..)` or `v = 0`: from
      // here on v no longer holds the partial result.
      const auto *BO = dyn_cast_or_null<BinaryOperator>(PM.getParent(R));
      if (BO && BO->isAssignmentOp() &&
          (HasCombiningCall(BO->getRHS()) ||
           (BO->getOpcode() == BO_Assign &&
            referencesTo(BO->getRHS(), V).empty())))
        return "";
      // `block_reduce_argmax(v, i)`: the helper combines v and writes the
      // result back.
      if (combinedInPlace(R))
        return "";
      continue;
    }
    bool OK = false;
    const Stmt *Child = R;
    for (const Stmt *S = PM.getParent(R); S && !OK; S = PM.getParent(S)) {
      if (const auto *CE = dyn_cast<CallExpr>(S))
        OK = Child != CE->getCallee() && combiningCall(CE);
      if (const auto *BO = dyn_cast<BinaryOperator>(S))
        OK = BO->isAssignmentOp() && Child == BO->getRHS() &&
             IsSharedLValue(BO->getLHS());
      if (!isa<Expr>(S))
        break;
      Child = S;
    }
    if (!OK) {
      Loc = R->getLocation();
      return "the loop reduces into '" + V->getNameAsString() +
             "', whose per-thread value is used here other than combined "
             "across threads (by a shuffle, an atomic, a reduce helper or "
             "through shared memory); each thread's share of the elements "
             "changes, so that value would change";
    }
  }
  return "";
}

const CallExpr *LoopAnalyzer::enclosingCombiningCall(const Expr *E) const {
  const Stmt *Child = E;
  for (const Stmt *S = PM.getParent(E); S && isa<Expr>(S);
       S = PM.getParent(S)) {
    if (const auto *CE = dyn_cast<CallExpr>(S))
      if (Child != CE->getCallee() && combiningCall(CE))
        return CE;
    Child = S;
  }
  return nullptr;
}

bool LoopAnalyzer::combinedInPlace(const DeclRefExpr *R) const {
  const Expr *Arg = R;
  while (const auto *P = dyn_cast_or_null<Expr>(PM.getParent(Arg))) {
    if (!isa<ParenExpr>(P) && !(isa<ImplicitCastExpr>(P) &&
                                cast<ImplicitCastExpr>(P)->getCastKind() ==
                                    CK_NoOp))
      break;
    Arg = P;
  }
  const auto *CE = dyn_cast_or_null<CallExpr>(PM.getParent(Arg));
  if (!CE || isa<CXXOperatorCallExpr, CXXMemberCallExpr>(CE) ||
      !combiningCall(CE))
    return false;
  const FunctionDecl *Def = nullptr;
  if (!CE->getDirectCallee() || !CE->getDirectCallee()->hasBody(Def))
    return false;
  for (unsigned I = 0; I < CE->getNumArgs() && I < Def->getNumParams(); ++I) {
    if (CE->getArg(I) != Arg)
      continue;
    const ParmVarDecl *Param = Def->getParamDecl(I);
    QualType PT = Param->getType();
    if (!PT->isLValueReferenceType() ||
        PT.getNonReferenceType().isConstQualified())
      return false;
    const auto *Body = dyn_cast_or_null<CompoundStmt>(Def->getBody());
    if (!Body)
      return false;
    for (const Stmt *S : Body->body()) {
      const auto *E = dyn_cast<Expr>(S);
      const auto *BO =
          E ? dyn_cast<BinaryOperator>(E->IgnoreParenImpCasts()) : nullptr;
      if (BO && BO->getOpcode() == BO_Assign && refersTo(BO->getLHS(), Param))
        return true;
    }
    return false;
  }
  return false;
}

std::string
LoopAnalyzer::matchArgUpdates(const LoopPlan &P,
                              const SmallPtrSetImpl<const VarDecl *> &Vars,
                              std::vector<ArgUpdate> &Out,
                              SourceLocation &Loc) {
  struct IfFinder : RecursiveASTVisitor<IfFinder> {
    std::vector<const IfStmt *> Ifs;
    bool VisitIfStmt(IfStmt *If) { return Ifs.push_back(If), true; }
  } Fi;
  Fi.TraverseStmt(const_cast<Stmt *>(P.Loop->getBody()));
  auto Assign = [](const Stmt *S) -> const BinaryOperator * {
    const auto *E = dyn_cast_or_null<Expr>(S);
    const auto *BO =
        E ? dyn_cast<BinaryOperator>(E->IgnoreParenImpCasts()) : nullptr;
    return BO && BO->getOpcode() == BO_Assign ? BO : nullptr;
  };
  auto Accumulator = [&](const Expr *E) -> const VarDecl * {
    const auto *D = dyn_cast_or_null<DeclRefExpr>(stripIntCasts(E));
    const auto *V = D ? dyn_cast<VarDecl>(D->getDecl()) : nullptr;
    return V && Vars.count(V) ? V : nullptr;
  };
  for (const IfStmt *If : Fi.Ifs) {
    const auto *Cmp =
        dyn_cast<BinaryOperator>(If->getCond()->IgnoreParenImpCasts());
    const auto *Then = dyn_cast<CompoundStmt>(If->getThen());
    if (!Cmp || !Cmp->isRelationalOp() || !Then || Then->size() != 2 ||
        If->getElse() || If->getInit() || If->getConditionVariable())
      continue;
    // E > best, best < E (argmax); E < best, best > E (argmin).
    const VarDecl *Val = Accumulator(Cmp->getRHS());
    const Expr *E = Cmp->getLHS();
    bool ValOnRight = Val != nullptr;
    if (!Val) {
      Val = Accumulator(Cmp->getLHS());
      E = Cmp->getRHS();
    }
    if (!Val || !referencesTo(E, Val).empty())
      continue;
    const BinaryOperator *Set[2] = {Assign(Then->body_front()),
                                    Assign(Then->body_back())};
    if (!Set[0] || !Set[1])
      continue;
    if (Accumulator(Set[1]->getLHS()) == Val)
      std::swap(Set[0], Set[1]);
    const VarDecl *Idx = Accumulator(Set[1]->getLHS());
    if (Accumulator(Set[0]->getLHS()) != Val || !Idx || Idx == Val ||
        !sameExpr(Ctx, Set[0]->getRHS(), E) ||
        !referencesTo(E, Idx).empty() ||
        !referencesTo(Set[1]->getRHS(), Val).empty() ||
        !Idx->getType()->isIntegerType())
      continue;
    BinaryOperatorKind K = Cmp->getOpcode();
    bool Max = (K == BO_GT || K == BO_GE) == ValOnRight;
    std::string VN = Val->getNameAsString(), IN = Idx->getNameAsString();
    Loc = Cmp->getOperatorLoc();
    if (K == BO_GE || K == BO_LE)
      return "'" + VN + "' and '" + IN + "' take an element equal to '" + VN +
             "' ('" + BinaryOperator::getOpcodeStr(K).str() +
             "'), so each thread keeps the last " +
             (Max ? "maximum" : "minimum") +
             " of its elements; which one that is depends on how the "
             "elements are split between threads (with '" +
             (K == BO_GE ? ">" : "<") + "' the first one is kept)";
    for (const ArgUpdate &U : Out)
      if (U.Val == Val || U.Idx == Idx || U.Val == Idx || U.Idx == Val)
        return "'" + VN + "' or '" + IN +
               "' is updated by more than one arg-max/arg-min step";
    // The index must grow with j, so that the first extremum in a thread's
    // (ascending) order is also the one with the lowest index.
    const Expr *J = Set[1]->getRHS();
    std::vector<Term> Terms;
    const DeclRefExpr *JRef = nullptr;
    bool Uniform = splitIndex(J, P.J, false, Terms, JRef) && JRef;
    for (const Term &T : Terms)
      Uniform = Uniform && !T.Negated && uniform(T.E, P.Kind);
    Loc = Set[1]->getRHS()->getBeginLoc();
    if (!Uniform)
      return "'" + IN + "' is set to '" + text(J) + "', not the loop index '" +
             P.J->getNameAsString() +
             "' plus a value that is the same for every thread and "
             "iteration; the first " + (Max ? "maximum" : "minimum") +
             " a thread sees would not be the one of lowest index";
    if (Ctx.getTypeSize(Idx->getType()) < Ctx.getTypeSize(P.J->getType()))
      return "'" + IN + "' is narrower than the loop index '" +
             P.J->getNameAsString() + "'";
    ArgUpdate U;
    U.If = If;
    U.Val = Val;
    U.Idx = Idx;
    U.Max = Max;
    U.ValCmp = cast<DeclRefExpr>(stripIntCasts(ValOnRight ? Cmp->getRHS()
                                                          : Cmp->getLHS()));
    U.ValSet = cast<DeclRefExpr>(stripIntCasts(Set[0]->getLHS()));
    U.IdxSet = cast<DeclRefExpr>(stripIntCasts(Set[1]->getLHS()));
    Out.push_back(U);
  }
  return "";
}

std::string LoopAnalyzer::checkArgCombined(const LoopPlan &P,
                                           const ArgUpdate &U,
                                           SourceLocation &Loc) {
  // The first use of each half after the loop: both must be arguments of one
  // combining call.
  SourceLocation LoopEnd = SM.getExpansionLoc(P.Loop->getEndLoc());
  auto FirstAfter = [&](const VarDecl *V) -> const DeclRefExpr * {
    const DeclRefExpr *First = nullptr;
    for (const DeclRefExpr *R : referencesTo(Body, V)) {
      SourceLocation L = SM.getExpansionLoc(R->getLocation());
      if (SM.isBeforeInTranslationUnit(LoopEnd, L) &&
          (!First || SM.isBeforeInTranslationUnit(
                         L, SM.getExpansionLoc(First->getLocation()))))
        First = R;
    }
    return First;
  };
  std::string Pair = "(" + U.Val->getNameAsString() + ", " +
                     U.Idx->getNameAsString() + ")";
  const DeclRefExpr *VR = FirstAfter(U.Val), *IR = FirstAfter(U.Idx);
  const CallExpr *CE = VR ? enclosingCombiningCall(VR) : nullptr;
  const FunctionDecl *Def = nullptr;
  if (!CE || !IR || enclosingCombiningCall(IR) != CE ||
      !CE->getDirectCallee() || !CE->getDirectCallee()->hasBody(Def)) {
    Loc = VR ? VR->getLocation() : P.Loop->getEndLoc();
    return "the arg-reduction pair " + Pair +
           " is not passed to one helper that combines it across threads; "
           "only such a helper's body can show that ties go to the lower "
           "index, which the result needs once each thread sees other "
           "elements";
  }
  // Look for the combine in the helper and the functions it calls.
  struct CombineFinder : RecursiveASTVisitor<CombineFinder> {
    const SourceManager &SM;
    const ASTContext &Ctx;
    bool Max;
    bool Found = false;
    unsigned Depth = 0;
    SmallPtrSet<const FunctionDecl *, 8> Seen;
    CombineFinder(const SourceManager &SM, const ASTContext &Ctx, bool Max)
        : SM(SM), Ctx(Ctx), Max(Max) {}
    bool VisitIfStmt(IfStmt *If) {
      if (std::optional<ArgCombine> C = matchArgCombine(Ctx, If))
        Found |= C->Max == Max;
      return !Found;
    }
    bool VisitCallExpr(CallExpr *CE) {
      const FunctionDecl *Def = nullptr;
      const FunctionDecl *FD = CE->getDirectCallee();
      if (FD && FD->hasBody(Def) && !isSystemFunction(SM, FD) && Depth < 4 &&
          Seen.insert(Def).second) {
        ++Depth;
        TraverseStmt(Def->getBody());
        --Depth;
      }
      return !Found;
    }
  } CF(SM, Ctx, U.Max);
  CF.Seen.insert(Def);
  CF.TraverseStmt(Def->getBody());
  if (CF.Found)
    return "";
  Loc = CE->getBeginLoc();
  std::string Name = Def->getNameAsString();
  return "'" + Name + "' combines the arg-reduction pair " + Pair +
         " but its body has no step keeping the " +
         (U.Max ? "larger" : "smaller") +
         " value and, on equal values, the lower index (if (v " +
         (U.Max ? ">" : "<") +
         " cur || (v == cur && i < cur_i)) { cur = v; cur_i = i; }); "
         "without it the result depends on which thread saw which elements";
}

/// The kernel parameter a pointer variable is derived from, through locals
/// initialized from one pointer each; null when there is not exactly one.
static const ParmVarDecl *rootParam(LoopAnalyzer &A, const VarDecl *V,
                                    unsigned Depth = 0) {
  if (const auto *P = dyn_cast<ParmVarDecl>(V))
    return P;
  if (Depth > 8 || !V->hasLocalStorage() || !V->getInit() || A.modified(V))
    return nullptr;
  auto Bases = pointerBases(V->getInit());
  const VarDecl *Only = nullptr;
  for (const VarDecl *B : Bases)
    if (B->getType()->isPointerType()) {
      if (Only)
        return nullptr;
      Only = B;
    }
  return Only ? rootParam(A, Only, Depth + 1) : nullptr;
}

std::string LoopAnalyzer::checkAliasing(const LoopPlan &P) {
  std::string JN = P.J->getNameAsString();
  for (size_t I = 0; I < P.Groups.size(); ++I)
    for (size_t K = I + 1; K < P.Groups.size(); ++K) {
      const Group &X = P.Groups[I], &Y = P.Groups[K];
      if (!X.Written && !Y.Written)
        continue;
      std::string XN = X.Ptr->getNameAsString(), YN = Y.Ptr->getNameAsString();
      if (X.Ptr == Y.Ptr)
        return "'" + XN + "' is written at one offset and accessed at another "
               "('" + text(X.Accesses.front()) + "', '" +
               text(Y.Accesses.front()) +
               "'); the ranges may overlap, so the order of reads and writes "
               "would change";
      if (Opt.AssumeNoAlias)
        continue;
      const ParmVarDecl *RX = rootParam(*this, X.Ptr);
      const ParmVarDecl *RY = rootParam(*this, Y.Ptr);
      if (RX && RY && RX == RY)
        return "'" + XN + "' and '" + YN + "' both point into '" +
               RX->getNameAsString() + "' and one is written";
      if (RX && RY && RX->getType().isRestrictQualified() &&
          RY->getType().isRestrictQualified())
        continue;
      return "'" + XN + "' and '" + YN +
             "' may overlap (one is written, and they are not both "
             "__restrict__ kernel parameters): mark them __restrict__ (the "
             "restrict-const pass does where every launch allows) or pass "
             "--pass-opt=vectorize.assume-noalias=1";
    }
  return "";
}

std::string LoopAnalyzer::reachability(const LoopPlan &P,
                                       SourceLocation &Loc) {
  // Every enclosing condition must be the same for all threads that share
  // the loop.
  auto CondOf = [](const Stmt *S) -> const Expr * {
    if (const auto *If = dyn_cast<IfStmt>(S))
      return If->getCond();
    if (const auto *W = dyn_cast<WhileStmt>(S))
      return W->getCond();
    if (const auto *D = dyn_cast<DoStmt>(S))
      return D->getCond();
    if (const auto *F = dyn_cast<ForStmt>(S))
      return F->getCond();
    if (const auto *Sw = dyn_cast<SwitchStmt>(S))
      return Sw->getCond();
    if (const auto *C = dyn_cast<AbstractConditionalOperator>(S))
      return C->getCond();
    return nullptr;
  };
  auto CheckAncestors = [&](const Stmt *From, const Stmt *Stop,
                            const char *What) -> std::string {
    for (const Stmt *S = PM.getParent(From); S && S != Stop;
         S = PM.getParent(S)) {
      if (isa<CXXForRangeStmt, LambdaExpr>(S)) {
        Loc = S->getBeginLoc();
        return std::string(What) + " is inside a range-for or lambda";
      }
      if (const Expr *C = CondOf(S))
        if (!uniform(C, P.Kind)) {
          Loc = C->getBeginLoc();
          return std::string(What) +
                 " depends on a condition that differs between threads ('" +
                 text(C) + "'), so not every thread of the " +
                 (P.Kind == LoopKind::Block ? "block" : "grid") +
                 " runs the loop";
        }
    }
    return "";
  };
  if (std::string W = CheckAncestors(P.Loop, nullptr, "the loop"); !W.empty())
    return W;
  // Jumps that can keep some threads from the loop: before it, or anywhere
  // in a loop around it.
  struct Jumps : RecursiveASTVisitor<Jumps> {
    std::vector<const Stmt *> Found;
    bool VisitReturnStmt(ReturnStmt *S) { return Found.push_back(S), true; }
    bool VisitBreakStmt(BreakStmt *S) { return Found.push_back(S), true; }
    bool VisitContinueStmt(ContinueStmt *S) { return Found.push_back(S), true; }
    bool VisitGotoStmt(GotoStmt *S) { return Found.push_back(S), true; }
    bool VisitIndirectGotoStmt(IndirectGotoStmt *S) {
      return Found.push_back(S), true;
    }
    bool TraverseLambdaExpr(LambdaExpr *) { return true; }
  } Js;
  Js.TraverseStmt(const_cast<Stmt *>(Body));
  SourceRange LR = P.Loop->getSourceRange();
  for (const Stmt *J : Js.Found) {
    if (inRange(SM, LR, J->getBeginLoc()))
      continue;
    if (isa<GotoStmt, IndirectGotoStmt>(J)) {
      Loc = J->getBeginLoc();
      return "the kernel uses goto";
    }
    bool Before = SM.isBeforeInTranslationUnit(
        SM.getExpansionLoc(J->getBeginLoc()),
        SM.getExpansionLoc(LR.getBegin()));
    bool InOuterLoop = false;
    for (const Stmt *S = PM.getParent(P.Loop); S; S = PM.getParent(S))
      if (isa<ForStmt, WhileStmt, DoStmt>(S) &&
          inRange(SM, S->getSourceRange(), J->getBeginLoc()))
        InOuterLoop = true;
    if (!Before && !InOuterLoop)
      continue;
    std::string What = std::string("the ") +
                       (isa<ReturnStmt>(J)  ? "return"
                        : isa<BreakStmt>(J) ? "break"
                                            : "continue") +
                       " at " + makePos(SM, J->getBeginLoc()).str();
    if (std::string W = CheckAncestors(J, nullptr, What.c_str()); !W.empty())
      return W + " (it may keep some threads from the loop)";
  }
  return "";
}

std::string LoopAnalyzer::analyze(LoopPlan &P, SourceLocation &Loc) {
  std::string JN = P.J->getNameAsString();
  Loc = P.Loop->getForLoc();
  if (!uniform(P.Bound, P.Kind)) {
    Loc = P.Bound->getBeginLoc();
    return "the bound '" + text(P.Bound) +
           "' is not the same for every iteration and thread";
  }
  if (std::string W = findCollective(P.Loop->getBody(), SM); !W.empty())
    return "the body " + W;

  BodyChecker BC(*this, P);
  BC.TraverseStmt(const_cast<Stmt *>(P.Loop->getBody()));
  if (!BC.Why.empty()) {
    Loc = BC.Loc;
    return BC.Why;
  }
  if (BC.HasContinue)
    for (Group &G : P.Groups)
      G.CondWritten |= G.Written;
  if (std::string W = checkReductions(P, BC.Accumulators, Loc); !W.empty())
    return W;
  Loc = P.Loop->getForLoc();
  for (const DeclRefExpr *R : BC.OuterReads) {
    const auto *V = cast<VarDecl>(R->getDecl());
    if (BC.Accumulators.count(V))
      continue;
    if (!uniformVar(V, P.Kind)) {
      Loc = R->getLocation();
      return "the body reads '" + V->getNameAsString() +
             "', which is not provably the same for every thread that "
             "shares the loop (it is assigned, or computed from the thread "
             "index)";
    }
  }
  if (P.Groups.empty())
    return "the body accesses no global memory as p[base + " + JN + "]";
  if (std::string W = checkAliasing(P); !W.empty())
    return W;
  uint64_t MinSize = ~uint64_t(0);
  for (const Group &G : P.Groups) {
    uint64_t S = G.ElemSize;
    if (S == 0 || !isPowerOf2_64(S) || Opt.Bytes % S != 0)
      return "the elements of '" + G.Ptr->getNameAsString() + "' are " +
             std::to_string(S) + " bytes, which does not divide " +
             std::to_string(Opt.Bytes);
    MinSize = std::min(MinSize, S);
  }
  P.Vec = Opt.Bytes / MinSize;
  if (P.Vec < 2)
    return "every element is already " + std::to_string(Opt.Bytes) +
           " bytes wide";
  return reachability(P, Loc);
}

} // namespace

//===----------------------------------------------------------------------===//
// Text of the rewritten loop
//===----------------------------------------------------------------------===//

namespace {

class LoopWriter {
public:
  LoopWriter(PassContext &PC, const FunctionDecl *Pattern, const Options &O)
      : PC(PC), SM(PC.sourceManager()), LO(PC.langOpts()), Pattern(Pattern),
        Opt(O), PP(LO) {
    PP.SuppressTagKeyword = true;
    PP.SuppressUnwrittenScope = true;
  }

  /// The replacement text for the loop of \p P, or an empty string with
  /// \p Why set.
  std::string write(const LoopPlan &P, std::string &Why);

private:
  unsigned offset(SourceLocation L) const {
    return SM.getFileOffset(SM.getExpansionLoc(L));
  }
  /// The text of \p Idx (an index, or the initializer of a local holding
  /// one) with its j (\p JRef) replaced by \p With.
  std::string substituteJ(const Expr *Idx, const DeclRefExpr *JRef,
                          StringRef With) const;

  PassContext &PC;
  const SourceManager &SM;
  const LangOptions &LO;
  const FunctionDecl *Pattern;
  const Options &Opt;
  PrintingPolicy PP;
};

std::string LoopWriter::substituteJ(const Expr *Idx, const DeclRefExpr *JRef,
                                    StringRef With) const {
  std::string T = PC.text(Idx->getSourceRange());
  unsigned IdxOff = offset(Idx->getBeginLoc());
  unsigned JOff = offset(JRef->getLocation());
  unsigned JLen = JRef->getNameInfo().getAsString().size();
  if (JOff < IdxOff || JOff - IdxOff + JLen > T.size())
    return "";
  return T.substr(0, JOff - IdxOff) + With.str() +
         T.substr(JOff - IdxOff + JLen);
}

std::string LoopWriter::write(const LoopPlan &P, std::string &Why) {
  const ForStmt *L = P.Loop;
  const unsigned B = Opt.Bytes;
  std::optional<LoopText> LT = loopText(PC, L, Why);
  if (!LT)
    return "";
  FileID FID = SM.getFileID(SM.getExpansionLoc(L->getForLoc()));
  StringRef Buf = LT->Buf;
  unsigned Begin = LT->Begin, End = LT->End, RParenEnd = LT->RParenEnd,
           BodyBegin = LT->BodyBegin;

  const VarDecl *PatternJ = varAtSameLocation(Pattern, P.J);
  QualType JT = (PatternJ ? PatternJ : P.J)->getType().getUnqualifiedType();
  std::string JType = JT.getAsString(PP);
  std::string JName = P.J->getNameAsString();
  std::string Start = PC.text(P.Start->getSourceRange());
  std::string Bound = PC.text(P.Bound->getSourceRange());
  std::string Step = PC.text(P.Step->getSourceRange());
  std::string Cond = PC.text(L->getCond()->getSourceRange());
  std::string Inc = PC.text(L->getInc()->getSourceRange());
  if (Start.empty() || Bound.empty() || Step.empty() || Cond.empty() ||
      Inc.empty()) {
    Why = "parts of the loop header come from macro expansions";
    return "";
  }

  // Buffer names and element types (as the pattern spells them).
  std::map<const VarDecl *, unsigned> PerPointer;
  for (const Group &G : P.Groups)
    ++PerPointer[G.Ptr];
  std::map<const VarDecl *, unsigned> Seen;
  std::vector<std::string> Names, Types;
  bool Dependent = false;
  for (const Group &G : P.Groups) {
    std::string N = "astra_" + G.Ptr->getNameAsString();
    // The loop's own names (astra_vec, astra_jv, astra_k, astra_q) must not
    // be a buffer's: a pointer `q` would make `astra_q` both.
    if (N == "astra_vec" || N == "astra_jv" || N == "astra_k" ||
        N == "astra_q")
      N += "_elems";
    if (PerPointer[G.Ptr] > 1)
      N += "_" + std::to_string(Seen[G.Ptr]++);
    Names.push_back(N);
    const VarDecl *PV = varAtSameLocation(Pattern, G.Ptr);
    QualType Elem = (PV ? PV : G.Ptr)->getType()->getPointeeType();
    std::string TT = Elem.getUnqualifiedType().getAsString(PP);
    if (StringRef(TT).contains("auto") || StringRef(TT).contains("(") ||
        StringRef(TT).contains("<dependent")) {
      Why = "the element type of '" + G.Ptr->getNameAsString() +
            "' cannot be named here ('" + TT + "')";
      return "";
    }
    Dependent |= Elem->isDependentType();
    Types.push_back(TT);
  }

  // Replace every access in the body by its buffer element.
  struct Sub {
    unsigned Off, Len;
    std::string Text;
  };
  std::vector<Sub> Subs;
  for (size_t I = 0; I < P.Groups.size(); ++I)
    for (const ArraySubscriptExpr *A : P.Groups[I].Accesses) {
      CharSourceRange R = Lexer::makeFileCharRange(
          CharSourceRange::getTokenRange(A->getSourceRange()), SM, LO);
      if (R.isInvalid() || !PC.isEditable(R.getAsRange()) ||
          SM.getFileID(R.getBegin()) != FID) {
        Why = "the access '" + PC.text(A->getSourceRange()) +
              "' comes from a macro expansion";
        return "";
      }
      unsigned O = SM.getFileOffset(R.getBegin());
      unsigned E = SM.getFileOffset(R.getEnd());
      if (O < BodyBegin || E > End) {
        Why = "an access lies outside the loop's text";
        return "";
      }
      Subs.push_back({O, E - O, Names[I] + "[astra_k]"});
    }
  llvm::sort(Subs, [](const Sub &X, const Sub &Y) { return X.Off < Y.Off; });
  std::string NewBody;
  unsigned Pos = BodyBegin;
  for (const Sub &S : Subs) {
    if (S.Off < Pos) {
      Why = "two accesses overlap in the text";
      return "";
    }
    NewBody += Buf.slice(Pos, S.Off).str() + S.Text;
    Pos = S.Off + S.Len;
  }
  NewBody += Buf.slice(Pos, End).str();
  // Is j still used once the accesses are gone?
  bool NeedJ = false;
  for (const DeclRefExpr *R : referencesTo(L->getBody(), P.J)) {
    unsigned O = offset(R->getLocation());
    bool Inside = false;
    for (const Sub &S : Subs)
      Inside |= O >= S.Off && O < S.Off + S.Len;
    NeedJ |= !Inside;
  }

  // Indentation: the loop's, and one level as the body uses it.
  std::string I0 = LT->Indent, U = LT->Unit;
  std::string I1 = I0 + U, I2 = I1 + U, I3 = I2 + U;

  // astra_vec: literal when every element type is known in the pattern.
  std::string VecText;
  std::vector<std::string> Conds;
  std::string BT = std::to_string(B);
  std::set<std::string> DepTypes;
  if (!Dependent) {
    VecText = std::to_string(P.Vec);
  } else {
    std::string Min;
    for (size_t I = 0; I < Types.size(); ++I) {
      if (!DepTypes.insert(Types[I]).second)
        continue;
      std::string S = "sizeof(" + Types[I] + ")";
      Conds.push_back(BT + " % " + S + " == 0");
      Min = Min.empty() ? S
                        : "(" + S + " < " + Min + " ? " + S + " : " + Min + ")";
    }
    VecText = Min + " <= " + BT + " ? " + BT + " / " + Min + " : 1";
  }
  std::string VT = B == 16 ? "uint4" : "uint2";
  std::vector<std::string> Chunk(P.Groups.size());
  for (size_t I = 0; I < P.Groups.size(); ++I) {
    const Group &G = P.Groups[I];
    const ArraySubscriptExpr *A = G.Accesses.front();
    std::string Ptr = PC.text(A->getBase()->getSourceRange());
    const Expr *Holder = G.JHolder ? G.JHolder : A->getIdx();
    const Expr *Idx = stripIntCasts(Holder);
    std::string Base;
    if (Idx == G.FirstJ || (isa<DeclRefExpr>(Idx) &&
                            cast<DeclRefExpr>(Idx)->getDecl() == P.J)) {
      Base = Ptr;
      Chunk[I] = Ptr + " + astra_jv * astra_vec";
    } else {
      std::string Zero = substituteJ(Holder, G.FirstJ, "0");
      std::string Sub =
          substituteJ(Holder, G.FirstJ, "(astra_jv * astra_vec)");
      if (Zero.empty() || Sub.empty()) {
        Why = "the index of '" + PC.text(A->getSourceRange()) +
              "' is not plain text";
        return "";
      }
      Base = Ptr + " + (" + Zero + ")";
      // `base + j` and `j + base` read better without the substitution.
      if (const auto *Add = dyn_cast<BinaryOperator>(Idx);
          Add && Add->getOpcode() == BO_Add) {
        const Expr *Other = nullptr;
        if (refersTo(Add->getRHS(), P.J))
          Other = Add->getLHS();
        else if (refersTo(Add->getLHS(), P.J))
          Other = Add->getRHS();
        if (Other) {
          std::string OT = PC.text(Other->getSourceRange());
          if (!OT.empty()) {
            Base = Ptr + " + " + operand(OT);
            Sub = OT + " + astra_jv * astra_vec";
          }
        }
      }
      Chunk[I] = Ptr + " + (" + Sub + ")";
    }
    Conds.push_back("reinterpret_cast<unsigned long long>(" + Base + ") % " +
                    BT + " == 0");
  }

  auto Copies = [&](size_t I) -> std::string {
    if (!Dependent)
      return std::to_string(P.Vec * P.Groups[I].ElemSize / B);
    return "(int)(astra_vec * sizeof(" + Types[I] + ") / " + BT + ")";
  };
  auto Copy = [&](size_t I, const std::string &Dst, const std::string &Src) {
    return vectorCopyText(I2, U, VT, Copies(I), "astra_q", Dst, Src);
  };

  std::string JDecl = JType + " " + JName + " = astra_jv * astra_vec + astra_k;";
  std::string KBody;
  if (isa<CompoundStmt>(L->getBody())) {
    KBody = "{" + (NeedJ ? "\n" + I3 + JDecl : std::string()) +
            reindent(StringRef(NewBody).drop_front(1), U + U);
  } else {
    KBody = "{\n" + (NeedJ ? I3 + JDecl + "\n" : std::string()) + I3 +
            reindent(NewBody, U + U) + "\n" + I2 + "}";
  }

  std::string S = "if (" + join(Conds, " &&\n" + I0 + "    ") + ") {\n";
  S += I1 + "constexpr int astra_vec = " + VecText + ";\n";
  S += I1 + "for (" + JType + " astra_jv = " + Start + "; astra_jv < " +
       operand(Bound) + " / astra_vec; astra_jv += " + Step + ") {\n";
  for (size_t I = 0; I < P.Groups.size(); ++I) {
    S += I2 + "alignas(" + BT + ") " + Types[I] + " " + Names[I] +
         "[astra_vec];\n";
    if (P.Groups[I].needsLoad())
      S += Copy(I, Names[I], Chunk[I]);
  }
  S += I2 + "#pragma unroll\n";
  S += I2 + "for (int astra_k = 0; astra_k < astra_vec; ++astra_k) " + KBody +
       "\n";
  for (size_t I = 0; I < P.Groups.size(); ++I)
    if (P.Groups[I].Written)
      S += Copy(I, Chunk[I], Names[I]);
  S += I1 + "}\n";
  S += I1 + "for (" + JType + " " + JName + " = " + operand(Bound) +
       " / astra_vec * astra_vec + " + operand(Start) + "; " + Cond + "; " +
       Inc + ")" + reindent(Buf.slice(RParenEnd, End), U) + "\n";
  S += I0 + "} else {\n" + I1 + reindent(Buf.slice(Begin, End), U) + "\n" +
       I0 + "}";
  return S;
}

} // namespace

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {

/// One stride loop's result in one concrete definition.
struct LoopResult {
  LoopPlan Plan;
  std::string Why; ///< Empty: vectorizable.
  SourceLocation Loc;
};

} // namespace

std::string LoopAnalyzer::text(const Stmt *S) const {
  return sourceText(Ctx, S->getSourceRange());
}

void VectorizePass::run(PassContext &PC) {
  const FunctionDecl *FD = PC.kernel().Decl;
  ASTContext &Ctx = PC.astContext();
  const SourceManager &SM = PC.sourceManager();
  Options Opt;
  if (std::string W = parseOptions(PC.options(), Opt); !W.empty()) {
    PC.refused(FD->getLocation(), W);
    return;
  }
  std::vector<KernelBody> Bodies = kernelBodies(FD);
  if (neverInstantiated(Bodies)) {
    PC.refused(FD->getLocation(),
               "the template is never instantiated in this file, so its "
               "element types are unknown");
    return;
  }

  // Analyze every stride loop in every concrete definition; loops are
  // identified by where their `for` is (shared with the pattern).
  std::map<unsigned, std::vector<LoopResult>> Results;
  std::vector<unsigned> Order;
  std::map<unsigned, std::string> Skipped; ///< Generated loops.
  for (const KernelBody &KB : Bodies) {
    const FunctionDecl *D = KB.FD;
    LoopAnalyzer A(Ctx, D, Opt);
    struct Loops : RecursiveASTVisitor<Loops> {
      std::vector<const ForStmt *> Found;
      bool VisitForStmt(ForStmt *FS) { return Found.push_back(FS), true; }
    } Ls;
    Ls.TraverseStmt(D->getBody());
    std::vector<LoopResult> Here;
    for (const ForStmt *FS : Ls.Found) {
      LoopResult R;
      std::string Near;
      if (!matchHeader(FS, D, R.Plan, Near))
        continue;
      unsigned Key = FS->getForLoc().getRawEncoding();
      if (R.Plan.J && StringRef(R.Plan.J->getName()).starts_with("astra_"))
        continue;
      if (isVectorizedLoop(FS, A.parents())) {
        Skipped[Key] = "the loop is part of a loop vectorized earlier";
        continue;
      }
      R.Plan.Loop = FS;
      R.Loc = FS->getForLoc();
      if (!Near.empty())
        R.Why = Near;
      else
        R.Why = A.analyze(R.Plan, R.Loc);
      Here.push_back(std::move(R));
    }
    // A stride loop inside another: only the inner one is rewritten.
    for (LoopResult &Outer : Here)
      for (const LoopResult &Inner : Here)
        if (&Outer != &Inner && Outer.Why.empty() &&
            inRange(SM, Outer.Plan.Loop->getSourceRange(),
                     Inner.Plan.Loop->getForLoc()))
          Outer.Why = "the loop contains another stride loop (at " +
                      makePos(SM, Inner.Plan.Loop->getForLoc()).str() + ")";
    for (LoopResult &R : Here) {
      unsigned Key = R.Plan.Loop->getForLoc().getRawEncoding();
      if (!Results.count(Key))
        Order.push_back(Key);
      if (D != FD && !R.Why.empty())
        R.Why += " (in " + KB.Label + ")";
      Results[Key].push_back(std::move(R));
    }
  }

  for (const auto &[Key, Why] : Skipped)
    if (!Results.count(Key))
      PC.refused(SourceLocation::getFromRawEncoding(Key), Why);
  if (Results.empty() && Skipped.empty()) {
    std::string Hint;
    struct IndexFinder : RecursiveASTVisitor<IndexFinder> {
      bool Found = false;
      bool VisitVarDecl(VarDecl *V) {
        if (V->getInit() && isGlobalThreadIndex(V->getInit()))
          Found = true;
        return !Found;
      }
    } IF;
    IF.TraverseStmt(Bodies.front().FD->getBody());
    if (IF.Found)
      Hint = "; it processes one element per thread: run grid-stride first "
             "(--passes=grid-stride,vectorize)";
    PC.refused(FD->getLocation(),
               "no block-stride loop (j = threadIdx.x; j < n; j += "
               "blockDim.x) or grid-stride loop in the kernel" + Hint);
    return;
  }

  LoopWriter W(PC, FD, Opt);
  for (unsigned Key : Order) {
    std::vector<LoopResult> &Rs = Results[Key];
    SourceLocation Loc = SourceLocation::getFromRawEncoding(Key);
    const LoopResult *Bad = nullptr;
    for (const LoopResult &R : Rs)
      if (!R.Why.empty() && !Bad)
        Bad = &R;
    if (!Bad && Rs.size() != Bodies.size()) {
      PC.refused(Loc, "the loop is not a stride loop in every instantiation");
      continue;
    }
    if (Bad) {
      PC.refused(Bad->Loc.isValid() ? Bad->Loc : Loc, Bad->Why);
      continue;
    }
    // Instantiations may differ in whether an access reads (an overloaded
    // operator in one, a builtin one in another): merge by position.
    LoopPlan Plan = Rs.front().Plan;
    for (Group &G : Plan.Groups) {
      unsigned First = G.Accesses.front()->getBeginLoc().getRawEncoding();
      for (size_t I = 1; I < Rs.size(); ++I)
        for (const Group &O : Rs[I].Plan.Groups)
          if (O.Accesses.front()->getBeginLoc().getRawEncoding() == First) {
            G.Read |= O.Read;
            G.Written |= O.Written;
            G.CondWritten |= O.CondWritten;
          }
    }
    std::string Why;
    std::string Text = W.write(Plan, Why);
    if (Text.empty()) {
      PC.refused(Loc, Why);
      continue;
    }
    SourceLocation End = endOfStatement(Plan.Loop, SM, PC.langOpts());
    if (!PC.replace(CharSourceRange::getCharRange(Plan.Loop->getForLoc(), End),
                    Text))
      continue;
    std::vector<std::string> Ptrs;
    for (const Group &G : Plan.Groups) {
      std::string N = G.Ptr->getNameAsString();
      if (std::find(Ptrs.begin(), Ptrs.end(), N) == Ptrs.end())
        Ptrs.push_back(N);
    }
    std::string Msg =
        std::string(Plan.Kind == LoopKind::Block ? "block" : "grid") +
        "-stride loop over '" + Plan.J->getNameAsString() +
        "': " + std::to_string(Opt.Bytes) + "-byte vector accesses to " +
        join(Ptrs, ", ") + " (" +
        (Bodies.size() == 1 && Bodies.front().FD == FD
             ? std::to_string(Plan.Vec) + " elements"
             : std::to_string(Opt.Bytes) + " bytes of the smallest element "
                                           "type") +
        " per thread and step), scalar tail and a scalar path for "
        "misaligned pointers";
    for (const std::string &A : Plan.ArgReductions)
      Msg += "; the " + A +
             " keeps the lowest index of the extremum: each thread keeps "
             "the first one of its elements and the combine breaks ties by "
             "the lower index";
    if (!Plan.Reductions.empty())
      Msg += "; the reduction into '" + join(Plan.Reductions, "', '") +
             "' now combines a different subset of elements per thread" +
             (Plan.FloatReduction ? " (float rounding changes; "
                                    "vectorize.reductions=0 refuses)"
                                  : "");
    PC.fired(Loc, Msg);
  }
}

} // namespace astra
