//===- CudaIdioms.h - CUDA built-ins, idioms and barriers ------*- C++ -*-===//
//
// What passes ask about CUDA code itself: which built-in index variable an
// expression reads (threadIdx.x, blockDim.y, ...), the global thread index
// and grid-stride step, and which calls synchronize threads (barriers) or
// combine values across them (warp collectives). They work on
// non-dependent code: a template kernel is checked through its
// instantiations, where every call is resolved.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_PASSES_UTILS_CUDAIDIOMS_H
#define ASTRA_PASSES_UTILS_CUDAIDIOMS_H

#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace astra {
namespace cudaidiom {

enum class Builtin { None, ThreadIdx, BlockIdx, BlockDim, GridDim };

/// A read of one of CUDA's built-in index variables.
struct BuiltinRef {
  Builtin Var = Builtin::None;
  char Dim = 0; ///< 'x', 'y' or 'z'.
  explicit operator bool() const { return Var != Builtin::None; }
  bool is(Builtin V, char D) const { return Var == V && Dim == D; }
  /// "threadIdx.x", "blockDim.y", ...; empty for none.
  std::string name() const;
};

/// The built-in \p E itself reads: the PseudoObjectExpr clang makes of
/// `threadIdx.x` (or the member access inside it) of CUDA's own variables
/// (type __cuda_builtin_*_t), not a user's variable of the same name. No
/// parentheses or casts are looked through: callers say which they allow
/// (matchBuiltin, or `builtinRef(E->IgnoreParenImpCasts())` where any
/// implicit conversion of the value is fine).
BuiltinRef builtinRef(const clang::Expr *E);

/// Strips parentheses and casts from an integer to an integer type
/// (implicit or written), which do not change an index's value here.
const clang::Expr *stripIntCasts(const clang::Expr *E);

/// `threadIdx.x`, `blockDim.y`, ... through parentheses and integer casts.
BuiltinRef matchBuiltin(const clang::Expr *E);

/// Whether \p E names \p V (through parentheses and integer casts).
bool refersTo(const clang::Expr *E, const clang::VarDecl *V);

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

/// Whether \p E reads the built-in \p Want ("threadIdx.x"), through
/// implicit conversions and parentheses, directly or through a local integer
/// variable of \p FD initialized to it and never changed
/// (`const int tid = threadIdx.x;`).
bool readsBuiltinIndex(const clang::Expr *E, llvm::StringRef Want,
                       const clang::FunctionDecl *FD);

/// The first read of threadIdx.y or threadIdx.z under \p S, with its name in
/// \p What; invalid when there is none. Shared-memory idioms indexed by
/// threadIdx.x alone (tree reductions, scans) assume a 1-D block.
clang::SourceLocation findMultiDimIndex(const clang::Stmt *S,
                                        std::string &What);

/// Names of the calls that wait for other threads: __syncthreads*,
/// __syncwarp, __barrier_sync, clang's __nvvm_bar* builtins behind them, and
/// the waiting members of cooperative groups and cuda::barrier (`sync`,
/// `barrier_wait`, `arrive_and_wait`: a dependent call is judged by its
/// name alone).
bool isBarrierName(llvm::StringRef Name);

/// Names of barriers (isBarrierName) and of warp-collective operations:
/// __shfl*_sync, __ballot_sync, __any/__all, __match_*, __reduce_*,
/// __activemask, __fns, __elect, and clang's builtins behind them.
bool isCollectiveName(llvm::StringRef Name);

/// True for calls that synchronize threads of a block or warp (a call of a
/// barrier, isBarrierName, directly or in the body of a user function it
/// calls; bar/barrier inline asm).
bool isBarrierCall(const clang::SourceManager &SM, const clang::Stmt *S);

/// Whether \p S is a call of __syncthreads() (the plain block barrier the
/// shared-memory idioms are written with).
bool isSyncthreadsCall(const clang::Stmt *S);

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

} // namespace cudaidiom
} // namespace astra

#endif
