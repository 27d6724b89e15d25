//===- FastMath.h - CUDA fast-math intrinsics in float code -----*- C++ -*-===//
//
// Replaces float math library calls by the CUDA hardware approximations
// (__expf, __logf, __sinf, __cosf, __tanf, __powf, ...), float division by
// __fdividef, `1.0f / sqrtf(x)` by rsqrtf(x), and double literals and double
// math inside expressions whose result is float by their float forms. Every
// rewrite changes rounding (docs/passes.md lists the error bounds): the
// verifier's tolerances decide whether a candidate keeps them.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_PASSES_FASTMATH_H
#define ASTRA_PASSES_FASTMATH_H

#include "astra/Rewrite/Pass.h"

namespace astra {

class FastMathPass : public Pass {
public:
  llvm::StringRef name() const override { return "fast-math"; }
  llvm::StringRef description() const override {
    return "float math calls to CUDA fast intrinsics (__expf, __logf, "
           "__sinf, __powf, ...), x / y to __fdividef, 1/sqrtf to rsqrtf, "
           "double literals in float expressions to float";
  }
  void run(PassContext &PC) override;
  std::vector<PassParam> params() const override {
    return {PassParam::boolean("pow", "0",
                               "__powf also where the base is not known to "
                               "be positive")};
  }
};

} // namespace astra

#endif
