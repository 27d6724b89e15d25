//===- Pass.h - Deterministic kernel rewrites ------------------*- C++ -*-===//
//
// A pass rewrites one kernel into text Replacements on the original source,
// touching as few tokens as it can (so that other bytes, comments and
// formatting stay), and refuses to fire where it cannot show that the
// kernel's meaning is kept. Every decision, fired or refused, is recorded with
// its source position so `--explain` can show it.
//
// Passes compose through re-parsing: the driver applies a pass, parses the
// new text and runs the next pass on the new AST. Within one pass,
// replacements must not overlap; PassContext::replace reports a conflict
// instead of dropping it.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_REWRITE_PASS_H
#define ASTRA_REWRITE_PASS_H

#include "astra/Frontend/KernelModel.h"
#include "astra/Spec/LaunchTuning.h"

#include "clang/AST/ASTContext.h"
#include "clang/Tooling/Core/Replacement.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace astra {

struct KernelSpec;
struct SpecFile;

/// Options every pass may read. Pass-specific knobs are in Params
/// (`--pass-opt=vectorize.width=8` sets Params["vectorize.width"] = "8").
struct PassOptions {
  /// fast-math may rewrite double math too.
  bool AllowDouble = false;
  /// Reassociating float rewrites (reciprocal multiply in hoist) allowed.
  bool FastMath = false;
  /// The workload spec of the kernel, when there is one (index32 and
  /// launch-bounds need it).
  const KernelSpec *Spec = nullptr;
  /// Every spec of the file being rewritten (`rewrite --spec`, or the spec
  /// beside the file); PassOptions is shared by all kernels of a request, so
  /// passes look their kernel up with specFor().
  const SpecFile *Specs = nullptr;
  /// The spec of \p Kernel (qualified name): Spec when set, else the entry
  /// of Specs with that name (for a template, its first instantiation's
  /// entry), else null. Defined in lib/Spec (astraSpec).
  const KernelSpec *specFor(llvm::StringRef Kernel) const;
  std::map<std::string, std::string> Params;

  /// Params[Pass + "." + Key] as an integer, or \p Default when absent.
  /// runRewrite and probePasses check Params against the parameters the
  /// passes declare (checkPassParams) before any pass runs, so a value a
  /// pass reads here is one its declaration accepts.
  int64_t intParam(llvm::StringRef Pass, llvm::StringRef Key,
                   int64_t Default) const;
  std::string strParam(llvm::StringRef Pass, llvm::StringRef Key,
                       llvm::StringRef Default) const;
};

/// One decision a pass made at one site.
struct Explanation {
  std::string Pass;
  SourcePos Pos;
  bool Fired = false;
  std::string Message;
};

class PassContext {
public:
  PassContext(clang::ASTContext &Ctx, const KernelInfo &Kernel,
              const std::vector<KernelInfo> &AllKernels,
              const PassOptions &Opts, llvm::StringRef PassName);

  clang::ASTContext &astContext() const { return Ctx; }
  const clang::SourceManager &sourceManager() const;
  const clang::LangOptions &langOpts() const;
  const KernelInfo &kernel() const { return Kernel; }
  const std::vector<KernelInfo> &allKernels() const { return AllKernels; }
  const PassOptions &options() const { return Opts; }
  llvm::StringRef passName() const { return PassName; }

  /// Records that the pass changed the code at \p Loc.
  void fired(clang::SourceLocation Loc, const llvm::Twine &What);
  /// Records that the pass considered \p Loc and did not change it.
  void refused(clang::SourceLocation Loc, const llvm::Twine &Why);
  /// Text put before every message fired() and refused() record from now
  /// on (empty: none): a pass rewriting a helper the kernel calls names the
  /// helper at each of its sites.
  void setMessagePrefix(std::string Prefix) { MessagePrefix = std::move(Prefix); }
  const std::string &messagePrefix() const { return MessagePrefix; }

  /// Replaces the text of \p Range (a token or char range in a file, not in a
  /// macro expansion). Returns false, and records a conflict, when it overlaps
  /// an earlier replacement of this pass or cannot be mapped to file text.
  bool replace(clang::CharSourceRange Range, llvm::StringRef Text);
  bool replaceToken(clang::SourceRange Range, llvm::StringRef Text) {
    return replace(clang::CharSourceRange::getTokenRange(Range), Text);
  }
  bool insertBefore(clang::SourceLocation Loc, llvm::StringRef Text);
  bool insertAfterToken(clang::SourceLocation Loc, llvm::StringRef Text);

  /// Source text of a range as written.
  std::string text(clang::SourceRange R) const;
  /// True when every location of \p R is plain file text (no macro
  /// expansion), so it can be edited.
  bool isEditable(clang::SourceRange R) const;

  const std::map<std::string, clang::tooling::Replacements> &
  replacements() const {
    return Repls;
  }
  const std::vector<Explanation> &explanations() const { return Explains; }
  const std::vector<std::string> &conflicts() const { return Conflicts; }

  /// Records that the rewritten launch sites divide the grid's x size by
  /// \p F (grid-coarsen): the optimizer must launch the candidate the same
  /// way, and only the pass knows the factor it chose.
  void setGridDivisor(int64_t F) { GridDivisor = F; }
  int64_t gridDivisor() const { return GridDivisor; }
  /// Records that the rewritten launch sites use \p N threads per block
  /// (block-size), for the same reason.
  void setBlockThreads(int64_t N) { BlockThreads = N; }
  int64_t blockThreads() const { return BlockThreads; }
  /// Records that the rewritten launch sites divide the block's x (\p Dim
  /// 0) or y (1) size by \p F (thread-coarsen), for the same reason.
  void setBlockDivisor(unsigned Dim, int64_t F) { BlockDivisor[Dim] = F; }
  int64_t blockDivisor(unsigned Dim) const { return BlockDivisor[Dim]; }
  /// Records that the rewritten launch sites run \p Rows rows per block,
  /// each with the original block's x divided by \p Divisor threads, where
  /// that fits (rows-per-block).
  void setBlockRows(int64_t Divisor, int64_t Rows) {
    RowDivisor = Divisor;
    BlockRows = Rows;
  }
  int64_t rowDivisor() const { return RowDivisor; }
  int64_t blockRows() const { return BlockRows; }
  /// Records that the rewritten launch sites run the kernel on delinearize's
  /// 3-D grid (where it fits).
  void setDelinearized(Delinearized D) { Grid3 = std::move(D); }
  const std::optional<Delinearized> &delinearized() const { return Grid3; }

  /// Records that the rewritten launch sites give each row of the kernel's
  /// row count \p Rows (an expression over its parameter names) a warp,
  /// where the block's x is a multiple of 32 (warp-per-row).
  void setWarpRows(std::string Rows) { WarpRows = std::move(Rows); }
  const std::string &warpRows() const { return WarpRows; }

  /// Records that the launch sites now run the kernel's clone for launches
  /// of \p Threshold threads or more (shape-split): the spec's entries are
  /// split the same way (astra/Spec/ShapeSplit.h).
  void setSplitAt(int64_t Threshold) { SplitAt = Threshold; }
  int64_t splitAt() const { return SplitAt; }

private:
  bool add(const clang::tooling::Replacement &R, clang::SourceLocation Loc);

  clang::ASTContext &Ctx;
  const KernelInfo &Kernel;
  const std::vector<KernelInfo> &AllKernels;
  const PassOptions &Opts;
  std::string PassName;
  std::string MessagePrefix;
  std::map<std::string, clang::tooling::Replacements> Repls; ///< By file path.
  std::vector<Explanation> Explains;
  std::vector<std::string> Conflicts;
  int64_t GridDivisor = 0;
  int64_t BlockThreads = 0;
  int64_t BlockDivisor[2] = {0, 0};
  int64_t RowDivisor = 0, BlockRows = 0;
  std::optional<Delinearized> Grid3;
  std::string WarpRows;
  int64_t SplitAt = 0;
};

/// Whether pass \p Name changes a kernel's launch (block size, grid, block
/// shape), so that the spec's launch must change with the code.
inline bool changesLaunch(llvm::StringRef Name) {
  return Name == "block-size" || Name == "grid-coarsen" ||
         Name == "thread-coarsen" || Name == "rows-per-block" ||
         Name == "delinearize" || Name == "warp-per-row";
}

/// A parameter a pass reads from PassOptions::Params (`--pass-opt
/// <pass>.<key>=<value>`). The pass declares it, so that a misspelt key or a
/// bad value is an error naming the pass and the key before anything runs,
/// and `rewrite --list-pass-options` can list them.
struct PassParam {
  enum Kind { Int, Bool, Choice };
  std::string Key;
  std::string Help;
  Kind K = Int;
  /// Int: the accepted range, both inclusive, and a step the value must be
  /// a multiple of (1: any).
  int64_t Min = 0, Max = 0, Step = 1;
  /// Choice: the accepted spellings.
  std::vector<std::string> Values;
  /// What the pass uses when the parameter is not given, for the listing.
  std::string Default;

  static PassParam integer(std::string Key, int64_t Min, int64_t Max,
                           std::string Default, std::string Help,
                           int64_t Step = 1) {
    PassParam P;
    P.Key = std::move(Key);
    P.Min = Min;
    P.Max = Max;
    P.Step = Step;
    P.Default = std::move(Default);
    P.Help = std::move(Help);
    return P;
  }
  static PassParam boolean(std::string Key, std::string Default,
                           std::string Help) {
    PassParam P = integer(std::move(Key), 0, 1, std::move(Default),
                          std::move(Help));
    P.K = Bool;
    return P;
  }
  static PassParam choice(std::string Key, std::vector<std::string> Values,
                          std::string Default, std::string Help) {
    PassParam P;
    P.K = Choice;
    P.Key = std::move(Key);
    P.Values = std::move(Values);
    P.Default = std::move(Default);
    P.Help = std::move(Help);
    return P;
  }
  /// "an integer from 2 to 1024", "0 or 1", "8 or 16".
  std::string accepted() const;
};

class Pass {
public:
  virtual ~Pass();
  /// Name on the command line, e.g. "fast-math".
  virtual llvm::StringRef name() const = 0;
  /// One line for --list-passes.
  virtual llvm::StringRef description() const = 0;
  /// Rewrites PC.kernel(). Must only add replacements through PC and must
  /// record an Explanation for each site it considered.
  virtual void run(PassContext &PC) = 0;
  /// The parameters the pass reads from PassOptions::Params.
  virtual std::vector<PassParam> params() const { return {}; }
};

struct PassInfo {
  std::string Name;
  std::string Description;
  std::function<std::unique_ptr<Pass>()> Create;
  std::vector<PassParam> Params;
};

/// Every pass in the library, in a stable order (passes/AllPasses.cpp).
const std::vector<PassInfo> &allPasses();
/// Creates a pass by name, or nullptr.
std::unique_ptr<Pass> createPass(llvm::StringRef Name);

/// The passes a `--passes` list selects, clang-tidy style: items are pass
/// names or globs (`*`, `restrict-*`), applied in order; `-<glob>` removes
/// what earlier items selected. A name runs where it is listed (twice if
/// listed twice); a glob adds the passes it matches that are not selected
/// yet, in the registry's order. An item that matches no pass, or a list
/// that selects none, is an error naming it.
llvm::Expected<std::vector<std::string>>
selectPasses(llvm::ArrayRef<std::string> Items);

/// Checks \p Params (`<pass>.<key>` -> value) against the parameters the
/// passes declare: an unknown pass, an unknown key or a value the pass does
/// not accept is an error naming the pass, the key and what it accepts.
llvm::Error checkPassParams(const std::map<std::string, std::string> &Params);

/// Parses `<pass>.<key>=<value>` (a `--pass-opt` argument) into \p Params,
/// checked as checkPassParams does.
llvm::Error addPassParam(llvm::StringRef Arg,
                         std::map<std::string, std::string> &Params);

} // namespace astra

#endif
