//===- WarpReduce.h - Shared-memory tree reductions as warp shuffles -*- C++ -*-===//
//
// The classic block reduction
//
//   s[tid] = v; __syncthreads();
//   for (int off = blockDim.x / 2; off > 0; off >>= 1) {
//     if (tid < off) s[tid] += s[tid + off];
//     __syncthreads();
//   }
//
// costs log2(blockDim) barriers and shared-memory round trips. The rewrite
// reduces each warp with __shfl_xor_sync, goes through shared memory once for
// the per-warp partials, and leaves the result in s[0] behind a final
// barrier, exactly where the original left it. Sum, max and min of float,
// double and integer elements; the old CUDA-sample variant with a volatile
// warp-synchronous tail (a latent race on Volta and later) is replaced too.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_PASSES_WARPREDUCE_H
#define ASTRA_PASSES_WARPREDUCE_H

#include "astra/Rewrite/Pass.h"

namespace astra {

class WarpReducePass : public Pass {
public:
  llvm::StringRef name() const override { return "warp-reduce"; }
  llvm::StringRef description() const override {
    return "shared-memory tree reductions (sum, max, min) become warp-shuffle "
           "reductions with one shared-memory step across warps";
  }
  void run(PassContext &PC) override;
};

} // namespace astra

#endif
