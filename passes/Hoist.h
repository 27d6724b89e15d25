//===- Hoist.h - Loop-invariant code motion at the source level -*- C++ -*-===//
//
// Moves loop-invariant work out of loops into `const` locals declared right
// before the loop: index arithmetic, per-row scalars, calls of pure math
// functions and, under --fast-math, divisions by loop-invariant values
// (`x / d` becomes `x * rcp` with `rcp = 1.0f / d` hoisted). The compiler's
// own LICM stops at what it cannot prove: loads of buffers that a store in
// the loop might alias, calls it does not know to be pure, and the
// reciprocal, which changes rounding. The pass proves those from the source
// (which buffers the kernel never writes, __restrict__, which loops run at
// least once) and states each decision with --explain.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_PASSES_HOIST_H
#define ASTRA_PASSES_HOIST_H

#include "astra/Rewrite/Pass.h"

namespace astra {

class HoistPass : public Pass {
public:
  llvm::StringRef name() const override { return "hoist"; }
  llvm::StringRef description() const override {
    return "loop-invariant expressions (index math, pure math calls, "
           "read-only loads; reciprocals with --fast-math) move before the "
           "loop";
  }
  void run(PassContext &PC) override;
  std::vector<PassParam> params() const override {
    return {PassParam::boolean("speculate-loads", "0",
                               "hoist loads out of loops that may run zero "
                               "times")};
  }
};

} // namespace astra

#endif
