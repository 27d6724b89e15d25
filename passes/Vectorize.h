//===- Vectorize.h - 16-byte loads and stores in stride loops --*- C++ -*-===//
//
// Block-stride (`for (j = threadIdx.x; j < n; j += blockDim.x)`) and
// grid-stride loops whose global accesses are all `p[base + j]` move VEC
// elements per thread and access with one 16-byte (uint4) load or store per
// pointer instead of VEC scalar ones. The rewritten loop checks at run time
// that every accessed pointer is 16-byte aligned and keeps a scalar loop for
// the tail (n not a multiple of VEC) and for misaligned pointers, so it is
// correct for every size and alignment. Memory-bound kernels (silu_and_mul,
// rmsnorm, elementwise ops) are limited by the number of memory
// transactions this reduces.
//
// Options: vectorize.bytes=8|16 (bytes per access, default 16),
// vectorize.reductions=0|1 (allow per-thread reductions, default 1),
// vectorize.assume-noalias=0|1 (treat distinct pointers as not overlapping).
// docs/passes.md describes the scheme and when the pass refuses.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_PASSES_VECTORIZE_H
#define ASTRA_PASSES_VECTORIZE_H

#include "astra/Rewrite/Pass.h"

namespace astra {

class VectorizePass : public Pass {
public:
  llvm::StringRef name() const override { return "vectorize"; }
  llvm::StringRef description() const override {
    return "16-byte vector loads/stores in block- and grid-stride loops, with "
           "an alignment check and a scalar tail";
  }
  void run(PassContext &PC) override;
  std::vector<PassParam> params() const override {
    return {PassParam::choice("bytes", {"8", "16"}, "16",
                              "bytes per vector access"),
            PassParam::boolean("reductions", "1", "vectorize reductions too"),
            PassParam::boolean("assume-noalias", "0",
                               "treat distinct pointers as not "
                               "overlapping")};
  }
};

} // namespace astra

#endif
