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
#include "utils/RowBody.h"

namespace astra {

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

} // namespace astra

#endif
