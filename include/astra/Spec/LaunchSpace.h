//===- LaunchSpace.h - The launches a program can make of a kernel -*- C++ -*-===//
//
// A spec names the launch of each shape set, but a program may launch the
// kernel with other configurations: a harness that loops over block sizes,
// `min(d, 1024)` threads for a short row, two launch sites with different
// constants. A rewrite that is correct only at the spec's launch would pass
// verification and break the program. So every candidate is also verified
// under the configurations the launch sites allow (the launch space),
// derived here from what the code proves (astra/Frontend/LaunchFacts.h):
//
//  - a block size known only at run time (a caller's variable): block x
//    swept over 32, 64, ..., 1024 and one size that is not a multiple of 32
//    (when the code does not prove it is one), within the bounds the code
//    proves and the kernel's __launch_bounds__, with the grid and dynamic
//    shared memory each launch site computes for that size;
//  - a block that follows a shape variable (`min(d, 1024)`): that variable
//    set so the block takes the same sizes (a shorter row is a shape the
//    program runs too);
//  - constant blocks at several launch sites: each of them.
//
// The spec may narrow a run-time block size with "launch_space": {"block":
// [...]} when the code cannot tell; it cannot widen what the code proves.
// Each configuration runs on the smallest shape set, first seed (RunPlan.h).
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_SPEC_LAUNCHSPACE_H
#define ASTRA_SPEC_LAUNCHSPACE_H

#include "astra/Spec/Spec.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace astra {

struct KernelLaunchFacts;

/// One configuration of the launch space, as a shape set's variables and
/// the launch the program would make there.
struct LaunchVariant {
  std::string Name;  ///< "block=512", "block=100", "block=(16, 16, 1)".
  std::string Shape; ///< The shape set it derives from.
  Env Vars;          ///< The base set's variables, some changed ("d" = 32).
  LaunchSpec Launch; ///< What the program launches there.
  /// The candidate's launch when its rewrite changed the launch sites
  /// (block-size, grid-coarsen, ...); filled by whoever makes the job.
  std::optional<LaunchSpec> CandidateLaunch;
  /// How the configuration was made when not exactly as the launch site
  /// computes it ("grid as in the spec: ..."), for the report.
  std::string Note;
};

struct LaunchSpacePlan {
  std::vector<LaunchVariant> Variants;
  /// What the verifier cannot reproduce exactly, and why (for the report).
  std::vector<std::string> Notes;
  /// Every launch the code can make at the base set's shapes is among the
  /// variants and the spec's launch (a grid or shared memory the launch site
  /// computes in a way the spec cannot write is taken from the spec, which
  /// states the workload's sizes). False where a launch the file does not
  /// show, a block it cannot reproduce, or a block the caller picks at run
  /// time (the sweep samples it) may use other blocks. The spec's
  /// "launch_space" widens what is run, never this: passes that need every
  /// launch (index32) do not take a spec's word for launches.
  bool Complete = true;
};

/// The block sizes a run-time block is swept over when the spec does not
/// narrow it: the powers of two from 32 to 1024 and 100 (no multiple of 32).
std::vector<int64_t> defaultSweepBlocks();

/// The launch space of \p S's kernel over shape set \p Base (its smallest):
/// every configuration of \p Facts' launch sites other than the spec's own
/// launch on \p Base. Errors only on a spec that is itself broken.
llvm::Expected<LaunchSpacePlan> planLaunchSpace(const KernelSpec &S,
                                                const KernelLaunchFacts &Facts,
                                                const ShapeSet &Base);

struct LaunchChange;

/// The launch space of \p S's kernel for a verification job: planned over
/// \p Base (the smallest shape set, smallestShapeSet; none when null), with the candidate's launch
/// changed by \p Change at each configuration when given. The plan's notes
/// say what cannot be reproduced.
llvm::Expected<LaunchSpacePlan>
jobLaunchSpace(const KernelSpec &S, const KernelLaunchFacts &Facts,
               const ShapeSet *Base, const LaunchChange *Change);

/// Fills each variant's CandidateLaunch with its launch changed by \p C, the
/// way the candidate's launch sites change it (changedLaunch).
llvm::Error applyLaunchChange(std::vector<LaunchVariant> &Variants,
                              const KernelSpec &S, const LaunchChange &C);

} // namespace astra

#endif
