//===- SmemTranspose.h - Transposed stores staged in shared memory -*- C++ -*-===//
//
// A 2-D kernel whose single store walks memory with a large stride along
// threadIdx.x (out[c * rows + r], the transpose pattern) writes one 32-byte
// sector per thread: consecutive threads of a warp never share a sector, so
// the store moves 8x the bytes it needs. This pass stages the stored value in
// a shared tile: every thread computes its value as before, the block
// synchronizes, and then thread (x, y) stores the value that thread (y, x)
// computed, so the stride along threadIdx.x becomes the one the original had
// along threadIdx.y (1 for a transpose).
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_PASSES_SMEMTRANSPOSE_H
#define ASTRA_PASSES_SMEMTRANSPOSE_H

#include "astra/Rewrite/Pass.h"

namespace astra {

class SmemTransposePass : public Pass {
public:
  llvm::StringRef name() const override { return "smem-transpose"; }
  llvm::StringRef description() const override {
    return "stores strided along threadIdx.x (a transpose) staged through a "
           "shared tile so that a warp writes consecutive addresses";
  }
  void run(PassContext &PC) override;
  std::vector<PassParam> params() const override {
    return {PassParam::integer("tile", 2, 32, "the spec's square block",
                               "tile edge in threads")};
  }
};

} // namespace astra

#endif
