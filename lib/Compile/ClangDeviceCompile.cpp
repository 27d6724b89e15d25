//===- ClangDeviceCompile.cpp ---------------------------------------------===//
#include "ClangDeviceCompile.h"
#include "astra/Frontend/Invocation.h"
#include "astra/Support/Hash.h"

#include "clang/Basic/DiagnosticOptions.h"
#include "clang/Basic/FileManager.h"
#include "clang/Basic/SourceManager.h"
#include "clang/CodeGen/CodeGenAction.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/CompilerInvocation.h"
#include "clang/Frontend/FrontendActions.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "clang/Frontend/Utils.h"
#include "clang/Lex/PreprocessorOptions.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"

#include <mutex>

using namespace llvm;
using namespace clang;

namespace astra {

/// clang adds this to every CUDA compile with -include; it pulls in the CUDA
/// runtime headers, which is most of a small file's compile time.
static constexpr const char *RuntimeWrapper = CudaRuntimeWrapper.data();

/// Only NVPTX: the tool never generates code for anything else, and
/// initializing every target costs start-up time in the static binary.
static void initializeNvptx() {
  static std::once_flag Once;
  std::call_once(Once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

namespace {
/// Prints errors always and warnings on request (as parseCuda does), counts
/// both, and keeps the first error as "file:line:col: error: message" so the
/// caller's Error says what went wrong without scraping DiagOS.
class GateDiagConsumer : public DiagnosticConsumer {
public:
  GateDiagConsumer(raw_ostream *OS, DiagnosticOptions &Opts, bool Warnings)
      : Warnings(Warnings) {
    if (OS)
      Printer = std::make_unique<TextDiagnosticPrinter>(*OS, Opts);
  }
  void BeginSourceFile(const LangOptions &LO, const Preprocessor *PP) override {
    if (Printer)
      Printer->BeginSourceFile(LO, PP);
  }
  void EndSourceFile() override {
    if (Printer)
      Printer->EndSourceFile();
  }
  void HandleDiagnostic(DiagnosticsEngine::Level L,
                        const Diagnostic &Info) override {
    DiagnosticConsumer::HandleDiagnostic(L, Info);
    if (L >= DiagnosticsEngine::Error && FirstError.empty())
      FirstError = format(L, Info, FirstErrorFile);
    bool Show = L >= DiagnosticsEngine::Error || Warnings ||
                (L == DiagnosticsEngine::Note && LastShown);
    if (L != DiagnosticsEngine::Note)
      LastShown = L >= DiagnosticsEngine::Error || Warnings;
    if (Show && Printer)
      Printer->HandleDiagnostic(L, Info);
  }
  const std::string &firstError() const { return FirstError; }
  const std::string &firstErrorFile() const { return FirstErrorFile; }

private:
  static std::string format(DiagnosticsEngine::Level L, const Diagnostic &Info,
                            std::string &File) {
    SmallString<256> Msg;
    Info.FormatDiagnostic(Msg);
    std::string Out;
    if (Info.getLocation().isValid() && Info.hasSourceManager()) {
      PresumedLoc P = Info.getSourceManager().getPresumedLoc(Info.getLocation());
      if (P.isValid()) {
        File = P.getFilename();
        Out = (Twine(P.getFilename()) + ":" + Twine(P.getLine()) + ":" +
               Twine(P.getColumn()) + ": ")
                  .str();
      }
    }
    Out += L == DiagnosticsEngine::Fatal ? "fatal error: " : "error: ";
    Out += Msg.str();
    return Out;
  }

  std::unique_ptr<TextDiagnosticPrinter> Printer;
  bool Warnings;
  bool LastShown = false;
  std::string FirstError;
  std::string FirstErrorFile;
};

/// The files the preprocessor opened that are not system headers: what
/// `-MMD` would list. PCH inputs are left out on purpose; the PCH holds only
/// the runtime wrapper (system headers) and an empty stub.
class UserFileCollector : public DependencyCollector {
public:
  void attachToASTReader(ASTReader &) override {}
  bool sawDependency(StringRef Filename, bool FromModule, bool IsSystem,
                     bool IsModuleFile, bool IsMissing) override {
    return !IsSystem && !IsModuleFile && !IsMissing &&
           DependencyCollector::sawDependency(Filename, FromModule, IsSystem,
                                              IsModuleFile, IsMissing);
  }
};
} // namespace

char DeviceCompileError::ID = 0;

static Error compileError(const std::string &Main, const GateDiagConsumer &C,
                          const Twine &What) {
  if (!C.firstError().empty())
    return make_error<DeviceCompileError>(C.firstError(), C.firstErrorFile());
  return make_error<DeviceCompileError>((Main + ": " + What).str(), "");
}

Expected<DeviceCompileOutput>
runDeviceCompile(const DeviceCompileRequest &Req) {
  if (Req.Command.size() < 2)
    return createStringError(inconvertibleErrorCode(), "empty compile command");
  initializeNvptx();
  const std::string &Main = Req.Command.back();

  FileOverlay Overlay = Req.Overlay;
  std::string Stub;
  if (!Req.UsePch.empty())
    Stub = pchStubPath(Req.UsePch);
  else if (!Req.BuildPch.empty())
    Stub = pchStubPath(Req.BuildPch);
  if (!Stub.empty())
    Overlay.emplace(Stub, "");
  IntrusiveRefCntPtr<vfs::FileSystem> VFS = makeOverlayFileSystem(Overlay);

  if (Req.BuildPch.empty() && !VFS->exists(Main))
    return createStringError(inconvertibleErrorCode(),
                             "%s: no such file", Main.c_str());

  DiagnosticOptions DiagOpts;
  DiagOpts.ShowColors = Req.DiagOS && Req.DiagOS->has_colors();
  GateDiagConsumer Client(Req.DiagOS, DiagOpts, Req.ShowWarnings);
  auto Diags = makeIntrusiveRefCnt<DiagnosticsEngine>(
      DiagnosticIDs::create(), DiagOpts, &Client, /*ShouldOwnClient=*/false);

  std::shared_ptr<CompilerInvocation> Inv =
      makeInvocation(Req.Command, Diags, VFS);
  if (!Inv || Diags->hasErrorOccurred())
    return compileError(Main, Client,
                        "cannot build a device compile from the command");

  // The driver's cc1 job assumes a short-lived process; this one compiles
  // many candidates, so free everything.
  Inv->getFrontendOpts().DisableFree = false;
  Inv->getCodeGenOpts().DisableFree = false;
  // No "N warnings generated" on stderr behind the caller's back; the
  // diagnostics themselves go to DiagOS.
  Inv->getDiagnosticOpts().ShowCarets = false;

  PreprocessorOptions &PPOpts = Inv->getPreprocessorOpts();
  if (!Req.BuildPch.empty() || !Req.UsePch.empty()) {
    // The PCH stands for the runtime wrapper only, so it must be the first
    // implicit include: anything before it could change how it parses.
    if (PPOpts.Includes.empty() ||
        sys::path::filename(PPOpts.Includes.front()) != RuntimeWrapper)
      return make_error<DeviceCompileError>(
          Main + ": the device compile does not start with -include " +
              RuntimeWrapper + "; it cannot use the runtime PCH",
          "");
  }
  if (!Req.BuildPch.empty()) {
    PPOpts.Includes.resize(1);
    PPOpts.MacroIncludes.clear();
    FrontendOptions &FE = Inv->getFrontendOpts();
    FE.Inputs.clear();
    FE.Inputs.emplace_back(Stub, InputKind(Language::CUDA).getHeader());
    FE.OutputFile = Req.BuildPch;
    FE.ProgramAction = frontend::GeneratePCH;
    // Nothing in a PCH depends on when it was built; leaving timestamps out
    // keeps equal inputs giving equal bytes.
    FE.IncludeTimestamps = false;
    // Templates the runtime headers use are instantiated once, in the PCH,
    // not again by every compile and parse that loads it.
    Inv->getLangOpts().PCHInstantiateTemplates = true;
  }
  if (!Req.UsePch.empty())
    // ASTReader drops the -include of the wrapper itself: the PCH was built
    // with it (ASTReader's checkPreprocessorOptions).
    PPOpts.ImplicitPCHInclude = Req.UsePch;

  CompilerInstance CI(Inv);
  CI.createVirtualFileSystem(VFS, &Client);
  CI.createDiagnostics(&Client, /*ShouldOwnClient=*/false);
  if (!CI.hasDiagnostics())
    return createStringError(inconvertibleErrorCode(),
                             "%s: cannot set up diagnostics", Main.c_str());
  std::shared_ptr<UserFileCollector> Collector;
  if (Req.CollectDeps) {
    Collector = std::make_shared<UserFileCollector>();
    CI.addDependencyCollector(Collector);
  }

  DeviceCompileOutput Out;
  if (!Req.BuildPch.empty()) {
    GeneratePCHAction Act;
    if (!CI.ExecuteAction(Act) || Client.getNumErrors())
      return compileError(Main, Client, "cannot build the runtime-wrapper PCH");
    return Out;
  }

  SmallString<0> Asm;
  CI.setOutputStream(std::make_unique<raw_svector_ostream>(Asm));
  EmitAssemblyAction Act;
  bool Ok = CI.ExecuteAction(Act);
  if (!Ok || Client.getNumErrors()) {
    unsigned N = Client.getNumErrors();
    return compileError(Main, Client,
                        Twine(N) + " error" + (N == 1 ? "" : "s") +
                            " in the device compile");
  }
  Out.Ptx = std::string(Asm.str());
  if (Collector) {
    // Hashed from the buffers the compile read, not from the disk now, so a
    // header edited during the compile cannot pair new hashes with old PTX.
    // Paths are made absolute without "./", so a later run from any
    // directory looks at the same files (through the same overlay).
    FileManager &FM = CI.getFileManager();
    SourceManager &SM = CI.getSourceManager();
    auto Add = [&](StringRef P) {
      SmallString<256> Abs(P);
      FM.makeAbsolutePath(Abs);
      sys::path::remove_dots(Abs, /*remove_dot_dot=*/false);
      std::string S(Abs);
      if (S == Stub || llvm::any_of(Out.Deps, [&](const CacheDep &D) {
            return D.Path == S;
          }))
        return true;
      OptionalFileEntryRef FE = FM.getOptionalFileRef(P);
      std::optional<MemoryBufferRef> Buf;
      if (FE)
        Buf = SM.getMemoryBufferForFileOrNone(*FE);
      if (Buf)
        Out.Deps.push_back({S, sha256Hex(Buf->getBuffer())});
      return Buf.has_value();
    };
    bool Complete = Add(Main);
    for (const std::string &D : Collector->getDependencies())
      Complete &= Add(D);
    // The PTX is good either way; only the cache cannot trust a partial list.
    if (!Complete) {
      Out.Deps.clear();
      Out.DepsIncomplete = true;
    }
  }
  return Out;
}

} // namespace astra
