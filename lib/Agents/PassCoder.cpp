//===- PassCoder.cpp ------------------------------------------------------===//
#include "astra/Agents/PassCoder.h"
#include "astra/Rewrite/RewriteDriver.h"
#include "astra/Spec/LaunchTuning.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace llvm;

namespace astra {

/// The block size block-size writes under \p O, by the pass's own rule
/// (passes/BlockSize.cpp): its parameter, else the default for the spec's
/// block size literal.
static std::optional<int64_t> blockThreadsFor(const PassOptions &O,
                                              StringRef Kernel) {
  const KernelSpec *S = O.specFor(Kernel);
  if (!S)
    return std::nullopt;
  auto L = tunableBlockLiteral(*S);
  if (!L) {
    consumeError(L.takeError());
    return std::nullopt;
  }
  return O.intParam("block-size", "threads", defaultRetunedBlock(*L));
}

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
  for (const auto &[K, V] : P.Params)
    Req.Options.Params[K] = V;
  // Choosing fast-math accepts its rounding; hoist's reciprocal multiply is
  // the same kind of change, so it comes with it.
  if (is_contained(P.Passes, "fast-math"))
    Req.Options.FastMath = true;
  Req.Overlay = Parent.Files;
  auto R = runRewrite(Req, /*DiagOS=*/nullptr);
  if (!R)
    return R.takeError();
  Candidate C;
  C.Origin = Parent.Origin == "llm" ? "llm" : "passes";
  C.Files = Parent.Files;
  for (auto &[Path, Text] : R->Rewritten)
    C.Files[Path] = Text;
  // A pipeline that changes nothing leaves the parent's code.
  C.Lineage = Parent.isBaseline() ? std::vector<std::string>() : Parent.Lineage;
  C.Lineage.insert(C.Lineage.end(), P.Passes.begin(), P.Passes.end());
  C.Params = Parent.Params;
  for (const auto &[K, V] : P.Params)
    C.Params[K] = V;
  // The launch the candidate's code makes: what block-size wrote, else the
  // parent's. A plan whose block-size refused leaves the launch alone.
  C.BlockThreads = Parent.BlockThreads;
  if (is_contained(P.Passes, "block-size")) {
    if (is_contained(R->Applied, "block-size")) {
      C.BlockThreads = blockThreadsFor(Req.Options, KernelName);
    } else {
      C.Lineage.erase(std::find(C.Lineage.rbegin(), C.Lineage.rend(),
                                "block-size")
                          .base() -
                      1);
      C.Params.erase("block-size.threads");
    }
  }
  // grid-coarsen says which factor it chose; coarsening a coarsened launch
  // again divides it again.
  C.GridDivisor = Parent.GridDivisor;
  if (R->GridDivisor)
    C.GridDivisor = C.GridDivisor.value_or(1) * R->GridDivisor;
  else if (is_contained(P.Passes, "grid-coarsen"))
    C.Lineage.erase(std::find(C.Lineage.rbegin(), C.Lineage.rend(),
                              "grid-coarsen")
                        .base() -
                    1);
  C.Rationale = P.Rationale;
  if (!R->Conflicts.empty())
    C.Rationale += " (conflicts: " + join(R->Conflicts, "; ") + ")";
  return C;
}

} // namespace astra
