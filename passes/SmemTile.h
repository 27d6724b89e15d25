//===- SmemTile.h - Shared-memory tiles for a matrix product's k loop -*- C++ -*-===//
//
// The first version of a matrix kernel gives each thread of a 2-D launch one
// output and lets it walk the k loop on global memory:
//   int j = blockIdx.x * blockDim.x + threadIdx.x;
//   int i = blockIdx.y * blockDim.y + threadIdx.y;
//   if (i < NI && j < NJ) {
//     c[i * NJ + j] *= beta;
//     for (k = 0; k < NK; k++) c[i * NJ + j] += alpha * a[i * NK + k] * b[k * NJ + j];
//   }
// Every thread of a block row loads the same a[i][k], every thread of a block
// column the same b[k][j], and c goes to memory and back at every step. This
// pass stages, per chunk of the k loop, the block's tiles of each operand
// whose index follows k in shared memory (loaded cooperatively, the thread
// index walking the operand's contiguous direction, zero-filled outside the
// loop's or the guard's range), runs the chunk's steps from the tiles, and
// keeps an output that the loop accumulates into in a register. All threads
// of the block take part in the loads and barriers; only threads inside the
// guard compute and store.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_PASSES_SMEMTILE_H
#define ASTRA_PASSES_SMEMTILE_H

#include "astra/Rewrite/Pass.h"

namespace astra {

class SmemTilePass : public Pass {
public:
  llvm::StringRef name() const override { return "smem-tile"; }
  llvm::StringRef description() const override {
    return "a 2-D kernel's k loop over a matrix product reads its operands "
           "from shared-memory tiles loaded once per block and chunk of k, "
           "and accumulates in a register";
  }
  void run(PassContext &PC) override;
  std::vector<PassParam> params() const override {
    return {PassParam::integer("k", 4, 64, "32",
                               "steps of the k loop per shared tile", 4)};
  }
};

} // namespace astra

#endif
