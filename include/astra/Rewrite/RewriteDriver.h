//===- RewriteDriver.h - Run passes over a file ----------------*- C++ -*-===//
//
// Runs a pipeline of passes over the kernels of one translation unit. After
// each pass the edited text is parsed again (from memory), so every pass sees
// a correct AST of the code as it now is. The result is new text for each
// file that changed; nothing is written to disk here.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_REWRITE_REWRITEDRIVER_H
#define ASTRA_REWRITE_REWRITEDRIVER_H

#include "astra/Frontend/CudaParser.h"
#include "astra/Rewrite/Pass.h"
#include "astra/Spec/LaunchTuning.h"

#include "llvm/Support/Error.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace astra {

struct RewriteRequest {
  /// Device-side compile command of the main file (argv[0] first, file last).
  std::vector<std::string> Command;
  std::vector<std::string> Passes;
  /// Kernel to rewrite (qualified name); empty: every kernel in user code
  /// that is not in a macro expansion.
  std::string Kernel;
  PassOptions Options;
  /// Starting contents (a candidate in memory); empty: the files on disk.
  FileOverlay Overlay;
  /// Whether a pass may edit the header at this absolute path (`rewrite
  /// --header-filter`); unset: every file that is not a system header. A
  /// kernel whose edits would reach a header it may not edit keeps none of
  /// that pass's edits (a partial edit could leave a helper and its callers
  /// disagreeing), with a note in Conflicts and Explanations.
  std::function<bool(llvm::StringRef)> MayEditHeader;
  /// A runtime-wrapper PCH for every parse (ParseOptions::RuntimePch).
  std::string RuntimePch;
  /// Parse the file's #include block from a preamble PCH (CudaParser.h's
  /// ParseOptions::UsePreamble), built by the first parse when missing.
  bool Preamble = false;
};

struct RewriteResult {
  /// Original and new text of every file that changed (absolute paths).
  /// The original is the text the first parse read (the bytes every edit's
  /// offsets refer to), not what the file holds by the end of the run: a
  /// writer compares the two before it replaces the file.
  std::map<std::string, std::string> Original, Rewritten;
  std::vector<Explanation> Explanations;
  /// Conflicting replacements, as messages; a non-empty list means some
  /// sites were left alone.
  std::vector<std::string> Conflicts;
  /// Passes that changed something, in order.
  std::vector<std::string> Applied;
  /// One line per parse (what it was for, its time, the PCH it used) and
  /// the parses' notes, for --verbose.
  std::vector<std::string> ParseNotes;
  /// How each kernel's launch sites changed (by qualified name): the block
  /// size block-size wrote and the grid divisor of grid-coarsen (0: not
  /// changed; a grid coarsened twice holds the product). `rewrite` and the
  /// optimizer change the spec's launch the same way.
  struct LaunchEdit {
    int64_t BlockThreads = 0;
    int64_t GridDivisor = 0;
    /// thread-coarsen's divisors of the block's x and y (0: not changed).
    int64_t BlockDivisor[2] = {0, 0};
    /// rows-per-block's divisor of the block x and rows per block (0: not changed).
    int64_t RowDivisor = 0, BlockRows = 0;
    /// delinearize's 3-D grid.
    std::optional<Delinearized> Grid3;
    /// warp-per-row's row count (empty: not changed).
    std::string WarpRows;
    /// The same, as a change of the spec's launch.
    LaunchChange change() const {
      LaunchChange C;
      if (BlockThreads)
        C.BlockThreads = BlockThreads;
      if (GridDivisor)
        C.GridDivisor = GridDivisor;
      if (BlockDivisor[0])
        C.BlockXDivisor = BlockDivisor[0];
      if (BlockDivisor[1])
        C.BlockYDivisor = BlockDivisor[1];
      if (BlockRows) {
        C.RowDivisor = RowDivisor;
        C.BlockRows = BlockRows;
      }
      C.Grid3 = Grid3;
      if (!WarpRows.empty())
        C.WarpRows = WarpRows;
      return C;
    }
  };
  std::map<std::string, LaunchEdit> LaunchEdits;
  /// Kernels shape-split gave a clone (by qualified name), with the
  /// threshold in threads: the spec's entries are split the same way
  /// (splitSpecText).
  std::map<std::string, int64_t> Splits;
  bool changed() const { return !Rewritten.empty(); }
};

/// Runs the pipeline. Fails when a pass name is unknown, a pass parameter
/// is not one the pass accepts (checkPassParams), the kernel is not found,
/// or a parse fails (the error includes which pass produced text that
/// does not parse: that is a bug in the pass).
llvm::Expected<RewriteResult> runRewrite(const RewriteRequest &Req,
                                         llvm::raw_ostream *DiagOS = nullptr);

/// What one pass would do to the kernels of a file on its own.
struct PassProbe {
  std::string Pass;
  bool WouldChange = false;
  std::vector<Explanation> Explanations;
  std::vector<std::string> Conflicts;
};

/// Runs each pass of \p Req.Passes alone on the same parse of the file (no
/// pipeline, nothing applied) and reports which would change the code. One
/// parse for all passes: this is how the planner learns what is applicable.
llvm::Expected<std::vector<PassProbe>>
probePasses(const RewriteRequest &Req, llvm::raw_ostream *DiagOS = nullptr);

/// Applies per-file replacements to \p Files (path -> text).
llvm::Error applyToFiles(
    const std::map<std::string, clang::tooling::Replacements> &Repls,
    std::map<std::string, std::string> &Files);

/// Replacements that turn each original text into its new text, one per
/// changed hunk (for --export-fixes and clang-apply-replacements).
std::map<std::string, clang::tooling::Replacements>
diffAsReplacements(const RewriteResult &R);

} // namespace astra

#endif
