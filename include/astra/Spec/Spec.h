//===- Spec.h - Workload specs: how to run a kernel alone ------*- C++ -*-===//
//
// A spec says everything the Tester and the Profiler need to run one kernel
// without the user's program: the shape sets to sweep, each argument's dtype,
// size, role and values, the launch configuration, the tolerance and the
// bytes moved. It lives beside the kernel as <file>.astra.json (JSON with
// comments); docs/spec-format.md is the user-facing description.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_SPEC_SPEC_H
#define ASTRA_SPEC_SPEC_H

#include "astra/Spec/Expr.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace astra {

enum class DType {
  F32, F64, F16, BF16, FP8E4M3, FP8E5M2,
  I8, U8, I16, U16, I32, U32, I64, U64
};

/// Bytes per element.
unsigned dtypeSize(DType T);
/// Spec spelling ("f32", "bf16", ...).
llvm::StringRef dtypeName(DType T);
std::optional<DType> parseDType(llvm::StringRef S);
bool isFloating(DType T);

enum class Role {
  Input,  ///< Read only: must come back unchanged.
  Output, ///< Written: poisoned before each run, compared after.
  InOut,  ///< Read and written in place: initialized, compared after.
  Scratch ///< Workspace: poisoned, not compared.
};
llvm::StringRef roleName(Role R);

/// How the values of an input (or in-out) buffer are drawn. Arguments are
/// expressions over the shape variables.
struct Generator {
  /// normal(mean, std), uniform(lo, hi), randint(lo, hi) (inclusive),
  /// arange, permutation(n), sorted(lo, hi), constant(v),
  /// csr_rowptr(rows, avg_degree, max_degree), indices_into(n),
  /// csr_colind(rowptr_arg, n): column indices consistent with another
  /// argument that is a csr_rowptr (distinct within a row).
  std::string Kind = "normal";
  std::vector<SpecExpr> Args;
  /// For generators that refer to another argument by name (csr_colind).
  std::string RefArg;
  std::string Text; ///< As written, for messages.
};

struct ArgSpec {
  std::string Name;
  unsigned Index = 0; ///< Position in the kernel's parameter list.
  bool IsBuffer = false;

  // Buffers.
  DType Type = DType::F32;
  SpecExpr Count; ///< Elements.
  Role R = Role::Input;
  Generator Init;
  std::optional<double> Rtol, Atol; ///< Overrides of the kernel's tolerance.
  /// Required byte alignment of the pointer; the adversarial run misaligns
  /// buffers only where this allows (default: the dtype's size).
  unsigned Align = 0;

  // Scalars.
  SpecExpr ScalarValue;
  DType ScalarType = DType::I32; ///< From the kernel's parameter type.
};

struct LaunchSpec {
  SpecExpr Grid[3], Block[3]; ///< Missing dimensions are 1.
  SpecExpr Shmem;             ///< Dynamic shared memory bytes (default 0).
};

struct ShapeSet {
  std::string Name;
  Env Vars;
};

/// A named check for kernels whose valid outputs are not unique.
struct ValidityCheck {
  std::string Name; ///< e.g. "neighbor_sample"
  /// Bindings of the check's roles to argument names or expressions.
  std::vector<std::pair<std::string, std::string>> Params;
};

struct AdversarialSpec {
  /// Shape variables that may take odd sizes (not a multiple of any vector
  /// width); the verifier adds shape sets with such values.
  std::vector<std::string> Vary;
  /// Whether buffers may be passed misaligned (offset by one element).
  bool Misalign = true;
  /// Input value ranges to add: large magnitudes, negatives, zeros,
  /// denormals. Off for arguments whose generator is an index generator.
  bool Values = true;
};

struct KernelSpec {
  std::string Kernel; ///< Name as in `list` (qualified; template args for instantiations).
  std::string SpecPath;
  std::vector<ShapeSet> Shapes;
  std::vector<ArgSpec> Args; ///< In kernel parameter order.
  LaunchSpec Launch;
  double Rtol = -1, Atol = -1; ///< Negative: per-dtype default.
  std::optional<SpecExpr> Bytes, Flops;
  std::optional<ValidityCheck> Check;
  AdversarialSpec Adversarial;
  /// When true the launch configuration belongs to the kernel: the optimizer
  /// may change block sizes (and rewrite launch sites).
  bool LaunchIsTunable = false;

  const ArgSpec *arg(llvm::StringRef Name) const;
};

struct SpecFile {
  std::string Path;
  std::vector<KernelSpec> Kernels;
  const KernelSpec *find(llvm::StringRef Kernel) const;
};

/// Loads and validates a spec file. Errors name the file, the kernel, the
/// field and what is wrong, e.g.
///   k.cu.astra.json: kernel 'silu': args.out.count: unknown variable 'D'
llvm::Expected<SpecFile> loadSpecFile(llvm::StringRef Path);
/// Parses spec text (for tests and in-memory specs).
llvm::Expected<SpecFile> parseSpec(llvm::StringRef Text, llvm::StringRef Path);

/// The spec beside \p CuFile (<file>.astra.json), or \p Explicit when given.
/// A missing spec is an error that points to `clang-astra init-spec`.
llvm::Expected<SpecFile> loadSpecFor(llvm::StringRef CuFile,
                                     llvm::StringRef Explicit);

/// Default tolerances per dtype, fit for fast-math rewrites.
double defaultRtol(DType T);
double defaultAtol(DType T);

} // namespace astra

#endif
