//===- ShapeSplit.h - A kernel of its own for the large shape sets -*- C++ -*-===//
//
// Copies the kernel as `<kernel>_astra_large` and makes each launch site pick
// the copy when the original launch runs at least `shape-split.at` threads
// (default: between the two shape-set sizes furthest apart,
// astra/Spec/ShapeSplit.h); the spec's entries are split at the same size.
// Both kernels are the original code, so the program computes what it did;
// the point is what comes next: each kernel is optimized and verified on its
// own sets, so a launch-bound decode set no longer vetoes the code a 40 ms
// prefill set wants. The optimizer (`optimize --split-shapes`) runs this
// before planning and keeps the split only when the two kernels end up with
// different code.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_PASSES_SHAPESPLIT_H
#define ASTRA_PASSES_SHAPESPLIT_H

#include "astra/Rewrite/Pass.h"

namespace astra {

class ShapeSplitPass : public Pass {
public:
  llvm::StringRef name() const override { return "shape-split"; }
  llvm::StringRef description() const override {
    return "a copy of the kernel for launches of shape-split.at threads or "
           "more, picked at each launch site, and the spec split the same "
           "way, so each range of shapes is optimized on its own (needs a "
           "spec with launch_tunable)";
  }
  void run(PassContext &PC) override;
  std::vector<PassParam> params() const override {
    return {PassParam::integer("at", 0, int64_t(1) << 40, "from the spec",
                               "threads per launch from which the clone "
                               "runs (0: from the spec's shape sets)")};
  }
};

} // namespace astra

#endif
