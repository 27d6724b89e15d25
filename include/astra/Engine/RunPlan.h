//===- RunPlan.h - Which runs a verification makes -------------*- C++ -*-===//
//
// A verification runs every requested shape set with every seed, then the
// adversarial runs the spec allows, each derived from the smallest shape set
// (fewest bytes):
//
//   <smallest>+odd        every `vary` variable made odd and not a multiple
//                         of 2, 4 or 8 (oddSize), all seeds
//   <base>/misaligned     every buffer whose "align" allows it passed one
//                         element past an aligned address (so 16-byte vector
//                         accesses break), on the odd shape when there is
//                         one; first seed
//   <smallest>/values=M   float inputs drawn as M = large, negative, zeros,
//                         denormal (see ValueMode); first seed
//
// and, apart from the adversarial runs (a program's launches are not an
// adversary's choice, so `--no-adversarial` keeps them), one run per launch
// the code allows besides the spec's own (astra/Spec/LaunchSpace.h):
//
//   <smallest>@block=B    the launch site's configuration for block size B
//                         (and the shape variables it follows); first seed
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_ENGINE_RUNPLAN_H
#define ASTRA_ENGINE_RUNPLAN_H

#include "astra/Engine/Inputs.h"
#include "astra/Engine/Job.h"
#include "astra/Spec/Spec.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace astra {

enum class RunKind { Shape, OddSizes, Misaligned, Values, LaunchSpace };
llvm::StringRef runKindName(RunKind K);

struct PlannedRun {
  std::string Name;  ///< "small", "small+odd", "small/misaligned", ...
  std::string Shape; ///< The spec shape set it derives from.
  RunKind Kind = RunKind::Shape;
  Env Vars;
  std::vector<uint64_t> Seeds;
  bool Misalign = false;
  ValueMode Values = ValueMode::Spec;
  /// A launch-space run's launch for the baseline and for the candidate
  /// (empty: the job's).
  std::optional<LaunchSpec> Launch, CandidateLaunch;
};

/// The odd size that replaces \p V in the odd-size run: V - V % 8 + 5 for
/// V >= 8 (odd, so a multiple of no power of two, and close to V); 5 for
/// 2 <= V < 8; V itself for V <= 1 (already odd or empty).
int64_t oddSize(int64_t V);

/// Whether buffer \p A may be passed one element off its natural alignment.
bool canMisalign(const ArgSpec &A);

/// The shape set whose buffers take the fewest bytes (ties: the first).
llvm::Expected<const ShapeSet *> smallestShapeSet(const KernelSpec &S);

/// The runs for \p S: \p Shapes (all when empty; unknown names are an
/// error listing the known ones) with \p Seeds each, then, when
/// \p Adversarial, the adversarial runs the spec allows, then one run per
/// configuration of \p Space.
llvm::Expected<std::vector<PlannedRun>>
planRuns(const KernelSpec &S, llvm::ArrayRef<std::string> Shapes,
         llvm::ArrayRef<uint64_t> Seeds, bool Adversarial,
         llvm::ArrayRef<LaunchVariant> Space = {});

/// Makes \p J's adversarial runs start from \p Base when it is smaller than
/// every shape set of the job's spec, those sets still running in full:
/// Base joins the spec as one more set, and J.Shapes names the spec's own.
/// For a shape-split clone, whose sets are all large, Base is the original's
/// smallest set: odd sizes, misalignment and value ranges are no less a test
/// there, and on the clone's smallest set they tripled the verification
/// (argmax's large half on the H100: 74 s against 27 s for all of the
/// unsplit kernel's sets).
void setAdversarialBase(VerifyJob &J, const ShapeSet &Base);

} // namespace astra

#endif
