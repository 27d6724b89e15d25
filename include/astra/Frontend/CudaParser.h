//===- CudaParser.h - Parse a CUDA file into a Clang AST -------*- C++ -*-===//
//
// One place that turns a device-side compile command into an AST, for the
// original file and for candidates that exist only in memory. Clang's own
// diagnostics (file:line:col) are printed as they occur; any error fails the
// parse so that nothing downstream works on a broken AST.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_FRONTEND_CUDAPARSER_H
#define ASTRA_FRONTEND_CUDAPARSER_H

#include "clang/Frontend/ASTUnit.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <memory>
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
  /// Keep warnings quiet: only errors are printed unless set.
  bool ShowWarnings = false;
  /// A precompiled header of clang's CUDA runtime wrapper built for this
  /// command (lib/Compile's parsePch), loaded in place of the wrapper's
  /// implicit `-include`: the runtime headers then cost milliseconds, not
  /// the second a parse otherwise spends in them. A parse that fails with
  /// it is done again without it, so it only ever changes the speed.
  std::string RuntimePch;
};

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

  /// Whether the parse loaded ParseOptions::RuntimePch.
  bool usedRuntimePch() const { return UsedPch; }

private:
  friend llvm::Expected<std::unique_ptr<ParsedFile>>
  parseOnce(const std::vector<std::string> &Command, const ParseOptions &Opts,
            bool WithPch);
  ParsedFile() = default;
  /// Diagnostics of a parse with the PCH, held until it is known to stand.
  std::string Held;
  std::unique_ptr<llvm::raw_string_ostream> HeldOS;
  bool UsedPch = false;
  std::shared_ptr<clang::DiagnosticOptions> DiagOpts;
  std::unique_ptr<clang::DiagnosticConsumer> Printer;
  llvm::IntrusiveRefCntPtr<clang::DiagnosticsEngine> Diags;
  std::unique_ptr<clang::ASTUnit> AST;
  std::string MainFile;
};

/// Parses the file named last in \p Command (a clang command line, argv[0]
/// first, as CompileCommands::deviceCommand makes it).
llvm::Expected<std::unique_ptr<ParsedFile>>
parseCuda(const std::vector<std::string> &Command, const ParseOptions &Opts = {});

/// Builds a VFS that shows \p Overlay over the real file system.
llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem>
makeOverlayFileSystem(const FileOverlay &Overlay);

} // namespace astra

#endif
