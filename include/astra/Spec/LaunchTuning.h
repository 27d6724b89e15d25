//===- LaunchTuning.h - Block sizes the optimizer may change ---*- C++ -*-===//
//
// A spec with "launch_tunable": true says the kernel's launch configuration
// is the kernel's own, so the optimizer may try other block sizes. What is
// changed is one number: the block size literal of the spec's launch.block
// ("min(1024, d)": 1024; "256": 256). The same literal is changed wherever
// the launch mentions it (a grid of "cdiv(n, 256)" follows a block of 256),
// in the spec and at the kernel's launch sites (the block-size pass), so the
// code that is written back launches what was verified and timed.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_SPEC_LAUNCHTUNING_H
#define ASTRA_SPEC_LAUNCHTUNING_H

#include "astra/Spec/Spec.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace astra {

/// The block size literal of \p K's launch: the one integer literal of
/// launch.block (x) that is a multiple of 32 from 32 to 1024, with block y
/// and z absent or 1. Fails, saying why, when the spec does not allow
/// tuning or the block has no such single literal.
llvm::Expected<int64_t> tunableBlockLiteral(const KernelSpec &K);

/// Whether the integer literal \p V appears in \p Text as a whole number.
bool mentionsLiteral(llvm::StringRef Text, int64_t V);

/// \p Text with every whole-number literal that is a key of \p Map
/// replaced by its value.
std::string replaceLiterals(llvm::StringRef Text,
                            const std::map<int64_t, int64_t> &Map);
std::string replaceLiteral(llvm::StringRef Text, int64_t From, int64_t To);

/// The literals a grid's retuning changes: the block size, and the block
/// size minus one of a grid that rounds up ("(n + 255) / 256").
std::map<int64_t, int64_t> gridLiterals(int64_t From, int64_t To);

/// \p L with the literal \p From replaced by \p To in grid, block and shmem
/// (and From - 1 by To - 1 in a grid that mentions From).
llvm::Expected<LaunchSpec> retuneLaunch(const LaunchSpec &L, int64_t From,
                                        int64_t To);

/// The block size tried when none is asked for: 256, or 128 when the kernel
/// already uses 256.
int64_t defaultRetunedBlock(int64_t From);

/// \p L with the grid's x size divided by \p F, rounding up:
/// "cdiv(<x>, F)" (grid-coarsen launches a grid-stride kernel this way).
llvm::Expected<LaunchSpec> divideGrid(const LaunchSpec &L, int64_t F);

/// delinearize: a kernel launched over a flat index idx = (z * B + y) * A + x
/// (a 1-D grid of X0-thread blocks) runs on a 3-D grid instead, x over A,
/// y over B and z over C, with blocks of Bx x By threads, where that grid
/// fits (delinearizeCondition); else on the flat grid with the same 2-D
/// blocks. A, B and C are integer expressions over the kernel's parameters
/// (names as the kernel spells them; + - * / % and parentheses).
struct Delinearized {
  std::string A, B, C;
  int64_t Bx = 0, By = 0;
  bool operator==(const Delinearized &O) const {
    return A == O.A && B == O.B && C == O.C && Bx == O.Bx && By == O.By;
  }
};

/// When the 3-D grid of a delinearized launch is used, as C (and spec) text
/// over the parenthesized extents \p A, \p B, \p C: every extent positive
/// and the grid within CUDA's limits (y and z at most 65535). The kernel
/// and its launch sites test the same condition.
std::string delinearizeCondition(llvm::StringRef A, llvm::StringRef B,
                                 llvm::StringRef C, int64_t Bx, int64_t By);

/// \p Text (an expression over a kernel's parameters) with each parameter
/// name that \p Subst maps replaced by its text.
std::string substituteNames(llvm::StringRef Text,
                            const std::map<std::string, std::string> &Subst);

/// \p L (a 1-D launch whose grid x covers the flat index with blocks of
/// block x threads) delinearized by \p D for the kernel of \p K: grid
/// [cond ? cdiv(A, Bx) : cdiv(G * X0, Bx * By), cond ? cdiv(B, By) : 1,
/// cond ? C : 1], block [Bx, By], with the parameters of A, B and C
/// replaced by the spec's values of the scalar arguments.
llvm::Expected<LaunchSpec> delinearizeLaunch(const KernelSpec &K,
                                             const LaunchSpec &L,
                                             const Delinearized &D);

/// How a candidate's launch sites differ from the spec's launch: another
/// block size (block-size), a grid x divided by a factor (grid-coarsen).
/// The block size is changed first: a grid "cdiv(n, 256)" at 128 threads
/// coarsened by 4 is "cdiv(cdiv(n, 128), 4)".
struct LaunchChange {
  std::optional<int64_t> BlockThreads;
  std::optional<int64_t> GridDivisor;
  /// thread-coarsen: the block's x and y sizes divided by these (each
  /// thread does the work of that many threads of the original block).
  std::optional<int64_t> BlockXDivisor, BlockYDivisor;
  /// rows-per-block: BlockRows (R) rows per block of the block's x (B)
  /// divided by RowDivisor (D) threads each, where that fits: with
  /// C = "G % R == 0 && B % D == 0 && B / D * R <= 1024" (G the grid's x),
  /// grid "C ? G / R : G", block "[C ? B / D : B, C ? R : 1]". Applied last.
  std::optional<int64_t> RowDivisor, BlockRows;
  /// delinearize's 3-D grid (applied after BlockThreads, before the rest).
  std::optional<Delinearized> Grid3;
  /// warp-per-row: a warp per row of the kernel's row count R (an
  /// expression over the kernel's parameter names), where the block's x B
  /// is a multiple of 32: grid x "B % 32 == 0 ? cdiv(R, B / 32) : G"
  /// (warpPerRowLaunch). Applied after BlockThreads, before the rest.
  std::optional<std::string> WarpRows;
  bool empty() const {
    return !BlockThreads && !GridDivisor && !BlockXDivisor && !BlockYDivisor &&
           !BlockRows && !Grid3 && !WarpRows;
  }
};

/// \p L run with \p Rows rows per block of the block's x divided by
/// \p Divisor threads each, where Rows divides the grid's x and the block
/// fits (rows-per-block, see LaunchChange); the block must be 1-D.
llvm::Expected<LaunchSpec> rowsPerBlock(const LaunchSpec &L, int64_t Divisor,
                                        int64_t Rows);

/// The condition under which a rows-per-block launch applies, as C (and
/// spec) text over grid x \p G and block x \p B (both parenthesized).
std::string rowsPerBlockCondition(llvm::StringRef G, llvm::StringRef B,
                                  int64_t Divisor, int64_t Rows);

/// \p L with block dimension \p Dim (0: x, 1: y) divided by \p F; the
/// dimension must be a constant that \p F divides.
llvm::Expected<LaunchSpec> divideBlock(const LaunchSpec &L, unsigned Dim,
                                       int64_t F);

/// \p L (a launch of one thread per row of \p K's kernel, 1-D) with a warp
/// per row: the grid's x becomes "cdiv(R, B / 32)" where the block's x B is
/// a multiple of 32, and stays where it is not ("B % 32 == 0 ? ... : G"
/// unless B is a constant); \p Rows (R) is over the kernel's parameter
/// names, replaced by the spec's values of the scalar arguments.
llvm::Expected<LaunchSpec> warpPerRowLaunch(const KernelSpec &K,
                                            const LaunchSpec &L,
                                            llvm::StringRef Rows);

/// The launch of \p K changed by \p C; fails, saying why, when the change
/// does not apply (the spec does not allow tuning the block).
llvm::Expected<LaunchSpec> changedLaunch(const KernelSpec &K,
                                         const LaunchChange &C);

/// Whether \p S describes kernel \p Kernel (qualified name) or one of its
/// instantiations ("scale<float>").
bool describesKernel(const KernelSpec &S, llvm::StringRef Kernel);

/// The names of the entries of \p Specs that describe \p Kernel
/// (describesKernel), or an error naming the spec file when there is none.
llvm::Expected<std::vector<std::string>>
entriesDescribing(const SpecFile &Specs, llvm::StringRef Kernel);

/// \p S's launch changed by \p C, as the code of a rewrite launches it, for
/// the passes after the one that changed it. A change that does not apply
/// leaves the launch (the pass checked it applies; launch-bounds stays
/// conservative).
void followLaunchChange(KernelSpec &S, const LaunchChange &C);

/// The text of spec file \p Path (contents \p Text) with the launch of each
/// entry in \p Kernels changed by \p C. Only the launch objects' values
/// change (comments and formatting stay); the result is parsed again and
/// must describe exactly the changed launches, else this fails.
llvm::Expected<std::string> retuneSpecText(llvm::StringRef Text,
                                           llvm::StringRef Path,
                                           llvm::ArrayRef<std::string> Kernels,
                                           const LaunchChange &C);

} // namespace astra

#endif
