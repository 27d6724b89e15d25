//===- CudaParser.cpp -----------------------------------------------------===//
#include "astra/Frontend/CudaParser.h"

#include "clang/Basic/DiagnosticOptions.h"
#include "clang/Driver/CreateInvocationFromArgs.h"
#include "clang/Frontend/CompilerInvocation.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "clang/Serialization/PCHContainerOperations.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/VirtualFileSystem.h"

using namespace llvm;
using namespace clang;

namespace astra {

ParsedFile::~ParsedFile() {
  // The AST refers to the diagnostics engine; tear it down first.
  AST.reset();
}

unsigned ParsedFile::numWarnings() const {
  return Diags ? Diags->getNumWarnings() : 0;
}

IntrusiveRefCntPtr<vfs::FileSystem>
makeOverlayFileSystem(const FileOverlay &Overlay) {
  IntrusiveRefCntPtr<vfs::FileSystem> Real = vfs::getRealFileSystem();
  if (Overlay.empty())
    return Real;
  auto Mem = makeIntrusiveRefCnt<vfs::InMemoryFileSystem>();
  for (const auto &[Path, Text] : Overlay)
    Mem->addFile(Path, /*ModificationTime=*/0,
                 MemoryBuffer::getMemBufferCopy(Text, Path));
  auto Over = makeIntrusiveRefCnt<vfs::OverlayFileSystem>(Real);
  Over->pushOverlay(Mem);
  return Over;
}

namespace {
/// Prints errors always and warnings on request, and counts both, so a
/// caller can refuse an AST that had errors even when it printed nothing.
class FilteringPrinter : public TextDiagnosticPrinter {
public:
  FilteringPrinter(raw_ostream &OS, DiagnosticOptions &Opts, bool Warnings)
      : TextDiagnosticPrinter(OS, Opts), Warnings(Warnings) {}
  void HandleDiagnostic(DiagnosticsEngine::Level L,
                        const Diagnostic &Info) override {
    DiagnosticConsumer::HandleDiagnostic(L, Info);
    if (L >= DiagnosticsEngine::Error || Warnings ||
        (L == DiagnosticsEngine::Note && LastPrinted))
      TextDiagnosticPrinter::HandleDiagnostic(L, Info);
    if (L != DiagnosticsEngine::Note)
      LastPrinted = L >= DiagnosticsEngine::Error || Warnings;
  }

private:
  bool Warnings;
  bool LastPrinted = false;
};
} // namespace

Expected<std::unique_ptr<ParsedFile>>
parseCuda(const std::vector<std::string> &Command, const ParseOptions &Opts) {
  if (Command.size() < 2)
    return createStringError(inconvertibleErrorCode(), "empty compile command");
  std::unique_ptr<ParsedFile> PF(new ParsedFile());
  PF->MainFile = Command.back();
  PF->DiagOpts = std::make_shared<DiagnosticOptions>();
  PF->DiagOpts->ShowColors = Opts.DiagOS && Opts.DiagOS->has_colors();
  if (Opts.DiagOS)
    PF->Printer = std::make_unique<FilteringPrinter>(*Opts.DiagOS, *PF->DiagOpts,
                                                     Opts.ShowWarnings);
  else
    PF->Printer = std::make_unique<IgnoringDiagConsumer>();
  PF->Diags = makeIntrusiveRefCnt<DiagnosticsEngine>(
      DiagnosticIDs::create(), *PF->DiagOpts, PF->Printer.get(),
      /*ShouldOwnClient=*/false);

  IntrusiveRefCntPtr<vfs::FileSystem> VFS = makeOverlayFileSystem(Opts.Overlay);
  std::vector<const char *> Argv;
  for (const std::string &A : Command)
    Argv.push_back(A.c_str());
  CreateInvocationOptions CIOpts;
  CIOpts.Diags = PF->Diags;
  CIOpts.VFS = VFS;
  std::shared_ptr<CompilerInvocation> CI = createInvocation(Argv, CIOpts);
  if (!CI)
    return createStringError(inconvertibleErrorCode(),
                             "%s: cannot build a compiler invocation from the "
                             "compile command",
                             PF->MainFile.c_str());
  if (PF->Diags->hasErrorOccurred())
    return createStringError(inconvertibleErrorCode(),
                             "%s: invalid compile flags", PF->MainFile.c_str());

  auto FM = makeIntrusiveRefCnt<FileManager>(FileSystemOptions(), VFS);
  PF->AST = ASTUnit::LoadFromCompilerInvocation(
      CI, std::make_shared<PCHContainerOperations>(), PF->DiagOpts, PF->Diags,
      FM);
  if (!PF->AST || PF->Diags->hasErrorOccurred()) {
    unsigned N = PF->Diags->getNumErrors();
    return createStringError(inconvertibleErrorCode(),
                             "%s: %u error%s while parsing the device side",
                             PF->MainFile.c_str(), N, N == 1 ? "" : "s");
  }
  return PF;
}

} // namespace astra
