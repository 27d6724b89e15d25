//===- AllPasses.cpp - The pass registry ----------------------------------===//
//
// One line per pass. The list is explicit (no static registration) so that
// linking the pass library from a static archive can never drop a pass.
//
//===----------------------------------------------------------------------===//
#include "astra/Rewrite/Pass.h"

#include "RestrictConst.h"
#include "GridStride.h"
#include "Vectorize.h"
#include "FlatVectorize.h"
#include "FastMath.h"
#include "Ldg.h"
#include "Unroll.h"
#include "LaunchBounds.h"
#include "Index32.h"
#include "WarpReduce.h"
#include "WarpScan.h"
#include "Hoist.h"
#include "BlockSize.h"
#include "SmemTranspose.h"
#include "SmemTile.h"
#include "GridCoarsen.h"
#include "ThreadCoarsen.h"
#include "RowsPerBlock.h"
#include "RowCooperative.h"
#include "WarpPerRow.h"
#include "Delinearize.h"
#include "ShapeSplit.h"

namespace astra {

template <typename P> static PassInfo info() {
  P Instance;
  return {Instance.name().str(), Instance.description().str(),
          [] { return std::unique_ptr<Pass>(new P()); }, Instance.params()};
}

const std::vector<PassInfo> &allPasses() {
  static const std::vector<PassInfo> Passes = {
      info<RestrictConstPass>(),
      info<SmemTransposePass>(),
      info<SmemTilePass>(),
      info<GridStridePass>(),
      info<VectorizePass>(),
      info<FlatVectorizePass>(),
      info<FastMathPass>(),
      info<LdgPass>(),
      info<UnrollPass>(),
      info<LaunchBoundsPass>(),
      info<Index32Pass>(),
      info<WarpReducePass>(),
      info<WarpScanPass>(),
      info<HoistPass>(),
      info<BlockSizePass>(),
      info<GridCoarsenPass>(),
      info<ThreadCoarsenPass>(),
      info<RowsPerBlockPass>(),
      info<WarpPerRowPass>(),
      info<RowCooperativePass>(),
      info<DelinearizePass>(),
      info<ShapeSplitPass>(),
  };
  return Passes;
}

std::unique_ptr<Pass> createPass(llvm::StringRef Name) {
  for (const PassInfo &PI : allPasses())
    if (PI.Name == Name)
      return PI.Create();
  return nullptr;
}

} // namespace astra
