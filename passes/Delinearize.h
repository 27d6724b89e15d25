//===- Delinearize.h - A flat index split over a 3-D grid -------*- C++ -*-===//
//
// A first implementation of an operator over an [C, B, A] output often
// launches one thread per element over a flat 1-D grid and splits the index
// with divisions: `l = idx % A; o = (idx / A) % B; b = idx / (A * B)`
// (conv1d: batch, output channel, position). Two things follow: every
// thread pays three 64-bit divisions, and neighbouring output channels sit
// in threads far apart, so what they load in common (conv1d's input row) is
// loaded once per channel. This pass launches the kernel on a 3-D grid, x
// over A, y over B and z over C, with Bx x By blocks (`delinearize.x`,
// default 128; `delinearize.y`, default 4), so the coordinates are the
// thread's own and thread-coarsen can then give each thread several
// channels and positions whose loads the compiler shares. Threads past the
// edge compute the nearest element (clamped coordinates) and do not store,
// so the kernel keeps no early return for thread-coarsen to trip on. On the
// H100 (hand-written variants of conv1d): the 3-D grid alone 0.84x / 1.31x
// (large, kb); with 8 channels x 2 positions per thread 3.73x / 5.36x.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_PASSES_DELINEARIZE_H
#define ASTRA_PASSES_DELINEARIZE_H

#include "astra/Rewrite/Pass.h"

namespace astra {

class DelinearizePass : public Pass {
public:
  llvm::StringRef name() const override { return "delinearize"; }
  llvm::StringRef description() const override {
    return "a flat index split by `% A`, `/ A % B`, `/ (A * B)` becomes the "
           "coordinates of a 3-D grid (x over A, y over B, z over the rest)";
  }
  void run(PassContext &PC) override;
  std::vector<PassParam> params() const override {
    return {PassParam::integer("x", 32, 1024, "128",
                               "block x of the 3-D launch (x * y at most "
                               "1024)",
                               32),
            PassParam::integer("y", 1, 32, "4", "block y of the 3-D launch")};
  }
};

} // namespace astra

#endif
