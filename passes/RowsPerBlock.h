//===- RowsPerBlock.h - Several rows of a row-per-block kernel in one block -*- C++ -*-===//
//
// Many kernels give each block one row (a token, a head, a (token, head)
// pair) and let its threads stride over the row: `row = blockIdx.x;
// for (j = threadIdx.x; j < n; j += blockDim.x) ...`. With short rows that
// launches a huge grid of small blocks, each doing little (merge_attn_states:
// 131072 blocks of 128 threads for 128-element rows), and once vectorize has
// made each thread move 16 bytes, most of a 128-thread block has nothing to
// do. This pass lets one block take R rows (`rows-per-block.rows`, default
// 4), each with the original block's x divided by D threads
// (`rows-per-block.thread-divisor`, default: vectorize's vector width, else
// 1): the kernel computes `row = blockIdx.x * blockDim.y + threadIdx.y`, and
// every launch (grid x G, block x B) becomes
//   C     = G % R == 0 && B % D == 0 && B / D * R <= 1024
//   grid  = C ? G / R : G
//   block = C ? dim3(B / D, R) : <the original block>
// On the H100 (hand-written variants of merge_attn_states), vectorized rows
// of 128 bf16 with 16 threads and 4 rows per block ran the prefill set 2.20x
// faster than the original (42.1 against 92.4 us); with 32 threads per row
// 1.71x, 128 threads (vectorized, one row per block) 0.97x. With the
// original launch (blockDim.y = 1) the kernel is the original one,
// so a grid that `rows` does not divide runs exactly as before. The spec's
// launch changes the same way (astra/Spec/LaunchTuning.h).
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_PASSES_ROWSPERBLOCK_H
#define ASTRA_PASSES_ROWSPERBLOCK_H

#include "astra/Rewrite/Pass.h"

namespace astra {

class RowsPerBlockPass : public Pass {
public:
  llvm::StringRef name() const override { return "rows-per-block"; }
  llvm::StringRef description() const override {
    return "a kernel with one row per block and block-stride loops over it "
           "takes several rows per block (block y), with fewer threads per "
           "row";
  }
  void run(PassContext &PC) override;
  std::vector<PassParam> params() const override {
    return {PassParam::integer("rows", 2, 64, "4", "rows per block"),
            PassParam::integer("thread-divisor", 1, 32,
                               "vectorize's vector width, else 1",
                               "divisor of the block's x threads per row")};
  }
};

} // namespace astra

#endif
