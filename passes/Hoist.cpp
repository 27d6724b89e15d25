//===- Hoist.cpp ----------------------------------------------------------===//
//
// Safety argument. An expression E inside loop L is moved to
// `const T h = E;` right before L, and its occurrences read h, when:
//  - E is invariant in L: every variable it reads is declared outside L and
//    is not assigned, incremented, bound to a non-const reference, passed by
//    reference or captured by reference in L, and its address is never taken
//    anywhere in the kernel (a pointer could then write it from inside L);
//    no declaration E names lies inside L (it would not be in scope before
//    it).
//  - E has no side effects: only operators, casts between scalars, calls of
//    pure math functions from the CUDA headers (expf, sqrtf, rsqrtf, __expf,
//    fmaxf, __half2float, ...) and reads of memory that L cannot change.
//  - Memory E reads: a __constant__ variable; a __shared__ scalar when L has
//    no barrier (another thread could only change it across one) and never
//    writes it; an element of a kernel pointer parameter that the kernel
//    never writes through (analyzePointerWrites), at an invariant index,
//    when L stores nothing through any pointer or the parameter is
//    __restrict__ (a store through another, aliasing pointer would change it
//    otherwise). Other threads cannot change it without a data race the
//    original already has.
//  - Traps: a load may fault and an integer division by zero (or
//    INT_MIN / -1) is undefined. Such an E is hoisted only where the original
//    is certain to evaluate it whenever L is reached: in L's condition, or in
//    the body of a loop that provably runs at least once (do-while, constant
//    bounds), not under an if/switch/?:/&&/||, not after a break, continue,
//    return or goto, not in a nested loop that may run zero times. A division
//    by a constant other than 0 and -1 does not trap.
//    hoist.speculate-loads=1 lifts the run-at-least-once condition for loads
//    (not for divisions): the user states that the addresses are valid.
//  - E is evaluated once instead of per iteration; with the same operand
//    values it gives the same result (floating-point included: the
//    expression text and its types do not change, and pure math functions
//    are deterministic).
// The reciprocal rewrite `x / d` -> `x * (1.0f / d)` changes rounding (two
// roundings instead of one); it needs PassOptions::FastMath (--fast-math),
// and AllowDouble for double.
// Text: the hoisted expression is copied as written (macros included), its
// occurrences must be plain file text; the declaration type is printed from
// the AST, or `auto` in a template kernel (the pattern is edited, so one
// text must serve every instantiation, and every instantiation must agree on
// the same hoists). Fresh names occur nowhere in the translation unit.
// Where a declaration cannot simply go before the loop (the loop is the body
// of an if, a case label, a switch block, or the kernel has labels a goto
// could jump past it to), the loop is wrapped in braces with it.
//
//===----------------------------------------------------------------------===//
#include "Hoist.h"
#include "astra/Analysis/PointerAccess.h"
#include "utils/CudaIdioms.h"
#include "utils/HelperReach.h"
#include "utils/Mutation.h"
#include "utils/PassSupport.h"
#include "utils/SourceText.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/FoldingSet.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSet.h"

#include <functional>
#include <set>

using namespace clang;
using namespace llvm;
using namespace astra::cudaidiom;

namespace astra {

namespace {

/// Functions from the CUDA headers that compute a value from their
/// arguments and nothing else.
bool isPureFunction(StringRef N) {
  static const StringSet<> Pure = {
      // float
      "expf", "exp2f", "exp10f", "expm1f", "logf", "log2f", "log10f",
      "log1pf", "sqrtf", "rsqrtf", "cbrtf", "rcbrtf", "powf", "sinf", "cosf",
      "tanf", "sinpif", "cospif", "asinf", "acosf", "atanf", "atan2f",
      "sinhf", "coshf", "tanhf", "erff", "erfcf", "fabsf", "fmaxf", "fminf",
      "floorf", "ceilf", "truncf", "roundf", "rintf", "nearbyintf", "fmaf",
      "fmodf", "copysignf", "hypotf", "normcdff",
      // double
      "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
      "cbrt", "pow", "sin", "cos", "tan", "asin", "acos", "atan", "atan2",
      "sinh", "cosh", "tanh", "erf", "erfc", "fabs", "fmax", "fmin", "floor",
      "ceil", "trunc", "round", "rint", "fma", "fmod", "copysign", "hypot",
      // integer
      "abs", "labs", "llabs", "max", "min", "umax", "umin", "llmax", "llmin",
      "__popc", "__popcll", "__clz", "__clzll", "__ffs", "__brev", "__mul24",
      "__umul24", "__mulhi", "__umulhi",
      // intrinsics
      "__expf", "__exp10f", "__logf", "__log2f", "__log10f", "__powf",
      "__sinf", "__cosf", "__tanf", "__fdividef", "__frcp_rn", "__fsqrt_rn",
      "__frsqrt_rn", "__fmul_rn", "__fadd_rn", "__fsub_rn", "__fmaf_rn",
      "__fdiv_rn", "__saturatef", "__drcp_rn", "__dsqrt_rn",
      // conversions
      "__int2float_rn", "__uint2float_rn", "__float2int_rn", "__float2int_rz",
      "__float2uint_rn", "__half2float", "__float2half", "__float2half_rn",
      "__bfloat162float", "__float2bfloat16", "__float2bfloat16_rn",
      "__low2float", "__high2float", "__half22float2", "__float22half2_rn",
      "__bfloat1622float2", "__floats2half2_rn", "__floats2bfloat162_rn",
      "__hadd", "__hsub", "__hmul", "__hfma", "__hneg", "__habs", "__hmax",
      "__hmin", "__hadd2", "__hmul2", "__hfma2"};
  return Pure.contains(N);
}

/// Facts about the whole kernel body that every loop's analysis needs.
struct KernelFacts {
  const FunctionDecl *FD = nullptr;
  /// The parameters whose buffers the kernel may write (indexed like FD's):
  /// for a helper, those not known to point into kernel parameters the
  /// kernel never writes.
  std::vector<bool> ParamWritten;
  /// Parameters no other pointer aliases: __restrict__ themselves or, for
  /// a helper, pointing into __restrict__ kernel parameters at every call.
  std::vector<bool> ParamRestrict;
  /// The body is a helper's (messages name its parameters' origins).
  bool Helper = false;
  /// Variables whose address escapes anywhere in the kernel: a pointer or
  /// reference may then change them from inside any loop.
  SmallPtrSet<const VarDecl *, 8> AddressTaken;
  /// Labels: a goto could jump past a declaration the pass inserts.
  bool HasLabels = false;
};

class KernelFactsCollector : public RecursiveASTVisitor<KernelFactsCollector> {
public:
  explicit KernelFactsCollector(KernelFacts &F) : F(F) {}
  bool VisitUnaryOperator(UnaryOperator *UO) {
    if (UO->getOpcode() == UO_AddrOf)
      if (const VarDecl *V = lvalueVar(UO->getSubExpr()))
        F.AddressTaken.insert(V);
    return true;
  }
  bool VisitImplicitCastExpr(ImplicitCastExpr *E) {
    if (E->getCastKind() == CK_ArrayToPointerDecay)
      if (const VarDecl *V = lvalueVar(E->getSubExpr()))
        F.AddressTaken.insert(V);
    return true;
  }
  bool VisitVarDecl(VarDecl *V) {
    if (V->getType()->isReferenceType() && V->getInit() &&
        !V->getType().getNonReferenceType().isConstQualified())
      if (const VarDecl *W = lvalueVar(V->getInit()))
        F.AddressTaken.insert(W);
    return true;
  }
  bool VisitCallExpr(CallExpr *CE) {
    // An lvalue argument may bind to a reference parameter that keeps it.
    const FunctionDecl *Callee = CE->getDirectCallee();
    for (unsigned I = 0; I < CE->getNumArgs(); ++I) {
      const Expr *A = CE->getArg(I);
      if (!A->isLValue())
        continue;
      const ParmVarDecl *P = Callee && I < Callee->getNumParams()
                                 ? Callee->getParamDecl(I)
                                 : nullptr;
      if (P && P->getType()->isReferenceType() &&
          P->getType().getNonReferenceType().isConstQualified())
        continue;
      if (const VarDecl *V = lvalueVar(A))
        F.AddressTaken.insert(V);
    }
    return true;
  }
  bool VisitLambdaExpr(LambdaExpr *L) {
    for (const LambdaCapture &C : L->captures())
      if (C.capturesVariable() && C.getCaptureKind() == LCK_ByRef)
        if (const auto *V = dyn_cast<VarDecl>(C.getCapturedVar()))
          F.AddressTaken.insert(V);
    return true;
  }
  bool VisitLabelStmt(LabelStmt *) {
    F.HasLabels = true;
    return true;
  }
  KernelFacts &F;
};

/// Whether a loop may write memory (anything but scalar locals) and whether
/// it synchronizes with other threads; looks into user functions it calls.
class LoopEffects : public RecursiveASTVisitor<LoopEffects> {
public:
  LoopEffects(const SourceManager &SM, unsigned Depth,
              DenseMap<const FunctionDecl *, std::pair<bool, bool>> &Memo)
      : SM(SM), Depth(Depth), Memo(Memo) {}

  static bool isLocalScalar(const Expr *LHS) {
    const VarDecl *V = lvalueVar(LHS);
    return V && V->hasLocalStorage() && !V->getType()->isReferenceType() &&
           !V->hasAttr<CUDASharedAttr>();
  }
  bool VisitBinaryOperator(BinaryOperator *BO) {
    if (BO->isAssignmentOp() && !isLocalScalar(BO->getLHS()))
      WritesMemory = true;
    return true;
  }
  bool VisitUnaryOperator(UnaryOperator *UO) {
    if (UO->isIncrementDecrementOp() && !isLocalScalar(UO->getSubExpr()))
      WritesMemory = true;
    return true;
  }
  bool VisitCXXOperatorCallExpr(CXXOperatorCallExpr *E) {
    if (E->isAssignmentOp()) {
      if (!E->getNumArgs() || !isLocalScalar(E->getArg(0)))
        WritesMemory = true;
    } else if (!isSystemFunction(SM, E->getDirectCallee())) {
      WritesMemory = true; // A user operator may do anything.
    }
    return true;
  }
  bool VisitCXXMemberCallExpr(CXXMemberCallExpr *E) {
    const CXXMethodDecl *M = E->getMethodDecl();
    if ((!M || !M->isConst()) && !isLocalScalar(E->getImplicitObjectArgument()))
      WritesMemory = true;
    return true;
  }
  bool VisitCallExpr(CallExpr *CE) {
    if (isa<CXXOperatorCallExpr>(CE) || isa<CXXMemberCallExpr>(CE))
      return true;
    if (isBarrierCall(SM, CE)) {
      HasBarrier = true;
      return true;
    }
    StringRef Name = systemCalleeName(SM, CE);
    if (!Name.empty() && (isPureFunction(Name) || Name == "__ldg"))
      return true;
    const FunctionDecl *Callee = CE->getDirectCallee();
    const FunctionDecl *Def = nullptr;
    if (!Callee || isSystemFunction(SM, Callee) || !Callee->hasBody(Def) ||
        Depth >= 6) {
      WritesMemory = true;
      return true;
    }
    auto It = Memo.find(Def);
    if (It == Memo.end()) {
      Memo[Def] = {true, true}; // Recursion: assume the worst.
      LoopEffects Sub(SM, Depth + 1, Memo);
      Sub.TraverseStmt(Def->getBody());
      It = Memo.insert_or_assign(Def, std::make_pair(Sub.WritesMemory,
                                                     Sub.HasBarrier))
               .first;
    }
    WritesMemory |= It->second.first;
    HasBarrier |= It->second.second;
    return true;
  }
  bool VisitGCCAsmStmt(GCCAsmStmt *S) {
    WritesMemory = true;
    HasBarrier |= isBarrierCall(SM, S);
    return true;
  }
  bool VisitMSAsmStmt(MSAsmStmt *) {
    WritesMemory = HasBarrier = true;
    return true;
  }
  bool VisitCXXNewExpr(CXXNewExpr *) {
    WritesMemory = true;
    return true;
  }
  bool VisitCXXDeleteExpr(CXXDeleteExpr *) {
    WritesMemory = true;
    return true;
  }

  const SourceManager &SM;
  unsigned Depth;
  DenseMap<const FunctionDecl *, std::pair<bool, bool>> &Memo;
  bool WritesMemory = false;
  bool HasBarrier = false;
};

/// Whether the loop's body runs at least once whenever the loop is reached:
/// do-while, a missing or constant-true condition, or a counter whose
/// constant start satisfies the constant bound.
bool runsAtLeastOnce(const ASTContext &Ctx, const Stmt *L) {
  if (isa<DoStmt>(L))
    return true;
  const Expr *Cond = nullptr;
  const Stmt *Init = nullptr;
  if (const auto *F = dyn_cast<ForStmt>(L)) {
    Cond = F->getCond();
    Init = F->getInit();
    if (!Cond)
      return true;
  } else if (const auto *W = dyn_cast<WhileStmt>(L)) {
    Cond = W->getCond();
  } else {
    return false;
  }
  bool Value;
  if (!Cond->isValueDependent() && Cond->EvaluateAsBooleanCondition(Value, Ctx))
    return Value;
  const auto *BO = dyn_cast<BinaryOperator>(Cond->IgnoreParenImpCasts());
  if (!BO || !BO->isComparisonOp() || !Init)
    return false;
  // The counter and its start.
  const VarDecl *Var = nullptr;
  const Expr *Start = nullptr;
  if (const auto *DS = dyn_cast<DeclStmt>(Init)) {
    if (DS->isSingleDecl())
      if (const auto *V = dyn_cast<VarDecl>(DS->getSingleDecl())) {
        Var = V;
        Start = V->getInit();
      }
  } else if (const auto *A = dyn_cast<BinaryOperator>(Init)) {
    if (A->getOpcode() == BO_Assign) {
      Var = lvalueVar(A->getLHS());
      Start = A->getRHS();
    }
  }
  std::optional<int64_t> S = constInt(Ctx, Start);
  if (!Var || !S)
    return false;
  auto IsVar = [&](const Expr *E) { return lvalueVar(E) == Var; };
  BinaryOperatorKind Op = BO->getOpcode();
  std::optional<int64_t> B;
  if (IsVar(BO->getLHS()) && (B = constInt(Ctx, BO->getRHS()))) {
  } else if (IsVar(BO->getRHS()) && (B = constInt(Ctx, BO->getLHS()))) {
    Op = BinaryOperator::reverseComparisonOp(Op);
  } else {
    return false;
  }
  switch (Op) {
  case BO_LT:
    return *S < *B;
  case BO_LE:
    return *S <= *B;
  case BO_GT:
    return *S > *B;
  case BO_GE:
    return *S >= *B;
  case BO_NE:
    return *S != *B;
  default:
    return false;
  }
}

bool isLoop(const Stmt *S) {
  return isa<ForStmt>(S) || isa<WhileStmt>(S) || isa<DoStmt>(S);
}

/// A group of identical invariant expressions of one loop, hoisted into one
/// name.
struct Hoist {
  enum KindT { Value, Reciprocal } Kind = Value;
  const Stmt *Loop = nullptr;
  std::string Text;     ///< The expression as written (for a reciprocal,
                        ///< the divisor).
  std::string TypeText; ///< Declared type ("float", "auto", ...).
  bool Pointer = false;
  std::string One; ///< "1.0f" or "1.0" for a reciprocal.
  bool Parens = false; ///< The divisor needs parentheses after "1.0f / ".
  struct Occurrence {
    SourceRange Range;     ///< Token range replaced by the name.
    SourceLocation OpLoc;  ///< Reciprocal: the '/' or '/=' to multiply.
    bool CompoundOp = false;
  };
  std::vector<Occurrence> Occurrences;
  std::string Message;

  /// Identity across instantiations of a template: same loop, same text,
  /// same places.
  std::string key() const {
    std::string K = std::to_string(Kind) + "|" +
                    std::to_string(Loop->getBeginLoc().getRawEncoding()) +
                    "|" + Text + "|" + One;
    for (const Occurrence &O : Occurrences)
      K += "|" + std::to_string(O.Range.getBegin().getRawEncoding()) + ":" +
           std::to_string(O.Range.getEnd().getRawEncoding());
    return K;
  }
};

struct Note {
  SourceLocation Loc;
  std::string Message;
};

/// The decisions for one body (the kernel, or one instantiation).
struct BodyPlan {
  std::vector<Hoist> Hoists;
  std::vector<Note> Notes;
  std::vector<const Stmt *> Loops;
};

/// What is known about one expression relative to one loop.
struct ExprInfo {
  bool Invariant = false; ///< Pure and unchanged by the loop.
  bool Work = false;      ///< Computes something (not just a name).
  bool Load = false;      ///< Reads memory through a pointer or array.
  bool Division = false;  ///< An integer division that may trap.
  std::string Why;        ///< Why a read that looks invariant is not
                          ///< (aliasing), for --explain.
  SourceLocation WhyLoc;
};

/// An invariant value (that computes something when \p Work).
ExprInfo known(bool Work = false) {
  ExprInfo I;
  I.Invariant = true;
  I.Work = Work;
  return I;
}

class BodyAnalysis {
public:
  BodyAnalysis(PassContext &PC, const KernelBody &Body, const KernelFacts &KF,
               bool Template)
      : PC(PC), Ctx(PC.astContext()), SM(PC.sourceManager()), Body(Body),
        KF(KF), Template(Template),
        Speculate(PC.options().intParam("hoist", "speculate-loads", 0) != 0) {
  }

  BodyPlan run() {
    collectLoops(Body.FD->getBody(), nullptr);
    for (const Stmt *L : Plan.Loops)
      analyzeLoop(L);
    return std::move(Plan);
  }

  const Stmt *parentOf(const Stmt *S) const { return Parents.lookup(S); }

private:
  void collectLoops(const Stmt *S, const Stmt *Parent) {
    if (!S)
      return;
    Parents[S] = Parent;
    if (isa<LambdaExpr>(S))
      return;
    if (isLoop(S))
      Plan.Loops.push_back(S);
    for (const Stmt *C : S->children())
      collectLoops(C, S);
  }

  //===--- Per-loop state ---------------------------------------------===//
  const Stmt *Loop = nullptr;
  SourceRange LoopRange;
  bool LoopWrites = false, LoopBarrier = false;
  DenseMap<const Expr *, ExprInfo> Memo;
  DenseMap<const VarDecl *, bool> Modified;
  bool SeenJump = false;
  unsigned Quiet = 0;
  std::map<std::string, size_t> Groups; ///< Profile -> index in LoopHoists.
  std::vector<Hoist> LoopHoists;
  std::set<unsigned> NotedAt;
  /// Occurrences hoisted out of enclosing loops (file offsets): inner loops
  /// neither hoist them again nor hoist anything containing them.
  std::vector<std::pair<unsigned, unsigned>> Taken;

  bool inLoop(SourceLocation L) const {
    L = SM.getExpansionLoc(L);
    return !SM.isBeforeInTranslationUnit(L, LoopRange.getBegin()) &&
           !SM.isBeforeInTranslationUnit(LoopRange.getEnd(), L);
  }
  bool declaredInLoop(const Decl *D) const { return inLoop(D->getLocation()); }

  std::pair<unsigned, unsigned> offsets(SourceRange R) const {
    return {SM.getFileOffset(SM.getExpansionLoc(R.getBegin())),
            SM.getFileOffset(SM.getExpansionLoc(R.getEnd()))};
  }
  /// 0: untouched, 1: is a taken occurrence, 2: contains one.
  int takenState(const Expr *E) const {
    auto [B, En] = offsets(E->getSourceRange());
    for (auto [TB, TE] : Taken) {
      if (TB == B && TE == En)
        return 1;
      if (B <= TB && TE <= En)
        return 2;
    }
    return 0;
  }

  bool modifiedInLoop(const VarDecl *V) {
    auto It = Modified.find(V);
    if (It != Modified.end())
      return It->second;
    bool M = mayModify(Loop, V);
    Modified[V] = M;
    return M;
  }

  void note(SourceLocation Loc, const Twine &Msg) {
    if (Quiet)
      return;
    unsigned Key = Loc.getRawEncoding();
    if (!NotedAt.insert(Key).second)
      return;
    Plan.Notes.push_back({Loc, Msg.str()});
  }

  std::string shortText(SourceRange R) const {
    std::string T = PC.text(R);
    std::string Out;
    bool Space = false;
    for (char C : T) {
      bool W = C == ' ' || C == '\n' || C == '\t' || C == '\r';
      if (W && Space)
        continue;
      Out += W ? ' ' : C;
      Space = W;
    }
    if (Out.size() > 60)
      Out = Out.substr(0, 57) + "...";
    return Out;
  }

  //===--- Expressions ------------------------------------------------===//

  /// A variable read: local values, parameters, constants, __shared__ and
  /// __constant__ scalars.
  ExprInfo varRead(const VarDecl *V) {
    ExprInfo I;
    if (declaredInLoop(V) || V->getType()->isReferenceType() ||
        V->getType().isVolatileQualified() || V->getType()->isArrayType())
      return I;
    if (V->hasAttr<CUDAConstantAttr>()) {
      I.Invariant = I.Work = true;
      return I;
    }
    if (V->hasAttr<CUDASharedAttr>()) {
      if (LoopBarrier || KF.AddressTaken.count(V) || modifiedInLoop(V))
        return I;
      I.Invariant = I.Work = true;
      return I;
    }
    if (V->hasLocalStorage()) {
      if (KF.AddressTaken.count(V) || modifiedInLoop(V))
        return I;
      I.Invariant = true;
      return I;
    }
    // Namespace-scope or static: constant only when const with a constant
    // initializer.
    if (V->getType().isConstQualified() && V->getInit() &&
        V->getInit()->isEvaluatable(Ctx))
      I.Invariant = true;
    return I;
  }

  /// Where a pointer may point: kernel parameters (indices) and
  /// static-storage arrays, through local pointers that are never changed.
  bool pointerOrigins(const Expr *P, SmallVectorImpl<const VarDecl *> &Out,
                      unsigned Depth = 0) {
    if (Depth > 8)
      return false;
    auto Bases = pointerBases(P);
    bool Any = false;
    for (const VarDecl *V : Bases) {
      QualType T = V->getType();
      if (!T->isPointerType() && !T->isArrayType())
        continue; // An integer offset.
      Any = true;
      if (isa<ParmVarDecl>(V) || !V->hasLocalStorage()) {
        // A parameter pointed elsewhere (`in = out;`) reads another buffer.
        if (isa<ParmVarDecl>(V) && mayModify(Body.FD->getBody(), V))
          return false;
        Out.push_back(V);
        continue;
      }
      if (T->isArrayType() || !V->getInit() ||
          mayModify(Body.FD->getBody(), V) || KF.AddressTaken.count(V))
        return false;
      if (!pointerOrigins(V->getInit(), Out, Depth + 1))
        return false;
    }
    return Any;
  }

  int paramIndex(const VarDecl *V) const {
    const auto *P = dyn_cast<ParmVarDecl>(V);
    if (!P || P->getDeclContext() != Body.FD)
      return -1;
    return int(P->getFunctionScopeIndex());
  }

  /// A read of memory at *Ptr (Idx null) or Ptr[Idx].
  ExprInfo memoryRead(const Expr *Ptr, const Expr *Idx, const Expr *Whole) {
    ExprInfo I;
    ExprInfo P = analyze(Ptr);
    ExprInfo X = Idx ? analyze(Idx) : known();
    if (!P.Invariant || !X.Invariant) {
      if (!P.Why.empty())
        return P;
      if (!X.Why.empty())
        return X;
      return I;
    }
    QualType PT = Ptr->getType();
    if (PT->isPointerType() && PT->getPointeeType().isVolatileQualified())
      return I;
    SmallVector<const VarDecl *, 4> Origins;
    if (!pointerOrigins(Ptr, Origins))
      return I;
    for (const VarDecl *V : Origins) {
      int PI = paramIndex(V);
      if (PI >= 0) {
        if (size_t(PI) >= KF.ParamWritten.size() || KF.ParamWritten[PI]) {
          // The kernel writes this buffer: a store (this thread's or,
          // across a barrier, another's) may change the value.
          I.Why = "'" + shortText(Whole->getSourceRange()) + "' reads '" +
                  V->getNameAsString() +
                  (KF.Helper
                       ? "', which is not known to point into kernel "
                         "parameters the kernel never writes at every call"
                       : "', which the kernel writes") +
                  "; the value may change between iterations, so the load "
                  "stays in the loop";
          I.WhyLoc = Whole->getBeginLoc();
          return I;
        }
        bool Restrict = V->getType().isRestrictQualified() ||
                        (size_t(PI) < KF.ParamRestrict.size() &&
                         KF.ParamRestrict[PI]);
        if (LoopWrites && !Restrict) {
          I.Why = "'" + shortText(Whole->getSourceRange()) +
                  "' reads '" + V->getNameAsString() +
                  "', which the kernel never writes, but the loop stores "
                  "through pointers that may alias it; declare '" +
                  V->getNameAsString() +
                  "' __restrict__ (the restrict-const pass does) to hoist it";
          I.WhyLoc = Whole->getBeginLoc();
          return I;
        }
        continue;
      }
      if (V->hasAttr<CUDAConstantAttr>())
        continue;
      if (V->hasAttr<CUDASharedAttr>() && !LoopBarrier && !LoopWrites)
        continue;
      return I;
    }
    I.Invariant = I.Work = I.Load = true;
    I.Division = P.Division || X.Division;
    return I;
  }

  /// The value of an lvalue that is read.
  ExprInfo lvalueRead(const Expr *LV) {
    LV = LV->IgnoreParens();
    if (const auto *DRE = dyn_cast<DeclRefExpr>(LV)) {
      if (const auto *V = dyn_cast<VarDecl>(DRE->getDecl()))
        return varRead(V);
      return ExprInfo();
    }
    if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(LV))
      return memoryRead(ASE->getBase(), ASE->getIdx(), LV);
    if (const auto *UO = dyn_cast<UnaryOperator>(LV)) {
      if (UO->getOpcode() == UO_Deref)
        return memoryRead(UO->getSubExpr(), nullptr, LV);
      return ExprInfo();
    }
    if (const auto *ME = dyn_cast<MemberExpr>(LV)) {
      if (!isa<FieldDecl>(ME->getMemberDecl()))
        return ExprInfo();
      if (ME->isArrow())
        return memoryRead(ME->getBase(), nullptr, LV);
      return lvalueRead(ME->getBase());
    }
    if (const auto *MT = dyn_cast<MaterializeTemporaryExpr>(LV))
      return analyze(MT->getSubExpr());
    return ExprInfo();
  }

  ExprInfo analyze(const Expr *E) {
    auto It = Memo.find(E);
    if (It != Memo.end())
      return It->second;
    ExprInfo I = compute(E);
    Memo[E] = I;
    return I;
  }

  static ExprInfo combine(std::initializer_list<ExprInfo> Parts, bool Work) {
    ExprInfo I;
    I.Invariant = true;
    I.Work = Work;
    for (const ExprInfo &P : Parts) {
      if (!P.Invariant) {
        ExprInfo Bad;
        Bad.Why = P.Why;
        Bad.WhyLoc = P.WhyLoc;
        return Bad;
      }
      I.Work |= P.Work;
      I.Load |= P.Load;
      I.Division |= P.Division;
    }
    return I;
  }

  ExprInfo compute(const Expr *E) {
    ExprInfo None;
    if (!E || E->isTypeDependent() || E->containsErrors())
      return None;
    if (takenState(E) != 0)
      return None;
    if (const auto *PE = dyn_cast<ParenExpr>(E))
      return analyze(PE->getSubExpr());
    if (const auto *CE = dyn_cast<ConstantExpr>(E))
      return analyze(CE->getSubExpr());
    if (const auto *S = dyn_cast<SubstNonTypeTemplateParmExpr>(E))
      return analyze(S->getReplacement());
    if (const auto *EWC = dyn_cast<ExprWithCleanups>(E))
      return analyze(EWC->getSubExpr());
    if (const auto *MT = dyn_cast<MaterializeTemporaryExpr>(E))
      return analyze(MT->getSubExpr());
    if (const auto *BT = dyn_cast<CXXBindTemporaryExpr>(E))
      return analyze(BT->getSubExpr());
    if (isa<IntegerLiteral>(E) || isa<FloatingLiteral>(E) ||
        isa<CharacterLiteral>(E) || isa<CXXBoolLiteralExpr>(E) ||
        isa<CXXNullPtrLiteralExpr>(E))
      return known();
    if (const auto *U = dyn_cast<UnaryExprOrTypeTraitExpr>(E))
      return U->isArgumentType() && U->getArgumentType()->isVariablyModifiedType()
               ? ExprInfo()
               : known();
    if (builtinRef(E->IgnoreParenImpCasts()))
      return known();
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
      const ValueDecl *D = DRE->getDecl();
      if (declaredInLoop(D))
        return None;
      if (isa<EnumConstantDecl>(D) || isa<NonTypeTemplateParmDecl>(D))
        return known();
      return None; // Variables are read through an lvalue-to-rvalue cast.
    }
    if (const auto *ICE = dyn_cast<ImplicitCastExpr>(E)) {
      switch (ICE->getCastKind()) {
      case CK_LValueToRValue:
        return lvalueRead(ICE->getSubExpr());
      case CK_ArrayToPointerDecay: {
        // The address of an array outside the loop does not change.
        const VarDecl *V = lvalueVar(ICE->getSubExpr());
        if (V && !declaredInLoop(V) && !V->getType()->isReferenceType())
          return known();
        if (!V)
          return analyzeAddress(ICE->getSubExpr());
        return None;
      }
      case CK_FunctionToPointerDecay:
      case CK_BuiltinFnToFnPtr:
        return None;
      case CK_UserDefinedConversion:
      case CK_ConstructorConversion:
      default:
        return analyze(ICE->getSubExpr());
      }
    }
    if (const auto *C = dyn_cast<ExplicitCastExpr>(E)) {
      if (C->getCastKind() == CK_LValueToRValue)
        return lvalueRead(C->getSubExpr());
      if (C->getType()->isRecordType() || C->getCastKind() == CK_ToUnion)
        return analyzeConstruct(C->getSubExprAsWritten());
      if (const auto *TD = C->getTypeAsWritten()->getAs<TypedefType>())
        if (declaredInLoop(TD->getDecl()))
          return None;
      return analyze(C->getSubExpr());
    }
    if (const auto *UO = dyn_cast<UnaryOperator>(E)) {
      switch (UO->getOpcode()) {
      case UO_Plus:
      case UO_Minus:
      case UO_Not:
      case UO_LNot:
        return combine({analyze(UO->getSubExpr())}, false);
      case UO_AddrOf:
        return analyzeAddress(UO->getSubExpr());
      default:
        return None;
      }
    }
    if (const auto *BO = dyn_cast<BinaryOperator>(E)) {
      if (BO->isAssignmentOp() || BO->getOpcode() == BO_Comma ||
          BO->isPtrMemOp())
        return None;
      ExprInfo I = combine({analyze(BO->getLHS()), analyze(BO->getRHS())},
                           true);
      if (I.Invariant && (BO->getOpcode() == BO_Div ||
                          BO->getOpcode() == BO_Rem) &&
          BO->getType()->isIntegerType()) {
        std::optional<int64_t> D = constInt(Ctx, BO->getRHS());
        if (!D || *D == 0 || *D == -1)
          I.Division = true;
      }
      return I;
    }
    if (const auto *CO = dyn_cast<AbstractConditionalOperator>(E))
      return combine({analyze(CO->getCond()), analyze(CO->getTrueExpr()),
                      analyze(CO->getFalseExpr())},
                     true);
    if (const auto *MCE = dyn_cast<CXXMemberCallExpr>(E)) {
      // A conversion operator of a CUDA type (__half -> float).
      const CXXMethodDecl *M = MCE->getMethodDecl();
      if (!M || !M->isConst() || MCE->getNumArgs() ||
          !isa<CXXConversionDecl>(M) || !isSystemFunction(SM, M))
        return None;
      const Expr *Obj = MCE->getImplicitObjectArgument();
      return combine({Obj->isLValue() ? lvalueRead(Obj) : analyze(Obj)},
                     true);
    }
    if (const auto *CE = dyn_cast<CallExpr>(E)) {
      if (isa<CXXOperatorCallExpr>(CE) || isa<CUDAKernelCallExpr>(CE))
        return None;
      StringRef Name = systemCalleeName(SM, CE);
      if (Name == "__ldg" && CE->getNumArgs() == 1)
        return memoryRead(CE->getArg(0), nullptr, CE);
      if (Name.empty() || !isPureFunction(Name))
        return None;
      ExprInfo I = known(true);
      for (const Expr *A : CE->arguments()) {
        ExprInfo AI = combine({A->isLValue() ? lvalueRead(A) : analyze(A)},
                              false);
        if (!AI.Invariant)
          return AI;
        I = combine({I, AI}, true);
      }
      return I;
    }
    if (const auto *CCE = dyn_cast<CXXConstructExpr>(E))
      return analyzeConstruct(CCE);
    return None;
  }

  /// A copy of a trivially copyable CUDA value type (__half from an
  /// element): a read of its argument.
  ExprInfo analyzeConstruct(const Expr *E) {
    const auto *CCE = dyn_cast_or_null<CXXConstructExpr>(E);
    if (!CCE) {
      if (E && !E->isLValue())
        return analyze(E);
      return E ? lvalueRead(E) : ExprInfo();
    }
    const CXXConstructorDecl *Ctor = CCE->getConstructor();
    if (CCE->getNumArgs() != 1 || !Ctor->isCopyOrMoveConstructor() ||
        !Ctor->isTrivial())
      return ExprInfo();
    const Expr *A = CCE->getArg(0);
    return A->isLValue() ? lvalueRead(A) : analyze(A);
  }

  /// An address computation &p[i], &s.x: no memory is read.
  ExprInfo analyzeAddress(const Expr *LV) {
    LV = LV->IgnoreParens();
    if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(LV))
      return combine({analyze(ASE->getBase()), analyze(ASE->getIdx())}, true);
    return ExprInfo();
  }

  //===--- Candidates -------------------------------------------------===//

  /// The node whose value is named: implicit conversions stay at the use.
  static const Expr *valueNode(const Expr *E) {
    while (const auto *ICE = dyn_cast<ImplicitCastExpr>(E)) {
      if (ICE->getCastKind() == CK_LValueToRValue)
        break;
      E = ICE->getSubExpr();
    }
    return E;
  }

  std::string typeText(QualType T, bool &Pointer) const {
    T = T.getUnqualifiedType();
    Pointer = T->isPointerType();
    if (Template)
      return "auto";
    PrintingPolicy PP = Ctx.getPrintingPolicy();
    PP.SuppressTagKeyword = true;
    return T.getAsString(PP);
  }

  bool trapAllowed(const ExprInfo &I, bool Cond, bool MayNotRun,
                   SourceLocation At, const Expr *E) {
    Cond |= SeenJump;
    std::string What = "'" + shortText(E->getSourceRange()) + "'";
    if (I.Division && (Cond || MayNotRun)) {
      note(At, What + " is loop-invariant but divides by a value that may "
                      "be zero; it is evaluated only " +
                   (Cond ? "under a condition in the loop"
                         : "if the loop runs, which it may not") +
                   ", so hoisting it could add a division by zero");
      return false;
    }
    if (I.Load && Cond) {
      note(At, What + " is loop-invariant but read under a condition in the "
                      "loop; hoisting the load out of its guard could fault");
      return false;
    }
    if (I.Load && MayNotRun && !Speculate) {
      note(At, What + " is loop-invariant but the loop may run zero times; "
                      "hoisting the load could fault where the original "
                      "never reads (hoist.speculate-loads=1 allows it)");
      return false;
    }
    return true;
  }

  void addValue(const Expr *Node) {
    llvm::FoldingSetNodeID ID;
    Node->Profile(ID, Ctx, /*Canonical=*/true);
    std::string Key = "v" + std::to_string(ID.ComputeHash()) + "|" +
                      shortText(Node->getSourceRange());
    auto [It, New] = Groups.try_emplace(Key, LoopHoists.size());
    if (New) {
      Hoist H;
      H.Kind = Hoist::Value;
      H.Loop = Loop;
      H.Text = PC.text(Node->getSourceRange());
      H.TypeText = typeText(Node->getType(), H.Pointer);
      LoopHoists.push_back(std::move(H));
    }
    LoopHoists[It->second].Occurrences.push_back(
        {Node->getSourceRange(), SourceLocation(), false});
    Taken.push_back(offsets(Node->getSourceRange()));
  }

  void addReciprocal(const BinaryOperator *Div, const Expr *D, QualType T) {
    llvm::FoldingSetNodeID ID;
    D->Profile(ID, Ctx, /*Canonical=*/true);
    bool IsFloat = T->isSpecificBuiltinType(BuiltinType::Float);
    std::string Key = "r" + std::to_string(ID.ComputeHash()) + "|" +
                      shortText(D->getSourceRange()) + (IsFloat ? "f" : "d");
    auto [It, New] = Groups.try_emplace(Key, LoopHoists.size());
    if (New) {
      Hoist H;
      H.Kind = Hoist::Reciprocal;
      H.Loop = Loop;
      const Expr *DV = D->IgnoreImpCasts();
      H.Text = PC.text(DV->getSourceRange());
      H.One = IsFloat ? "1.0f" : "1.0";
      H.TypeText = Template ? "auto" : (IsFloat ? "float" : "double");
      const Expr *Bare = DV->IgnoreParens();
      H.Parens = !(isa<ParenExpr>(DV) || isa<DeclRefExpr>(Bare) ||
                   isa<CallExpr>(Bare) || isa<ArraySubscriptExpr>(Bare) ||
                   isa<MemberExpr>(Bare) || isa<PseudoObjectExpr>(Bare) ||
                   isa<FloatingLiteral>(Bare) || isa<IntegerLiteral>(Bare));
      LoopHoists.push_back(std::move(H));
    }
    LoopHoists[It->second].Occurrences.push_back(
        {D->IgnoreImpCasts()->getSourceRange(), Div->getOperatorLoc(),
         Div->isCompoundAssignmentOp()});
    Taken.push_back(offsets(D->getSourceRange()));
    // Nothing in an inner loop may hoist the division itself: its text is
    // edited here.
    Taken.push_back(offsets(Div->getSourceRange()));
  }

  bool isCandidateType(const Expr *E) const {
    QualType T = E->getType();
    return !T.isNull() && !T->isDependentType() &&
           (T->isArithmeticType() || T->isPointerType() ||
            T->isEnumeralType()) &&
           E->isPRValue();
  }

  bool editable(const Expr *E) const {
    SourceRange R = E->getSourceRange();
    return PC.isEditable(R) && !PC.text(R).empty();
  }

  /// `i += blockDim.x * gridDim.x` or `j += blockDim.x`: the step of a
  /// grid- or block-stride loop stays where it is. It costs nothing (the
  /// compiler keeps the special registers' product in a register anyway),
  /// and vectorize and grid-coarsen recognize such loops by it: hoisting it
  /// kept gelu's combined pipeline from being vectorized.
  static bool isStrideStep(const Expr *Inc) {
    const auto *CA = dyn_cast<CompoundAssignOperator>(Inc->IgnoreParens());
    if (!CA || CA->getOpcode() != BO_AddAssign)
      return false;
    BuiltinRef B = matchBuiltin(CA->getRHS());
    return isGridStrideStep(CA->getRHS()) ||
           (B.Var == cudaidiom::Builtin::BlockDim && B.Dim == 'x');
  }

  /// Visits an expression of the loop; \p Cond: it is evaluated only under
  /// a condition; \p MayNotRun: only if the loop runs at least once;
  /// \p Used: its value is used (not a discarded statement expression).
  void collect(const Expr *E, bool Cond, bool MayNotRun, bool Used = true) {
    if (!E || isa<LambdaExpr>(E) || isa<UnaryExprOrTypeTraitExpr>(E) ||
        isa<CXXTypeidExpr>(E) || isa<StmtExpr>(E))
      return;
    int TS = takenState(E);
    if (TS == 1)
      return;
    // Below an expression refused for a trap, its parts are not explained
    // again (their safe parts are still hoisted).
    struct QuietScope {
      unsigned &Q;
      bool On = false;
      ~QuietScope() {
        if (On)
          --Q;
      }
      void set() {
        if (!On)
          ++Q;
        On = true;
      }
    } Scope{Quiet};
    if (Used && TS == 0) {
      ExprInfo I = analyze(E);
      const Expr *Node = valueNode(E);
      if (I.Invariant && I.Work && isCandidateType(Node) &&
          !Node->isEvaluatable(Ctx)) {
        if (!editable(Node)) {
          note(Node->getBeginLoc(),
               "'" + shortText(Node->getSourceRange()) +
                   "' is loop-invariant but comes from a macro expansion; "
                   "its text cannot be edited");
        } else if (trapAllowed(I, Cond, MayNotRun, Node->getBeginLoc(),
                               Node)) {
          addValue(Node);
          return;
        } else {
          Scope.set();
        }
      } else if (!I.Why.empty()) {
        note(I.WhyLoc, I.Why);
      }
    }
    if (const auto *BO = dyn_cast<BinaryOperator>(E->IgnoreParens())) {
      if (collectDivision(BO, Cond, MayNotRun))
        return;
      bool Short = BO->getOpcode() == BO_LAnd || BO->getOpcode() == BO_LOr;
      collect(BO->getLHS(), Cond, MayNotRun);
      collect(BO->getRHS(), Cond || Short, MayNotRun);
      return;
    }
    if (const auto *CO = dyn_cast<ConditionalOperator>(E->IgnoreParens())) {
      collect(CO->getCond(), Cond, MayNotRun);
      collect(CO->getTrueExpr(), true, MayNotRun);
      collect(CO->getFalseExpr(), true, MayNotRun);
      return;
    }
    if (const auto *BCO =
            dyn_cast<BinaryConditionalOperator>(E->IgnoreParens())) {
      collect(BCO->getCommon(), Cond, MayNotRun);
      collect(BCO->getFalseExpr(), true, MayNotRun);
      return;
    }
    for (const Stmt *C : E->children())
      if (const auto *CE = dyn_cast_or_null<Expr>(C))
        collect(CE, Cond, MayNotRun);
  }

  /// `x / d` or `x /= d` with a loop-invariant floating-point d. Returns
  /// true when it became a reciprocal multiply (and x was visited).
  bool collectDivision(const BinaryOperator *BO, bool Cond, bool MayNotRun) {
    if (BO->getOpcode() != BO_Div && BO->getOpcode() != BO_DivAssign)
      return false;
    QualType T = BO->getType();
    if (const auto *CA = dyn_cast<CompoundAssignOperator>(BO))
      T = CA->getComputationResultType();
    if (T.isNull() || !T->isRealFloatingType())
      return false;
    const Expr *D = BO->getRHS();
    if (takenState(D) != 0 || D->isEvaluatable(Ctx))
      return false;
    ExprInfo I = analyze(D);
    if (!I.Invariant)
      return false;
    std::string What = "'" + shortText(BO->getSourceRange()) + "'";
    bool IsFloat = T->isSpecificBuiltinType(BuiltinType::Float);
    bool IsDouble = T->isSpecificBuiltinType(BuiltinType::Double);
    SourceLocation At = BO->getOperatorLoc();
    if (!IsFloat && !IsDouble)
      return false;
    if (!PC.options().FastMath) {
      note(At, What + " divides by a loop-invariant value; a multiply by its "
                      "reciprocal computed once needs --fast-math (it rounds "
                      "differently)");
      return false;
    }
    if (IsDouble && !PC.options().AllowDouble) {
      note(At, What + " divides doubles by a loop-invariant value; the "
                      "reciprocal rewrite of double math needs "
                      "--allow-double too");
      return false;
    }
    const Expr *DV = D->IgnoreImpCasts();
    if (!editable(DV) || !PC.isEditable(SourceRange(At, At))) {
      note(At, What + " divides by a loop-invariant value, but its text "
                      "comes from a macro expansion");
      return false;
    }
    if (!trapAllowed(I, Cond, MayNotRun, At, D))
      return false;
    addReciprocal(BO, D, T);
    collect(BO->getLHS(), Cond, MayNotRun, /*Used=*/!BO->isAssignmentOp());
    return true;
  }

  /// Visits the statements of the loop in execution order.
  void walk(const Stmt *S, bool Cond, bool MayNotRun) {
    if (!S)
      return;
    if (const auto *E = dyn_cast<Expr>(S)) {
      collect(E, Cond, MayNotRun, /*Used=*/false);
      if (const auto *CE = dyn_cast<CallExpr>(E))
        if (const FunctionDecl *FD = CE->getDirectCallee())
          if (FD->isNoReturn())
            SeenJump = true;
      return;
    }
    if (const auto *CS = dyn_cast<CompoundStmt>(S)) {
      for (const Stmt *C : CS->body())
        walk(C, Cond, MayNotRun);
      return;
    }
    if (const auto *DS = dyn_cast<DeclStmt>(S)) {
      for (const Decl *D : DS->decls())
        if (const auto *V = dyn_cast<VarDecl>(D))
          if (const Expr *Init = V->getInit())
            collect(Init, Cond, MayNotRun,
                    /*Used=*/!V->getType()->isReferenceType() &&
                        !V->isConstexpr());
      return;
    }
    if (const auto *If = dyn_cast<IfStmt>(S)) {
      if (If->isConsteval())
        return;
      walk(If->getInit(), Cond, MayNotRun);
      collect(If->getCond(), Cond, MayNotRun);
      walk(If->getThen(), true, MayNotRun);
      walk(If->getElse(), true, MayNotRun);
      return;
    }
    if (const auto *Sw = dyn_cast<SwitchStmt>(S)) {
      walk(Sw->getInit(), Cond, MayNotRun);
      collect(Sw->getCond(), Cond, MayNotRun);
      walk(Sw->getBody(), true, MayNotRun);
      return;
    }
    if (const auto *F = dyn_cast<ForStmt>(S)) {
      bool Once = runsAtLeastOnce(Ctx, F);
      walk(F->getInit(), Cond, MayNotRun);
      collect(F->getCond(), Cond, MayNotRun);
      walk(F->getBody(), Cond || !Once, MayNotRun);
      if (F->getInc() && !isStrideStep(F->getInc()))
        collect(F->getInc(), true, MayNotRun, /*Used=*/false);
      return;
    }
    if (const auto *W = dyn_cast<WhileStmt>(S)) {
      collect(W->getCond(), Cond, MayNotRun);
      walk(W->getBody(), Cond || !runsAtLeastOnce(Ctx, W), MayNotRun);
      return;
    }
    if (const auto *D = dyn_cast<DoStmt>(S)) {
      walk(D->getBody(), Cond, MayNotRun);
      collect(D->getCond(), true, MayNotRun);
      return;
    }
    if (const auto *A = dyn_cast<AttributedStmt>(S))
      return walk(A->getSubStmt(), Cond, MayNotRun);
    if (const auto *L = dyn_cast<LabelStmt>(S)) {
      SeenJump = true; // A goto may enter here.
      return walk(L->getSubStmt(), Cond, MayNotRun);
    }
    if (const auto *C = dyn_cast<SwitchCase>(S))
      return walk(C->getSubStmt(), true, MayNotRun);
    if (const auto *R = dyn_cast<ReturnStmt>(S)) {
      collect(R->getRetValue(), Cond, MayNotRun);
      SeenJump = true;
      return;
    }
    if (isa<BreakStmt>(S) || isa<ContinueStmt>(S) || isa<GotoStmt>(S) ||
        isa<IndirectGotoStmt>(S)) {
      SeenJump = true;
      return;
    }
    // Anything else (asm, range-for, try): nothing is hoisted from it, and
    // what follows may not run.
    SeenJump = true;
  }

  void analyzeLoop(const Stmt *L) {
    Loop = L;
    LoopRange = SourceRange(SM.getExpansionLoc(L->getBeginLoc()),
                            SM.getExpansionLoc(L->getEndLoc()));
    Memo.clear();
    Modified.clear();
    Groups.clear();
    LoopHoists.clear();
    SeenJump = false;
    DenseMap<const FunctionDecl *, std::pair<bool, bool>> EffMemo;
    LoopEffects Eff(SM, 0, EffMemo);
    Eff.TraverseStmt(const_cast<Stmt *>(L));
    LoopWrites = Eff.WritesMemory;
    LoopBarrier = Eff.HasBarrier;
    bool Once = runsAtLeastOnce(Ctx, L);
    size_t NotesBefore = Plan.Notes.size();

    if (const auto *F = dyn_cast<ForStmt>(L)) {
      collect(F->getCond(), false, false);
      walk(F->getBody(), false, !Once);
      if (F->getInc() && !isStrideStep(F->getInc()))
        collect(F->getInc(), true, !Once, /*Used=*/false);
    } else if (const auto *W = dyn_cast<WhileStmt>(L)) {
      collect(W->getCond(), false, false);
      walk(W->getBody(), false, !Once);
    } else if (const auto *D = dyn_cast<DoStmt>(L)) {
      walk(D->getBody(), false, false);
      collect(D->getCond(), SeenJump, false);
    }

    for (Hoist &H : LoopHoists)
      Plan.Hoists.push_back(std::move(H));
    if (LoopHoists.empty() && Plan.Notes.size() == NotesBefore)
      Plan.Notes.push_back(
          {L->getBeginLoc(), "no loop-invariant work worth hoisting"});
  }

  PassContext &PC;
  ASTContext &Ctx;
  const SourceManager &SM;
  const KernelBody &Body;
  const KernelFacts &KF;
  bool Template;
  bool Speculate;
  DenseMap<const Stmt *, const Stmt *> Parents;
  BodyPlan Plan;

public:
  /// The statement a declaration goes before (the loop, or the attributed
  /// statement that carries its #pragma), and whether it must be wrapped in
  /// braces to take one.
  std::pair<const Stmt *, bool> placement(const Stmt *L) const {
    const Stmt *Outer = L;
    const Stmt *P = parentOf(L);
    while (P && isa<AttributedStmt>(P)) {
      Outer = P;
      P = parentOf(P);
    }
    bool Wrap = !P || !isa<CompoundStmt>(P) || KF.HasLabels;
    if (!Wrap) {
      // The block of a switch: a case label after the loop would jump past
      // the declaration.
      const Stmt *G = parentOf(P);
      Wrap = G && isa<SwitchStmt>(G);
    }
    return {Outer, Wrap};
  }
};

} // namespace

namespace {

/// Whether a body's parameter \p I may see its buffer written by the
/// kernel, and whether nothing else aliases it.
struct ParamFact {
  bool Written = true;
  bool Restrict = false;
};
using ParamFacts =
    std::function<ParamFact(const FunctionDecl *Body, unsigned I)>;

/// Hoists out of the loops of \p Bodies (a kernel's, or a helper's): one
/// site per loop in \p ES, names fresh and not in \p Used.
void hoistBodies(PassContext &PC, const std::vector<KernelBody> &Bodies,
                 bool Template, bool Helper, const ParamFacts &Params,
                 std::set<std::string> &Used, EditSet &ES) {
  ASTContext &Ctx = PC.astContext();
  const SourceManager &SM = PC.sourceManager();
  std::vector<BodyPlan> Plans;
  std::vector<std::unique_ptr<KernelFacts>> Facts;
  std::vector<std::unique_ptr<BodyAnalysis>> Analyses;
  for (const KernelBody &B : Bodies) {
    if (!B.FD->getBody())
      continue;
    auto KF = std::make_unique<KernelFacts>();
    KF->FD = B.FD;
    KF->Helper = Helper;
    for (unsigned I = 0; I < B.FD->getNumParams(); ++I) {
      ParamFact P = Params(B.FD, I);
      KF->ParamWritten.push_back(P.Written);
      KF->ParamRestrict.push_back(P.Restrict);
    }
    KernelFactsCollector(*KF).TraverseStmt(B.FD->getBody());
    auto A = std::make_unique<BodyAnalysis>(PC, B, *KF, Template);
    Plans.push_back(A->run());
    Facts.push_back(std::move(KF));
    Analyses.push_back(std::move(A));
  }
  if (Plans.empty())
    return;

  // A hoist is made only when every instantiation makes the same one.
  std::vector<const Hoist *> Accepted;
  for (const Hoist &H : Plans[0].Hoists) {
    std::string Key = H.key();
    std::string Missing;
    for (size_t I = 1; I < Plans.size(); ++I)
      if (llvm::none_of(Plans[I].Hoists,
                        [&](const Hoist &O) { return O.key() == Key; }))
        Missing += (Missing.empty() ? "" : ", ") + Bodies[I].Label;
    if (!Missing.empty()) {
      PC.refused(H.Occurrences.front().Range.getBegin(),
                 "'" + H.Text + "' cannot be hoisted in every instantiation "
                 "(not in " + Missing + ")");
      continue;
    }
    Accepted.push_back(&H);
  }
  std::set<std::pair<unsigned, std::string>> Said;
  for (size_t I = 0; I < Plans.size(); ++I)
    for (const Note &N : Plans[I].Notes) {
      std::string Msg = N.Message;
      if (Said.insert({N.Loc.getRawEncoding(), Msg}).second)
        PC.refused(N.Loc, (Plans.size() > 1 && I > 0
                               ? "in " + Bodies[I].Label + ": "
                               : std::string()) +
                              Msg);
    }

  // Names, in source order.
  std::stable_sort(Accepted.begin(), Accepted.end(),
                   [&](const Hoist *A, const Hoist *B) {
                     return SM.isBeforeInTranslationUnit(
                         A->Occurrences.front().Range.getBegin(),
                         B->Occurrences.front().Range.getBegin());
                   });
  std::vector<std::string> NamesOf(Accepted.size());
  for (size_t I = 0; I < Accepted.size(); ++I) {
    NamesOf[I] = freshIdentifier(
        Ctx, Accepted[I]->Kind == Hoist::Reciprocal ? "astra_rcp"
                                                    : "astra_inv",
        Used);
    Used.insert(NamesOf[I]);
  }

  // One site per loop: the declarations and every occurrence.
  const BodyAnalysis &A0 = *Analyses[0];
  std::vector<const Stmt *> LoopOrder;
  std::map<const Stmt *, std::vector<size_t>> ByLoop;
  for (size_t I = 0; I < Accepted.size(); ++I) {
    if (!ByLoop.count(Accepted[I]->Loop))
      LoopOrder.push_back(Accepted[I]->Loop);
    ByLoop[Accepted[I]->Loop].push_back(I);
  }
  for (const Stmt *L : LoopOrder) {
    auto [Outer, Wrap] = A0.placement(L);
    std::string Indent = lineIndent(Outer->getBeginLoc(), SM);
    std::vector<std::string> Decls;
    std::vector<TextEdit> Edits;
    bool Ok = true;
    for (size_t I : ByLoop[L]) {
      const Hoist &H = *Accepted[I];
      const std::string &Name = NamesOf[I];
      std::string Decl = H.Pointer && H.TypeText != "auto"
                             ? H.TypeText + "const " + Name
                             : "const " + H.TypeText + " " + Name;
      if (H.Kind == Hoist::Reciprocal)
        Decl += " = " + H.One + " / " +
                (H.Parens ? "(" + H.Text + ")" : H.Text) + ";";
      else
        Decl += " = " + H.Text + ";";
      Decls.push_back(Decl);
      for (const Hoist::Occurrence &O : H.Occurrences) {
        std::optional<TextEdit> E = makeTokenEdit(PC, O.Range, Name);
        Ok &= E.has_value();
        if (E)
          Edits.push_back(*E);
        if (H.Kind == Hoist::Reciprocal) {
          std::optional<TextEdit> Op = makeTokenEdit(
              PC, SourceRange(O.OpLoc, O.OpLoc), O.CompoundOp ? "*=" : "*");
          Ok &= Op.has_value();
          if (Op)
            Edits.push_back(*Op);
        }
      }
    }
    std::string Text;
    if (Wrap) {
      // A #pragma of the loop must stay at the start of its line.
      Text = "{";
      for (const std::string &D : Decls)
        Text += " " + D;
      Text += "\n" + Indent;
      std::optional<TextEdit> Close = makeInsertBefore(
          PC, endOfStatement(Outer, PC.sourceManager(), PC.langOpts()), " }");
      Ok &= Close.has_value();
      if (Close)
        Edits.push_back(*Close);
    } else {
      for (const std::string &D : Decls)
        Text += D + "\n" + Indent;
    }
    std::optional<TextEdit> Open =
        makeInsertBefore(PC, Outer->getBeginLoc(), Text);
    Ok &= Open.has_value();
    if (Open)
      Edits.insert(Edits.begin(), *Open);
    std::string Where = posText(PC, L->getBeginLoc());
    if (!Ok || !ES.addSite(SM, Edits)) {
      for (size_t I : ByLoop[L])
        PC.refused(Accepted[I]->Occurrences.front().Range.getBegin(),
                   "'" + Accepted[I]->Text +
                       "' is loop-invariant, but the loop's text cannot be "
                       "edited there (a macro expansion, or an overlapping "
                       "edit; run the pass again)");
      continue;
    }
    for (size_t I : ByLoop[L]) {
      const Hoist &H = *Accepted[I];
      std::string Uses =
          H.Occurrences.size() > 1
              ? " (" + std::to_string(H.Occurrences.size()) + " uses)"
              : "";
      if (H.Kind == Hoist::Reciprocal)
        PC.fired(H.Occurrences.front().OpLoc,
                 "division by loop-invariant '" + H.Text +
                     "' is now a multiply by its reciprocal '" +
                     NamesOf[I] + "', computed once before the loop at " +
                     Where + Uses +
                     " (fast-math: the result may differ in the last bit)");
      else
        PC.fired(H.Occurrences.front().Range.getBegin(),
                 "hoisted loop-invariant '" + H.Text + "' out of the loop at " +
                     Where + " as '" + NamesOf[I] + "'" + Uses);
    }
  }
}

} // namespace

void HoistPass::run(PassContext &PC) {
  const KernelInfo &K = PC.kernel();
  PointerWriteInfo Writes = analyzePointerWrites(PC.astContext(), K.Decl);
  auto KernelParam = [&](unsigned I) {
    ParamFact F;
    if (I >= K.Decl->getNumParams())
      return F;
    const ParmVarDecl *P = K.Decl->getParamDecl(I);
    F.Written = Writes.isWritten(P);
    F.Restrict = P->getType().isRestrictQualified();
    return F;
  };
  std::set<std::string> Used;
  EditSet ES;
  hoistBodies(PC, kernelBodies(K.Decl), K.isTemplate(), /*Helper=*/false,
              [&](const FunctionDecl *, unsigned I) { return KernelParam(I); },
              Used, ES);
  // Loops in the helpers the kernel calls: a helper's pointer parameter
  // reads a buffer the kernel never writes when it points into such kernel
  // parameters at every call.
  HelperReach Reach(PC);
  for (Helper *H : Reach.helpers()) {
    HelperReach::Scope S(PC, *H);
    auto HelperParam = [&](const FunctionDecl *Body, unsigned I) {
      ParamFact F;
      auto Origins = Reach.kernelParams(Body, I);
      if (!Origins)
        return F;
      F.Written = false;
      F.Restrict = true;
      for (unsigned O : *Origins) {
        ParamFact KF = KernelParam(O);
        F.Written |= KF.Written;
        F.Restrict &= KF.Restrict;
      }
      return F;
    };
    EditSet HES;
    hoistBodies(PC, H->Bodies, H->isTemplate(), /*Helper=*/true, HelperParam,
                Used, HES);
    Reach.setEdits(*H, HES);
  }
  Reach.commit(ES);
}

} // namespace astra
