//===- WarpPerRow.h - A warp per row of a thread-per-row kernel -*- C++ -*-===//
//
// A first version of a row operation often gives each thread one row and
// launches one thread per row:
//   int r = blockIdx.x * blockDim.x + threadIdx.x;
//   if (r < rows) { for (int j = 0; j < cols; j++) sum += x[r * cols + j]; ... }
//   kernel<<<(rows + block - 1) / block, block>>>(..., rows, ...);
// A warp's 32 threads then read 32 elements a row apart at each step (one
// memory transaction each), and a launch of a few thousand rows has a few
// thousand threads: most of the GPU idles. Where every launch of the kernel
// is in the files, this pass gives each row its own warp: each launch's
// grid becomes cdiv(rows, block / 32) (cdiv(rows * 32, block) without the
// overflow of rows * 32), the row index the global warp index, and the
// row loops, reductions and stores change as row-cooperative changes them
// (the lanes stride over the row, reductions are combined by shuffles,
// stores outside the loops are made by lane 0). Where a launch's block
// size is not known to be a multiple of 32, its grid and the kernel test
// it at run time and keep the original launch and code otherwise.
//
// Its own pass rather than an option of row-cooperative: it changes the
// launch (the spec's too, which must mark the launch as the kernel's own),
// needs every launch site in the files, and refuses where row-cooperative
// applies (a grid it cannot read, a hidden launch); the planner and
// `--passes` choose between the two by name, and a pipeline runs the
// first that applies (row-cooperative refuses the shuffles this one
// writes, and the other way round).
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_PASSES_WARPPERROW_H
#define ASTRA_PASSES_WARPPERROW_H

#include "astra/Rewrite/Pass.h"

namespace astra {

class WarpPerRowPass : public Pass {
public:
  llvm::StringRef name() const override { return "warp-per-row"; }
  llvm::StringRef description() const override {
    return "a kernel with one thread per row, launched over the rows at "
           "launch sites in the files: each row gets its own warp (the "
           "grids change), the lanes striding over the row and "
           "reductions combined by warp shuffles";
  }
  void run(PassContext &PC) override;
  std::vector<PassParam> params() const override;
};

} // namespace astra

#endif
