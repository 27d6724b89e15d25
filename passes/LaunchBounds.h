//===- LaunchBounds.h - __launch_bounds__ from the launch sizes -*- C++ -*-===//
//
// Adds `__launch_bounds__(maxThreads[, minBlocks])` to a kernel whose block
// sizes are known: every launch in the file passes a compile-time constant
// block, or the workload spec gives launch.block for every shape set. The
// bound is the largest block any of them uses, so no known launch can fail;
// it lets the register allocator budget for that block size instead of 1024.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_PASSES_LAUNCHBOUNDS_H
#define ASTRA_PASSES_LAUNCHBOUNDS_H

#include "astra/Rewrite/Pass.h"

namespace astra {

class LaunchBoundsPass : public Pass {
public:
  llvm::StringRef name() const override { return "launch-bounds"; }
  llvm::StringRef description() const override {
    return "__launch_bounds__(max block size) from constant launch sites or "
           "the spec's launch.block";
  }
  void run(PassContext &PC) override;
  std::vector<PassParam> params() const override {
    return {PassParam::integer("min-blocks", 1, 32, "omitted",
                               "minimum resident blocks per SM in "
                               "__launch_bounds__")};
  }
};

} // namespace astra

#endif
