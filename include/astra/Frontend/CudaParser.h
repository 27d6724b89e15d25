//===- CudaParser.h - Parse a CUDA file into a Clang AST -------*- C++ -*-===//
//
// One place that turns a device-side compile command into an AST, for the
// original file and for candidates that exist only in memory.
//
// Two things make real nvcc code parse (docs/nvcc-compat.md):
// - repairs: with nvcc compatibility (hasNvccCompat), what nvcc accepts and
//   clang rejects with a known fix (a dependent template call without
//   `template`, a missing `typename`, a `%` in inline asm that nvcc reads
//   literally, a kernel launch from device code without -fgpu-rdc) is fixed
//   in an in-memory copy of the file and the parse runs again. The user's
//   files are never written.
// - host errors: an error that lies only inside host-only function bodies
//   (a removed runtime API in main) does not stop the tool, which needs the
//   kernels only. The parse succeeds with the AST clang recovered, and the
//   device view stubs those bodies so the device side compiles. An error in
//   a kernel, a device function or at file scope fails the parse; Clang's
//   diagnostics (file:line:col) are printed then.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_FRONTEND_CUDAPARSER_H
#define ASTRA_FRONTEND_CUDAPARSER_H

#include "clang/Frontend/ASTUnit.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace astra {

/// File contents that replace what is on disk for one parse (a candidate
/// rewrite of the user's file, say). Keys are absolute paths.
using FileOverlay = std::map<std::string, std::string>;

struct ParseOptions {
  FileOverlay Overlay;
  /// Where Clang's diagnostics go; null drops them (they are still counted).
  llvm::raw_ostream *DiagOS = &llvm::errs();
  /// Keep warnings quiet: only errors are printed unless set. With it, the
  /// diagnostics of a parse whose host errors were skipped are printed too.
  bool ShowWarnings = false;
  /// Accept errors that lie only in host-only function bodies (see above).
  bool TolerateHostErrors = true;
  /// A precompiled header of clang's CUDA runtime wrapper built for this
  /// command (lib/Compile's parsePch), loaded in place of the wrapper's
  /// implicit `-include`: the runtime headers then cost milliseconds, not
  /// the second a parse otherwise spends in them. A parse that fails with
  /// it is done again without it, so it only ever changes the speed.
  std::string RuntimePch;
  /// Parse the file's leading #include block from a preamble PCH chained on
  /// RuntimePch (PreamblePch.h) when one is cached for it; BuildPreamble
  /// builds it when not. Only a parse that needs neither repairs nor skipped
  /// host code uses it; any other is done again without it, so it only ever
  /// changes the speed.
  bool UsePreamble = false;
  bool BuildPreamble = false;
};

/// A host-only function whose body clang rejects and the device view stubs.
struct SkippedHostCode {
  std::string Function; ///< Qualified name ("main", "ns::Runner::run").
  std::string Where;    ///< file:line of the function.
  std::string FirstError; ///< "file:line:col: message" of its first error.
  std::string Message;  ///< The first error's message alone.
  unsigned Errors = 0;
};

/// An in-memory fix of code nvcc accepts and clang rejects.
struct CompatRepair {
  std::string Where; ///< file:line:col.
  std::string What;  ///< "added 'template' before 'cast'" ...
};

/// One replacement in a file's text.
struct TextEdit {
  unsigned Offset = 0, Length = 0;
  std::string Text;
};

/// What the device side compiles: the caller's overlay with the repairs and
/// stubbed host bodies laid over it, and flags the repairs need.
struct DeviceView {
  FileOverlay Files;
  std::vector<std::string> ExtraFlags;
  std::vector<CompatRepair> Repairs;
  std::vector<SkippedHostCode> Skipped;
  /// The repairs made to each file, one list per round (ascending offsets
  /// into the text of the round before): the AST's text of a file is its
  /// given text with these applied. Stubs are not in it; the AST keeps the
  /// host bodies as clang recovered them.
  std::map<std::string, std::vector<std::vector<TextEdit>>> RepairEdits;
  /// The text as given of each file in RepairEdits: what the edits of a
  /// rewrite apply to, whatever the file on disk holds by now.
  std::map<std::string, std::string> Given;
  /// Nothing to change: the file compiles as it is.
  bool empty() const { return Repairs.empty() && Skipped.empty(); }
};

/// Where \p Offset of \p Path's text as parsed (with the repairs) is in the
/// text as given; nullopt when it lies inside repaired text. Offsets of a
/// file without repairs are returned as they are.
std::optional<unsigned> originalOffset(const DeviceView &View,
                                       llvm::StringRef Path, unsigned Offset);

/// The file name of clang's CUDA runtime wrapper, the implicit `-include`
/// a runtime PCH stands for.
constexpr llvm::StringLiteral CudaRuntimeWrapper =
    "__clang_cuda_runtime_wrapper.h";

/// The in-memory stub a runtime PCH is built from and must be loaded with:
/// clang validates a PCH's input files by size and time, so it must be in
/// the overlay of both the PCH build and every parse or compile using it.
std::string pchStubPath(llvm::StringRef PchPath);

/// An AST together with the diagnostics machinery it needs to stay valid.
class ParsedFile {
public:
  ~ParsedFile();
  clang::ASTUnit &unit() { return *AST; }
  clang::ASTContext &context() { return AST->getASTContext(); }
  clang::SourceManager &sourceManager() { return AST->getSourceManager(); }
  /// Absolute path of the main file.
  llvm::StringRef mainFile() const { return MainFile; }
  unsigned numWarnings() const;
  /// The repairs the parse needed and the host code it skipped; the AST is
  /// of the repaired files (a skipped body keeps clang's recovered AST).
  const DeviceView &view() const { return View; }

  /// Whether the parse loaded ParseOptions::RuntimePch.
  bool usedRuntimePch() const { return UsedPch; }
  /// Whether the parse loaded a preamble PCH (ParseOptions::UsePreamble).
  bool usedPreamble() const { return UsedPreamble; }
  /// What a --verbose user wants to know: the preamble PCH built, used or
  /// not used, and why.
  const std::vector<std::string> &notes() const { return Notes; }
  /// Wall time of parseCuda, every attempt and round included.
  double seconds() const { return Seconds; }

private:
  friend llvm::Expected<std::unique_ptr<ParsedFile>>
  parseCuda(const std::vector<std::string> &Command,
            const ParseOptions &Opts);
  ParsedFile() = default;
  bool UsedPch = false;
  bool UsedPreamble = false;
  std::vector<std::string> Notes;
  double Seconds = 0;
  std::shared_ptr<clang::DiagnosticOptions> DiagOpts;
  std::unique_ptr<clang::DiagnosticConsumer> Printer;
  llvm::IntrusiveRefCntPtr<clang::DiagnosticsEngine> Diags;
  std::unique_ptr<clang::ASTUnit> AST;
  std::string MainFile;
  DeviceView View;
};

/// Parses the file named last in \p Command (a clang command line, argv[0]
/// first, as CompileCommands::deviceCommand makes it).
llvm::Expected<std::unique_ptr<ParsedFile>>
parseCuda(const std::vector<std::string> &Command, const ParseOptions &Opts = {});

/// The host code \p After skips that \p Before does not (by function and
/// first error): a rewrite must not add host errors, which the device view
/// would hide from the compile gate.
std::vector<SkippedHostCode>
addedHostErrors(const std::vector<SkippedHostCode> &Before,
                const std::vector<SkippedHostCode> &After);

/// One warning line per skipped function, for tools to print:
/// "FILE: host code skipped: main() at k.cu:40: first error k.cu:52:3: ...".
std::string describeSkipped(llvm::StringRef File, const SkippedHostCode &S);

/// Builds a VFS that shows \p Overlay over the real file system.
llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem>
makeOverlayFileSystem(const FileOverlay &Overlay);

} // namespace astra

#endif
