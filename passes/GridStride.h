//===- GridStride.h - One element per thread to grid-stride loops -*- C++ -*-===//
//
// `int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) { ... }` (or the
// early-return form `if (i >= n) return; ...`) becomes
// `for (int i = ...; i < n; i += blockDim.x * gridDim.x) { ... }`. Under the
// original launch (a grid that covers n) every thread runs the loop once, so
// results are unchanged; under any smaller grid the loop still covers every
// element, which lets callers launch fewer, fuller blocks and lets vectorize
// take over the loop.
//
// The matchers for CUDA's index idioms below are shared with vectorize
// (passes/Vectorize.cpp), which recognizes the loops this pass produces.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_PASSES_GRIDSTRIDE_H
#define ASTRA_PASSES_GRIDSTRIDE_H

#include "astra/Rewrite/Pass.h"

#include "clang/AST/Expr.h"
#include "clang/AST/ParentMap.h"

#include <string>
#include <vector>

namespace astra {

class GridStridePass : public Pass {
public:
  llvm::StringRef name() const override { return "grid-stride"; }
  llvm::StringRef description() const override {
    return "one-element-per-thread kernels (i = blockIdx.x * blockDim.x + "
           "threadIdx.x; if (i < n)) become grid-stride loops";
  }
  void run(PassContext &PC) override;
};

/// Shared recognizers for CUDA indexing idioms (used by grid-stride and
/// vectorize). They work on non-dependent code: a template kernel is checked
/// through its instantiations, where every call is resolved.
namespace cudaidiom {

enum class Builtin { None, ThreadIdx, BlockIdx, BlockDim, GridDim };

struct BuiltinRef {
  Builtin Var = Builtin::None;
  char Dim = 0; ///< 'x', 'y' or 'z'.
  explicit operator bool() const { return Var != Builtin::None; }
};

/// Strips parentheses and casts from an integer to an integer type
/// (implicit or written), which do not change an index's value here.
const clang::Expr *stripIntCasts(const clang::Expr *E);

/// Whether \p E names \p V (through parentheses and integer casts).
bool refersTo(const clang::Expr *E, const clang::VarDecl *V);

/// `threadIdx.x`, `blockDim.y`, ... (through parentheses and integer casts).
BuiltinRef matchBuiltin(const clang::Expr *E);

/// Whether \p E is `blockIdx.x * blockDim.x + threadIdx.x` with the operands
/// in any order. When it is not but looks like an attempt (it reads
/// blockIdx or threadIdx), \p Why says what differs.
bool isGlobalThreadIndex(const clang::Expr *E, std::string *Why = nullptr);

/// `blockDim.x * gridDim.x` in either order.
bool isGridStrideStep(const clang::Expr *E);

/// Whether any expression under \p S reads the built-in \p Var with
/// dimension \p Dim (0: any dimension); the first one found goes to \p At.
bool usesBuiltin(const clang::Stmt *S, Builtin Var, char Dim,
                 const clang::Expr **At = nullptr);

/// Names of barriers and warp-collective operations (__syncthreads,
/// __shfl*_sync, __ballot_sync, ..., and clang's builtins behind them).
bool isCollectiveName(llvm::StringRef Name);

/// A message naming the first barrier, warp-collective operation
/// (shuffles, votes, cooperative groups), or inline asm that \p S reaches,
/// looking into the bodies of called functions; empty if there is none.
/// \p AllowVectorRed: flat-vectorize's vector atomic adds
/// (isVectorRedAsm) are not counted.
std::string findCollective(const clang::Stmt *S,
                           const clang::SourceManager &SM,
                           bool AllowVectorRed = false);

/// The inline asm flat-vectorize writes for a chunk of \p Lanes (2 or 4)
/// float atomic adds: `red.global.add.v4.f32 [%0], {%1, %2, %3, %4};`.
std::string vectorRedAsm(unsigned Lanes);

/// Whether \p S is such asm (vectorRedAsm): an atomic add to global memory
/// with no result, which neither synchronizes nor depends on the thread,
/// unlike asm in general.
bool isVectorRedAsm(const clang::Stmt *S);

/// A message naming the first __shared__ variable that \p S (or a function it
/// calls) declares or uses; empty if there is none.
std::string findSharedMemory(const clang::Stmt *S,
                             const clang::SourceManager &SM);

/// Whether this use of a variable may change it: assigned, incremented,
/// address taken, bound to a non-const reference or passed to one, or a
/// non-const member function called on it. \p PM is the parent map of the
/// enclosing function body.
bool isModifyingUse(const clang::DeclRefExpr *DRE, const clang::ParentMap &PM);

/// Every DeclRefExpr under \p S naming \p V.
std::vector<const clang::DeclRefExpr *> referencesTo(const clang::Stmt *S,
                                                      const clang::VarDecl *V);

/// The definitions a rewrite of \p FD must be checked against: \p FD itself,
/// or for a function template every instantiation that has a body (where
/// types and calls are resolved). Empty for a template never instantiated.
std::vector<const clang::FunctionDecl *>
concreteDefinitions(const clang::FunctionDecl *FD);

/// The variable that a statement at the same place in \p FD declares:
/// maps a variable of an instantiation back to the template's pattern.
const clang::VarDecl *varAtSameLocation(const clang::FunctionDecl *FD,
                                        const clang::VarDecl *V);

/// The character just past the `;` that ends \p S (an expression statement,
/// `return;`, a declaration) or past its `}`; invalid when not found.
clang::SourceLocation endOfStatement(const clang::Stmt *S,
                                     const clang::SourceManager &SM,
                                     const clang::LangOptions &LO);

/// Whitespace before \p Loc on its line, when only whitespace precedes it;
/// std::nullopt otherwise.
std::optional<std::string> lineIndent(clang::SourceLocation Loc,
                                      const clang::SourceManager &SM);

/// \p Text with \p Indent added after every newline (except before blank
/// lines). Text with line continuations or raw strings is returned as is,
/// since new spaces could land inside a literal.
std::string reindent(llvm::StringRef Text, llvm::StringRef Indent);

/// `scale<float>`: how messages name one instantiation of a template.
std::string instantiationName(const clang::FunctionDecl *D,
                              const clang::LangOptions &LO);

} // namespace cudaidiom

} // namespace astra

#endif
