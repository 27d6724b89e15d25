//===- RewriteDriver.cpp --------------------------------------------------===//
#include "astra/Rewrite/RewriteDriver.h"
#include "astra/Spec/ShapeSplit.h"
#include "astra/Spec/LaunchTuning.h"
#include "astra/Spec/Spec.h"
#include "astra/Support/Diff.h"
#include "astra/Support/FileIO.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace clang;
using namespace llvm;

namespace astra {

Error applyToFiles(const std::map<std::string, tooling::Replacements> &Repls,
                   std::map<std::string, std::string> &Files) {
  for (const auto &[Path, Set] : Repls) {
    if (Set.empty())
      continue;
    auto It = Files.find(Path);
    if (It == Files.end()) {
      auto Text = readFile(Path);
      if (!Text)
        return Text.takeError();
      It = Files.emplace(Path, std::move(*Text)).first;
    }
    auto New = tooling::applyAllReplacements(It->second, Set);
    if (!New)
      return New.takeError();
    It->second = std::move(*New);
  }
  return Error::success();
}

std::map<std::string, tooling::Replacements>
diffAsReplacements(const RewriteResult &R) {
  std::map<std::string, tooling::Replacements> Out;
  for (const auto &[Path, New] : R.Rewritten) {
    const std::string &Old = R.Original.at(Path);
    std::vector<StringRef> OldLines = splitLinesKeepEnds(Old);
    std::vector<StringRef> NewLines = splitLinesKeepEnds(New);
    std::vector<size_t> OldOffsets(OldLines.size() + 1, 0);
    for (size_t I = 0; I < OldLines.size(); ++I)
      OldOffsets[I + 1] = OldOffsets[I] + OldLines[I].size();
    tooling::Replacements &Set = Out[Path];
    for (const DiffHunk &H : diffLines(Old, New)) {
      std::string Text;
      for (size_t I = 0; I < H.NewCount; ++I)
        Text += NewLines[H.NewBegin + I].str();
      size_t Begin = OldOffsets[H.OldBegin];
      size_t End = OldOffsets[H.OldBegin + H.OldCount];
      cantFail(Set.add(tooling::Replacement(Path, Begin, End - Begin, Text)));
    }
  }
  return Out;
}

static std::string absolute(StringRef P) {
  SmallString<256> S(P);
  sys::fs::make_absolute(S);
  sys::path::remove_dots(S, true);
  return std::string(S);
}

/// Adds insertion \p R to \p Set when \p Set holds an insertion at the same
/// offset, as one insertion of the existing text followed by R's. False
/// when R is not such an insertion.
static bool mergeInsertion(tooling::Replacements &Set,
                           const tooling::Replacement &R) {
  if (R.getLength() != 0)
    return false;
  auto It = find_if(Set, [&](const tooling::Replacement &O) {
    return O.getOffset() == R.getOffset() && O.getLength() == 0;
  });
  if (It == Set.end())
    return false;
  tooling::Replacements Merged;
  for (const tooling::Replacement &O : Set) {
    tooling::Replacement N =
        &O == &*It ? tooling::Replacement(O.getFilePath(), O.getOffset(), 0,
                                          (O.getReplacementText() +
                                           R.getReplacementText())
                                              .str())
                   : O;
    if (Error E = Merged.add(N)) {
      consumeError(std::move(E));
      return false;
    }
  }
  Set = std::move(Merged);
  return true;
}

/// \p R, made on the parsed text of its file, on the text as given; nullopt
/// when it starts or ends inside a repair.
static std::optional<tooling::Replacement>
toGivenText(const tooling::Replacement &R, const DeviceView &View) {
  if (View.RepairEdits.empty())
    return R;
  std::string Path = absolute(R.getFilePath());
  std::optional<unsigned> B = originalOffset(View, Path, R.getOffset());
  std::optional<unsigned> E =
      originalOffset(View, Path, R.getOffset() + R.getLength());
  if (!B || !E || *E < *B)
    return std::nullopt;
  return tooling::Replacement(R.getFilePath(), *B, *E - *B,
                              R.getReplacementText());
}

/// The text \p PF parsed for \p Path (absolute): what the offsets of a
/// pass's replacements refer to, whatever the file on disk holds by now.
static Expected<std::string> parsedText(ParsedFile &PF, StringRef Path) {
  // A repaired file's buffer holds the repairs; replacements are on the
  // text as given (toGivenText).
  auto Given = PF.view().Given.find(Path.str());
  if (Given != PF.view().Given.end())
    return Given->second;
  SourceManager &SM = PF.sourceManager();
  if (auto FE = SM.getFileManager().getOptionalFileRef(Path)) {
    FileID FID = SM.translateFile(*FE);
    if (FID.isValid())
      if (std::optional<StringRef> B = SM.getBufferDataOrNone(FID))
        return B->str();
  }
  return readFile(Path);
}

/// Runs \p P over the selected kernels of one parse; fills explanations and
/// conflicts and returns the merged replacements.
static std::map<std::string, tooling::Replacements>
runPassOnce(Pass &P, ParsedFile &PF, const std::vector<KernelInfo> &Kernels,
            const RewriteRequest &Req, bool &KernelFound,
            std::vector<Explanation> &Explains,
            std::vector<std::string> &Conflicts, const PassOptions &Opts,
            RewriteResult *Launches = nullptr) {
  std::map<std::string, tooling::Replacements> PassRepls;
  for (const KernelInfo &K : Kernels) {
    if (!Req.Kernel.empty() && K.QualifiedName != Req.Kernel &&
        K.Name != Req.Kernel)
      continue;
    KernelFound = true;
    PassContext PC(PF.context(), K, Kernels, Opts, P.name());
    if (!K.Macro.empty()) {
      PC.refused(K.Decl->getLocation(),
                 "kernel '" + K.QualifiedName + "' comes from macro '" +
                     K.Macro + "'; its text cannot be rewritten");
    } else {
      P.run(PC);
    }
    Explains.insert(Explains.end(), PC.explanations().begin(),
                    PC.explanations().end());
    Conflicts.insert(Conflicts.end(), PC.conflicts().begin(),
                     PC.conflicts().end());
    // A kernel whose edits reach a header the user excluded keeps none.
    if (Req.MayEditHeader) {
      std::string Main = absolute(Req.Command.back());
      std::string Excluded;
      for (const auto &[Path, Set] : PC.replacements())
        if (!Set.empty() && absolute(Path) != Main &&
            !Req.MayEditHeader(absolute(Path)))
          Excluded = Path;
      if (!Excluded.empty()) {
        std::string Msg = P.name().str() + ": kernel '" + K.QualifiedName +
                          "' left unchanged: the pass would also edit " +
                          Excluded + ", which --header-filter excludes";
        Explains.push_back({P.name().str(), makePos(PF.sourceManager(),
                                                    K.Decl->getLocation()),
                            false, Msg});
        Conflicts.push_back(Msg);
        continue;
      }
    }
    if (Launches && PC.splitAt())
      Launches->Splits[K.QualifiedName] = PC.splitAt();
    if (Launches && (PC.gridDivisor() || PC.blockThreads() ||
                     PC.blockDivisor(0) || PC.blockDivisor(1) ||
                     PC.blockRows() || PC.delinearized() ||
                     !PC.warpRows().empty())) {
      RewriteResult::LaunchEdit &L = Launches->LaunchEdits[K.QualifiedName];
      if (PC.blockThreads())
        L.BlockThreads = PC.blockThreads();
      if (PC.gridDivisor())
        L.GridDivisor = (L.GridDivisor ? L.GridDivisor : 1) * PC.gridDivisor();
      for (unsigned D = 0; D < 2; ++D)
        if (PC.blockDivisor(D))
          L.BlockDivisor[D] =
              (L.BlockDivisor[D] ? L.BlockDivisor[D] : 1) * PC.blockDivisor(D);
      if (PC.blockRows()) {
        L.RowDivisor = PC.rowDivisor();
        L.BlockRows = PC.blockRows();
      }
      if (PC.delinearized())
        L.Grid3 = PC.delinearized();
      if (!PC.warpRows().empty())
        L.WarpRows = PC.warpRows();
    }
    for (const auto &[Path, Set] : PC.replacements())
      for (const tooling::Replacement &Parsed : Set) {
        // The AST is of the text with nvcc-compat repairs (CudaParser.h);
        // edits go to the text as given, where the repairs are not.
        std::optional<tooling::Replacement> Given =
            toGivenText(Parsed, PF.view());
        if (!Given) {
          Conflicts.push_back(Path + ": " + P.name().str() +
                              ": an edit for kernel '" + K.QualifiedName +
                              "' overlaps code repaired in memory for clang; "
                              "left unchanged at offset " +
                              std::to_string(Parsed.getOffset()));
          continue;
        }
        const tooling::Replacement &R = *Given;
        // Two kernels calling one helper (warp-reduce's block_reduce in a
        // shared header) ask for the same edit of it: made once.
        if (is_contained(PassRepls[Path], R))
          continue;
        if (Error E = PassRepls[Path].add(R)) {
          consumeError(std::move(E));
          // Two kernels inserting at one offset (each kernel's copy of a
          // helper goes right after the original): both texts, in kernel
          // order.
          if (mergeInsertion(PassRepls[Path], R))
            continue;
          Conflicts.push_back(
              Path + ": " + P.name().str() + ": edits for kernel '" +
              K.QualifiedName +
              "' overlap edits for another kernel; left unchanged at offset " +
              std::to_string(R.getOffset()));
        }
      }
  }
  return PassRepls;
}

/// The request's pass parameters, checked against what the passes declare.
static Error checkParams(const RewriteRequest &Req) {
  if (Error E = checkPassParams(Req.Options.Params))
    return createStringError(inconvertibleErrorCode(),
                             "pass parameter " + toString(std::move(E)));
  return Error::success();
}

Expected<std::vector<PassProbe>> probePasses(const RewriteRequest &Req,
                                             raw_ostream *DiagOS) {
  if (Error E = checkParams(Req))
    return E;
  ParseOptions PO;
  PO.Overlay = Req.Overlay;
  PO.DiagOS = DiagOS;
  PO.RuntimePch = Req.RuntimePch;
  PO.UsePreamble = PO.BuildPreamble = Req.Preamble;
  auto PF = parseCuda(Req.Command, PO);
  if (!PF)
    return PF.takeError();
  std::vector<KernelInfo> Kernels = collectKernels((*PF)->context());
  std::vector<PassProbe> Out;
  for (const std::string &Name : Req.Passes) {
    std::unique_ptr<Pass> P = createPass(Name);
    if (!P)
      return createStringError(inconvertibleErrorCode(), "unknown pass '%s'",
                               Name.c_str());
    PassProbe Probe;
    Probe.Pass = Name;
    bool Found = Req.Kernel.empty();
    auto Repls = runPassOnce(*P, **PF, Kernels, Req, Found,
                             Probe.Explanations, Probe.Conflicts, Req.Options);
    if (!Found)
      return createStringError(inconvertibleErrorCode(),
                               "%s: no kernel named '%s'",
                               Req.Command.back().c_str(), Req.Kernel.c_str());
    for (auto &[Path, Set] : Repls)
      Probe.WouldChange |= !Set.empty();
    Out.push_back(std::move(Probe));
  }
  return Out;
}

Expected<RewriteResult> runRewrite(const RewriteRequest &Req,
                                   raw_ostream *DiagOS) {
  if (Error E = checkParams(Req))
    return E;
  std::vector<std::unique_ptr<Pass>> Pipeline;
  for (const std::string &Name : Req.Passes) {
    std::unique_ptr<Pass> P = createPass(Name);
    if (!P) {
      std::string Known;
      for (const PassInfo &PI : allPasses())
        Known += (Known.empty() ? "" : ", ") + PI.Name;
      return createStringError(inconvertibleErrorCode(),
                               "unknown pass '%s' (passes: %s)", Name.c_str(),
                               Known.c_str());
    }
    Pipeline.push_back(std::move(P));
  }
  if (Req.Command.empty())
    return createStringError(inconvertibleErrorCode(), "empty compile command");
  std::string MainFile = absolute(Req.Command.back());

  RewriteResult Result;
  // Every parse of the run: the first may build the preamble PCH, later
  // ones use it while the #include block and its headers are unchanged.
  auto ParseCurrent = [&](const FileOverlay &Current, StringRef For,
                          bool First) {
    ParseOptions PO;
    PO.Overlay = Current;
    PO.DiagOS = DiagOS;
    PO.RuntimePch = Req.RuntimePch;
    PO.UsePreamble = Req.Preamble;
    PO.BuildPreamble = Req.Preamble && First;
    auto PF = parseCuda(Req.Command, PO);
    if (PF) {
      const ParsedFile &P = **PF;
      for (const std::string &N : P.notes())
        Result.ParseNotes.push_back(N);
      std::string Line = "parse of the " + For.str() + ": " +
                         std::to_string(P.seconds()).substr(0, 4) + " s";
      if (P.usedPreamble())
        Line += " (preamble PCH)";
      else if (P.usedRuntimePch())
        Line += " (runtime PCH)";
      Result.ParseNotes.push_back(Line);
    }
    return PF;
  };
  // Current text of every file any pass touched (starting from the overlay).
  FileOverlay Current = Req.Overlay;
  for (auto &[Path, Text] : Req.Overlay)
    Result.Original[absolute(Path)] = Text;

  // Later passes see the launch that earlier ones wrote: launch-bounds after
  // thread-coarsen or block-size bounds the block the code now launches.
  PassOptions Opts = Req.Options;
  std::optional<KernelSpec> CurSpec;
  std::optional<SpecFile> CurSpecs;
  if (Opts.Spec) {
    CurSpec = *Opts.Spec;
    Opts.Spec = &*CurSpec;
  }
  if (Opts.Specs) {
    CurSpecs = *Opts.Specs;
    Opts.Specs = &*CurSpecs;
  }

  bool KernelFound = Req.Kernel.empty();
  // The host code the input skips (CudaParser.h): the output of a pass may
  // not skip more, since the device view would hide what it broke.
  std::vector<SkippedHostCode> Skipped;
  auto BrokeHostCode = [&](const ParsedFile &PF,
                           StringRef By) -> std::optional<std::string> {
    std::vector<SkippedHostCode> Added =
        addedHostErrors(Skipped, PF.view().Skipped);
    if (Added.empty())
      return std::nullopt;
    return MainFile + ": the code produced by pass '" + By.str() +
           "' breaks host code (a bug in the pass; please report it): " +
           Added.front().Function + "() at " + Added.front().Where + ": " +
           Added.front().FirstError;
  };
  // The parse of the current text; a pass that changed nothing leaves it
  // for the next pass (a parse is most of the cost of a pass).
  std::unique_ptr<ParsedFile> Parsed;
  std::vector<KernelInfo> Kernels; ///< Of Parsed; they point into its AST.
  std::string ChangedBy;
  for (size_t PI = 0; PI < Pipeline.size(); ++PI) {
    Pass &P = *Pipeline[PI];
    if (!Parsed) {
      auto PF = ParseCurrent(Current,
                             ChangedBy.empty() ? std::string("input")
                                               : "output of " + ChangedBy,
                             ChangedBy.empty());
      if (!PF) {
        if (ChangedBy.empty())
          return PF.takeError();
        return createStringError(
            inconvertibleErrorCode(),
            "%s: the code produced by pass '%s' does not parse (a bug in the "
            "pass; please report it): %s",
            MainFile.c_str(), ChangedBy.c_str(),
            toString(PF.takeError()).c_str());
      }
      Parsed = std::move(*PF);
      if (ChangedBy.empty())
        Skipped = Parsed->view().Skipped;
      else if (auto Why = BrokeHostCode(*Parsed, ChangedBy))
        return createStringError(inconvertibleErrorCode(), *Why);
      Kernels = collectKernels(Parsed->context());
    }
    ParsedFile &AST = *Parsed;
    // Every later parse reads the main file as this one did: a file edited
    // on disk meanwhile (by the user, by a second run) must not mix into
    // this run's text.
    if (!Current.count(MainFile)) {
      auto Text = parsedText(AST, MainFile);
      if (!Text)
        return Text.takeError();
      Current[MainFile] = std::move(*Text);
    }
    // Launch edits count only when the pass's replacements are applied.
    RewriteResult Launches;
    std::map<std::string, tooling::Replacements> PassRepls =
        runPassOnce(P, AST, Kernels, Req, KernelFound, Result.Explanations,
                    Result.Conflicts, Opts, &Launches);
    if (!KernelFound)
      return createStringError(inconvertibleErrorCode(),
                               "%s: no kernel named '%s'", MainFile.c_str(),
                               Req.Kernel.c_str());
    bool Any = false;
    for (auto &[Path, Set] : PassRepls)
      Any |= !Set.empty();
    if (!Any)
      continue;
    for (auto &[Path, Set] : PassRepls) {
      if (Set.empty() || Result.Original.count(Path))
        continue;
      auto It = Current.find(Path);
      if (It != Current.end()) {
        Result.Original[Path] = It->second;
        continue;
      }
      auto Text = parsedText(AST, Path);
      if (!Text)
        return Text.takeError();
      Result.Original[Path] = *Text;
      Current[Path] = std::move(*Text);
    }
    std::map<std::string, std::string> Files(Current.begin(), Current.end());
    if (Error E = applyToFiles(PassRepls, Files))
      return E;
    Current = FileOverlay(Files.begin(), Files.end());
    Result.Applied.push_back(P.name().str());
    // The AST is stale now: freed before the next parse, so that two are
    // never alive at once.
    Kernels.clear();
    Parsed.reset();
    ChangedBy = P.name().str();
    // The passes after shape-split see the kernel's entries split: the
    // kernel keeps its small sets, the clone's entries hold the others.
    for (auto &[Kernel, At] : Launches.Splits) {
      if (CurSpec && (describesKernel(*CurSpec, Kernel) || !CurSpecs))
        if (auto Clone = splitSpec(*CurSpec, At); !Clone)
          consumeError(Clone.takeError()); // The pass checked it splits.
      if (CurSpecs) {
        std::vector<KernelSpec> Clones;
        for (KernelSpec &S : CurSpecs->Kernels)
          if (describesKernel(S, Kernel)) {
            if (auto Clone = splitSpec(S, At))
              Clones.push_back(std::move(*Clone));
            else
              consumeError(Clone.takeError());
          }
        for (KernelSpec &C : Clones)
          CurSpecs->Kernels.push_back(std::move(C));
      }
      Result.Splits[Kernel] = At;
    }
    for (auto &[Kernel, L] : Launches.LaunchEdits) {
      LaunchChange Change = L.change();
      if (CurSpec && (describesKernel(*CurSpec, Kernel) || !CurSpecs))
        followLaunchChange(*CurSpec, Change);
      if (CurSpecs)
        for (KernelSpec &S : CurSpecs->Kernels)
          if (describesKernel(S, Kernel))
            followLaunchChange(S, Change);
      RewriteResult::LaunchEdit &To = Result.LaunchEdits[Kernel];
      if (L.BlockThreads)
        To.BlockThreads = L.BlockThreads;
      if (L.GridDivisor)
        To.GridDivisor = (To.GridDivisor ? To.GridDivisor : 1) * L.GridDivisor;
      for (unsigned D = 0; D < 2; ++D)
        if (L.BlockDivisor[D])
          To.BlockDivisor[D] =
              (To.BlockDivisor[D] ? To.BlockDivisor[D] : 1) * L.BlockDivisor[D];
      if (L.BlockRows) {
        To.RowDivisor = L.RowDivisor;
        To.BlockRows = L.BlockRows;
      }
      if (L.Grid3)
        To.Grid3 = L.Grid3;
      if (!L.WarpRows.empty())
        To.WarpRows = L.WarpRows;
    }
  }

  // A final parse of the result: a pass that emits broken code must never
  // reach a user's file. (When the last passes changed nothing, the text
  // they parsed is the result, and it parsed.)
  if (!Parsed && !Result.Applied.empty()) {
    auto PF = ParseCurrent(Current, "result (final check)", false);
    if (!PF)
      return createStringError(
          inconvertibleErrorCode(),
          "%s: the code produced by pass '%s' does not parse (a bug in the "
          "pass; please report it): %s",
          MainFile.c_str(), Result.Applied.back().c_str(),
          toString(PF.takeError()).c_str());
    if (auto Why = BrokeHostCode(**PF, Result.Applied.back()))
      return createStringError(inconvertibleErrorCode(), *Why);
  }
  for (auto &[Path, Text] : Current)
    if (Result.Original.count(Path) && Result.Original[Path] != Text)
      Result.Rewritten[Path] = Text;
  return Result;
}

} // namespace astra
