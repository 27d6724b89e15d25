//===- PreamblePch.cpp ----------------------------------------------------===//
#include "astra/Frontend/PreamblePch.h"
#include "astra/Frontend/Invocation.h"
#include "astra/Support/FileIO.h"
#include "astra/Support/Hash.h"

#include "clang/Basic/DiagnosticOptions.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/CompilerInvocation.h"
#include "clang/Frontend/FrontendActions.h"
#include "clang/Frontend/TextDiagnosticBuffer.h"
#include "clang/Lex/HeaderSearchOptions.h"
#include "clang/Lex/PreprocessorOptions.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/xxhash.h"

#include <chrono>

using namespace llvm;
using namespace clang;

namespace astra {

unsigned preambleSize(StringRef Text) {
  size_t I = 0, N = Text.size();
  unsigned End = 0, Depth = 0;
  bool SawInclude = false;
  // The end of the line at \p I, following backslash continuations.
  auto LineEnd = [&](size_t I) {
    while (I < N) {
      size_t NL = Text.find('\n', I);
      if (NL == StringRef::npos)
        return N;
      size_t Last = NL;
      while (Last > I && Text[Last - 1] == '\r')
        --Last;
      if (Last > I && Text[Last - 1] == '\\') {
        I = NL + 1;
        continue;
      }
      return NL + 1;
    }
    return N;
  };
  while (I < N) {
    char C = Text[I];
    if (C == ' ' || C == '\t' || C == '\r' || C == '\n' || C == '\f' ||
        C == '\v') {
      ++I;
      continue;
    }
    if (Text.substr(I).starts_with("//")) {
      I = LineEnd(I);
      continue;
    }
    if (Text.substr(I).starts_with("/*")) {
      size_t Close = Text.find("*/", I + 2);
      if (Close == StringRef::npos)
        break;
      I = Close + 2;
      continue;
    }
    if (C != '#')
      break;
    size_t J = I + 1;
    while (J < N && (Text[J] == ' ' || Text[J] == '\t'))
      ++J;
    StringRef Name = Text.substr(J).take_while(isAlnum);
    size_t Next = LineEnd(I);
    // A comment opened on the directive's line and closed on a later one
    // would hide where the line really ends.
    if (Text.slice(I, Next).contains("/*") &&
        !Text.slice(I, Next).contains("*/"))
      break;
    if (Name == "if" || Name == "ifdef" || Name == "ifndef") {
      ++Depth;
    } else if (Name == "elif" || Name == "elifdef" || Name == "elifndef" ||
               Name == "else") {
      if (!Depth)
        break;
    } else if (Name == "endif") {
      if (!Depth)
        break;
      --Depth;
    } else if (Name == "include") {
      SawInclude = true;
    } else if (Name != "define" && Name != "undef" && Name != "pragma") {
      break;
    }
    // Only whole conditional blocks: the PCH cannot end inside one.
    if (!Depth && SawInclude)
      End = Next;
    I = Next;
  }
  return End;
}

std::string blankPreamble(StringRef Text, unsigned Size) {
  std::string Out = Text.str();
  for (unsigned I = 0; I < Size && I < Out.size(); ++I)
    if (Out[I] != '\n' && Out[I] != '\r')
      Out[I] = ' ';
  return Out;
}

/// A hash of \p Data for telling a changed file from an unchanged one.
static std::string contentHash(StringRef Data) {
  XXH128_hash_t H = xxh3_128bits(arrayRefFromStringRef(Data));
  return utohexstr(H.high64, true, 16) + utohexstr(H.low64, true, 16);
}

/// The manifest format: a header line, then "HASH PATH" per file.
static constexpr llvm::StringLiteral DepsHeader = "astra-preamble-deps 1\n";

/// Whether every file \p Deps lists still has its hash, as \p FS shows it.
static bool depsUnchanged(StringRef Deps, vfs::FileSystem &FS) {
  if (!Deps.consume_front(DepsHeader))
    return false;
  SmallVector<StringRef, 0> Lines;
  Deps.split(Lines, '\n', -1, /*KeepEmpty=*/false);
  for (StringRef L : Lines) {
    auto [Hash, Path] = L.split(' ');
    if (Path.empty())
      return false;
    auto Buf = FS.getBufferForFile(Path, -1, /*RequiresNullTerminator=*/false);
    if (!Buf || contentHash((*Buf)->getBuffer()) != Hash)
      return false;
  }
  return true;
}

namespace {
/// Builds one preamble PCH.
class PreambleBuilder {
public:
  PreambleBuilder(const std::vector<std::string> &Command,
                  IntrusiveRefCntPtr<vfs::FileSystem> VFS, const Preamble &P,
                  StringRef RuntimePch)
      : Command(Command), VFS(std::move(VFS)), P(P), RuntimePch(RuntimePch) {}

  /// Builds P.Pch; the manifest of what it read goes to \p Deps either way
  /// (a failure is remembered only while those files stay the same).
  Error build(std::string &Deps) {
    DiagnosticOptions DiagOpts;
    TextDiagnosticBuffer Client;
    auto Diags = makeIntrusiveRefCnt<DiagnosticsEngine>(
        DiagnosticIDs::create(), DiagOpts, &Client, /*ShouldOwnClient=*/false);
    std::shared_ptr<CompilerInvocation> Inv =
        makeInvocation(Command, Diags, VFS);
    if (!Inv || Diags->hasErrorOccurred())
      return createStringError(inconvertibleErrorCode(),
                               "cannot build an invocation for the preamble");
    FrontendOptions &FE = Inv->getFrontendOpts();
    FE.Inputs.clear();
    FE.Inputs.emplace_back(P.Stub, InputKind(Language::CUDA).getHeader());
    FE.OutputFile = P.Pch;
    FE.ProgramAction = frontend::GeneratePCH;
    FE.IncludeTimestamps = false;
    FE.DisableFree = false;
    // Templates the headers use are instantiated once, in the PCH, not by
    // every parse that loads it.
    Inv->getLangOpts().PCHInstantiateTemplates = true;
    Inv->getHeaderSearchOpts().ValidateASTInputFilesContent = true;
    Inv->getPreprocessorOpts().ImplicitPCHInclude = RuntimePch.str();
    Inv->getDiagnosticOpts().ErrorLimit = 1;
    // No "N errors generated" on stderr: a failure is a --verbose note.
    Inv->getDiagnosticOpts().ShowCarets = false;

    CompilerInstance CI(Inv);
    CI.createVirtualFileSystem(VFS, &Client);
    CI.createDiagnostics(&Client, /*ShouldOwnClient=*/false);
    GeneratePCHAction Act;
    bool Ok = CI.ExecuteAction(Act) && !Client.getNumErrors();
    Deps = manifest(CI);
    if (!Ok) {
      std::string Why = "the preamble does not compile on its own";
      if (Client.err_begin() != Client.err_end()) {
        auto [Loc, Msg] = *Client.err_begin();
        Why = Msg;
        if (CI.hasSourceManager() && Loc.isValid()) {
          PresumedLoc PL = CI.getSourceManager().getPresumedLoc(Loc);
          if (PL.isValid())
            Why = (Twine(PL.getFilename()) + ":" + Twine(PL.getLine()) +
                   ": " + Msg)
                      .str();
        }
      }
      sys::fs::remove(P.Pch);
      return createStringError(inconvertibleErrorCode(), Why);
    }
    return Error::success();
  }

private:
  /// Every file the build read with its hash, and the runtime PCH it is
  /// chained on.
  std::string manifest(CompilerInstance &CI) {
    std::string Out = DepsHeader.str();
    auto Add = [&](StringRef Path, StringRef Data) {
      Out += contentHash(Data) + " " + Path.str() + "\n";
    };
    if (auto Buf = VFS->getBufferForFile(RuntimePch, -1, false))
      Add(RuntimePch, (*Buf)->getBuffer());
    if (!CI.hasSourceManager())
      return Out;
    SourceManager &SM = CI.getSourceManager();
    FileManager &FM = CI.getFileManager();
    for (auto It = SM.fileinfo_begin(); It != SM.fileinfo_end(); ++It) {
      const auto &Entry = *It;
      FileEntryRef FE = Entry.first;
      SmallString<256> Abs(FE.getName());
      FM.makeAbsolutePath(Abs);
      sys::path::remove_dots(Abs, /*remove_dot_dot=*/false);
      if (Abs == P.Stub)
        continue;
      if (std::optional<MemoryBufferRef> B =
              Entry.second->getBufferIfLoaded())
        Add(Abs, B->getBuffer());
    }
    return Out;
  }

  const std::vector<std::string> &Command;
  IntrusiveRefCntPtr<vfs::FileSystem> VFS;
  const Preamble &P;
  StringRef RuntimePch;
};
} // namespace

std::optional<Preamble> findPreamble(const std::vector<std::string> &Command,
                                     const FileOverlay &Overlay,
                                     StringRef RuntimePch, bool Build,
                                     std::vector<std::string> &Notes) {
  if (RuntimePch.empty() || Command.size() < 2)
    return std::nullopt;
  IntrusiveRefCntPtr<vfs::FileSystem> VFS = makeOverlayFileSystem(Overlay);
  SmallString<256> Main(Command.back());
  sys::fs::make_absolute(Main);
  sys::path::remove_dots(Main, /*remove_dot_dot=*/true);
  auto Buf = VFS->getBufferForFile(Main, -1, false);
  if (!Buf)
    Buf = VFS->getBufferForFile(Command.back(), -1, false);
  if (!Buf)
    return std::nullopt;
  StringRef Text = (*Buf)->getBuffer();
  Preamble P;
  P.Size = preambleSize(Text);
  if (!P.Size)
    return std::nullopt;
  P.StubText = Text.take_front(P.Size).str();
  P.MainFile = std::string(Main);
  P.Blanked = blankPreamble(Text, P.Size);

  // The key: what decides how the preamble parses, besides the files it
  // reads (those are in the manifest).
  SmallString<256> Cwd;
  if (sys::fs::current_path(Cwd))
    return std::nullopt;
  std::string KeyText = "astra-preamble 1\n";
  for (size_t I = 0; I + 1 < Command.size(); ++I) {
    StringRef A(Command[I]);
    // Warning flags do not change the AST (--verbose adds one).
    if (A == "-w" || (A.starts_with("-W") && !A.starts_with("-Wp,") &&
                      !A.starts_with("-Wa,") && !A.starts_with("-Wl,")))
      continue;
    KeyText += A.str() + '\0';
  }
  KeyText += "\ncwd=" + Cwd.str().str() + "\ndir=" +
             sys::path::parent_path(Main).str() + "\nruntime=" +
             RuntimePch.str() + "\n" + P.StubText;
  std::string Key = sha256Hex(KeyText);
  SmallString<256> Pch(sys::path::parent_path(RuntimePch));
  sys::path::append(Pch, Key + ".preamble.pch");
  P.Pch = std::string(Pch);
  SmallString<256> Stub(sys::path::parent_path(Main));
  sys::path::append(Stub, "__astra_preamble_" + Key.substr(0, 16) + ".cu");
  P.Stub = std::string(Stub);

  std::string DepsPath = P.Pch + ".deps", Failed = P.Pch + ".failed";
  if (auto F = MemoryBuffer::getFile(Failed))
    if (depsUnchanged((*F)->getBuffer(), *VFS))
      return std::nullopt;
  if (sys::fs::exists(P.Pch))
    if (auto Deps = MemoryBuffer::getFile(DepsPath))
      if (depsUnchanged((*Deps)->getBuffer(), *VFS))
        return P;
  if (!Build)
    return std::nullopt;

  auto Start = std::chrono::steady_clock::now();
  FileOverlay WithStub = Overlay;
  WithStub[P.Stub] = P.StubText;
  WithStub.emplace(pchStubPath(RuntimePch), "");
  PreambleBuilder B(Command, makeOverlayFileSystem(WithStub), P, RuntimePch);
  std::string Deps;
  if (Error E = B.build(Deps)) {
    Notes.push_back("no preamble PCH for " + Main.str().str() + ": " +
                    toString(std::move(E)));
    (void)writeFileAtomically(Failed, Deps);
    return std::nullopt;
  }
  if (Error E = writeFileAtomically(DepsPath, Deps)) {
    Notes.push_back("cannot record the preamble PCH's files: " +
                    toString(std::move(E)));
    sys::fs::remove(P.Pch);
    return std::nullopt;
  }
  sys::fs::remove(Failed);
  double S = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                           Start)
                 .count();
  Notes.push_back("built the preamble PCH " + P.Pch + " (" +
                  std::to_string(P.Size) + " bytes of " + Main.str().str() +
                  ") in " + std::to_string(S).substr(0, 4) + " s");
  return P;
}

void rejectPreamble(const Preamble &P, bool LoadFailed) {
  if (!LoadFailed) {
    // Not used while the file and its headers stay as they are: the same
    // parse would fail the same way.
    if (auto Deps = MemoryBuffer::getFile(P.Pch + ".deps")) {
      std::string Failed = (*Deps)->getBuffer().str();
      Failed += contentHash(P.StubText + P.Blanked.substr(P.Size)) + " " +
                P.MainFile + "\n";
      (void)writeFileAtomically(P.Pch + ".failed", Failed);
    }
  }
  sys::fs::remove(P.Pch);
  sys::fs::remove(P.Pch + ".deps");
}

} // namespace astra
