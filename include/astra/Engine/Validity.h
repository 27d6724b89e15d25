//===- Validity.h - Checks for outputs that have many right answers -*- C++ -*-===//
//
// Some kernels (random sampling, ties in a top-k) have no unique output, so
// comparing a candidate with the baseline element by element would reject
// correct rewrites. A spec names a validity check instead; the buffers it
// covers are checked for validity in the baseline's and the candidate's
// runs and are left out of the element-wise comparison and of the
// run-to-run determinism check. Every other output is still compared.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_ENGINE_VALIDITY_H
#define ASTRA_ENGINE_VALIDITY_H

#include "astra/Engine/HostBuffer.h"
#include "astra/Spec/Spec.h"

#include "llvm/Support/Error.h"

#include <map>
#include <string>
#include <vector>

namespace astra {

/// Outputs and in-outs that \p C decides on (not compared element-wise).
std::vector<std::string> validityCheckedBuffers(const ValidityCheck &C);

/// The outcome of a validity check on one run.
struct ValidityResult {
  bool Ok = true;
  /// The first problem: "out row 17 (node 4021, degree 3): slot 3 holds 88,
  /// expected -1 after the 3 neighbours".
  std::string Message;
  std::string Buffer;
  uint64_t Index = 0; ///< Element where the problem is.
};

/// Runs check \p C over \p Buffers (every buffer argument by name: inputs as
/// uploaded, outputs as the run left them) under the shape variables
/// \p Vars. An Error means the check itself is misconfigured (unknown check,
/// missing parameter, buffers too small); a failed check is a
/// ValidityResult with Ok false.
///
/// neighbor_sample(rowptr, col, nodes, out, fanout): with deg(v) =
/// rowptr[v+1] - rowptr[v] and k = min(deg(nodes[i]), fanout), row i of
/// out (fanout slots, row-major) holds in its first k slots k distinct
/// neighbours of nodes[i] (values of col[rowptr[v] .. rowptr[v+1]), each
/// used at most as often as it occurs there), in any order, and -1 in the
/// remaining slots. Across all rows with deg > fanout, the sampled
/// neighbours' relative positions (offset + 0.5) / deg must average 1/2
/// within 6 standard errors (when there are at least 200 of them): a
/// sampler that always keeps the first fanout neighbours fails.
llvm::Expected<ValidityResult>
runValidityCheck(const ValidityCheck &C, const KernelSpec &S, const Env &Vars,
                 const std::map<std::string, const HostBuffer *> &Buffers);

} // namespace astra

#endif
