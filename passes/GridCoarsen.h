//===- GridCoarsen.h - Launch a grid-stride kernel with fewer blocks -*- C++ -*-===//
//
// A kernel whose work is all in grid-stride loops is correct under any grid,
// but it is launched with the grid of the one-element-per-thread original:
// after vectorize, three of every four blocks find no vector to handle and
// exit. This pass divides the grid's x size by `grid-coarsen.factor` at
// every launch site of the kernel (default: the vector width vectorize
// chose; without vectorize only when a factor is given), so each thread
// takes that many elements. The optimizer divides the spec's launch the
// same way (astra/Spec/LaunchTuning.h), so what is verified and timed is
// what the launch sites do. On the H100, gelu's vectorized loop under the
// original grid ran its large set at 0.80x of the original (without
// index32); vectorized, with index32 and the grid divided by 4, at 1.32x.
// The two runs (two builds) differ in more than the grid, so how much of
// that is the grid's is not measured.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_PASSES_GRIDCOARSEN_H
#define ASTRA_PASSES_GRIDCOARSEN_H

#include "astra/Rewrite/Pass.h"

namespace astra {

class GridCoarsenPass : public Pass {
public:
  llvm::StringRef name() const override { return "grid-coarsen"; }
  llvm::StringRef description() const override {
    return "a kernel whose work is all in grid-stride loops is launched with "
           "1/factor of the blocks (each thread takes factor times the "
           "elements)";
  }
  void run(PassContext &PC) override;
  std::vector<PassParam> params() const override {
    return {PassParam::integer("factor", 2, 16,
                               "vectorize's vector width",
                               "elements per thread (the grid shrinks by "
                               "this factor)")};
  }
};

} // namespace astra

#endif
