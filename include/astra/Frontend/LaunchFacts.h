//===- LaunchFacts.h - What the code proves about a kernel's launches -*- C++ -*-===//
//
// A rewrite whose correctness or benefit depends on how a kernel is launched
// (its block size, its grid) must hold for every launch the program makes.
// A workload spec says which workloads to run; only the code says which
// launches exist. This analysis collects every launch of a kernel that the
// translation unit shows (`<<<>>>`, cudaLaunchKernel,
// cudaLaunchCooperativeKernel, cudaLaunchKernelEx), what each one proves
// about its block (a constant, an upper bound, a multiple, a power of two),
// its configuration as spec expressions over the kernel's parameters (so the
// verifier can make the launch the program would make for any block size
// its caller may pick), and every reason the file may not show all launches.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_FRONTEND_LAUNCHFACTS_H
#define ASTRA_FRONTEND_LAUNCHFACTS_H

#include "astra/Frontend/KernelModel.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace astra {

enum class LaunchApi { Chevron, LaunchKernel, LaunchCooperativeKernel, LaunchKernelEx };
/// "<<<>>>", "cudaLaunchKernel", ...
llvm::StringRef launchApiName(LaunchApi A);

/// The largest block CUDA allows, per dimension and in threads.
constexpr int64_t MaxBlockDims[3] = {1024, 1024, 64};
constexpr int64_t MaxBlockThreads = 1024;

/// What the code proves about one integer of a launch configuration.
struct IntFacts {
  std::optional<int64_t> Constant;
  /// A proven upper bound (INT64_MAX: none).
  int64_t Max = INT64_MAX;
  /// A proven divisor of the value (1: none).
  int64_t MultipleOf = 1;
  bool PowerOfTwo = false;
  /// When not constant: what is not known, for messages
  /// ("'block_size', a parameter of 'run'").
  std::string Unknown;

  static IntFacts constant(int64_t V);
  static IntFacts unknown(std::string Why);
};

/// What the code proves about the block of one launch.
struct BlockFacts {
  /// The block argument could be read at all (cudaLaunchKernelEx keeps it in
  /// a configuration struct: never).
  bool Readable = false;
  IntFacts Dim[3] = {IntFacts::constant(1), IntFacts::constant(1),
                     IntFacts::constant(1)};
  std::optional<std::array<int64_t, 3>> constant() const;
  /// The largest number of threads per block the code allows: the product
  /// of the dimensions' bounds, capped at the hardware's 1024.
  int64_t maxThreads() const;
  /// Whether maxThreads() is a bound the code gives (a constant, a
  /// `min(d, 256)`), not only the hardware's.
  bool bounded() const;
  /// What is not known, for messages; empty when the block is constant.
  std::string unknown() const;
};

/// A launch as spec expressions (docs/spec-format.md) over the kernel's
/// parameter names, with `$B` standing for a block size that only the
/// caller knows (LaunchSiteFacts::FreeBlockVar). A field is empty when the
/// code's expression cannot be written that way: it reads memory, a struct
/// member, a call, a variable the launch does not pass to the kernel.
struct LaunchExprs {
  std::string Grid[3], Block[3], Shmem;
  /// Why the first empty field is empty.
  std::string Why;
};

/// One launch, without AST pointers (a job, a report or the spec's launch
/// space derivation reads it after the AST is gone).
struct LaunchSiteFacts {
  LaunchApi Api = LaunchApi::Chevron;
  SourcePos Pos;
  std::string Caller;
  BlockFacts Block;
  LaunchExprs Exprs;
  /// The variable the block's x size comes from when it is known only at
  /// run time and is not passed to the kernel (a harness's `block_size`):
  /// the caller may pick any value, so the verifier sweeps it.
  std::string FreeBlockVar;
  bool InMacro = false;
  std::string where() const; ///< "the launch at f.cu:12:3" (+ API).
};

/// One launch with its AST.
struct LaunchFact : LaunchSiteFacts {
  const clang::Expr *E = nullptr; ///< The launch (or API call) expression.
  const clang::CUDAKernelCallExpr *Chevron = nullptr;
};

struct LaunchFacts {
  std::vector<LaunchFact> Launches;
  /// Why the program may launch the kernel where this file does not show
  /// it (the first reason found); empty when every launch is here.
  std::string Hidden;
  clang::SourceLocation HiddenLoc;
  /// A `<<<>>>` launch in a template never instantiated here.
  const clang::CUDAKernelCallExpr *Unresolved = nullptr;
  /// A use of the kernel other than as a launch's callee or a launch API's
  /// function argument: a function pointer made of it.
  const clang::Expr *AddressTaken = nullptr;
  /// The kernel's own `__launch_bounds__` maximum, 0 when it has none.
  int64_t LaunchBoundsMax = 0;

  bool allVisible() const { return Hidden.empty(); }
  /// The chevron launches (the only ones a pass can edit).
  std::vector<const clang::CUDAKernelCallExpr *> chevrons() const;
  /// The largest threads per block of any launch when the code bounds every
  /// one; otherwise nullopt and \p Why says which launch (or the hidden
  /// reason) stops it.
  std::optional<int64_t> maxThreads(std::string *Why = nullptr) const;
  /// Whether every launch's block x is a power of two (and 1-D), else
  /// nullopt-like false with \p Why.
  bool blockXPowerOfTwo(std::string *Why = nullptr) const;
  /// The distinct constant blocks when every launch is visible and constant.
  std::optional<std::vector<std::array<int64_t, 3>>> constantBlocks() const;
};

/// The plain part of LaunchFacts, for consumers without the AST.
struct KernelLaunchFacts {
  std::vector<LaunchSiteFacts> Sites;
  std::string Hidden;
  int64_t LaunchBoundsMax = 0;
};
KernelLaunchFacts plainFacts(const LaunchFacts &F);

/// Analyzes every launch of \p Kernel (a template: of any instantiation,
/// from instantiated function templates too) in \p Ctx's translation unit.
LaunchFacts analyzeLaunches(clang::ASTContext &Ctx,
                            const clang::FunctionDecl *Kernel);

/// When \p CE calls a launch API (cudaLaunchKernel, cudaLaunchKernelEx, ...),
/// which one, with \p Function set to the expression naming the kernel
/// (casts and `&` stripped).
std::optional<LaunchApi> launchApiCall(const clang::CallExpr *CE,
                                       const clang::Expr *&Function);

/// The spelling of \p Op in spec expressions (astra/Spec/Expr.h: the same
/// C operators, same precedence), or nullopt when the spec has none.
std::optional<llvm::StringRef> specOperator(clang::BinaryOperatorKind Op);

/// What the code proves about the integer expression \p E (constants,
/// locals initialized once and never changed, min/max, products, shifts,
/// conditionals). Exposed for the passes and the unit tests.
IntFacts intFacts(const clang::Expr *E, clang::ASTContext &Ctx);

} // namespace astra

#endif
