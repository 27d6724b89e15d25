//===- CudaParser.cpp -----------------------------------------------------===//
#include "astra/Frontend/CudaParser.h"
#include "CompatRepair.h"
#include "astra/Frontend/CudaToolchain.h"
#include "astra/Frontend/Invocation.h"
#include "astra/Frontend/PreamblePch.h"

#include "clang/Basic/DiagnosticOptions.h"
#include "clang/Driver/CreateInvocationFromArgs.h"
#include "clang/Frontend/CompilerInvocation.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "clang/Lex/HeaderSearchOptions.h"
#include "clang/Lex/PreprocessorOptions.h"
#include "clang/Serialization/PCHContainerOperations.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/VirtualFileSystem.h"

#include <chrono>

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
  // Not the process-wide real file system: the driver sets its working
  // directory for `-working-directory` (a compile database's "directory"),
  // which on that one moves the whole process, and with it every relative
  // path and cache key computed after the first parse.
  IntrusiveRefCntPtr<vfs::FileSystem> Real(
      vfs::createPhysicalFileSystem().release());
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

/// Rounds of repairs before the parse gives up on them: each round fixes
/// every repairable error clang reported, and a fix can reveal another (a
/// `template` keyword that lets clang see the call's arguments).
static constexpr unsigned MaxRepairRounds = 8;

std::shared_ptr<CompilerInvocation>
makeInvocation(const std::vector<std::string> &Command,
               IntrusiveRefCntPtr<DiagnosticsEngine> Diags,
               IntrusiveRefCntPtr<vfs::FileSystem> VFS) {
  std::vector<const char *> Argv;
  for (const std::string &A : Command)
    Argv.push_back(A.c_str());
  CreateInvocationOptions CIOpts;
  CIOpts.Diags = std::move(Diags);
  CIOpts.VFS = std::move(VFS);
  return createInvocation(Argv, CIOpts);
}

std::string pchStubPath(StringRef PchPath) {
  return (PchPath + ".stub.cu").str();
}

Expected<std::unique_ptr<ParsedFile>>
parseCuda(const std::vector<std::string> &Command, const ParseOptions &Opts) {
  if (Command.size() < 2)
    return createStringError(inconvertibleErrorCode(), "empty compile command");
  bool Repair = hasNvccCompat(Command);
  bool Colors = Opts.DiagOS && Opts.DiagOS->has_colors();
  auto ParseOnce = [](ParsedFile &PF, DiagnosticRecorder &Recorder,
                      const std::vector<std::string> &Command,
                      FileOverlay Overlay, StringRef Pch,
                      const Preamble *Pre) -> Error {
    PF.Diags = makeIntrusiveRefCnt<DiagnosticsEngine>(
        DiagnosticIDs::create(), *PF.DiagOpts, &Recorder,
        /*ShouldOwnClient=*/false);
    // Every error is seen (the recorder shows the first 20): repairs and the
    // host-error triage need all of them.
    PF.Diags->setErrorLimit(0);

    if (!Pch.empty())
      Overlay.emplace(pchStubPath(Pch), "");
    if (Pre) {
      // The preamble comes from the PCH; the text after it is parsed at the
      // offsets and lines it has in the file.
      Overlay[Pre->MainFile] = Pre->Blanked;
      Overlay[Pre->Stub] = Pre->StubText;
    }
    IntrusiveRefCntPtr<vfs::FileSystem> VFS = makeOverlayFileSystem(Overlay);
    std::shared_ptr<CompilerInvocation> CI =
        makeInvocation(Command, PF.Diags, VFS);
    if (!CI)
      return createStringError(inconvertibleErrorCode(),
                               "%s: cannot build a compiler invocation from the "
                               "compile command",
                               PF.MainFile.c_str());
    if (PF.Diags->hasErrorOccurred())
      return createStringError(inconvertibleErrorCode(),
                               "%s: invalid compile flags", PF.MainFile.c_str());
    CI->getDiagnosticOpts().ErrorLimit = 0;
    if (!Pch.empty()) {
      // The PCH stands for the runtime wrapper, so it must be the first
      // implicit include; the reader then drops that include itself.
      PreprocessorOptions &PPOpts = CI->getPreprocessorOpts();
      if (PPOpts.Includes.empty() ||
          sys::path::filename(PPOpts.Includes.front()) != CudaRuntimeWrapper)
        return createStringError(inconvertibleErrorCode(),
                                 "%s: the command does not start with "
                                 "-include %s",
                                 PF.MainFile.c_str(),
                                 CudaRuntimeWrapper.data());
      PPOpts.ImplicitPCHInclude = Pch.str();
      PF.UsedPch = true;
      if (Pre) {
        PPOpts.ImplicitPCHInclude = Pre->Pch;
        // A header touched but unchanged still matches (PreamblePch.h).
        CI->getHeaderSearchOpts().ValidateASTInputFilesContent = true;
        PF.UsedPreamble = true;
      }
    }

    auto FM = makeIntrusiveRefCnt<FileManager>(FileSystemOptions(), VFS);
    PF.AST = ASTUnit::LoadFromCompilerInvocation(
        CI, std::make_shared<PCHContainerOperations>(), PF.DiagOpts, PF.Diags,
        FM);
    return Error::success();
  };
  // The repair rounds, with the runtime PCH when \p Pch names one; the
  // diagnostics go to \p DiagOS.
  bool PreambleLoadFailed = false;
  auto Parse = [&](StringRef Pch, const Preamble *Pre, raw_ostream *DiagOS,
                   const DeviceView *Start)
      -> Expected<std::unique_ptr<ParsedFile>> {
    DeviceView View;
    if (Start)
      View = *Start;
    else
      View.Files = Opts.Overlay;
    auto Show = [&](const DiagnosticRecorder &R) {
      if (DiagOS)
        *DiagOS << R.text();
  };
  // The errors of the round before: a repair that does not change them
  // (clang suggests a fix that does not fix) ends the repairs.
  std::vector<std::string> Before;
  for (unsigned Round = 0;; ++Round) {
    std::vector<std::string> Cmd = Command;
    Cmd.insert(Cmd.end() - 1, View.ExtraFlags.begin(), View.ExtraFlags.end());
    std::unique_ptr<ParsedFile> PF(new ParsedFile());
    PF->MainFile = Command.back();
    PF->DiagOpts = std::make_shared<DiagnosticOptions>();
    PF->DiagOpts->ShowColors = Colors;
    auto Recorder = std::make_unique<DiagnosticRecorder>(
        Colors, *PF->DiagOpts, Opts.ShowWarnings, Repair);
    DiagnosticRecorder &Rec = *Recorder;
    PF->Printer = std::move(Recorder);
    if (Error E = ParseOnce(*PF, Rec, Cmd, View.Files, Pch, Pre)) {
      Show(Rec);
      return E;
    }
    unsigned N = PF->Diags->getNumErrors();
    if (!PF->AST)
      N = std::max(N, 1u);
    if (N == 0) {
      Show(Rec);
      PF->View = std::move(View);
      if (Pre) // The AST's buffer has the preamble blanked.
        PF->View.Given.try_emplace(Pre->MainFile,
                                   Pre->StubText + Pre->Blanked.substr(Pre->Size));
      return PF;
    }
    // Repairs are made on the text as parsed: not with the preamble
    // blanked. Host stubs lie in bodies after the preamble, at the same
    // offsets in the file's own text.
    if (Pre) {
      std::optional<HostTriage> T;
      if (PF->AST && Opts.TolerateHostErrors)
        T = triageHostErrors(PF->context(), Rec.errors());
      if (T) {
        std::string Text = Pre->StubText + Pre->Blanked.substr(Pre->Size);
        if (T->Texts.count(Pre->MainFile))
          T->Texts[Pre->MainFile] = Text;
        if (Opts.ShowWarnings)
          Show(Rec);
        applyEdits(View.Files, T->Stubs, T->Texts);
        View.Skipped = std::move(T->Skipped);
        PF->View = std::move(View);
        PF->View.Given.try_emplace(Pre->MainFile, std::move(Text));
        return PF;
      }
      Show(Rec);
      // clang's messages for a PCH it cannot load ("malformed or corrupted
      // precompiled file", "file ... has been modified since the
      // precompiled header ... was built", "PCH file built from a
      // different branch"...).
      for (const ErrorRecord &E : Rec.errors())
        PreambleLoadFailed |= StringRef(E.Formatted).contains("precompiled") ||
                              StringRef(E.Formatted).contains("PCH file") ||
                              StringRef(E.Formatted).contains("AST file");
      PreambleLoadFailed |= !PF->AST;
      return createStringError(inconvertibleErrorCode(),
                               "%s: %u error%s with the preamble PCH",
                               PF->MainFile.c_str(), N, N == 1 ? "" : "s");
    }
    // Repair what nvcc would have accepted, then parse again; a round that
    // finds nothing new to repair ends the repairs.
    std::vector<std::string> Now;
    for (const ErrorRecord &E : Rec.errors())
      Now.push_back(E.Formatted);
    if (Repair && Round < MaxRepairRounds && Now != Before) {
      Before = std::move(Now);
      if (absorbRepairs(View, Rec))
        continue;
    }
    if (PF->AST && Opts.TolerateHostErrors)
      if (std::optional<HostTriage> T =
              triageHostErrors(PF->context(), Rec.errors())) {
        if (Opts.ShowWarnings)
          Show(Rec);
        applyEdits(View.Files, T->Stubs, T->Texts);
        View.Skipped = std::move(T->Skipped);
        PF->View = std::move(View);
        return PF;
      }
    Show(Rec);
    return createStringError(inconvertibleErrorCode(),
                             "%s: %u error%s while parsing the device side",
                             PF->MainFile.c_str(), N, N == 1 ? "" : "s");
  }
  };
  auto Start = std::chrono::steady_clock::now();
  std::vector<std::string> Notes;
  auto Done = [&](Expected<std::unique_ptr<ParsedFile>> PF)
      -> Expected<std::unique_ptr<ParsedFile>> {
    if (PF) {
      (*PF)->Notes = std::move(Notes);
      (*PF)->Seconds = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - Start)
                           .count();
    }
    return PF;
  };
  // Attempts whose diagnostics are held until the parse is known to stand:
  // with the preamble PCH, then with the runtime PCH alone.
  auto Try = [&](StringRef Pch, const Preamble *Pre,
                 const DeviceView *Start = nullptr)
      -> std::optional<std::unique_ptr<ParsedFile>> {
    std::string Held;
    raw_string_ostream HeldOS(Held);
    auto PF = Parse(Pch, Pre, Opts.DiagOS ? &HeldOS : nullptr, Start);
    if (!PF) {
      consumeError(PF.takeError());
      return std::nullopt;
    }
    if (Opts.DiagOS)
      *Opts.DiagOS << Held;
    return std::move(*PF);
  };
  // A file whose headers needed repairs uses a preamble PCH built from the
  // repaired text, while the files the repairs were made to are unchanged.
  std::optional<DeviceView> Recorded;
  if (Repair && Opts.UsePreamble && !Opts.RuntimePch.empty())
    Recorded = loadRepairs(Command, Opts.Overlay, Opts.RuntimePch, Notes);
  auto WithFlags = [&](const DeviceView &V) {
    std::vector<std::string> Cmd = Command;
    Cmd.insert(Cmd.end() - 1, V.ExtraFlags.begin(), V.ExtraFlags.end());
    return Cmd;
  };
  std::optional<Preamble> Pre;
  if (Opts.UsePreamble && !Opts.RuntimePch.empty() && Recorded) {
    Pre = findPreamble(WithFlags(*Recorded),
                       repairedOverlay(Opts.Overlay, *Recorded),
                       Opts.RuntimePch, Opts.BuildPreamble, Notes, "repaired");
  } else if (Opts.UsePreamble && !Opts.RuntimePch.empty()) {
    // The first parse of a file whose headers need repairs learns them from
    // the preamble builds, a build a repair, and then parses with the PCH of
    // the repaired text: finding them with full parses instead (each round
    // one) and building that PCH after costs about twice as much.
    bool Learning = Repair && Opts.BuildPreamble;
    DeviceView Learned;
    Learned.Files = Opts.Overlay;
    auto Size = [&] {
      return Learned.Repairs.size() + Learned.ExtraFlags.size();
    };
    Pre = findPreamble(Command, Opts.Overlay, Opts.RuntimePch,
                       Opts.BuildPreamble, Notes, "",
                       Learning ? &Learned : nullptr);
    for (unsigned Round = 1; !Pre && Size() && Round < MaxRepairRounds;
         ++Round) {
      size_t Known = Size();
      Pre = findPreamble(WithFlags(Learned),
                         repairedOverlay(Opts.Overlay, Learned),
                         Opts.RuntimePch, /*Build=*/true, Notes, "repaired",
                         &Learned);
      if (!Pre && Size() == Known)
        break;
    }
    if (Pre && Size()) {
      saveRepairs(Command, Opts.RuntimePch, Learned);
      Notes.push_back("learned " + std::to_string(Learned.Repairs.size()) +
                      " repair" + (Learned.Repairs.size() == 1 ? "" : "s") +
                      " of the headers from the preamble PCH builds");
      Recorded = std::move(Learned);
    }
  }
  if (Pre) {
    if (auto PF = Try(Opts.RuntimePch, &*Pre, Recorded ? &*Recorded : nullptr)) {
      Notes.push_back("parsed with the preamble PCH " + Pre->Pch);
      return Done(std::move(*PF));
    }
    Notes.push_back("the preamble PCH " + Pre->Pch +
                    " was not used: the parse with it has errors");
    if (PreambleLoadFailed) {
      rejectPreamble(*Pre, /*LoadFailed=*/true);
      Notes.push_back("discarded the preamble PCH " + Pre->Pch +
                      ": it does not load");
    }
  }
  if (!Opts.RuntimePch.empty()) {
    // The headers' recorded repairs still fit (loadRepairs checked): the
    // full parse starts from them.
    if (auto PF = Try(Opts.RuntimePch, nullptr,
                      Recorded ? &*Recorded : nullptr)) {
      // A PCH that did not load, or code that parses without the preamble
      // PCH and not with it: the PCH is at fault (PreamblePch.h).
      // The same for one built from recorded repairs that no longer do.
      if (Pre && !PreambleLoadFailed && ((*PF)->view().empty() || Recorded)) {
        rejectPreamble(*Pre, /*LoadFailed=*/false);
        Notes.push_back("set the preamble PCH " + Pre->Pch +
                        " aside: the file parses without it, not with it");
      }
      const DeviceView &V = (*PF)->view();
      if (Repair && Opts.UsePreamble && Opts.BuildPreamble &&
          (!V.RepairEdits.empty() || !V.ExtraFlags.empty())) {
        saveRepairs(Command, Opts.RuntimePch, V);
        std::vector<std::string> BuildNotes;
        if (findPreamble(WithFlags(V), repairedOverlay(Opts.Overlay, V),
                         Opts.RuntimePch, /*Build=*/true, BuildNotes,
                         "repaired"))
          Notes.push_back("recorded the repairs for a preamble PCH of the "
                          "repaired text");
        Notes.insert(Notes.end(), BuildNotes.begin(), BuildNotes.end());
      }
      return Done(std::move(*PF));
    }
    // A PCH that does not fit, or an error in the code: the parse without
    // it says which, with the only diagnostics shown.
  }
  return Done(Parse("", nullptr, Opts.DiagOS, nullptr));
}

std::optional<unsigned> originalOffset(const DeviceView &View, StringRef Path,
                                       unsigned Offset) {
  auto It = View.RepairEdits.find(Path.str());
  if (It == View.RepairEdits.end())
    return Offset;
  // Undo the rounds from the last: each maps its result back to its input.
  for (auto R = It->second.rbegin(); R != It->second.rend(); ++R) {
    long Delta = 0;
    unsigned Back = Offset;
    for (const TextEdit &E : *R) {
      unsigned Start = E.Offset + Delta, End = Start + E.Text.size();
      if (Offset < Start)
        break;
      if (Offset > Start && Offset < End)
        return std::nullopt;
      if (Offset == Start) {
        Back = E.Offset;
        Delta = 0;
        break;
      }
      Delta += long(E.Text.size()) - long(E.Length);
      Back = Offset - Delta;
    }
    Offset = Back;
  }
  return Offset;
}

std::vector<SkippedHostCode>
addedHostErrors(const std::vector<SkippedHostCode> &Before,
                const std::vector<SkippedHostCode> &After) {
  std::vector<SkippedHostCode> Added;
  for (const SkippedHostCode &A : After) {
    bool Known = llvm::any_of(Before, [&](const SkippedHostCode &B) {
      return B.Function == A.Function && B.Message == A.Message &&
             A.Errors <= B.Errors;
    });
    if (!Known)
      Added.push_back(A);
  }
  return Added;
}

std::string describeSkipped(StringRef File, const SkippedHostCode &S) {
  std::string Text = (File + ": host code clang rejects is left out of the "
                             "device side: " +
                      S.Function + "() at " + S.Where + ", first error " +
                      S.FirstError)
                         .str();
  if (S.Errors > 1)
    Text += " (" + std::to_string(S.Errors) + " errors)";
  return Text;
}

} // namespace astra
