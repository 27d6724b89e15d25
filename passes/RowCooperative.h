//===- RowCooperative.h - Warps take the rows of a thread-per-row kernel -*- C++ -*-===//
//
// A first version of a row operation often gives each thread one row:
//   int r = blockIdx.x * blockDim.x + threadIdx.x;
//   if (r < rows) { for (int j = 0; j < cols; j++) sum += x[r * cols + j]; ... }
// At each step the 32 threads of a warp read 32 elements a row apart: every
// load is its own memory transaction, and a launch has only rows threads.
// This pass keeps the launch and lets each warp take its 32 lanes' rows in
// turn: for each of them the lanes stride over the row (j = lane, lane + 32,
// ...), so a warp's loads are consecutive, and the per-thread reductions
// over the row (sums, maxima, minima) are combined across the warp with
// __shfl_xor_sync and broadcast from lane 0. Code outside the row loops runs
// on every lane with the same values. A block whose x size is not a
// multiple of 32 runs its last, partial warp with the original code.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_PASSES_ROWCOOPERATIVE_H
#define ASTRA_PASSES_ROWCOOPERATIVE_H

#include "astra/Rewrite/Pass.h"

namespace astra {

/// `<pass>.reductions`, which row-cooperative and warp-per-row both read.
inline PassParam rowReductionsParam() {
  return PassParam::boolean(
      "reductions", "1",
      "1: floating-point sums become per-lane partial sums combined by "
      "shuffles (a different summation order); 0: kernels with such a sum "
      "are left alone");
}

class RowCooperativePass : public Pass {
public:
  llvm::StringRef name() const override { return "row-cooperative"; }
  llvm::StringRef description() const override {
    return "a kernel with one thread per row and loops over the row: each "
           "warp takes its lanes' rows in turn, the lanes striding over the "
           "row and reductions combined by warp shuffles (same launch)";
  }
  void run(PassContext &PC) override;
  std::vector<PassParam> params() const override {
    return {rowReductionsParam()};
  }
};

/// How the rows of a thread-per-row kernel reach the warps.
enum class RowLaunch {
  Same,     ///< row-cooperative: each warp takes its lanes' rows in turn.
  WarpEach, ///< warp-per-row: the launch gives each row a warp of its own.
};

/// The kernel's body from the row index to its end, rewritten for \p Mode
/// by the analysis both passes share (RowCooperative.cpp states it).
struct RowBody {
  clang::CharSourceRange Range; ///< The text replaced.
  std::string Indent;           ///< Of the row index's line.
  /// The row index and the rest, the row loops strided over the lanes
  /// (`astra_lane`, which the caller declares), reductions combined by
  /// shuffles, stores outside the loops made by lane 0. Same: the index
  /// is the lane's row of `astra_row` and returns continue; WarpEach: the
  /// index is the global warp index.
  std::string Cooperative;
  std::string Original; ///< The same text, as written.
  const clang::VarDecl *Row = nullptr;
  /// WarpEach: the parameter bounding the row index in the guard that
  /// follows it (`if (r < rows)`, `if (r >= rows) return;`).
  const clang::ParmVarDecl *Bound = nullptr;
  std::string Detail; ///< The loops and reductions, for the message.
};

/// Analyzes the kernel of \p PC and rewrites its body; nullopt after
/// recording the refusal.
std::optional<RowBody> rewriteRowBody(PassContext &PC, RowLaunch Mode);

} // namespace astra

#endif
