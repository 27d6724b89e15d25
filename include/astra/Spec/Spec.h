//===- Spec.h - Workload specs: how to run a kernel alone ------*- C++ -*-===//
//
// A spec says everything the Tester and the Profiler need to run one kernel
// without the user's program: the shape sets to sweep, each argument's dtype,
// size, role and values, the launch configuration, the tolerance and the
// bytes moved. It lives beside the kernel as <file>.astra.json (JSON with
// comments); docs/spec-format.md is the user-facing description.
//
// A spec that loads is valid on its own: every expression parses and
// evaluates under every shape set, counts are positive, generators fit their
// buffers. Whether it fits the kernel (parameter names, pointee types, what
// the kernel writes) is checked against the AST by checkSpecAgainstKernel
// (astra/Spec/SpecCheck.h).
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_SPEC_SPEC_H
#define ASTRA_SPEC_SPEC_H

#include "astra/Spec/Expr.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace astra {

class JsonWriter;

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
bool isSigned(DType T);
/// Every spelling, for messages ("f32, f64, ...").
llvm::StringRef dtypeList();
/// Range of an integer dtype (for range checks of generated values).
int64_t dtypeMin(DType T);
/// Largest value of an integer dtype; u64 reports INT64_MAX since spec
/// arithmetic is int64.
int64_t dtypeMax(DType T);

enum class Role {
  Input,  ///< Read only: must come back unchanged.
  Output, ///< Written: poisoned before each run, compared after.
  InOut,  ///< Read and written in place: initialized, compared after.
  Scratch ///< Workspace: poisoned, not compared.
};
llvm::StringRef roleName(Role R);
std::optional<Role> parseRole(llvm::StringRef S);

/// How the values of an input (or in-out) buffer are drawn. Arguments are
/// expressions over the shape variables.
struct Generator {
  /// normal(mean, std), uniform(lo, hi), randint(lo, hi) (inclusive),
  /// arange, permutation(n), sorted(lo, hi), constant(v),
  /// csr_rowptr(rows, avg_degree, max_degree), indices_into(n),
  /// csr_colind(rowptr_arg, n): column indices consistent with another
  /// argument that is a csr_rowptr (distinct within a row).
  std::string Kind = "normal";
  /// For csr_colind only Args[0] (n) is here; the argument name is RefArg.
  std::vector<SpecExpr> Args;
  /// For generators that refer to another argument by name (csr_colind).
  std::string RefArg;
  std::string Text; ///< As written (or the default's spelling), for messages.
  /// Written as captured(<this generator>): in a shape set for which the
  /// spec's "capture" names a blob of this argument, the verifier's
  /// captured run and the profiler use the program's own bytes (RunPlan.h);
  /// every other run draws from this generator.
  bool Captured = false;

  /// Generators whose values are indices or structure (permutation,
  /// indices_into, csr_rowptr, csr_colind, arange): the adversarial run must
  /// not replace their values, and they need an integer dtype (arange
  /// aside).
  bool isStructural() const;
};

/// Parses "normal(0, 1)", "arange", "csr_colind(rowptr, n)",
/// "captured(normal(0, 1))". Checks the name and the number of arguments;
/// not what the arguments evaluate to.
llvm::Expected<Generator> parseGenerator(llvm::StringRef Text);
/// The default generator of a buffer of \p T: normal(0, 1) for floating
/// types, randint(-100, 100) for signed and randint(0, 100) for unsigned
/// integers (u8: randint(0, 100) too).
Generator defaultGenerator(DType T);

struct ArgSpec {
  std::string Name;
  unsigned Index = 0; ///< Position in the kernel's parameter list.
  bool IsBuffer = false;

  // Buffers.
  DType Type = DType::F32;
  SpecExpr Count; ///< Elements.
  Role R = Role::Input;
  Generator Init; ///< Filled (default or as written) for input and inout.
  std::optional<double> Rtol, Atol; ///< Overrides of the kernel's tolerance.
  /// Required byte alignment of the pointer; the adversarial run misaligns
  /// buffers only where this allows (0: the dtype's size).
  unsigned Align = 0;

  // Scalars.
  SpecExpr ScalarValue;
  DType ScalarType = DType::I32; ///< From the kernel's parameter type.
  /// ScalarType is known: written in the spec ("dtype") or filled by
  /// checkSpecAgainstKernel. A self-contained job spec always has it.
  bool ScalarTypeGiven = false;

  unsigned alignment() const { return Align ? Align : dtypeSize(Type); }
  /// count * dtype size under \p E.
  llvm::Expected<int64_t> bytes(const Env &E) const;
};

/// A launch configuration with every expression evaluated.
struct ResolvedLaunch {
  int64_t Grid[3] = {1, 1, 1}, Block[3] = {1, 1, 1};
  int64_t Shmem = 0;
  int64_t threadsPerBlock() const { return Block[0] * Block[1] * Block[2]; }
};

struct LaunchSpec {
  SpecExpr Grid[3], Block[3]; ///< Missing dimensions are 1.
  SpecExpr Shmem;             ///< Dynamic shared memory bytes (default 0).
  /// Evaluates and checks the CUDA limits (block at most 1024 threads,
  /// grid y and z at most 65535, ...). On error, \p BadField (when given)
  /// receives the field that is wrong: "grid", "block" or "shmem".
  llvm::Expected<ResolvedLaunch> resolve(const Env &E,
                                         std::string *BadField = nullptr) const;
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
  /// The binding of \p Param, or empty.
  llvm::StringRef param(llvm::StringRef Param) const;
};

/// A validity check the engine provides, with the parameters it takes.
struct ValidityCheckInfo {
  enum class ParamKind {
    Buffer,        ///< Names a buffer argument.
    IntegerBuffer, ///< Names a buffer argument of an integer dtype.
    Expression     ///< An expression over the shape variables, or a scalar argument.
  };
  struct Param {
    llvm::StringRef Name;
    ParamKind Kind;
    llvm::StringRef Doc;
  };
  llvm::StringRef Name;
  llvm::StringRef Doc;
  std::vector<Param> Params; ///< All required.
};
/// Every validity check the engine implements (docs/spec-format.md).
const std::vector<ValidityCheckInfo> &knownValidityChecks();

struct AdversarialSpec {
  /// Shape variables that may take odd sizes (not a multiple of any vector
  /// width); the verifier adds shape sets with such values.
  std::vector<std::string> Vary;
  /// Whether buffers may be passed misaligned (offset by one element).
  bool Misalign = true;
  /// Input value ranges to add: large magnitudes, negatives, zeros,
  /// denormals. Off for arguments whose generator is structural.
  bool Values = true;
};

/// "capture": where the program's own buffer contents are, per shape set
/// (init-spec --from-capture writes it; docs/spec-format.md).
struct CaptureRef {
  std::string Dir;     ///< Absolute (the spec names it relative to itself).
  std::string Written; ///< As the spec writes it, for messages.
  /// Shape set -> argument -> blob, relative to Dir.
  std::map<std::string, std::map<std::string, std::string>> Sets;
  /// The blob of \p Arg in \p Set as a path, or empty.
  std::string blob(llvm::StringRef Set, llvm::StringRef Arg) const;
};

struct KernelSpec {
  std::string Kernel; ///< Name as in `list` (qualified; template args for instantiations).
  std::string SpecPath;
  std::vector<ShapeSet> Shapes;
  std::vector<ArgSpec> Args; ///< In kernel parameter order once checked.
  LaunchSpec Launch;
  double Rtol = -1, Atol = -1; ///< Negative: per-dtype default.
  /// Bytes moved per launch; absent means "auto" (see autoBytes).
  std::optional<SpecExpr> Bytes, Flops;
  std::optional<ValidityCheck> Check;
  AdversarialSpec Adversarial;
  /// When true the launch configuration belongs to the kernel: the optimizer
  /// may change block sizes (and rewrite launch sites).
  bool LaunchIsTunable = false;
  /// "launch_space": {"block": [...]}: the block x sizes the program
  /// launches the kernel with, where its code cannot tell (a block size
  /// chosen at run time). Narrows the verifier's launch-space sweep
  /// (astra/Spec/LaunchSpace.h); it never lets a pass assume a launch.
  std::vector<int64_t> LaunchSpaceBlocks;
  /// "weights": how much each shape set counts in the weighted speedup
  /// (the program's launch counts, from a capture). Empty, or one per set.
  std::map<std::string, double> Weights;
  /// "capture": the captured contents that captured(...) inits replay.
  std::optional<CaptureRef> Capture;

  /// Line and column of each field in SpecPath ("args.out.dtype" ->
  /// {12, 9}), for the messages of checks that run after parsing.
  std::map<std::string, std::pair<unsigned, unsigned>> FieldLocations;

  const ArgSpec *arg(llvm::StringRef Name) const;
  const ShapeSet *shape(llvm::StringRef Name) const;
  /// The shape set's weight; 0 when the spec gives none.
  double weight(llvm::StringRef Set) const;
  /// Argument -> blob path of the captured contents that shape set \p Set
  /// replays (arguments whose init is captured(...) and that the capture
  /// has); empty when none.
  std::map<std::string, std::string> capturedBlobs(llvm::StringRef Set) const;

  /// Start of a message about \p Field ("args.out.dtype"), in the form
  /// parse errors have: "k.cu.astra.json:12:9: kernel 'k': args.out.dtype: ".
  /// A field without a recorded place uses its nearest parent's.
  std::string where(llvm::StringRef Field) const;

  /// The tolerance of buffer \p A: its own, else the kernel's, else the
  /// dtype's default.
  double rtolFor(const ArgSpec &A) const;
  double atolFor(const ArgSpec &A) const;

  /// Inputs read once + outputs written once + in-out read and written;
  /// scratch is not counted.
  llvm::Expected<int64_t> autoBytes(const Env &E) const;
  /// The "bytes" expression, or autoBytes.
  llvm::Expected<int64_t> bytesMoved(const Env &E) const;
};

struct SpecFile {
  std::string Path;
  std::vector<KernelSpec> Kernels;
  /// The entry for \p Kernel; template arguments compare without
  /// whitespace ("scale<float,2>" finds "scale<float, 2>").
  const KernelSpec *find(llvm::StringRef Kernel) const;
  KernelSpec *find(llvm::StringRef Kernel);
};

/// Kernel names compare equal when they differ only in whitespace.
bool sameKernelName(llvm::StringRef A, llvm::StringRef B);

/// A size in powers of 1024 for messages: "4000 B", "512.0 GiB", "3.6 PiB".
std::string byteSizeText(uint64_t Bytes);

/// The bytes of all buffers of \p K under shape set \p S together
/// (saturating at UINT64_MAX).
llvm::Expected<uint64_t> bufferBytes(const KernelSpec &K, const ShapeSet &S);

/// What a spec may hold (docs/spec-format.md, "Limits"). Every limit is far
/// beyond what a real kernel's spec needs and keeps the tool's time and
/// memory bounded on a hostile or broken file: reading a spec within them is
/// linear in its size (nesting is bounded by MaxJsonDepth, expressions by
/// SpecExpr's limits).
constexpr uint64_t MaxSpecBytes = uint64_t(16) << 20;
constexpr size_t MaxSpecKernels = 4096;
constexpr size_t MaxShapeSets = 1024;
constexpr size_t MaxShapeVariables = 256;
/// The buffers of one shape set together: more than any GPU holds, so a
/// spec beyond it is a mistake (a count in bytes instead of elements, an
/// exponent off by a few).
constexpr uint64_t MaxShapeSetBufferBytes = uint64_t(1) << 40;

/// Loads and validates a spec file. Errors name the file, the line, the
/// kernel, the field and what is wrong, e.g.
///   k.cu.astra.json:9:9: kernel 'silu': args.out.count: unknown variable 'D'
///   (shape variables: T, d)
/// Every problem found is reported (one llvm::ErrorList), not just the first.
llvm::Expected<SpecFile> loadSpecFile(llvm::StringRef Path);
/// Parses spec text (for tests and in-memory specs); \p Path names it in
/// messages.
llvm::Expected<SpecFile> parseSpec(llvm::StringRef Text, llvm::StringRef Path);

/// Where the spec of \p CuFile lives: <file>.astra.json.
std::string specPathFor(llvm::StringRef CuFile);
/// The spec beside \p CuFile (<file>.astra.json), or \p Explicit when given.
/// A missing spec is an error that points to `clang-astra init-spec`.
llvm::Expected<SpecFile> loadSpecFor(llvm::StringRef CuFile,
                                     llvm::StringRef Explicit);

/// Writes \p K as the value of its entry in "kernels" (an object with
/// shapes, args, launch, ...). The output is explicit: defaults are written
/// out (init generators, scalar dtypes once known), so that the job that
/// ships it to another machine does not depend on this build's defaults.
/// parseKernelSpecJson reads it back to the same spec.
void writeKernelSpecJson(JsonWriter &W, const KernelSpec &K);
/// Parses one kernel entry (what writeKernelSpecJson writes) for kernel
/// \p Kernel, with the same validation as a spec file. \p Path names the
/// text in messages.
llvm::Expected<KernelSpec> parseKernelSpecJson(llvm::StringRef Json,
                                               llvm::StringRef Kernel,
                                               llvm::StringRef Path = "<spec>");

/// Default tolerances per dtype, fit for fast-math rewrites. A candidate
/// value c passes against reference r when |c - r| <= atol + rtol * |r|.
double defaultRtol(DType T);
double defaultAtol(DType T);

} // namespace astra

#endif
