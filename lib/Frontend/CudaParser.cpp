//===- CudaParser.cpp -----------------------------------------------------===//
#include "astra/Frontend/CudaParser.h"

#include "clang/Basic/DiagnosticOptions.h"
#include "clang/Driver/CreateInvocationFromArgs.h"
#include "clang/Frontend/CompilerInvocation.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "clang/Lex/PreprocessorOptions.h"
#include "clang/Serialization/PCHContainerOperations.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
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

std::string pchStubPath(StringRef PchPath) {
  return (PchPath + ".stub.cu").str();
}

Expected<std::unique_ptr<ParsedFile>>
parseOnce(const std::vector<std::string> &Command, const ParseOptions &Opts,
          bool WithPch) {
  std::unique_ptr<ParsedFile> PF(new ParsedFile());
  PF->MainFile = Command.back();
  PF->DiagOpts = std::make_shared<DiagnosticOptions>();
  PF->DiagOpts->ShowColors = Opts.DiagOS && Opts.DiagOS->has_colors();
  raw_ostream *DiagOS = Opts.DiagOS;
  if (WithPch && DiagOS) {
    PF->HeldOS = std::make_unique<raw_string_ostream>(PF->Held);
    PF->HeldOS->enable_colors(DiagOS->has_colors());
    DiagOS = PF->HeldOS.get();
  }
  if (DiagOS)
    PF->Printer = std::make_unique<FilteringPrinter>(*DiagOS, *PF->DiagOpts,
                                                     Opts.ShowWarnings);
  else
    PF->Printer = std::make_unique<IgnoringDiagConsumer>();
  PF->Diags = makeIntrusiveRefCnt<DiagnosticsEngine>(
      DiagnosticIDs::create(), *PF->DiagOpts, PF->Printer.get(),
      /*ShouldOwnClient=*/false);

  FileOverlay Overlay = Opts.Overlay;
  if (WithPch)
    Overlay.emplace(pchStubPath(Opts.RuntimePch), "");
  IntrusiveRefCntPtr<vfs::FileSystem> VFS = makeOverlayFileSystem(Overlay);
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
  if (WithPch) {
    // The PCH stands for the runtime wrapper, so it must be the first
    // implicit include; the reader then drops that include itself.
    PreprocessorOptions &PPOpts = CI->getPreprocessorOpts();
    if (PPOpts.Includes.empty() ||
        sys::path::filename(PPOpts.Includes.front()) != CudaRuntimeWrapper)
      return createStringError(inconvertibleErrorCode(),
                               "%s: the command does not start with -include "
                               "%s",
                               PF->MainFile.c_str(),
                               CudaRuntimeWrapper.data());
    PPOpts.ImplicitPCHInclude = Opts.RuntimePch;
    PF->UsedPch = true;
  }

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
  if (PF->HeldOS && Opts.DiagOS)
    *Opts.DiagOS << PF->Held;
  return PF;
}

Expected<std::unique_ptr<ParsedFile>>
parseCuda(const std::vector<std::string> &Command, const ParseOptions &Opts) {
  if (Command.size() < 2)
    return createStringError(inconvertibleErrorCode(), "empty compile command");
  if (!Opts.RuntimePch.empty()) {
    auto PF = parseOnce(Command, Opts, /*WithPch=*/true);
    if (PF)
      return PF;
    // A PCH that does not fit, or an error in the code: the parse without
    // it says which, with the only diagnostics shown.
    consumeError(PF.takeError());
  }
  return parseOnce(Command, Opts, /*WithPch=*/false);
}

} // namespace astra
