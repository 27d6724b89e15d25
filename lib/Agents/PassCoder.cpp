//===- PassCoder.cpp ------------------------------------------------------===//
#include "astra/Agents/PassCoder.h"
#include "astra/Rewrite/RewriteDriver.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace llvm;

namespace astra {

Expected<Candidate> PassCoder::realize(const Plan &P, const Candidate &Parent,
                                       const PlanningState &S) {
  if (P.K != Plan::Kind::Passes)
    return createStringError(inconvertibleErrorCode(),
                             "the pass coder cannot realize an LLM plan");
  RewriteRequest Req;
  Req.Command = Command;
  Req.Passes = P.Passes;
  Req.Kernel = KernelName;
  Req.Options = Base;
  Req.RuntimePch = ParsePch;
  Req.Preamble = !ParsePch.empty();
  for (const auto &[K, V] : P.Params)
    Req.Options.Params[K] = V;
  // Choosing fast-math accepts its rounding; hoist's reciprocal multiply is
  // the same kind of change, so it comes with it.
  if (is_contained(P.Passes, "fast-math"))
    Req.Options.FastMath = true;
  // The baseline's files are Start (empty: the files on disk).
  const FileOverlay &From = Parent.isBaseline() ? Start : Parent.Files;
  Req.Overlay = From;
  auto R = runRewrite(Req, /*DiagOS=*/nullptr);
  if (!R)
    return R.takeError();
  Candidate C;
  C.Origin = Parent.Origin == "llm" ? "llm" : "passes";
  // Unchanged code keeps the parent's files (none for the baseline).
  C.Files = Parent.Files;
  if (R->changed()) {
    C.Files = From;
    for (auto &[Path, Text] : R->Rewritten)
      C.Files[Path] = Text;
  }
  // A pipeline that changes nothing leaves the parent's code.
  C.Lineage = Parent.isBaseline() ? std::vector<std::string>() : Parent.Lineage;
  C.Lineage.insert(C.Lineage.end(), P.Passes.begin(), P.Passes.end());
  C.Params = Parent.Params;
  for (const auto &[K, V] : P.Params)
    C.Params[K] = V;
  // The launch the candidate's code makes: what the passes report they
  // wrote at its launch sites (block-size's size, grid-coarsen's factor;
  // coarsening a coarsened launch divides it again), else the parent's.
  C.copyLaunch(Parent);
  for (const auto &[Kernel, L] : R->LaunchEdits) {
    if (L.BlockThreads)
      C.BlockThreads = L.BlockThreads;
    if (L.GridDivisor)
      C.GridDivisor = C.GridDivisor.value_or(1) * L.GridDivisor;
    if (L.BlockDivisor[0])
      C.BlockXDivisor = C.BlockXDivisor.value_or(1) * L.BlockDivisor[0];
    if (L.BlockDivisor[1])
      C.BlockYDivisor = C.BlockYDivisor.value_or(1) * L.BlockDivisor[1];
    if (L.BlockRows) {
      C.RowDivisor = L.RowDivisor;
      C.BlockRows = L.BlockRows;
    }
    if (L.Grid3)
      C.Grid3 = L.Grid3;
    if (!L.WarpRows.empty())
      C.WarpRows = L.WarpRows;
  }
  // A launch pass that refused leaves the launch alone and is not part of
  // the candidate's lineage.
  for (const std::string &Launch : P.Passes)
    if (changesLaunch(Launch) && !is_contained(R->Applied, Launch)) {
      C.Lineage.erase(
          std::find(C.Lineage.rbegin(), C.Lineage.rend(), Launch).base() - 1);
      if (Launch == "block-size")
        C.Params.erase("block-size.threads");
    }
  C.Rationale = P.Rationale;
  if (!R->Conflicts.empty())
    C.Rationale += " (conflicts: " + join(R->Conflicts, "; ") + ")";
  return C;
}

} // namespace astra
