//===- RowCooperative.cpp -------------------------------------------------===//
//
// Safety argument.
//  The rewrite of the rows is utils/RowBody.cpp's (its safety argument says
//  why each row's result is unchanged when a warp's 32 lanes run it).
//  The warp test `(blockDim.x % 32 == 0 || blockDim.y * blockDim.z == 1) &&
//  threadIdx.x / 32 * 32 + 32 <= blockDim.x` holds for all lanes of a warp
//  or none: warps are consecutive linear thread ids, and under either first
//  condition a warp has one threadIdx.y/z and 32 consecutive threadIdx.x
//  values, or is the last partial warp of a 1-D block (the test fails for
//  it). The launch facts say whether that fallback can run at all.
//
//===----------------------------------------------------------------------===//
#include "RowCooperative.h"

#include "utils/PassSupport.h"
#include "utils/RowBody.h"
#include "utils/SourceText.h"

using namespace clang;
using namespace llvm;

namespace astra {

void RowCooperativePass::run(PassContext &PC) {
  std::optional<RowBody> RB = rewriteRowBody(PC, RowLaunch::Same);
  if (!RB)
    return;
  const std::string &Indent = RB->Indent;
  std::string Text =
      "if ((blockDim.x % 32 == 0 || blockDim.y * blockDim.z == 1) &&\n" +
      Indent + "    threadIdx.x / 32 * 32 + 32 <= blockDim.x) {\n" + Indent +
      "  // row-cooperative: the warp takes its 32 lanes' rows in turn.\n" +
      Indent + "  const unsigned astra_lane = threadIdx.x % 32;\n" + Indent +
      "  for (unsigned astra_row = 0; astra_row < 32; ++astra_row) {\n" +
      Indent + "    " + reindent(RB->Cooperative, "    ") + "\n" + Indent +
      "  }\n" + Indent + "} else {\n" + Indent + "  " +
      reindent(RB->Original, "  ") + "\n" + Indent + "}";
  if (!PC.replace(RB->Range, Text))
    return;

  const FunctionDecl *FD = PC.kernel().Decl;
  KernelLaunches KL = findLaunches(PC.astContext(), FD);
  bool AllMultiple = KL.allVisible() && !KL.Launches.empty();
  for (const LaunchFact &L : KL.Launches)
    AllMultiple = AllMultiple && L.Block.Readable &&
                  (L.Block.Dim[0].Constant
                       ? *L.Block.Dim[0].Constant % 32 == 0
                       : L.Block.Dim[0].MultipleOf % 32 == 0);
  std::string Msg = "each warp takes its lanes' rows of '" +
                    RB->Row->getNameAsString() + "' in turn; " + RB->Detail;
  Msg += AllMultiple ? "; every launch's block x is a multiple of 32"
                     : "; a block whose x is not a multiple of 32 runs its "
                       "last, partial warp with the original code";
  PC.fired(RB->Range.getBegin(), Msg);
}

} // namespace astra
