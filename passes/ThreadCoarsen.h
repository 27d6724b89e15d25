//===- ThreadCoarsen.h - One thread does the work of several -*- C++ -*-===//
//
// The block's y (or x) size is divided by `thread-coarsen.factor` (default
// 4) at every launch site, and each thread of the smaller block runs the
// code of that many threads of the original one: threadIdx.y becomes
// `threadIdx.y + c * blockDim.y` for copies c = 0 .. factor-1, and what
// those copies compute separately lives in small per-copy arrays that the
// compiler keeps in registers. Barriers stay where they are, once per
// thread. What each copy reads in common is then loaded once: in a tiled
// matrix product (sgemm) a thread computing four outputs of one column
// loads the B tile's element once for four multiply-adds, instead of once
// per multiply-add (register tiling). `thread-coarsen.dim=x` coarsens x;
// applying the pass twice (y, then x) gives each thread a 2-D patch.
//
// The optimizer divides the spec's launch.block the same way
// (astra/Spec/LaunchTuning.h), so what is verified and timed is what the
// rewritten launch sites do.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_PASSES_THREADCOARSEN_H
#define ASTRA_PASSES_THREADCOARSEN_H

#include "astra/Rewrite/Pass.h"

namespace astra {

class ThreadCoarsenPass : public Pass {
public:
  llvm::StringRef name() const override { return "thread-coarsen"; }
  llvm::StringRef description() const override {
    return "each thread does the work of factor threads of the original "
           "block along y (or x): smaller blocks, per-thread register tiles";
  }
  void run(PassContext &PC) override;
  std::vector<PassParam> params() const override {
    return {PassParam::integer("x", 1, 16, "1",
                               "elements per thread along x"),
            PassParam::integer("y", 1, 16, "4 (1 when x is given)",
                               "elements per thread along y")};
  }
};

} // namespace astra

#endif
