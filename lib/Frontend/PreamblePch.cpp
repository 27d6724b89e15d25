//===- PreamblePch.cpp ----------------------------------------------------===//
#include "astra/Frontend/PreamblePch.h"
#include "CompatRepair.h"
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
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/FormatVariadic.h"
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

/// The key of what decides how \p Command parses besides the files it
/// reads (those are in a manifest): its flags, the working directory, the
/// file's folder, the runtime PCH and \p Text.
static std::optional<std::string>
commandKey(StringRef Kind, const std::vector<std::string> &Command,
           StringRef Main, StringRef RuntimePch, StringRef Text) {
  SmallString<256> Cwd;
  if (sys::fs::current_path(Cwd))
    return std::nullopt;
  std::string KeyText = Kind.str() + "\n";
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
             RuntimePch.str() + "\n" + Text.str();
  return sha256Hex(KeyText);
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
  /// (a failure is remembered only while those files stay the same). With
  /// \p Learn, the errors of a failed build that nvcc-compat repairs are
  /// added to it (CompatRepair.h's absorbRepairs).
  Error build(std::string &Deps, DeviceView *Learn) {
    DiagnosticOptions DiagOpts;
    TextDiagnosticBuffer Buffer;
    DiagnosticRecorder Recorder(/*Colors=*/false, DiagOpts,
                                /*Warnings=*/false, /*Repair=*/true);
    DiagnosticConsumer &Client =
        Learn ? static_cast<DiagnosticConsumer &>(Recorder) : Buffer;
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
    // The first error ends the build (clang skips the includes after it):
    // a learning build repairs one error a round.
    Inv->getDiagnosticOpts().ErrorLimit = 1;
    // No "N errors generated" on stderr: a failure is a --verbose note.
    Inv->getDiagnosticOpts().ShowCarets = false;

    CompilerInstance CI(Inv);
    CI.createVirtualFileSystem(VFS, &Client);
    CI.createDiagnostics(&Client, /*ShouldOwnClient=*/false);
    GeneratePCHAction Act;
    bool Ok = CI.ExecuteAction(Act) && !Client.getNumErrors();
    Deps = manifest(CI);
    if (Ok)
      return Error::success();
    sys::fs::remove(P.Pch);
    std::optional<std::pair<SourceLocation, std::string>> First;
    if (Learn) {
      if (!Recorder.errors().empty())
        First.emplace(Recorder.errors().front().Loc,
                      Recorder.errors().front().Message);
      bool InStub = any_of(Recorder.edits(), [&](const SourceEdit &E) {
        return E.Path == P.Stub;
      });
      if (!InStub)
        (void)absorbRepairs(*Learn, Recorder);
    } else if (Buffer.err_begin() != Buffer.err_end()) {
      First.emplace(*Buffer.err_begin());
    }
    std::string Why = "the preamble does not compile on its own";
    if (First) {
      Why = First->second;
      if (CI.hasSourceManager() && First->first.isValid()) {
        PresumedLoc PL = CI.getSourceManager().getPresumedLoc(First->first);
        if (PL.isValid())
          Why = (Twine(PL.getFilename()) + ":" + Twine(PL.getLine()) + ": " +
                 First->second)
                    .str();
      }
    }
    return createStringError(inconvertibleErrorCode(), Why);
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
                                     std::vector<std::string> &Notes,
                                     StringRef Variant, DeviceView *Learn) {
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

  std::optional<std::string> K = commandKey(
      Variant.empty() ? "astra-preamble 1" : ("astra-preamble 1 " + Variant).str(),
      Command, Main, RuntimePch, P.StubText);
  if (!K)
    return std::nullopt;
  std::string Key = *K;
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
  if (Error E = B.build(Deps, Learn)) {
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

/// \p Text with \p Rounds of edits applied, each round's ascending offsets
/// into the text of the round before.
static std::string applyRounds(std::string Text,
                               const std::vector<std::vector<TextEdit>> &Rounds) {
  for (const std::vector<TextEdit> &Round : Rounds)
    for (auto E = Round.rbegin(); E != Round.rend(); ++E)
      if (E->Offset + E->Length <= Text.size())
        Text.replace(E->Offset, E->Length, E->Text);
  return Text;
}

FileOverlay repairedOverlay(const FileOverlay &Overlay, const DeviceView &View) {
  FileOverlay Files = Overlay;
  for (const auto &[Path, Rounds] : View.RepairEdits) {
    auto Given = View.Given.find(Path);
    if (Given != View.Given.end())
      Files[Path] = applyRounds(Given->second, Rounds);
  }
  return Files;
}

/// Where saveRepairs keeps its record for \p Command; none without a
/// working directory.
static std::optional<std::string>
repairsPath(const std::vector<std::string> &Command, StringRef RuntimePch) {
  if (RuntimePch.empty() || Command.size() < 2)
    return std::nullopt;
  SmallString<256> Main(Command.back());
  sys::fs::make_absolute(Main);
  sys::path::remove_dots(Main, /*remove_dot_dot=*/true);
  std::optional<std::string> Key =
      commandKey("astra-repairs 1", Command, Main, RuntimePch, Main);
  if (!Key)
    return std::nullopt;
  SmallString<256> P(sys::path::parent_path(RuntimePch));
  sys::path::append(P, *Key + ".repairs");
  return std::string(P);
}

/// The text of \p Path as a parse sees it.
static std::optional<std::string> currentText(const FileOverlay &Overlay,
                                              StringRef Path) {
  auto It = Overlay.find(Path.str());
  if (It != Overlay.end())
    return It->second;
  auto Buf = MemoryBuffer::getFile(Path, /*IsText=*/false,
                                   /*RequiresNullTerminator=*/false);
  if (!Buf)
    return std::nullopt;
  return (*Buf)->getBuffer().str();
}

void saveRepairs(const std::vector<std::string> &Command,
                 StringRef RuntimePch, const DeviceView &View) {
  std::optional<std::string> Path = repairsPath(Command, RuntimePch);
  if (!Path)
    return;
  json::Array Flags, Repairs, Files;
  for (const std::string &F : View.ExtraFlags)
    Flags.push_back(F);
  for (const CompatRepair &R : View.Repairs)
    Repairs.push_back(json::Object{{"where", R.Where}, {"what", R.What}});
  for (const auto &[File, Rounds] : View.RepairEdits) {
    auto Given = View.Given.find(File);
    if (Given == View.Given.end())
      return;
    json::Array Rs;
    for (const std::vector<TextEdit> &Round : Rounds) {
      json::Array Es;
      for (const TextEdit &E : Round)
        Es.push_back(json::Object{
            {"offset", E.Offset}, {"length", E.Length}, {"text", E.Text}});
      Rs.push_back(std::move(Es));
    }
    Files.push_back(json::Object{{"path", File},
                                 {"given_hash", contentHash(Given->second)},
                                 {"rounds", std::move(Rs)}});
  }
  json::Object Record{{"format", "astra-repairs 1"},
                      {"extra_flags", std::move(Flags)},
                      {"repairs", std::move(Repairs)},
                      {"files", std::move(Files)}};
  (void)writeFileAtomically(*Path,
                            formatv("{0:2}", json::Value(std::move(Record))).str());
}

std::optional<DeviceView> loadRepairs(const std::vector<std::string> &Command,
                                      const FileOverlay &Overlay,
                                      StringRef RuntimePch,
                                      std::vector<std::string> &Notes) {
  std::optional<std::string> Path = repairsPath(Command, RuntimePch);
  if (!Path)
    return std::nullopt;
  auto Buf = MemoryBuffer::getFile(*Path);
  if (!Buf)
    return std::nullopt;
  Expected<json::Value> V = json::parse((*Buf)->getBuffer());
  if (!V) {
    consumeError(V.takeError());
    return std::nullopt;
  }
  const json::Object *O = V->getAsObject();
  if (!O || O->getString("format") != "astra-repairs 1") {
    Notes.push_back("ignored the repairs record " + *Path + ": not one");
    return std::nullopt;
  }
  DeviceView View;
  View.Files = Overlay;
  if (const json::Array *Flags = O->getArray("extra_flags"))
    for (const json::Value &F : *Flags)
      if (auto S = F.getAsString())
        View.ExtraFlags.push_back(S->str());
  if (const json::Array *Rs = O->getArray("repairs"))
    for (const json::Value &R : *Rs)
      if (const json::Object *RO = R.getAsObject())
        View.Repairs.push_back({RO->getString("where").value_or("").str(),
                                RO->getString("what").value_or("").str()});
  const json::Array *Files = O->getArray("files");
  if (!Files)
    return std::nullopt;
  for (const json::Value &F : *Files) {
    const json::Object *FO = F.getAsObject();
    if (!FO)
      return std::nullopt;
    std::optional<StringRef> File = FO->getString("path");
    std::optional<StringRef> Hash = FO->getString("given_hash");
    const json::Array *Rounds = FO->getArray("rounds");
    if (!File || !Hash || !Rounds)
      return std::nullopt;
    std::optional<std::string> Text = currentText(Overlay, *File);
    if (!Text || contentHash(*Text) != *Hash) {
      Notes.push_back("the repairs recorded in " + *Path + " do not fit: " +
                      File->str() + " changed");
      return std::nullopt;
    }
    std::vector<std::vector<TextEdit>> Rs;
    for (const json::Value &R : *Rounds) {
      const json::Array *Es = R.getAsArray();
      if (!Es)
        return std::nullopt;
      std::vector<TextEdit> Round;
      for (const json::Value &E : *Es) {
        const json::Object *EO = E.getAsObject();
        std::optional<int64_t> Off = EO ? EO->getInteger("offset") : std::nullopt;
        std::optional<int64_t> Len = EO ? EO->getInteger("length") : std::nullopt;
        std::optional<StringRef> T = EO ? EO->getString("text") : std::nullopt;
        if (!Off || !Len || !T || *Off < 0 || *Len < 0)
          return std::nullopt;
        Round.push_back({unsigned(*Off), unsigned(*Len), T->str()});
      }
      Rs.push_back(std::move(Round));
    }
    View.Files[File->str()] = applyRounds(*Text, Rs);
    View.Given[File->str()] = std::move(*Text);
    View.RepairEdits[File->str()] = std::move(Rs);
  }
  return View;
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
