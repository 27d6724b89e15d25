//===- Index32.h - 64-bit index arithmetic narrowed to int ------*- C++ -*-===//
//
// Narrows 64-bit integer index variables (`size_t i`, `int64_t row`) and
// 64-bit casts of 32-bit values (`(size_t)blockIdx.x`) to `int` where the
// workload spec proves, for every shape set, that every value involved stays
// in [0, 2^30) (int32 with a factor-two margin). 64-bit index math costs two
// instructions per add and multiply on the GPU and more registers; 32-bit
// math lets the compiler fold address arithmetic.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_PASSES_INDEX32_H
#define ASTRA_PASSES_INDEX32_H

#include "astra/Rewrite/Pass.h"

namespace astra {

class Index32Pass : public Pass {
public:
  llvm::StringRef name() const override { return "index32"; }
  llvm::StringRef description() const override {
    return "64-bit index variables and casts narrowed to int where the spec's "
           "shapes prove every value fits (needs a spec)";
  }
  void run(PassContext &PC) override;
};

} // namespace astra

#endif
