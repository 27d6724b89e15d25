//===- EngineEvaluator.cpp ------------------------------------------------===//
#include "astra/Agents/EngineEvaluator.h"
#include "astra/Agents/WorkerJobs.h"
#include "astra/Engine/RunPlan.h"
#include "astra/Engine/JobRunner.h"
#include "astra/Frontend/KernelModel.h"
#include "astra/Spec/LaunchTuning.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>

using namespace llvm;

namespace astra {

Expected<std::vector<std::string>>
EngineEvaluator::entriesFor(const FileOverlay &Files,
                            std::vector<KernelLaunchFacts> *Facts) const {
  ParseOptions PO;
  PO.Overlay = Files;
  PO.DiagOS = nullptr;
  PO.RuntimePch = Opts.ParsePch;
  PO.UsePreamble = PO.BuildPreamble = !Opts.ParsePch.empty();
  auto PF = parseCuda(Command, PO);
  if (!PF)
    return PF.takeError();
  std::vector<KernelInfo> Kernels = collectKernels((*PF)->context());
  std::vector<std::string> Out;
  for (const KernelSpec &S : Specs) {
    std::string Found;
    const KernelInfo *FoundIn = nullptr;
    for (const KernelInfo &K : Kernels) {
      if (!K.isTemplate()) {
        if (sameKernelName(K.QualifiedName, S.Kernel) ||
            sameKernelName(K.Name, S.Kernel)) {
          Found = K.MangledName;
          FoundIn = &K;
        }
        continue;
      }
      size_t Colon = K.QualifiedName.rfind("::");
      std::string Scope =
          Colon == std::string::npos ? "" : K.QualifiedName.substr(0, Colon + 2);
      for (const Instantiation &I : K.Instantiations)
        if (sameKernelName(I.Name, S.Kernel) ||
            sameKernelName(Scope + I.Name, S.Kernel)) {
          Found = I.MangledName;
          FoundIn = &K;
        }
    }
    if (Found.empty())
      return createStringError(inconvertibleErrorCode(),
                               "%s: no kernel or instantiation named '%s'",
                               Command.back().c_str(), S.Kernel.c_str());
    Out.push_back(Found);
    if (Facts)
      Facts->push_back(
          plainFacts(analyzeLaunches((*PF)->context(), FoundIn->Decl)));
  }
  return Out;
}

Expected<std::vector<KernelImage>> EngineEvaluator::images(const Candidate &C) {
  if (C.isBaseline() && Baseline)
    return *Baseline;
  // The baseline's code is BaseFiles (empty: the files on disk).
  const FileOverlay &Files = C.isBaseline() ? BaseFiles : C.Files;
  CompileOptions CO;
  CO.Overlay = Files;
  CO.UseCache = Opts.UseCache;
  CO.CacheDir = Opts.CacheDir;
  std::string Diags;
  raw_string_ostream DOS(Diags);
  CO.DiagOS = &DOS;
  auto Ptx = compileToPtx(TC, Command, CO);
  if (!Ptx)
    return Ptx.takeError();
  std::vector<KernelLaunchFacts> Facts;
  auto Entries = entriesFor(Files, C.isBaseline() ? &Facts : nullptr);
  if (!Entries)
    return Entries.takeError();
  if (C.isBaseline())
    BaseFacts = std::move(Facts);
  std::string Cubin;
  if (Opts.NvccTiming) {
    // Clang's PTX passed the gate; nvcc's is what is verified and timed,
    // as the toolkit's ptxas assembles it with the build's flags (the
    // driver's JIT would ignore -Xptxas and -maxrregcount).
    auto Nv = compileWithNvcc(TC, Command, Files, /*Cubin=*/false,
                              *Opts.NvccTiming);
    if (!Nv)
      return Nv.takeError();
    auto Bin = compileWithNvcc(TC, Command, Files, /*Cubin=*/true,
                               *Opts.NvccTiming);
    if (!Bin)
      return Bin.takeError();
    Ptx->Ptx = std::move(*Nv);
    Ptx->Entries = parsePtxEntries(Ptx->Ptx);
    Cubin = std::move(*Bin);
  }
  std::vector<KernelImage> Out;
  for (size_t I = 0; I < Entries->size(); ++I) {
    const std::string &Entry = (*Entries)[I];
    if (std::find(Ptx->Entries.begin(), Ptx->Entries.end(), Entry) ==
        Ptx->Entries.end())
      return createStringError(inconvertibleErrorCode(),
                               "the PTX has no entry '%s' for kernel '%s'",
                               Entry.c_str(), Specs[I].Kernel.c_str());
    KernelImage Img;
    Img.Ptx = Ptx->Ptx;
    Img.Cubin = Cubin;
    Img.Entry = Entry;
    Img.Source = C.isBaseline() ? "baseline" : "candidate " + C.Id;
    Out.push_back(std::move(Img));
  }
  if (C.isBaseline())
    Baseline = Out;
  return Out;
}

EngineEvaluator::~EngineEvaluator() {
  // The compiles still running read the members.
  if (Pool)
    Pool->wait();
}

EngineEvaluator::Compiled EngineEvaluator::compile(const Candidate &C) {
  auto Start = std::chrono::steady_clock::now();
  Compiled Out;
  auto Imgs = images(C);
  if (Imgs)
    Out.Images = std::move(*Imgs);
  else
    Out.Error = toString(Imgs.takeError());
  Out.Seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                              Start)
                    .count();
  return Out;
}

/// splitmix64: a fixed, documented sequence, so a run's seeds are replayable
/// from the run's seed alone.
static uint64_t splitmix(uint64_t &X) {
  uint64_t Z = (X += 0x9E3779B97F4A7C15ULL);
  Z = (Z ^ (Z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  Z = (Z ^ (Z >> 27)) * 0x94D049BB133111EBULL;
  return Z ^ (Z >> 31);
}

std::vector<uint64_t> EngineEvaluator::nextSeeds() {
  uint64_t State = Opts.Seed * 1000003ULL + (++Calls);
  std::vector<uint64_t> Seeds;
  for (unsigned I = 0; I < Opts.SeedsPerShape; ++I)
    Seeds.push_back(splitmix(State) & 0xFFFFFFFFFFFFULL);
  return Seeds;
}

std::string shapeLabel(StringRef Name, StringRef Shape, bool Several) {
  if (!Several)
    return Shape.str();
  size_t Lt = Name.find('<');
  return (Lt == StringRef::npos ? Name : Name.substr(Lt)).str() + " " +
         Shape.str();
}

Evaluation evaluationFromJob(const JobResult &R, bool WithCandidate) {
  Evaluation E;
  E.Seeds = R.Seeds;
  E.Warnings = R.Warnings;
  for (const RunResult &Run : R.Runs) {
    if (Run.Kind == runKindName(RunKind::LaunchSpace) &&
        Run.V == Verdict::Pass && WithCandidate)
      E.LaunchConfigs.push_back(Run.Name);
    E.MaxAbsError = std::max(E.MaxAbsError, Run.MaxAbsErr);
    E.MaxRelError = std::max(E.MaxRelError, Run.MaxRelErr);
    for (const std::string &W : Run.Warnings)
      E.Warnings.push_back(Run.Name + ": " + W);
    if (!Run.Timing)
      continue;
    const TimingResult &T = *Run.Timing;
    ShapeTiming S;
    S.Shape = Run.Shape.empty() ? Run.Name : Run.Shape;
    S.BaselineUs = T.Baseline.MedianUs;
    S.BaselineSpreadUs = T.Baseline.P90Us - T.Baseline.P10Us;
    S.Bytes = double(T.Bytes);
    S.BaselineRoofline = T.BaselineRoofline;
    if (WithCandidate && T.Candidate) {
      S.CandidateUs = T.Candidate->MedianUs;
      S.CandidateSpreadUs = T.Candidate->P90Us - T.Candidate->P10Us;
      S.CandidateRoofline = T.CandidateRoofline;
    } else {
      S.CandidateUs = S.BaselineUs;
      S.CandidateSpreadUs = S.BaselineSpreadUs;
      S.CandidateRoofline = S.BaselineRoofline;
    }
    E.Timings.push_back(S);
  }
  const std::optional<KernelResourceInfo> &Res =
      WithCandidate ? R.CandidateResources : R.BaselineResources;
  if (Res) {
    E.Registers = unsigned(Res->Registers);
    E.SpillBytes = unsigned(Res->LocalBytes);
  }
  switch (R.V) {
  case Verdict::Pass:
    E.S = Evaluation::Status::Verified;
    break;
  case Verdict::Fail:
    E.S = (R.Kind == "crash" || R.Kind == "timeout" || R.Kind == "launch-error")
              ? Evaluation::Status::RunError
              : Evaluation::Status::WrongResult;
    E.Detail = R.Reason;
    break;
  case Verdict::Error:
    E.S = Evaluation::Status::RunError;
    E.Detail = R.Reason;
    break;
  }
  return E;
}

/// Folds one spec entry's evaluation into the kernel's.
static void combine(Evaluation &Into, Evaluation &&E, const std::string &Prefix,
                    bool First) {
  if (First) {
    Into.S = E.S;
    Into.Detail = E.Detail;
    Into.Registers = E.Registers;
    Into.SpillBytes = E.SpillBytes;
  } else if (Into.verified() && !E.verified()) {
    Into.S = E.S;
    Into.Detail = E.Detail;
  }
  if (!E.Detail.empty() && !Prefix.empty() && Into.Detail == E.Detail)
    Into.Detail = Prefix + ": " + E.Detail;
  Into.Seeds.insert(Into.Seeds.end(), E.Seeds.begin(), E.Seeds.end());
  Into.MaxAbsError = std::max(Into.MaxAbsError, E.MaxAbsError);
  Into.MaxRelError = std::max(Into.MaxRelError, E.MaxRelError);
  Into.Warnings.insert(Into.Warnings.end(), E.Warnings.begin(), E.Warnings.end());
  for (const std::string &L : E.LaunchConfigs)
    Into.LaunchConfigs.push_back(Prefix.empty() ? L : Prefix + ": " + L);
  for (ShapeTiming &T : E.Timings)
    Into.Timings.push_back(T);
}

Expected<LaunchSpacePlan> EngineEvaluator::launchSpace(size_t I,
                                                       const LaunchChange &Change) {
  if (I >= BaseFacts.size())
    return createStringError(inconvertibleErrorCode(),
                             "internal error: no launch facts for '%s'",
                             Specs[I].Kernel.c_str());
  const ShapeSet *Base = nullptr;
  if (I < AdversarialBases.size() && AdversarialBases[I])
    Base = &*AdversarialBases[I];
  else if (auto Small = smallestShapeSet(Specs[I]))
    Base = *Small;
  else
    return Small.takeError();
  return jobLaunchSpace(Specs[I], BaseFacts[I], Base,
                        Change.empty() ? nullptr : &Change);
}

Evaluation EngineEvaluator::test(const Candidate &C) {
  std::string Hash = C.contentHash();
  Evaluation E;
  auto It = Prepared.find(Hash);
  auto Pending = Compiling.find(Hash);
  if (It != Prepared.end()) {
    JobSet Set = std::move(It->second);
    Prepared.erase(It);
    E = finishJobs(Set, /*WithCandidate=*/true);
  } else if (Pending != Compiling.end()) {
    Compiled Done = Pending->second.get();
    Compiling.erase(Pending);
    JobSet Set = makeJobs(C, /*Verify=*/true, &Done);
    E = finishJobs(Set, /*WithCandidate=*/true);
  } else {
    E = runJobs(C, /*Verify=*/true);
  }
  LastTimings[Hash] = E.Timings;
  LastRegisters[Hash] = E.Registers;
  // The Profiler owns the timings; the Tester reports the verdict.
  E.Timings.clear();
  return E;
}

void EngineEvaluator::retime(const Candidate &C, Evaluation &E) {
  Evaluation R = runJobs(C, /*Verify=*/false);
  E.Stages += R.Stages;
  if (!R.verified() || R.Timings.empty()) {
    E.S = Evaluation::Status::RunError;
    E.Detail = "timing again: " +
               (R.Detail.empty() ? std::string("no timing") : R.Detail);
    return;
  }
  E.Timings = std::move(R.Timings);
}

EngineEvaluator::JobSet EngineEvaluator::makeJobs(const Candidate &C,
                                                  bool Verify,
                                                  const Compiled *Done) {
  JobSet Set;
  Evaluation E;
  auto Start = std::chrono::steady_clock::now();
  auto Base = images(Candidate());
  if (!Base) {
    E.S = Evaluation::Status::RunError;
    E.Detail = "the original does not compile: " + toString(Base.takeError());
    Set.Decided = E;
    return Set;
  }
  // The baseline's compile (once per evaluator) and the candidate's.
  Set.Stages.Compile =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
          .count();
  std::optional<Compiled> Now;
  if (!Done)
    Done = &Now.emplace(compile(C));
  Set.Stages.Compile += Done->Seconds;
  if (Done->Error) {
    E.S = Evaluation::Status::CompileError;
    E.Detail = *Done->Error;
    Set.Decided = E;
    return Set;
  }
  const std::vector<KernelImage> *Imgs = &Done->Images;
  std::vector<uint64_t> Seeds = nextSeeds();
  for (size_t I = 0; I < Specs.size(); ++I) {
    VerifyJob J;
    J.Baseline = (*Base)[I];
    J.Candidate = (*Imgs)[I];
    J.Spec = Specs[I];
    if (!C.launchChange().empty()) {
      // The code launches another block size or grid: the candidate runs
      // with the spec's launch changed the same way.
      auto L = changedLaunch(Specs[I], C.launchChange());
      if (!L) {
        E.S = Evaluation::Status::ContractBroken;
        E.Detail = "the candidate's launch cannot be applied to the spec: " +
                   toString(L.takeError());
        Set.Decided = E;
        return Set;
      }
      J.CandidateLaunch = std::move(*L);
    }
    if (Verify) {
      auto Space = launchSpace(I, C.launchChange());
      if (!Space) {
        E.S = Evaluation::Status::ContractBroken;
        E.Detail = "the candidate's launch cannot be applied to the launches "
                   "the code makes: " + toString(Space.takeError());
        Set.Decided = E;
        return Set;
      }
      J.LaunchSpace = std::move(Space->Variants);
      J.Notes = std::move(Space->Notes);
    }
    J.Seeds = Seeds;
    J.Options.Verify = Verify;
    J.Options.Adversarial = Verify && Opts.Adversarial;
    if (J.Options.Adversarial && I < AdversarialBases.size() &&
        AdversarialBases[I])
      setAdversarialBase(J, *AdversarialBases[I]);
    J.Options.Profile = true;
    J.Options.Runs = Opts.Runs;
    J.Options.Sanitize = Verify && Opts.Sanitize;
    Set.Jobs.push_back(std::move(J));
  }
  Set.Results.resize(Set.Jobs.size());
  return Set;
}

/// Adds a job process's own report of its phases to \p Into.
static void chargePhases(StageTimes &Into, const JobResult::Phases &P) {
  Into.Context += P.Context;
  Into.Load += P.Load;
  Into.Verify += P.Verify;
  Into.Profile += P.Profile;
}

std::vector<JobResult> EngineEvaluator::execute(ArrayRef<VerifyJob> Jobs,
                                                StageTimes &Into) {
  auto Start = std::chrono::steady_clock::now();
  std::vector<JobResult> Out;
  if (Opts.Exec)
    Out = runJobsOnWorkers(*Opts.Exec, Jobs, Opts.JobTimeoutSeconds, Opts.Log);
  else
    for (const VerifyJob &J : Jobs)
      Out.push_back(runJobIsolated(J, Opts.JobTimeoutSeconds, Opts.Log));
  double Wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
          .count();
  for (const JobResult &R : Out)
    chargePhases(Into, R.Seconds);
  // Jobs that ran side by side on several workers share the wall time:
  // each is charged its own process's report.
  if (Out.size() > 1 && Opts.Exec && Opts.Exec->workers() > 1)
    for (const JobResult &R : Out)
      Into.Jobs += R.Seconds.total();
  else
    Into.Jobs += Wall;
  return Out;
}

Evaluation EngineEvaluator::finishJobs(JobSet &Set, bool WithCandidate) {
  if (Set.Decided) {
    Evaluation D = *Set.Decided;
    D.Stages = Set.Stages;
    return D;
  }
  Evaluation E;
  for (size_t I = 0; I < Set.Jobs.size(); ++I) {
    if (!Set.Results[I])
      Set.Results[I] =
          std::move(execute(ArrayRef(Set.Jobs[I]), Set.Stages).front());
    const JobResult &R = *Set.Results[I];
    if (R.CopyBandwidthGBps > 0)
      CopyGBps = R.CopyBandwidthGBps;
    if (!R.Device.Name.empty())
      Device = R.Device;
    Evaluation One = evaluationFromJob(R, WithCandidate);
    for (ShapeTiming &T : One.Timings)
      T.Shape = label(Specs[I], T.Shape);
    bool Failed = !One.verified();
    combine(E, std::move(One), Specs.size() > 1 ? Specs[I].Kernel : "", I == 0);
    if (Failed)
      break; // No need to spend GPU time on the other instantiations.
  }
  E.Stages = Set.Stages;
  return E;
}

Evaluation EngineEvaluator::runJobs(const Candidate &C, bool Verify) {
  JobSet Set = makeJobs(C, Verify);
  return finishJobs(Set, /*WithCandidate=*/true);
}

void EngineEvaluator::prepare(ArrayRef<const Candidate *> Cs) {
  // The baseline's PTX and launch facts first (members the candidates'
  // compiles only read).
  if (!images(Candidate()))
    return; // makeJobs reports it for each candidate.
  if (!Pool)
    Pool = std::make_unique<llvm::DefaultThreadPool>(
        llvm::hardware_concurrency(Opts.CompileThreads));
  std::vector<std::string> Hashes;
  for (const Candidate *C : Cs) {
    std::string Hash = C->contentHash();
    if (Compiling.count(Hash) || Prepared.count(Hash))
      continue;
    Hashes.push_back(Hash);
    Compiling[Hash] =
        Pool->async([this, Copy = *C] { return compile(Copy); });
  }
  // One GPU gains nothing from running jobs ahead: test() makes and runs
  // each when it comes (while the next ones compile), and may skip the
  // instantiations after a failure.
  if (!Opts.Exec || Opts.Exec->workers() < 2 || Hashes.size() < 2)
    return;
  std::vector<std::pair<std::string, size_t>> Where;
  std::vector<VerifyJob> All;
  for (size_t K = 0; K < Hashes.size(); ++K) {
    const std::string &Hash = Hashes[K];
    Compiled Done = Compiling[Hash].get();
    Compiling.erase(Hash);
    const Candidate &C = **llvm::find_if(
        Cs, [&](const Candidate *X) { return X->contentHash() == Hash; });
    JobSet Set = makeJobs(C, /*Verify=*/true, &Done);
    for (size_t I = 0; I < Set.Jobs.size(); ++I) {
      Where.push_back({Hash, I});
      All.push_back(Set.Jobs[I]);
    }
    Prepared[Hash] = std::move(Set);
  }
  if (All.size() < 2)
    return;
  StageTimes Batch;
  std::vector<JobResult> Rs = execute(All, Batch);
  for (size_t K = 0; K < Rs.size(); ++K) {
    JobSet &Set = Prepared[Where[K].first];
    Set.Stages.Jobs += Rs[K].Seconds.total();
    chargePhases(Set.Stages, Rs[K].Seconds);
    Set.Results[Where[K].second] = std::move(Rs[K]);
  }
}

void EngineEvaluator::profile(const Candidate &C, Evaluation &E) {
  std::string Hash = C.contentHash();
  auto It = LastTimings.find(Hash);
  if (It == LastTimings.end() || It->second.empty()) {
    E.S = Evaluation::Status::RunError;
    E.Detail = "the job that verified the candidate reported no timing";
    return;
  }
  E.Timings = It->second;
  E.Registers = LastRegisters[Hash];
}

Evaluation EngineEvaluator::profileBaseline() {
  Evaluation E;
  auto Start = std::chrono::steady_clock::now();
  auto Base = images(Candidate());
  E.Stages.Compile =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
          .count();
  if (!Base) {
    E.S = Evaluation::Status::RunError;
    E.Detail = "the original does not compile: " + toString(Base.takeError());
    return E;
  }
  std::vector<uint64_t> Seeds = nextSeeds();
  for (size_t I = 0; I < Specs.size(); ++I) {
    VerifyJob J;
    J.Baseline = (*Base)[I];
    J.Spec = Specs[I];
    J.Seeds = Seeds;
    J.Options.Verify = false;
    J.Options.Adversarial = false;
    J.Options.Profile = true;
    J.Options.Runs = Opts.Runs;
    JobResult R = std::move(execute(ArrayRef(J), E.Stages).front());
    if (R.CopyBandwidthGBps > 0)
      CopyGBps = R.CopyBandwidthGBps;
    if (!R.Device.Name.empty())
      Device = R.Device;
    Evaluation One = evaluationFromJob(R, /*WithCandidate=*/false);
    for (ShapeTiming &T : One.Timings)
      T.Shape = label(Specs[I], T.Shape);
    bool Failed = !One.verified();
    combine(E, std::move(One), Specs.size() > 1 ? Specs[I].Kernel : "", I == 0);
    if (Failed)
      break;
  }
  return E;
}

} // namespace astra
