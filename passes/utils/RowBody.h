//===- RowBody.h - A thread-per-row body rewritten for warps ---*- C++ -*-===//
//
// The analysis row-cooperative and warp-per-row share: a kernel whose
// threads each take one row, its row loops strided over a warp's lanes and
// its reductions combined by shuffles (the safety argument is in
// RowBody.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_PASSES_UTILS_ROWBODY_H
#define ASTRA_PASSES_UTILS_ROWBODY_H

#include "astra/Rewrite/Pass.h"

#include <optional>
#include <string>

namespace astra {

/// `<pass>.reductions`, which row-cooperative and warp-per-row both read.
inline PassParam rowReductionsParam() {
  return PassParam::boolean(
      "reductions", "1",
      "1: floating-point sums become per-lane partial sums combined by "
      "shuffles (a different summation order); 0: kernels with such a sum "
      "are left alone");
}

/// How the rows of a thread-per-row kernel reach the warps.
enum class RowLaunch {
  Same,     ///< row-cooperative: each warp takes its lanes' rows in turn.
  WarpEach, ///< warp-per-row: the launch gives each row a warp of its own.
};

/// The kernel's body from the row index to its end, rewritten for \p Mode
/// by the analysis both passes share (RowBody.cpp states it).
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
