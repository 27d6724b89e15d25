//===- GridStride.h - One element per thread to grid-stride loops -*- C++ -*-===//
//
// `int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) { ... }` (or the
// early-return form `if (i >= n) return; ...`) becomes
// `for (int i = ...; i < n; i += blockDim.x * gridDim.x) { ... }`. Under the
// original launch (a grid that covers n) every thread runs the loop once, so
// results are unchanged; under any smaller grid the loop still covers every
// element, which lets callers launch fewer, fuller blocks and lets vectorize
// take over the loop.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_PASSES_GRIDSTRIDE_H
#define ASTRA_PASSES_GRIDSTRIDE_H

#include "astra/Rewrite/Pass.h"

namespace astra {

class GridStridePass : public Pass {
public:
  llvm::StringRef name() const override { return "grid-stride"; }
  llvm::StringRef description() const override {
    return "one-element-per-thread kernels (i = blockIdx.x * blockDim.x + "
           "threadIdx.x; if (i < n)) become grid-stride loops";
  }
  void run(PassContext &PC) override;
};

} // namespace astra

#endif
