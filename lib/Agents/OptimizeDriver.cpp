//===- OptimizeDriver.cpp -------------------------------------------------===//
#include "astra/Agents/OptimizeDriver.h"
#include "astra/Agents/KernelSource.h"
#include "astra/Agents/LLMAgents.h"
#include "astra/Agents/OfflinePlanner.h"
#include "astra/Agents/PassCoder.h"
#include "astra/Compile/PtxCompiler.h"
#include "astra/Engine/RunPlan.h"
#include "astra/Rewrite/RewriteDriver.h"
#include "astra/Agents/ResultCache.h"
#include "astra/Spec/LaunchTuning.h"
#include "astra/Spec/ShapeSplit.h"
#include "astra/Spec/SpecCheck.h"
#include "astra/Support/Clock.h"
#include "astra/Support/Diff.h"
#include "astra/Support/FileIO.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>

using namespace llvm;

namespace astra {

std::string mergeEdits(const std::string &Original,
                       const std::vector<std::string> &Versions,
                       std::vector<size_t> *Dropped) {
  struct Edit {
    size_t Begin, End; // Old line range.
    std::string Text;  // New lines.
  };
  std::vector<StringRef> Old = splitLinesKeepEnds(Original);
  std::vector<Edit> Taken;
  for (size_t V = 0; V < Versions.size(); ++V) {
    std::vector<StringRef> New = splitLinesKeepEnds(Versions[V]);
    std::vector<Edit> Mine;
    for (const DiffHunk &H : diffLines(Original, Versions[V])) {
      Edit E{H.OldBegin, H.OldBegin + H.OldCount, ""};
      for (size_t I = 0; I < H.NewCount; ++I)
        E.Text += New[H.NewBegin + I].str();
      Mine.push_back(std::move(E));
    }
    // A version's edits go in whole or not at all: half a kernel's change
    // is not a change anyone tested. An edit another version made already,
    // the same lines to the same text, is no clash: two kernels calling one
    // helper (shape-split's halves, both calling block_reduce) whose
    // winners rewrote it alike. Nor are two insertions of new lines at one
    // place: both go in, in version order (two kernels' copies of one helper
    // each go right after it).
    bool Clash = false;
    std::vector<Edit> Fresh;
    for (const Edit &A : Mine) {
      bool Same = false;
      for (const Edit &B : Taken) {
        if (A.Begin == B.Begin && A.End == B.End && A.Text == B.Text)
          Same = true;
        else if (!(A.Begin == A.End && B.Begin == B.End))
          Clash |= A.Begin < B.End + 1 && B.Begin < A.End + 1;
      }
      if (!Same)
        Fresh.push_back(A);
    }
    if (Clash) {
      if (Dropped)
        Dropped->push_back(V);
      continue;
    }
    Taken.insert(Taken.end(), Fresh.begin(), Fresh.end());
  }
  std::stable_sort(Taken.begin(), Taken.end(),
                   [](const Edit &A, const Edit &B) { return A.Begin < B.Begin; });
  std::string Out;
  size_t Line = 0;
  for (const Edit &E : Taken) {
    for (; Line < E.Begin; ++Line)
      Out += Old[Line].str();
    Out += E.Text;
    Line = E.End;
  }
  for (; Line < Old.size(); ++Line)
    Out += Old[Line].str();
  return Out;
}

/// Finds the kernel a spec entry names and checks the entry against it.
static Error checkSpecAgainstKernelByName(KernelSpec &KS,
                                          const std::vector<KernelInfo> &Kernels,
                                          StringRef File) {
  auto Target = findSpecTarget(Kernels, KS.Kernel, File);
  if (!Target)
    return Target.takeError();
  return checkSpecAgainstKernel(KS, *Target->Kernel);
}

/// The base (template pattern) name of a spec entry: "ns::k<float>" -> "ns::k".
static std::string baseName(StringRef SpecKernel) {
  return SpecKernel.split('<').first.trim().str();
}

/// For each of \p Specs, the shape set its adversarial runs start from when
/// it is a shape-split clone: the smallest set of its original's entry in
/// \p File (the clone's own sets are all large).
static std::vector<std::optional<ShapeSet>>
adversarialBases(const std::vector<KernelSpec> &Specs, const SpecFile &File) {
  std::vector<std::optional<ShapeSet>> Out;
  for (const KernelSpec &KS : Specs) {
    Out.emplace_back();
    std::string Origin = splitOriginName(KS.Kernel);
    if (Origin == KS.Kernel)
      continue;
    for (const KernelSpec &O : File.Kernels)
      if (sameKernelName(O.Kernel, Origin)) {
        if (auto Small = smallestShapeSet(O))
          Out.back() = **Small;
        else
          consumeError(Small.takeError());
      }
  }
  return Out;
}

Evaluation evaluationOnHalf(const Evaluation &Whole,
                            const std::vector<KernelSpec> &Half) {
  Evaluation E = Whole;
  E.Timings.clear();
  // The whole kernel's labels carry the template arguments when it had
  // several instantiations; a half may have fewer.
  bool Prefixed = any_of(Whole.Timings, [](const ShapeTiming &T) {
    return StringRef(T.Shape).starts_with("<");
  });
  for (const KernelSpec &KS : Half)
    for (const ShapeSet &Sh : KS.Shapes) {
      std::string Wanted = shapeLabel(KS.Kernel, Sh.Name, Prefixed);
      auto It = find_if(Whole.Timings,
                        [&](const ShapeTiming &T) { return T.Shape == Wanted; });
      if (It == Whole.Timings.end())
        return Evaluation();
      E.Timings.push_back(*It);
      E.Timings.back().Shape = shapeLabel(Half, KS, Sh.Name);
    }
  return E;
}

/// Spec text of the workload for prompts.
static std::string specSummary(const std::vector<KernelSpec> &Specs) {
  std::string Out;
  raw_string_ostream OS(Out);
  for (const KernelSpec &S : Specs) {
    OS << "- " << S.Kernel << ": launch grid " << S.Launch.Grid[0].text()
       << ", block " << S.Launch.Block[0].text();
    if (!S.Launch.Shmem.empty())
      OS << ", dynamic shared " << S.Launch.Shmem.text();
    OS << "; shape sets:";
    for (const ShapeSet &Sh : S.Shapes) {
      OS << " " << Sh.Name << " (";
      bool First = true;
      for (const auto &[K, V] : Sh.Vars) {
        OS << (First ? "" : ", ") << K << "=" << V.I;
        First = false;
      }
      OS << ")";
    }
    OS << "; buffers:";
    for (const ArgSpec &A : S.Args)
      if (A.IsBuffer)
        OS << " " << A.Name << " " << dtypeName(A.Type) << "[" << A.Count.text()
           << "] " << roleName(A.R) << ";";
    OS << "\n";
  }
  return Out;
}

/// Flops per byte at the largest shape set, when the spec gives flops.
static double intensity(const KernelSpec &S) {
  if (!S.Flops || S.Shapes.empty())
    return -1;
  const ShapeSet &Big = S.Shapes.back();
  auto F = S.Flops->eval(Big.Vars);
  auto B = S.bytesMoved(Big.Vars);
  if (!F || !B || *B <= 0) {
    if (!F)
      consumeError(F.takeError());
    if (!B)
      consumeError(B.takeError());
    return -1;
  }
  return F->real() / double(*B);
}

std::vector<FileOutcome> OptimizeDriver::run() {
  std::vector<FileOutcome> Out;
  for (const std::string &F : Req.Files)
    Out.push_back(runFile(F));
  return Out;
}

FileOutcome OptimizeDriver::runFileOnce(const std::string &File,
                                        const std::vector<std::string> &Command,
                                        SpecFile Spec, bool Split,
                                        const FileOutcome *Unsplit) {
  FileOutcome FO;
  FO.File = File;
  // Each kernel's set-up: from here for the first, from the end of the
  // kernel before for the others.
  auto SetupFrom = std::chrono::steady_clock::now();
  const std::vector<std::string> *Cmd = &Command;
  SpecFile *SpecF = &Spec;
  std::string Abs = Cmd->back();
  // shape-split first: the file and spec the kernels are optimized in
  // (SplitFiles, SplitSpecText), each split kernel's halves then being targets of
  // their own.
  FileOverlay SplitFiles;
  std::string SplitSpecText, SplitSpecOriginal;
  // Every parse of the file (probes, candidates, their kernels' entries)
  // loads the CUDA runtime headers from one PCH and the file's #include
  // block from a preamble PCH on it: a parse then costs a tenth of one
  // that reads the headers.
  std::string ParsePch;
  {
    CompileOptions PchOpts;
    PchOpts.UseCache = Req.Engine.UseCache;
    PchOpts.CacheDir = Req.Engine.CacheDir;
    std::vector<std::string> Notes;
    ParsePch = parsePch(TC, *Cmd, PchOpts, Notes);
  }
  Req.Engine.ParsePch = ParsePch;
  if (Split) {
    RewriteRequest SR;
    SR.Command = *Cmd;
    SR.RuntimePch = ParsePch;
    SR.Preamble = !ParsePch.empty();
    SR.Passes = {"shape-split"};
    SR.Kernel = Req.Kernel.empty() ? "" : baseName(Req.Kernel);
    SR.Options.Specs = &*SpecF;
    auto R = runRewrite(SR);
    if (!R || R->Splits.empty()) {
      if (!R)
        consumeError(R.takeError());
      FO.Skipped = true;
      return FO;
    }
    auto Text = readFile(SpecF->Path);
    auto New = Text ? followSplits(*Text, SpecF->Path, R->Splits)
                    : Expected<std::string>(Text.takeError());
    auto Parsed = New ? parseSpec(*New, SpecF->Path)
                      : Expected<SpecFile>(New.takeError());
    if (!Parsed) {
      FO.Error = "shape-split: " + toString(Parsed.takeError());
      return FO;
    }
    *SpecF = std::move(*Parsed);
    SplitSpecText = *New;
    SplitSpecOriginal = *Text;
    SplitFiles = R->Rewritten;
    FO.Split = true;
    FO.SplitAt = R->Splits;
  }
  std::string ParseDiags;
  raw_string_ostream PDOS(ParseDiags);
  ParseOptions PO;
  PO.DiagOS = &PDOS;
  PO.Overlay = SplitFiles;
  PO.RuntimePch = ParsePch;
  PO.UsePreamble = PO.BuildPreamble = !ParsePch.empty();
  auto PF = parseCuda(*Cmd, PO);
  if (!PF) {
    FO.Error = toString(PF.takeError()) + "\n" + ParseDiags;
    return FO;
  }
  std::vector<KernelInfo> Kernels = collectKernels((*PF)->context());

  // Group the spec's entries by source kernel: the instantiations of one
  // template are one optimization target.
  std::vector<std::pair<std::string, std::vector<KernelSpec>>> Targets;
  for (KernelSpec &KS : SpecF->Kernels) {
    if (!Req.Kernel.empty() && !sameKernelName(KS.Kernel, Req.Kernel) &&
        baseName(KS.Kernel) != Req.Kernel &&
        !(Split && (sameKernelName(KS.Kernel, splitCloneName(Req.Kernel)) ||
                    baseName(KS.Kernel) == splitCloneName(Req.Kernel))))
      continue;
    if (Error E = checkSpecAgainstKernelByName(KS, Kernels, Abs)) {
      KernelReport R;
      R.File = displayPath(File);
      R.Kernel = KS.Kernel;
      R.Error = toString(std::move(E));
      FO.Kernels.push_back(std::move(R));
      continue;
    }
    std::string Base = baseName(KS.Kernel);
    auto It = find_if(Targets, [&](auto &T) { return T.first == Base; });
    if (It == Targets.end())
      Targets.push_back({Base, {KS}});
    else
      It->second.push_back(KS);
  }
  if (Targets.empty() && FO.Kernels.empty()) {
    FO.Error = Req.Kernel.empty()
                   ? "the spec names no kernel of this file"
                   : "no kernel named '" + Req.Kernel + "' in the spec";
    return FO;
  }

  std::vector<std::string> AllPassNames;
  // shape-split is not a step of a plan: it makes the targets (above).
  for (const PassInfo &P : allPasses())
    if ((Req.AllowedPasses.empty() || is_contained(Req.AllowedPasses, P.Name)) &&
        P.Name != "shape-split")
      AllPassNames.push_back(P.Name);

  // Winners: kernel name -> the winning candidate's files.
  std::vector<std::pair<size_t, FileOverlay>> Winners;
  std::map<size_t, std::vector<KernelSpec>> TargetSpecs;
  for (auto &[Base, Specs] : Targets) {
    KernelReport R;
    R.File = displayPath(File);
    R.Kernel = Specs.size() == 1 ? Specs.front().Kernel : Base;
    for (const KernelSpec &KS : Specs)
      R.Weights.insert(KS.Weights.begin(), KS.Weights.end());
    const KernelInfo *KI = nullptr;
    for (const KernelInfo &K : Kernels)
      if (K.QualifiedName == Base || K.Name == Base)
        KI = &K;
    if (!KI) {
      R.Error = "no kernel named '" + Base + "' in " + displayPath(File);
      FO.Kernels.push_back(std::move(R));
      continue;
    }

    PassOptions PassOpts;
    PassOpts.Specs = &*SpecF;
    KernelFacts Facts;
    Facts.File = Abs;
    Facts.Kernel = R.Kernel;
    Facts.LaunchTunable = Specs.front().LaunchIsTunable;
    if (auto L = tunableBlockLiteral(Specs.front()))
      Facts.BlockSize = *L;
    else
      consumeError(L.takeError());
    Facts.ArithmeticIntensity = intensity(Specs.back());
    RewriteRequest Probe;
    Probe.Command = *Cmd;
    Probe.Passes = AllPassNames;
    Probe.Kernel = KI->QualifiedName;
    Probe.Options = PassOpts;
    Probe.Overlay = SplitFiles;
    Probe.RuntimePch = ParsePch;
    Probe.Preamble = !ParsePch.empty();
    auto Probes = probePasses(Probe);
    if (!Probes) {
      R.Error = "the passes could not be tried: " + toString(Probes.takeError());
      FO.Kernels.push_back(std::move(R));
      continue;
    }
    for (const PassProbe &P : *Probes) {
      std::vector<std::string> Fired, Refused;
      for (const Explanation &E : P.Explanations)
        (E.Fired ? Fired : Refused).push_back(E.Pos.str() + ": " + E.Message);
      if (P.WouldChange)
        Facts.ApplicablePasses[P.Pass] = Fired;
      else if (!Refused.empty())
        Facts.RefusedPasses[P.Pass] = Refused;
    }
    // Passes that refused alone may fire once the enabling passes (which
    // prove no-alias or make the loop) have run: probe those again on top.
    auto ProbeOnTop = [&](const std::vector<std::string> &Enablers,
                          const std::vector<std::string> &Retry) {
      if (Enablers.empty() || Retry.empty())
        return;
      RewriteRequest Enable = Probe;
      Enable.Passes = Enablers;
      auto Enabled = runRewrite(Enable);
      if (!Enabled) {
        consumeError(Enabled.takeError());
        return;
      }
      if (!Enabled->changed())
        return;
      RewriteRequest Again = Probe;
      Again.Passes = Retry;
      Again.Overlay = Enabled->Rewritten;
      // An enabler that changed the launch (delinearize's 3-D grid): the
      // passes probed on top see the spec's launch changed the same way, as
      // they do inside one pipeline.
      std::optional<SpecFile> FollowedSpecs;
      std::optional<KernelSpec> FollowedSpec;
      auto Follow = [&](KernelSpec &S) {
        for (const auto &[K, L] : Enabled->LaunchEdits)
          if (describesKernel(S, K))
            followLaunchChange(S, L.change());
      };
      if (!Enabled->LaunchEdits.empty()) {
        if (Probe.Options.Specs) {
          FollowedSpecs = *Probe.Options.Specs;
          for (KernelSpec &S : FollowedSpecs->Kernels)
            Follow(S);
          Again.Options.Specs = &*FollowedSpecs;
        }
        if (Probe.Options.Spec) {
          FollowedSpec = *Probe.Options.Spec;
          Follow(*FollowedSpec);
          Again.Options.Spec = &*FollowedSpec;
        }
      }
      auto Later = probePasses(Again);
      if (!Later) {
        consumeError(Later.takeError());
        return;
      }
      for (const PassProbe &P : *Later) {
        if (!P.WouldChange)
          continue;
        std::vector<std::string> Fired;
        for (const Explanation &E : P.Explanations)
          if (E.Fired)
            Fired.push_back(E.Pos.str() + ": " + E.Message + " (after " +
                            join(Enablers, ", ") + ")");
        Facts.ApplicablePasses[P.Pass] = Fired;
        Facts.RefusedPasses.erase(P.Pass);
        Facts.Prerequisites[P.Pass] = Enablers;
      }
    };
    std::vector<std::string> Enablers, Retry;
    for (const char *E : {"restrict-const", "grid-stride"})
      if (Facts.ApplicablePasses.count(E))
        Enablers.push_back(E);
    for (const std::string &P : AllPassNames)
      if (!Facts.ApplicablePasses.count(P))
        Retry.push_back(P);
    ProbeOnTop(Enablers, Retry);
    // grid-coarsen and rows-per-block fire by default only on a loop
    // vectorize (or flat-vectorize) wrote: probe them on top of that pass
    // and what it needs.
    for (const char *Launch : {"grid-coarsen", "rows-per-block"})
      for (const char *Vec : {"vectorize", "flat-vectorize"}) {
        if (Facts.ApplicablePasses.count(Launch) ||
            !Facts.ApplicablePasses.count(Vec) ||
            !is_contained(AllPassNames, Launch))
          continue;
        std::vector<std::string> Stage;
        auto It = Facts.Prerequisites.find(Vec);
        if (It != Facts.Prerequisites.end())
          Stage = It->second;
        Stage.push_back(Vec);
        ProbeOnTop(Stage, {Launch});
      }
    // thread-coarsen needs a 2-D block: on a flat kernel it fires once
    // delinearize has put the index on a 3-D grid.
    if (Facts.ApplicablePasses.count("delinearize") &&
        !Facts.ApplicablePasses.count("thread-coarsen") &&
        is_contained(AllPassNames, "thread-coarsen")) {
      std::vector<std::string> Stage;
      auto It = Facts.Prerequisites.find("delinearize");
      if (It != Facts.Prerequisites.end())
        Stage = It->second;
      Stage.push_back("delinearize");
      ProbeOnTop(Stage, {"thread-coarsen"});
    }
    if (Unsplit)
      for (const KernelReport &U : Unsplit->Kernels)
        if (U.Outcome.Winner && U.Outcome.Winner->Origin == "passes" &&
            baseName(U.Kernel) == splitOriginName(Base)) {
          const Candidate &W = *U.Outcome.Winner;
          KnownWinner K;
          K.P.Passes = W.Lineage;
          K.P.Params = W.Params;
          K.P.Rationale =
              "the unsplit run's winner of " + U.Kernel + " (" +
              formatv("{0:F2}", U.Outcome.WinnerEval.geomeanSpeedup()).str() +
              "x over all its shape sets)";
          K.E = evaluationOnHalf(U.Outcome.WinnerEval, Specs);
          Facts.KnownWinners.push_back(std::move(K));
        }
    if (auto KT = findKernelText(*Cmd, SplitFiles, KI->QualifiedName))
      Facts.Source = KT->Definition;
    else
      consumeError(KT.takeError());

    PassCoder Passes(*Cmd, KI->QualifiedName, PassOpts, SplitFiles);
    Passes.setParsePch(ParsePch);
    OfflinePlanner Offline(Req.AllowedPasses);

    std::unique_ptr<LLMClient> PlannerClient, CoderClient;
    std::unique_ptr<Planner> ThePlanner;
    std::unique_ptr<Coder> TheCoder;
    LLMKernelContext LCtx;
    if (Req.Agents == "llm") {
      LLMConfig PC = Req.PlannerLLM, CoC = Req.CoderLLM;
      PC.TranscriptDir = CoC.TranscriptDir = Req.TranscriptDir;
      auto P = LLMClient::create(PC);
      if (!P) {
        R.Error = "LLM mode: " + toString(P.takeError());
        FO.Kernels.push_back(std::move(R));
        continue;
      }
      auto C = LLMClient::create(CoC);
      if (!C) {
        R.Error = "LLM mode: " + toString(C.takeError());
        FO.Kernels.push_back(std::move(R));
        continue;
      }
      PlannerClient = std::move(*P);
      CoderClient = std::move(*C);
      LCtx.DeviceCommand = *Cmd;
      LCtx.KernelName = KI->QualifiedName;
      LCtx.Original = *KI;
      LCtx.Original.Decl = nullptr;
      for (DeviceCallee &DC : LCtx.Original.Callees)
        DC.Decl = nullptr;
      LCtx.SpecSummary = specSummary(Specs);
      ThePlanner =
          std::make_unique<LLMPlanner>(*PlannerClient, LCtx, Req.AllowedPasses);
      TheCoder = std::make_unique<LLMCoder>(*CoderClient, LCtx, Passes);
    } else {
      ThePlanner = std::make_unique<OfflinePlanner>(Req.AllowedPasses);
    }
    Coder &TheCoderRef = TheCoder ? *TheCoder : static_cast<Coder &>(Passes);
    // LLM mode: tokens into the report, and a broken configuration (bad
    // key, unknown model, unreachable endpoint) as this kernel's error
    // rather than a quiet fallback to the offline planner.
    auto FinishLLM = [&](KernelReport &KR) {
      if (!PlannerClient)
        return;
      LLMStats PS = PlannerClient->stats(), CS = CoderClient->stats();
      KR.PromptTokens = PS.Usage.Prompt + CS.Usage.Prompt;
      KR.CompletionTokens = PS.Usage.Completion + CS.Usage.Completion;
      for (const std::string &N :
           static_cast<LLMPlanner *>(ThePlanner.get())->notes())
        KR.Outcome.StopReason += "; " + N;
      const std::string &Fatal =
          !PS.FatalError.empty() ? PS.FatalError : CS.FatalError;
      if (!Fatal.empty()) {
        KR.Error = "LLM mode: " + Fatal;
        KR.Outcome.Winner.reset();
      }
    };
    if (Req.Static) {
      // No GPU: the first round's plans (offline or from the planner model)
      // through the coder and the compile gate, so the user sees what would
      // be tried and whether it compiles.
      PlanningState St;
      Evaluation NoProfile;
      St.Facts = &Facts;
      St.Round = 1;
      St.Rounds = 1;
      St.Baseline = &NoProfile;
      std::vector<Attempt> History;
      St.History = &History;
      R.Outcome.Kernel = R.Kernel;
      R.Outcome.StopReason = "static mode: passes and the NVPTX compile only";
      R.Outcome.NoWinnerReason =
          "static mode does not run kernels, so nothing was verified or timed";
      unsigned N = 0;
      std::set<std::string> Seen;
      for (const Plan &P : ThePlanner->propose(
               St, std::max(8u, Req.Orchestrator.CandidatesPerRound))) {
        Attempt A;
        A.Round = 1;
        A.P = P;
        auto C = TheCoderRef.realize(P, Candidate(), St);
        if (!C) {
          A.E.S = Evaluation::Status::CoderFailed;
          handleAllErrors(
              C.takeError(),
              [&](const CandidateRejected &Rej) {
                A.E.S = Rej.status();
                A.E.Detail = Rej.message();
              },
              [&](const ErrorInfoBase &E) { A.E.Detail = E.message(); });
          A.Outcome = (A.E.S == Evaluation::Status::CoderFailed
                           ? std::string("no code")
                           : std::string(Evaluation::statusName(A.E.S))) +
                      ": " + A.E.Detail;
        } else if (C->Files.empty()) {
          A.Outcome = "unchanged";
        } else if (!Seen.insert(C->contentHash()).second) {
          A.Outcome = "duplicate";
        } else {
          C->Id = "s" + std::to_string(++N);
          A.C = *C;
          CompileOptions CO;
          CO.Overlay = C->Files;
          CO.UseCache = Req.Engine.UseCache;
          CO.CacheDir = Req.Engine.CacheDir;
          std::string D;
          raw_string_ostream DOS(D);
          CO.DiagOS = &DOS;
          auto Ptx = compileToPtx(TC, *Cmd, CO);
          if (Ptx) {
            A.Outcome = "compiles (not run: static mode)";
          } else {
            A.E.S = Evaluation::Status::CompileError;
            A.E.Detail = toString(Ptx.takeError());
            A.Outcome = "compile error: " + A.E.Detail;
          }
        }
        History.push_back(A);
        R.Outcome.Attempts.push_back(std::move(A));
      }
      unsigned Compiled = 0;
      for (const Attempt &A : R.Outcome.Attempts)
        Compiled += A.C.Files.size() && A.E.S != Evaluation::Status::CompileError &&
                    StringRef(A.Outcome).starts_with("compiles");
      R.Outcome.StopReason += "; " + std::to_string(Compiled) + " of " +
                              std::to_string(R.Outcome.Attempts.size()) +
                              " plans compile";
      FinishLLM(R);
      FO.Kernels.push_back(std::move(R));
      continue;
    }

    EngineEvaluator Engine(TC, *Cmd, Specs, Req.Engine);
    Engine.setBaseFiles(SplitFiles);
    Engine.setAdversarialBases(adversarialBases(Specs, *SpecF));
    Orchestrator Orc(*ThePlanner, TheCoderRef, Engine, Engine,
                     Req.Orchestrator, Progress);
    double Setup = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - SetupFrom)
                       .count();
    R.Outcome = Orc.run(Facts);
    R.Outcome.SetupSeconds = Setup;
    R.Outcome.WallSeconds += Setup;
    SetupFrom = std::chrono::steady_clock::now();
    if (Info.Device.empty() && !Engine.device().Name.empty())
      Info.Device = Engine.device().Name + " (driver " + Engine.device().Driver +
                    ")";
    if (Engine.copyBandwidthGBps() > 0)
      Info.CopyBandwidthGBs = Engine.copyBandwidthGBps();
    FinishLLM(R);
    if (R.Outcome.Winner) {
      Winners.push_back({FO.Kernels.size(), R.Outcome.Winner->Files});
      TargetSpecs[FO.Kernels.size()] = Specs;
    }
    FO.Kernels.push_back(std::move(R));
  }

  // A split whose halves kept nothing but the unsplit run's winner is that
  // run again, set by set: it cannot be 2% faster, so there is nothing to
  // merge and check (a verification of both halves' largest sets).
  if (Unsplit && all_of(Winners, [&](const auto &W) {
        return isKnownWinner(*FO.Kernels[W.first].Outcome.Winner);
      }))
    Winners.clear();

  // Merge every winner into the files, then check the merged code: it must
  // compile and each changed kernel must verify again in it.
  while (!Winners.empty()) {
    std::map<std::string, std::vector<std::string>> Versions;
    std::map<std::string, std::vector<size_t>> Owner;
    for (auto &[Idx, Files] : Winners)
      for (auto &[Path, Text] : Files) {
        Versions[Path].push_back(Text);
        Owner[Path].push_back(Idx);
      }
    FileOverlay Merged;
    std::set<size_t> DroppedKernels;
    for (auto &[Path, Vs] : Versions) {
      auto Orig = readFile(Path);
      if (!Orig) {
        consumeError(Orig.takeError());
        for (size_t Idx : Owner[Path])
          DroppedKernels.insert(Idx);
        continue;
      }
      FO.Original[Path] = *Orig;
      // The winners' edits are edits of the split file.
      auto B = SplitFiles.find(Path);
      std::vector<size_t> Dropped;
      Merged[Path] = mergeEdits(B != SplitFiles.end() ? B->second : *Orig, Vs,
                                &Dropped);
      for (size_t D : Dropped)
        DroppedKernels.insert(Owner[Path][D]);
    }
    Candidate All;
    All.Id = "merged";
    All.Files = Merged;
    for (auto &[Idx, Files] : Winners) {
      if (DroppedKernels.count(Idx))
        continue;
      // The merged code is this winner's own, byte for byte (no other
      // kernel's change is in it): it was verified and confirmed as it is,
      // and a third run of its largest sets would prove nothing new.
      if (Merged == Files)
        continue;
      // Each kernel runs with its own winner's launch.
      All.copyLaunch(*FO.Kernels[Idx].Outcome.Winner);
      EngineEvaluator Check(TC, *Cmd, TargetSpecs[Idx], Req.Engine);
      Check.setBaseFiles(SplitFiles);
      Check.setAdversarialBases(adversarialBases(TargetSpecs[Idx], *SpecF));
      Evaluation E = Check.test(All);
      if (!E.verified()) {
        DroppedKernels.insert(Idx);
        FO.Kernels[Idx].Outcome.NoWinnerReason =
            "its change failed when verified together with the other "
            "kernels' changes: " +
            E.Detail;
      }
    }
    if (DroppedKernels.empty()) {
      for (auto &[Path, Text] : Merged)
        if (Text != FO.Original[Path])
          FO.Final[Path] = Text;
      break;
    }
    // Take the dropped kernels out and merge again.
    std::vector<std::pair<size_t, FileOverlay>> Kept;
    for (auto &W : Winners)
      if (!DroppedKernels.count(W.first))
        Kept.push_back(W);
      else
        FO.Kernels[W.first].Outcome.Winner.reset();
    Winners = std::move(Kept);
  }
  // A winner that launches another block size or grid changes the spec's
  // launch too, so the spec keeps describing the code (and a rerun starts
  // from what is written).
  std::map<std::string, std::string> SpecTexts;
  // Split code needs the split spec, whatever the winners launch.
  if (Split && !Winners.empty()) {
    FO.Original[SpecF->Path] = SplitSpecOriginal;
    SpecTexts[SpecF->Path] = SplitSpecText;
  }
  for (auto &[Idx, Files] : Winners) {
    const Candidate &W = *FO.Kernels[Idx].Outcome.Winner;
    if (W.launchChange().empty())
      continue;
    const std::vector<KernelSpec> &KS = TargetSpecs[Idx];
    const std::string &SpecPath = KS.front().SpecPath;
    if (!SpecTexts.count(SpecPath)) {
      auto Text = readFile(SpecPath);
      if (!Text) {
        FO.Error = toString(Text.takeError());
        break;
      }
      FO.Original[SpecPath] = *Text;
      SpecTexts[SpecPath] = *Text;
    }
    std::vector<std::string> Names;
    for (const KernelSpec &K : KS)
      Names.push_back(K.Kernel);
    auto New = retuneSpecText(SpecTexts[SpecPath], SpecPath, Names,
                              W.launchChange());
    if (!New) {
      FO.Error = toString(New.takeError());
      break;
    }
    SpecTexts[SpecPath] = std::move(*New);
  }
  if (!FO.Error.empty()) {
    // Code whose spec cannot say how it is launched is not written.
    FO.Final.clear();
    for (KernelReport &R : FO.Kernels)
      if (R.Outcome.Winner) {
        R.Outcome.Winner.reset();
        R.Outcome.NoWinnerReason = FO.Error;
      }
  } else {
    for (auto &[Path, Text] : SpecTexts)
      FO.Final[Path] = Text;
  }
  attachDiffs(FO, SpecTexts);
  return FO;
}

/// The geometric mean over every shape set of \p FO's kernels of the
/// speedup of the code it keeps (1 for a kernel without a winner).
static double keptSpeedup(const FileOutcome &FO) {
  double LogSum = 0;
  unsigned N = 0;
  for (const KernelReport &R : FO.Kernels)
    for (const ShapeTiming &B : R.Outcome.Baseline.Timings) {
      double S = 1;
      if (R.Outcome.Winner)
        for (const ShapeTiming &W : R.Outcome.WinnerEval.Timings)
          if (W.Shape == B.Shape && W.speedup() > 0)
            S = W.speedup();
      LogSum += std::log(S);
      ++N;
    }
  return N ? std::exp(LogSum / N) : 1;
}

OptimizeDriver::~OptimizeDriver() {
  if (!ScratchCache.empty())
    sys::fs::remove_directories(ScratchCache);
}

FileOutcome OptimizeDriver::runFile(const std::string &File) {
  FileOutcome FO;
  FO.File = File;
  if (!Req.Engine.UseCache && ScratchCache.empty()) {
    SmallString<256> Dir;
    if (!sys::fs::createUniqueDirectory("astra-nocache", Dir)) {
      ScratchCache = std::string(Dir);
      Req.Engine.CacheDir = ScratchCache;
      Req.Engine.UseCache = true;
    }
  }
  if (Error E = checkReadableFile(File)) {
    FO.Error = toString(std::move(E));
    return FO;
  }
  auto Cmd = CC.deviceCommand(File, TC);
  if (!Cmd) {
    FO.Error = toString(Cmd.takeError());
    return FO;
  }
  // The compiler whose code is timed, for this file: nvcc with the build's
  // device flags when the build is nvcc's (or asked for).
  auto NvccFlags = CC.nvccFlags(File);
  if (!NvccFlags) {
    FO.Error = toString(NvccFlags.takeError());
    return FO;
  }
  std::optional<std::vector<std::string>> Timing;
  if (Req.TimingCompiler == "nvcc" ||
      (Req.TimingCompiler == "auto" && *NvccFlags && !TC.nvccPath().empty()))
    Timing = NvccFlags->value_or(std::vector<std::string>{});
  std::string TimedWith =
      Timing ? "nvcc" + (Timing->empty() ? "" : " " + join(*Timing, " "))
             : "clang";
  if (Info.TimedCompiler.empty())
    Info.TimedCompiler = TimedWith;
  else if (Info.TimedCompiler.find(TimedWith) == std::string::npos)
    Info.TimedCompiler += "; " + TimedWith;
  struct EngineScope {
    EngineOptions &Opts;
    std::optional<std::vector<std::string>> Saved;
    ~EngineScope() { Opts.NvccTiming = std::move(Saved); }
  } Scope{Req.Engine, Req.Engine.NvccTiming};
  Req.Engine.NvccTiming = Timing;
  auto SpecF = loadSpecFor(File, Req.SpecPath);
  if (!SpecF) {
    FO.Error = toString(SpecF.takeError());
    return FO;
  }
  // Unchanged inputs: the outcome of the run that saw them.
  ResultCache Cache(Req.ResultCacheDir);
  std::string CacheKey;
  if (Req.UseResultCache && !Req.Static) {
    CacheKey = ResultCache::key(Cmd->back(), SpecF->Path, *Cmd,
                                Req.CacheOptions + "\nkernel=" + Req.Kernel +
                                    "\ntimed=" + TimedWith);
    if (std::optional<CachedOutcome> C = Cache.lookup(CacheKey, Req.Gpu)) {
      C->Outcome.File = File;
      C->Outcome.FromCache = "verified on " + C->Gpu + " at " + C->Date;
      return std::move(C->Outcome);
    }
  }
  if (Req.CacheOnly) {
    FO.Skipped = true;
    return FO;
  }
  FO = runFileOnce(File, *Cmd, *SpecF, /*Split=*/false);
  if (Req.SplitShapes && !Req.Static && Req.Agents == "offline" &&
      FO.Error.empty()) {
    FileOutcome S = runFileOnce(File, *Cmd, *SpecF, /*Split=*/true, &FO);
    if (!S.Skipped) {
      double Whole = keptSpeedup(FO), Halves = keptSpeedup(S);
      std::string At;
      for (auto &[K, T] : S.SplitAt)
        At += (At.empty() ? "" : ", ") + K + " at " + std::to_string(T) +
              " threads";
      bool Keep = S.Error.empty() && !S.Final.empty() &&
                  Halves >= Whole * Req.Orchestrator.MinSpeedup;
      std::string Note = "; shape-split (" + At + "): " +
                         formatv("{0:F2}", Halves).str() +
                         "x over all shape sets against " +
                         formatv("{0:F2}", Whole).str() + "x unsplit, " +
                         (Keep ? "split kept" : "not kept");
      if (Keep)
        FO = std::move(S);
      for (KernelReport &R : FO.Kernels)
        R.Outcome.StopReason += Note;
    }
  }
  if (!CacheKey.empty() && !Req.Gpu.empty() && FO.Error.empty() &&
      llvm::all_of(FO.Kernels,
                   [](const KernelReport &R) { return R.Error.empty(); })) {
    if (Error E = Cache.store(CacheKey, Req.Gpu, FO, utcTimestamp()))
      consumeError(std::move(E)); // A cache that cannot be written is no cache.
  }
  return FO;
}

void OptimizeDriver::attachDiffs(
    FileOutcome &FO, const std::map<std::string, std::string> &SpecTexts) {
  for (KernelReport &R : FO.Kernels)
    if (R.Outcome.Winner)
      for (auto &[Path, Text] : R.Outcome.Winner->Files)
        R.Diff += unifiedDiff(FO.Original.count(Path) ? FO.Original[Path] : "",
                              Text, displayPath(Path), displayPath(Path));
  for (auto &[Path, Text] : SpecTexts)
    for (KernelReport &R : FO.Kernels)
      if (R.Outcome.Winner && !R.Outcome.Winner->launchChange().empty() &&
          FO.Error.empty()) {
        R.Diff += unifiedDiff(FO.Original[Path], Text, displayPath(Path),
                              displayPath(Path));
        break;
      }
}

} // namespace astra
