//===- BlockSize.h - Retune the block size of a kernel's launches -*- C++ -*-===//
//
// Changes the block size the kernel is launched with: the block size literal
// of the spec's launch.block (see astra/Spec/LaunchTuning.h) becomes
// `block-size.threads` (default 256, or 128 when it is 256 already) at every
// launch site of the kernel, and in the grid (and dynamic shared memory)
// wherever the spec's launch uses the same literal there. The optimizer
// changes the spec's launch the same way, so what is verified and timed is
// what the rewritten launch sites do.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_PASSES_BLOCKSIZE_H
#define ASTRA_PASSES_BLOCKSIZE_H

#include "astra/Rewrite/Pass.h"

namespace astra {

class BlockSizePass : public Pass {
public:
  llvm::StringRef name() const override { return "block-size"; }
  llvm::StringRef description() const override {
    return "another block size at every launch site, where the spec marks "
           "the launch as the kernel's (launch_tunable)";
  }
  void run(PassContext &PC) override;
  std::vector<PassParam> params() const override {
    return {PassParam::integer("threads", 32, 1024, "a retuned size",
                               "threads per block", 32)};
  }
};

} // namespace astra

#endif
