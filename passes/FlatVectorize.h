//===- FlatVectorize.h - Vector accesses in flat 2-D index loops -*- C++ -*-===//
//
// A kernel written one thread per element of a [rows, cols] array splits its
// flat index into a row and a column:
//
//   for (int64_t idx = <global index>; idx < n; idx += <grid stride>) {
//     const int64_t i = idx / cols;
//     const int c = idx % cols;
//     out[idx] = x[index[i] * cols + c];      // a gather, a scatter, a bias
//   }
//
// vectorize refuses such loops: `x[index[i] * cols + c]` is not
// `x[base + idx]`. But when cols is a multiple of the vector width, every
// aligned chunk of VEC consecutive idx lies in one row, so within a chunk i
// is one value and c runs over VEC consecutive columns: `x[index[i] * cols +
// c]` is VEC consecutive, 16-byte aligned elements. This pass moves a chunk
// per iteration with one 16-byte load or store per buffer and one division
// per chunk instead of one per element (a 64-bit division is dozens of
// instructions). Feature gathers of GNN mini-batches (SALIENT) and
// row-broadcast elementwise ops are written this way; scatter-adds too, but
// their per-element atomics would lose coalescing, so they are refused.
//
// docs/passes.md says when the pass fires and why it is safe.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_PASSES_FLATVECTORIZE_H
#define ASTRA_PASSES_FLATVECTORIZE_H

#include "astra/Rewrite/Pass.h"

namespace astra {

class FlatVectorizePass : public Pass {
public:
  llvm::StringRef name() const override { return "flat-vectorize"; }
  llvm::StringRef description() const override {
    return "16-byte loads/stores in grid-stride loops over a flat index split "
           "into row (idx / cols) and column (idx % cols), such as gathers "
           "x[index[i] * cols + c]";
  }
  void run(PassContext &PC) override;
};

} // namespace astra

#endif
