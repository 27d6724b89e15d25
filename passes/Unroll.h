//===- Unroll.h - #pragma unroll on small counted loops ---------*- C++ -*-===//
//
// Puts `#pragma unroll` before loops whose trip count is a compile-time
// constant (or bounded by one) and small, and `#pragma unroll N` before other
// loops when the user asks for a factor (unroll.factor=N). The pragma never
// changes what a loop computes; the pass refuses where unrolling would be
// ignored or harmful (unknown or huge trip counts without a factor), where a
// loop already carries a loop pragma, and where a barrier sits in
// thread-dependent control flow inside the loop.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_PASSES_UNROLL_H
#define ASTRA_PASSES_UNROLL_H

#include "astra/Rewrite/Pass.h"

namespace astra {

class UnrollPass : public Pass {
public:
  llvm::StringRef name() const override { return "unroll"; }
  llvm::StringRef description() const override {
    return "#pragma unroll on loops with small constant trip counts "
           "(#pragma unroll N with unroll.factor=N)";
  }
  void run(PassContext &PC) override;
  std::vector<PassParam> params() const override {
    return {PassParam::integer("factor", 2, 1024, "none",
                               "#pragma unroll N on loops of unknown or "
                               "larger trip count"),
            PassParam::integer("max-trip", 2, 4096, "32",
                               "largest constant trip count unrolled "
                               "fully")};
  }
};

} // namespace astra

#endif
