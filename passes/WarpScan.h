//===- WarpScan.h - Shared-memory Hillis-Steele scans as warp shuffles -*- C++ -*-===//
//
// The textbook block-wide inclusive scan
//
//   for (int off = 1; off < blockDim.x; off <<= 1) {
//     T v = tid >= off ? s[tid - off] : 0;
//     __syncthreads();
//     s[tid] += v;
//     __syncthreads();
//   }
//
// costs two barriers and two shared-memory round trips per step, 20 barriers
// for a block of 1024. The rewrite scans each warp in registers with
// __shfl_up_sync, scans the per-warp totals in warp 0 through shared memory,
// and adds each warp's prefix: three barriers, and s[0 .. blockDim.x) holds
// the same inclusive prefix sums behind a final barrier, exactly where the
// original left them. Sums of float, double and integer elements (a float
// scan is reassociated). docs/passes.md describes the scheme and when the
// pass refuses.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_PASSES_WARPSCAN_H
#define ASTRA_PASSES_WARPSCAN_H

#include "astra/Rewrite/Pass.h"

namespace astra {

class WarpScanPass : public Pass {
public:
  llvm::StringRef name() const override { return "warp-scan"; }
  llvm::StringRef description() const override {
    return "shared-memory Hillis-Steele prefix sums become warp-shuffle "
           "scans with one shared-memory step across warps";
  }
  void run(PassContext &PC) override;
};

} // namespace astra

#endif
