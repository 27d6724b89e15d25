//===- SmemTranspose.cpp --------------------------------------------------===//
//
// Safety argument. The pass fires only on a kernel body of this form:
//
//   <declarations of scalar locals with pure initializers>
//   [if (C)] Out[I] = V;
//
// where "pure" means built from literals, the kernel's scalar parameters
// (never assigned), earlier such locals (never assigned), the CUDA index
// variables, arithmetic, comparisons, casts and ?:, and V may also read
// elements of pointer parameters whose pointee is const (never Out) and call
// library functions (expf, __ldg). So what a thread does is a function of
// (threadIdx, blockIdx, blockDim, gridDim), the parameters and memory the
// kernel does not write.
//
// The rewrite adds, before the original code, a path taken only when the
// block is (T, T, 1), T the tile's compile-time size:
//
//   phase 1: the original code with the store's target replaced by
//            tile[threadIdx.y][threadIdx.x] (so thread (x, y) computes its C,
//            I and V exactly as before and keeps V in the tile when C holds);
//   __syncthreads() (every thread reaches it: nothing returns early);
//   phase 2: the original code with threadIdx.x and threadIdx.y exchanged
//            everywhere and V replaced by tile[threadIdx.x][threadIdx.y]:
//            thread (x, y) computes C and I as thread (y, x) did, and reads
//            the value thread (y, x) stored, which it stored exactly when C
//            held for it. Thread (y, x) exists because the block is square.
//
// Every element is then written once, with the value and under the
// condition of the original thread that owned it; only which thread issues
// the store changes. Other block shapes run the original code unchanged. A
// caller passing overlapping input and output buffers has a race in the
// original already (another thread writes what a thread reads), so
// const-qualified inputs are taken as not written.
//
// Profitability: the store index is evaluated at sample points; the pass
// fires when its stride along threadIdx.y is 1 element and along threadIdx.x
// at least 2 (after the exchange a warp stores consecutive elements).
//
//===----------------------------------------------------------------------===//
#include "SmemTranspose.h"
#include "astra/Spec/Spec.h"
#include "astra/Support/TextSplice.h"
#include "utils/CudaIdioms.h"
#include "utils/Mutation.h"
#include "utils/PassSupport.h"
#include "utils/SourceText.h"

#include "clang/AST/Attr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/AST/Stmt.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>
#include <set>

using namespace clang;
using namespace llvm;
using namespace astra::cudaidiom;

namespace astra {

namespace {

constexpr const char *TileName = "astra_tile";

/// Why a body cannot be staged (empty when it can) and where.
struct Refusal {
  SourceLocation Loc;
  std::string Why;
  explicit operator bool() const { return !Why.empty(); }
};

/// One kernel body matched against the pattern of the safety argument.
class BodyMatcher {
public:
  BodyMatcher(const FunctionDecl *FD, const SourceManager &SM)
      : FD(FD), SM(SM) {}

  Refusal match();

  const CompoundStmt *Body = nullptr;
  /// The store (`=` or a trivially copyable class's operator=), its target
  /// element and its value.
  const Expr *Store = nullptr;
  const ArraySubscriptExpr *Lhs = nullptr;
  const Expr *Rhs = nullptr;
  const ParmVarDecl *Out = nullptr;
  int64_t StrideX = 0, StrideY = 0;

private:
  /// Whether \p E is pure in the sense above; \p Value allows reads of
  /// const buffers and library calls. Sets Bad to the offending node.
  bool pure(const Expr *E, bool Value);
  /// The value of \p E at one sample point (tx, ty); nullopt when not an
  /// integer function of the sample.
  std::optional<int64_t> eval(const Expr *E, int64_t Tx, int64_t Ty,
                              unsigned Depth = 0) const;

  const FunctionDecl *FD;
  const SourceManager &SM;
  std::set<const VarDecl *> Locals;
  const Expr *Bad = nullptr;
  std::string BadWhy;
};

bool BodyMatcher::pure(const Expr *E, bool Value) {
  if (!E)
    return true;
  E = E->IgnoreParens();
  auto Fail = [&](const Expr *At, std::string Why) {
    Bad = At;
    BadWhy = std::move(Why);
    return false;
  };
  if (builtinRef(E->IgnoreParenImpCasts()))
    return true;
  if (isa<IntegerLiteral, FloatingLiteral, CXXBoolLiteralExpr,
          CharacterLiteral, UnaryExprOrTypeTraitExpr>(E))
    return true;
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    const ValueDecl *D = DRE->getDecl();
    if (const auto *P = dyn_cast<ParmVarDecl>(D)) {
      if (mayModify(FD->getBody(), P))
        return Fail(E, "parameter '" + P->getNameAsString() +
                           "' is assigned in the kernel");
      return true;
    }
    if (const auto *V = dyn_cast<VarDecl>(D))
      if (Locals.count(V) || V->isConstexpr())
        return true;
    if (isa<EnumConstantDecl>(D))
      return true;
    return Fail(E, "'" + D->getNameAsString() +
                       "' is neither a parameter nor a local of the kernel");
  }
  if (const auto *CE = dyn_cast<CastExpr>(E)) {
    if (CE->getCastKind() == CK_LValueToRValue ||
        CE->getCastKind() == CK_ArrayToPointerDecay ||
        CE->getCastKind() == CK_NoOp || CE->getCastKind() == CK_IntegralCast ||
        CE->getCastKind() == CK_IntegralToFloating ||
        CE->getCastKind() == CK_FloatingToIntegral ||
        CE->getCastKind() == CK_FloatingCast ||
        CE->getCastKind() == CK_IntegralToBoolean ||
        CE->getCastKind() == CK_FloatingToBoolean ||
        CE->getCastKind() == CK_ConstructorConversion ||
        CE->getCastKind() == CK_UserDefinedConversion ||
        CE->getCastKind() == CK_FunctionToPointerDecay)
      return pure(CE->getSubExpr(), Value);
    return Fail(E, std::string("a ") + CE->getCastKindName() + " cast");
  }
  if (const auto *UO = dyn_cast<UnaryOperator>(E)) {
    switch (UO->getOpcode()) {
    case UO_Minus:
    case UO_Plus:
    case UO_Not:
    case UO_LNot:
      return pure(UO->getSubExpr(), Value);
    case UO_AddrOf:
      // &in[i] as the argument of __ldg.
      if (Value && isa<ArraySubscriptExpr>(UO->getSubExpr()->IgnoreParens()))
        return pure(UO->getSubExpr(), Value);
      return Fail(E, "an address is taken");
    default:
      return Fail(E, "an increment or dereference");
    }
  }
  if (const auto *BO = dyn_cast<BinaryOperator>(E)) {
    if (BO->isAssignmentOp() || BO->getOpcode() == BO_Comma)
      return Fail(E, "an assignment inside an expression");
    return pure(BO->getLHS(), Value) && pure(BO->getRHS(), Value);
  }
  if (const auto *CO = dyn_cast<ConditionalOperator>(E))
    return pure(CO->getCond(), Value) && pure(CO->getTrueExpr(), Value) &&
           pure(CO->getFalseExpr(), Value);
  if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(E)) {
    const auto *Base =
        dyn_cast<DeclRefExpr>(ASE->getBase()->IgnoreParenImpCasts());
    const auto *P = Base ? dyn_cast<ParmVarDecl>(Base->getDecl()) : nullptr;
    if (!Value || !P || !P->getType()->isPointerType())
      return Fail(E, "a memory read outside the stored value");
    if (P == Out)
      return Fail(E, "the stored value reads the output '" +
                         P->getNameAsString() + "'");
    if (!P->getType()->getPointeeType().isConstQualified())
      return Fail(E, "'" + P->getNameAsString() +
                         "' is read but not a pointer to const (the kernel "
                         "might write it)");
    return pure(ASE->getIdx(), false);
  }
  if (const auto *MC = dyn_cast<CXXMemberCallExpr>(E)) {
    // A conversion of a library type (`float(h)` for a __half h).
    const CXXMethodDecl *MD = MC->getMethodDecl();
    if (!Value || !MD || !isa<CXXConversionDecl>(MD) || !MD->isConst() ||
        !isSystemFunction(SM, MD))
      return Fail(E, "a call of a method other than a library type's "
                     "conversion");
    return pure(MC->getImplicitObjectArgument(), Value);
  }
  if (const auto *Call = dyn_cast<CallExpr>(E)) {
    if (!Value || isa<CUDAKernelCallExpr, CXXMemberCallExpr>(Call) ||
        systemCalleeName(SM, Call).empty() || isBarrierCall(SM, Call))
      return Fail(E, "a call of a function other than a library function");
    for (const Expr *A : Call->arguments())
      if (!pure(A, Value))
        return false;
    return true;
  }
  if (const auto *CE = dyn_cast<CXXConstructExpr>(E)) {
    if (!Value || CE->getNumArgs() != 1)
      return Fail(E, "a constructor call");
    return pure(CE->getArg(0), Value);
  }
  if (const auto *BT = dyn_cast<CXXBindTemporaryExpr>(E))
    return pure(BT->getSubExpr(), Value);
  if (const auto *MTE = dyn_cast<MaterializeTemporaryExpr>(E))
    return pure(MTE->getSubExpr(), Value);
  if (const auto *FC = dyn_cast<CXXFunctionalCastExpr>(E))
    return pure(FC->getSubExpr(), Value);
  return Fail(E, std::string("a ") + E->getStmtClassName() + " expression");
}

std::optional<int64_t> BodyMatcher::eval(const Expr *E, int64_t Tx, int64_t Ty,
                                         unsigned Depth) const {
  return evalIntAt(
      E,
      [&](const Expr *L, unsigned D) -> std::optional<int64_t> {
        std::string B = builtinRef(L->IgnoreParenImpCasts()).name();
        if (!B.empty()) {
          // Block (3, 5) of a 40 x 40 grid of 32 x 32 blocks: a point away
          // from every edge. The tile size does not change a stride.
          static const std::map<std::string, int64_t> Fixed = {
              {"threadIdx.z", 0}, {"blockIdx.x", 3},  {"blockIdx.y", 5},
              {"blockIdx.z", 0},  {"blockDim.x", 32}, {"blockDim.y", 32},
              {"blockDim.z", 1},  {"gridDim.x", 40},  {"gridDim.y", 40},
              {"gridDim.z", 1}};
          if (B == "threadIdx.x")
            return Tx;
          if (B == "threadIdx.y")
            return Ty;
          return Fixed.at(B);
        }
        const auto *DRE = dyn_cast<DeclRefExpr>(L);
        if (!DRE)
          return std::nullopt;
        if (const auto *P = dyn_cast<ParmVarDecl>(DRE->getDecl())) {
          // Distinct values, none a multiple of another's small factors: a
          // row length times an index never looks like a unit stride.
          if (!P->getType()->isIntegerType())
            return std::nullopt;
          return 1000 + 37 * int64_t(P->getFunctionScopeIndex());
        }
        if (const auto *V = dyn_cast<VarDecl>(DRE->getDecl()))
          if (Locals.count(V) || V->isConstexpr())
            return eval(V->getInit(), Tx, Ty, D + 1);
        return std::nullopt;
      },
      Depth);
}

Refusal BodyMatcher::match() {
  Body = dyn_cast_or_null<CompoundStmt>(FD->getBody());
  SourceLocation Loc = FD->getLocation();
  if (!Body || Body->body_empty())
    return {Loc, "the kernel has no body"};
  for (const ParmVarDecl *P : FD->parameters())
    if (P->getName() == TileName)
      return {P->getLocation(), std::string("a parameter is named ") +
                                    TileName};

  // Locals first, then the store.
  const Stmt *Last = Body->body_back();
  for (const Stmt *S : Body->body()) {
    if (S == Last)
      break;
    const auto *DS = dyn_cast<DeclStmt>(S);
    if (!DS)
      return {S->getBeginLoc(),
              "the kernel does more than declare index variables and store "
              "one value (a " + std::string(S->getStmtClassName()) +
                  " statement)"};
    for (const Decl *D : DS->decls()) {
      const auto *V = dyn_cast<VarDecl>(D);
      if (!V || !V->getType()->isScalarType() || V->isStaticLocal() ||
          V->hasAttr<CUDASharedAttr>() || !V->getInit())
        return {D->getLocation(), "a declaration other than an initialized "
                                  "scalar local"};
      if (V->getName() == TileName)
        return {V->getLocation(), std::string("a local is named ") + TileName};
      if (mayModify(Body, V))
        return {V->getLocation(), "local '" + V->getNameAsString() +
                                      "' is assigned after its declaration"};
      if (!pure(V->getInit(), false))
        return {Bad->getBeginLoc(), "the initializer of '" +
                                        V->getNameAsString() + "' has " +
                                        BadWhy};
      Locals.insert(V);
    }
  }

  const Stmt *StoreStmt = Last;
  const Expr *Cond = nullptr;
  if (const auto *If = dyn_cast<IfStmt>(Last)) {
    if (If->getElse() || If->getInit() || If->getConditionVariable() ||
        If->isConstexpr())
      return {If->getBeginLoc(), "the store's guard has an else branch, an "
                                 "initializer or a declaration"};
    Cond = If->getCond();
    StoreStmt = If->getThen();
    if (const auto *CS = dyn_cast<CompoundStmt>(StoreStmt)) {
      if (CS->size() != 1)
        return {CS->getBeginLoc(), "the guarded block holds more than one "
                                   "statement"};
      StoreStmt = CS->body_front();
    }
  }
  if (const auto *EWC = dyn_cast<ExprWithCleanups>(StoreStmt))
    StoreStmt = EWC->getSubExpr();
  const Expr *LhsE = nullptr;
  if (const auto *BO = dyn_cast<BinaryOperator>(StoreStmt)) {
    if (BO->getOpcode() == BO_Assign) {
      LhsE = BO->getLHS();
      Rhs = BO->getRHS();
    }
  } else if (const auto *OC = dyn_cast<CXXOperatorCallExpr>(StoreStmt)) {
    if (OC->getOperator() == OO_Equal && OC->getNumArgs() == 2) {
      LhsE = OC->getArg(0);
      Rhs = OC->getArg(1);
    }
  }
  if (!LhsE)
    return {StoreStmt->getBeginLoc(),
            "the last statement is not a store `out[i] = value;`"};
  const auto *BO = cast<Expr>(StoreStmt);
  Lhs = dyn_cast<ArraySubscriptExpr>(LhsE->IgnoreParens());
  const auto *Base =
      Lhs ? dyn_cast<DeclRefExpr>(Lhs->getBase()->IgnoreParenImpCasts())
          : nullptr;
  Out = Base ? dyn_cast<ParmVarDecl>(Base->getDecl()) : nullptr;
  if (!Out || !Out->getType()->isPointerType())
    return {BO->getBeginLoc(),
            "the store's target is not an element of a pointer parameter"};
  if (mayModify(Body, Out))
    return {BO->getBeginLoc(), "the output pointer '" +
                                   Out->getNameAsString() +
                                   "' is changed in the kernel"};
  QualType Elem = Out->getType()->getPointeeType();
  const auto *RD = Elem->getAsCXXRecordDecl();
  if (Elem.isVolatileQualified() || Elem->isDependentType() ||
      !Elem.isTriviallyCopyableType(FD->getASTContext()) ||
      (RD && !RD->hasTrivialDefaultConstructor()) ||
      FD->getASTContext().getTypeSizeInChars(Elem).getQuantity() > 16)
    return {BO->getBeginLoc(), "the stored type '" + Elem.getAsString() +
                                   "' cannot live in a shared tile"};
  if (Cond && !pure(Cond, false))
    return {Bad->getBeginLoc(), "the store's guard has " + BadWhy};
  if (!pure(Lhs->getIdx(), false))
    return {Bad->getBeginLoc(), "the store's index has " + BadWhy};
  if (!pure(Rhs, true))
    return {Bad->getBeginLoc(), "the stored value has " + BadWhy};
  Store = BO;

  auto At = [&](int64_t Tx, int64_t Ty) { return eval(Lhs->getIdx(), Tx, Ty); };
  auto I11 = At(1, 1), I21 = At(2, 1), I12 = At(1, 2);
  if (!I11 || !I21 || !I12)
    return {Lhs->getBeginLoc(), "the store's index is not an integer "
                                "function of the thread index that the pass "
                                "can evaluate"};
  StrideX = *I21 - *I11;
  StrideY = *I12 - *I11;
  if (StrideY != 1 || StrideX == 0 || StrideX == 1 || StrideX == -1)
    return {Lhs->getBeginLoc(),
            formatv("the store's stride is {0} element(s) along threadIdx.x "
                    "and {1} along threadIdx.y; staging pays off only for a "
                    "stride of 1 along y and at least 2 along x",
                    StrideX, StrideY)
                .str()};
  return {};
}

/// The CUDA index variables \p Name ("threadIdx.x") read under \p S.
void collectBuiltins(const Stmt *S, StringRef Name,
                     std::vector<SourceRange> &Out) {
  if (!S)
    return;
  if (const auto *E = dyn_cast<Expr>(S))
    if (builtinRef(E->IgnoreParenImpCasts()).name() == Name) {
      Out.push_back(E->getSourceRange());
      return;
    }
  for (const Stmt *C : S->children())
    collectBuiltins(C, Name, Out);
}

} // namespace

void SmemTransposePass::run(PassContext &PC) {
  const KernelInfo &K = PC.kernel();
  const FunctionDecl *FD = K.Decl;
  const SourceManager &SM = PC.sourceManager();
  const LangOptions &LO = PC.langOpts();
  SourceLocation Loc = FD->getLocation();

  // Every instantiation must match (each shows its own types).
  std::vector<KernelBody> Bodies = kernelBodies(FD);
  std::optional<BodyMatcher> First;
  for (const KernelBody &KB : Bodies) {
    BodyMatcher M(KB.FD, SM);
    if (Refusal R = M.match()) {
      PC.refused(R.Loc.isValid() ? R.Loc : Loc,
                 (KB.Label.empty() ? "" : KB.Label + ": ") + R.Why);
      return;
    }
    if (!First)
      First.emplace(std::move(M));
  }
  BodyMatcher &M = *First;
  SourceLocation StoreLoc = M.Store->getBeginLoc();

  // The tile size: the square block every launch in the code passes, else
  // --pass-opt=smem-transpose.tile, else 32. The staged path checks
  // blockDim at run time, so any tile is correct; only the code's launches
  // say which one will ever run (a spec describes workloads, not launches).
  int64_t Tile = PC.options().intParam(name(), "tile", 0);
  std::string TileWhy;
  KernelLaunches KL = findLaunches(PC.astContext(), FD);
  if (auto Blocks = KL.constantBlocks()) {
    for (const std::array<int64_t, 3> &D : *Blocks)
      if (D[0] != D[1] || D[2] != 1 || (Tile && Tile != D[0])) {
        PC.refused(StoreLoc,
                   formatv("the code launches blocks of ({0}, {1}, {2}){3}; "
                           "the staged path runs only for one square block "
                           "size",
                           D[0], D[1], D[2],
                           Tile ? formatv(" and ({0}, {0}, 1)", Tile).str()
                                : std::string())
                       .str());
        return;
      } else {
        Tile = D[0];
      }
    TileWhy = "the block every launch passes";
  } else if (Tile) {
    TileWhy = "smem-transpose.tile";
  } else {
    Tile = 32;
    TileWhy = "the default: the code does not show every launch's block (" +
              (KL.allVisible() ? std::string("a block known only at run time")
                               : KL.Hidden) +
              ")";
  }
  if (Tile < 2 || Tile > 32) {
    PC.refused(StoreLoc, formatv("a tile of {0} x {0} threads: the pass "
                                 "stages blocks of 2 x 2 to 32 x 32 threads",
                                 Tile)
                             .str());
    return;
  }

  // The text of the body's statements and what each phase changes in it,
  // as edits (PassSupport's, which refuse macro text) of that text.
  const CompoundStmt *Body = M.Body;
  SourceLocation BeginLoc = Body->body_front()->getBeginLoc();
  SourceLocation End =
      endOfStatement(Body->body_back(), PC.sourceManager(), PC.langOpts());
  if (!PC.isEditable(Body->getSourceRange()) || BeginLoc.isMacroID() ||
      End.isInvalid() || End.isMacroID() ||
      SM.getFileID(BeginLoc) != SM.getFileID(End)) {
    PC.refused(StoreLoc, "the kernel body uses macros; the pass copies its "
                         "text and does not expand them");
    return;
  }
  unsigned Begin = SM.getFileOffset(BeginLoc), EndOff = SM.getFileOffset(End);
  StringRef Text =
      SM.getBufferData(SM.getFileID(BeginLoc)).slice(Begin, EndOff);

  // Edits of the copied text (offsets in it).
  auto apply = [&](std::vector<Splice> Edits) {
    return spliceText(Text, std::move(Edits));
  };
  auto local = [&](SourceRange R) -> std::optional<Splice> {
    std::optional<TextEdit> T = makeTokenEdit(PC, R, "");
    if (!T || SM.getFileID(T->Begin) != SM.getFileID(BeginLoc))
      return std::nullopt;
    unsigned Off = SM.getFileOffset(T->Begin);
    if (Off < Begin || Off + T->Length > EndOff)
      return std::nullopt;
    return Splice{Off - Begin, T->Length, ""};
  };

  auto LhsE = local(M.Lhs->getSourceRange());
  auto RhsE = local(M.Rhs->getSourceRange());
  if (!LhsE || !RhsE) {
    PC.refused(StoreLoc, "the store is not plain text of the kernel body");
    return;
  }
  LhsE->Text = std::string(TileName) + "[threadIdx.y][threadIdx.x]";
  RhsE->Text = std::string(TileName) + "[threadIdx.x][threadIdx.y]";
  std::vector<Splice> Phase2 = {*RhsE};
  for (StringRef From : {"threadIdx.x", "threadIdx.y"}) {
    std::vector<SourceRange> Uses;
    for (const Stmt *S : Body->body())
      collectBuiltins(S, From, Uses);
    for (SourceRange R : Uses) {
      auto E = local(R);
      if (!E) {
        PC.refused(StoreLoc, "'" + From.str() + "' is spelled through a "
                             "macro");
        return;
      }
      if (E->Offset >= RhsE->Offset && E->Offset < RhsE->Offset + RhsE->Length)
        continue; // The value is read from the tile in phase 2.
      E->Text = From == "threadIdx.x" ? "threadIdx.y" : "threadIdx.x";
      Phase2.push_back(*E);
    }
  }
  auto P1 = apply({*LhsE});
  auto P2 = apply(Phase2);
  if (!P1 || !P2) {
    PC.refused(StoreLoc, "internal error: overlapping edits of the body copy");
    return;
  }

  // Indent the copies one block deeper than the original statements.
  unsigned Col = SM.getSpellingColumnNumber(BeginLoc);
  std::string In(Col > 0 ? Col - 1 : 0, ' ');
  auto deeper = [](const std::string &S) {
    std::string R;
    for (char C : S) {
      R += C;
      if (C == '\n')
        R += "    ";
    }
    return R;
  };
  std::string T = std::to_string(Tile);
  PrintingPolicy PP(LO);
  std::string Elem = FD->getParamDecl(M.Out->getFunctionScopeIndex())
                         ->getType()
                         ->getPointeeType()
                         .getUnqualifiedType()
                         .getAsString(PP);
  std::string Insert =
      "\n" + In + "// smem-transpose: stores to '" + M.Out->getNameAsString() +
      "' go through a shared tile so that\n" + In +
      "// a warp writes consecutive elements; other blocks run the code "
      "below.\n" + In + "if (blockDim.x == " + T +
      " && blockDim.y == " + T + " && blockDim.z == 1) {\n" + In +
      "  __shared__ " + Elem + " " + TileName + "[" + T + "][" +
      std::to_string(Tile + 1) + "];\n" + In + "  {\n" + In + "    " +
      deeper(*P1) + "\n" + In + "  }\n" + In + "  __syncthreads();\n" + In +
      "  {\n" + In + "    " + deeper(*P2) + "\n" + In + "  }\n" + In +
      "  return;\n" + In + "}";
  auto E = makeInsertAfterToken(PC, Body->getLBracLoc(), Insert);
  if (!E) {
    PC.refused(StoreLoc, "the kernel body's brace is not plain file text");
    return;
  }
  EditSet ES;
  ES.addSite(SM, {*E});
  if (ES.commit(PC))
    PC.fired(StoreLoc,
             formatv("stores to '{0}' staged through a {1} x {1} shared tile "
                     "(stride {2} elements along threadIdx.x, 1 along "
                     "threadIdx.y; blocks other than ({1}, {1}, 1) run the "
                     "original code; tile size: {3})",
                     M.Out->getName(), Tile, M.StrideX, TileWhy)
                 .str());
}

} // namespace astra
