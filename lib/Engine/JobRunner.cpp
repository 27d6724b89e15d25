//===- JobRunner.cpp - Run a verify/profile job ---------------------------===//
#include "astra/Engine/JobRunner.h"
#include "astra/Engine/DifferentialTest.h"
#include "astra/Engine/ExternalTools.h"
#include "astra/Engine/Profiler.h"
#include "astra/Engine/PtxParams.h"
#include "astra/Support/FileIO.h"
#include "astra/Support/ShellCommand.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

#include <chrono>

using namespace llvm;

namespace astra {

void summarizeVerdict(JobResult &R) {
  if (R.V != Verdict::Pass && !R.Reason.empty())
    return; // Decided before any run (a load error).
  const RunResult *Fail = nullptr, *Err = nullptr;
  for (const RunResult &Run : R.Runs) {
    if (Run.V == Verdict::Fail && !Fail)
      Fail = &Run;
    if (Run.V == Verdict::Error && !Err)
      Err = &Run;
  }
  if (const RunResult *Run = Fail ? Fail : Err) {
    R.V = Run->V;
    R.Kind = Run->Failure ? Run->Failure->Kind : "error";
    R.Reason = Run->Failure ? Run->Failure->Message : "run '" + Run->Name + "' failed";
    return;
  }
  R.V = Verdict::Pass;
  R.Kind.clear();
  R.Reason.clear();
}

static KernelResourceInfo toInfo(const KernelAttributes &A) {
  KernelResourceInfo K;
  K.Registers = A.NumRegs;
  K.LocalBytes = A.LocalBytes;
  K.SharedBytes = A.SharedBytes;
  K.ConstBytes = A.ConstBytes;
  K.MaxThreadsPerBlock = A.MaxThreadsPerBlock;
  return K;
}

/// Marks the whole job failed or errored before any run.
static void decide(JobResult &R, Verdict V, StringRef Kind,
                   const Twine &Reason) {
  R.V = V;
  R.Kind = Kind.str();
  R.Reason = Reason.str();
}

namespace {
/// Adds the wall time since the last lap (or construction) to the phase
/// named at each lap.
class PhaseClock {
public:
  void lap(double &Into) {
    auto Now = std::chrono::steady_clock::now();
    Into += std::chrono::duration<double>(Now - Last).count();
    Last = Now;
  }

private:
  std::chrono::steady_clock::time_point Last = std::chrono::steady_clock::now();
};
} // namespace

static JobResult runJobTimed(const VerifyJob &J, raw_ostream *Log,
                             JobResult::Phases &Seconds, PhaseClock &Clock);

JobResult runJob(const VerifyJob &J, raw_ostream *Log) {
  JobResult::Phases Seconds;
  PhaseClock Clock;
  JobResult R = runJobTimed(J, Log, Seconds, Clock);
  R.Seconds = Seconds;
  return R;
}

static JobResult runJobTimed(const VerifyJob &J, raw_ostream *Log,
                             JobResult::Phases &Seconds, PhaseClock &Clock) {
  JobResult R;
  R.V = Verdict::Pass;
  R.Seeds = J.Seeds;
  const JobOptions &O = J.Options;
  auto Ctx = GpuContext::open(O.Device);
  Clock.lap(Seconds.Context);
  if (!Ctx) {
    // No GPU to run on: the place's failure, which an executor retries on
    // another worker.
    JobResult NoDevice = errorResult(toString(Ctx.takeError()));
    NoDevice.Kind = "no-device";
    return NoDevice;
  }
  const DeviceInfo &DI = (*Ctx)->info();
  R.Device = {DI.Name, DI.driverString(), DI.SmCount, DI.CcMajor, DI.CcMinor,
              DI.L2Bytes, DI.MemoryBytes};

  EngineSession S(**Ctx, J, R);
  S.Log = Log;

  // Check the spec against the kernel as compiled, before the first launch.
  auto BaseParams = ptxEntryParams(J.Baseline.Ptx, J.Baseline.Entry);
  if (!BaseParams) {
    decide(R, Verdict::Error, "error",
           "baseline (" + J.Baseline.Source + "): no kernel '" +
               J.Baseline.Entry + "' in its PTX");
    return R;
  }
  if (Error E = checkSpecAgainstPtx(S.Spec, *BaseParams, J.Baseline.Entry)) {
    decide(R, Verdict::Error, "error", toString(std::move(E)));
    return R;
  }
  auto BaseMod = GpuModule::load(**Ctx, J.Baseline.code(), "baseline");
  if (!BaseMod) {
    decide(R, Verdict::Error, "error", toString(BaseMod.takeError()));
    return R;
  }
  auto BaseFn = (*BaseMod)->function(J.Baseline.Entry);
  if (!BaseFn) {
    decide(R, Verdict::Error, "error", toString(BaseFn.takeError()));
    return R;
  }
  S.Baseline = *BaseFn;
  auto Ops = DeviceOps::load(**Ctx);
  if (!Ops) {
    decide(R, Verdict::Error, "error",
           "internal error: " + toString(Ops.takeError()));
    return R;
  }
  S.Ops = Ops->get();
  S.OnDevice = deviceVerifyEnabled();
  if (auto A = kernelAttributes(**Ctx, S.Baseline))
    R.BaselineResources = toInfo(*A);
  else
    R.Warnings.push_back(toString(A.takeError()));

  std::unique_ptr<GpuModule> CandMod;
  if (J.Candidate) {
    const KernelImage &C = *J.Candidate;
    auto CandParams = ptxEntryParams(C.Ptx, C.Entry);
    if (!CandParams) {
      decide(R, Verdict::Fail, "signature",
             "candidate (" + C.Source + "): no kernel '" + C.Entry +
                 "' in its PTX");
      return R;
    }
    if (CandParams->size() != BaseParams->size()) {
      decide(R, Verdict::Fail, "signature",
             formatv("candidate's kernel takes {0} parameters, the "
                     "baseline's {1}: the signature must not change",
                     CandParams->size(), BaseParams->size()));
      return R;
    }
    for (size_t I = 0; I < BaseParams->size(); ++I)
      if ((*CandParams)[I].Bytes != (*BaseParams)[I].Bytes) {
        decide(R, Verdict::Fail, "signature",
               formatv("candidate's parameter {0} ('{1}') is {2} bytes, the "
                       "baseline's {3}: the signature must not change",
                       I, S.Spec.Args[I].Name, (*CandParams)[I].Bytes,
                       (*BaseParams)[I].Bytes));
        return R;
      }
    if (usesDeviceLaunch(C.Ptx) && !usesDeviceLaunch(J.Baseline.Ptx)) {
      decide(R, Verdict::Fail, "device-launch",
             "candidate launches kernels from the device (dynamic "
             "parallelism): work outside the launched grid can escape the "
             "verified and timed stream");
      return R;
    }
    auto M = GpuModule::load(**Ctx, C.code(), "candidate");
    if (!M) {
      decide(R, Verdict::Fail, "load-error", toString(M.takeError()));
      return R;
    }
    CandMod = std::move(*M);
    auto F = CandMod->function(C.Entry);
    if (!F) {
      decide(R, Verdict::Fail, "signature", toString(F.takeError()));
      return R;
    }
    S.Candidate = *F;
    if (auto A = kernelAttributes(**Ctx, S.Candidate))
      R.CandidateResources = toInfo(*A);
    else
      R.Warnings.push_back(toString(A.takeError()));
  }
  S.CandidateLaunch = J.CandidateLaunch ? *J.CandidateLaunch : S.Spec.Launch;
  Clock.lap(Seconds.Load);

  bool Checks = O.Verify || O.CandidateOnly;
  if (O.Verify && J.Candidate)
    for (const std::string &N : J.Notes)
      R.Warnings.push_back(N);
  auto Plan = planRuns(S.Spec, J.Shapes, J.Seeds, O.Adversarial && Checks,
                       Checks ? ArrayRef<LaunchVariant>(J.LaunchSpace)
                              : ArrayRef<LaunchVariant>());
  if (!Plan) {
    decide(R, Verdict::Error, "error", toString(Plan.takeError()));
    return R;
  }

  // One prefetcher over the job's runs: each run's first seed is made while
  // the run before it runs; a run that stops early skips the rest of its
  // seeds (First: where each run's seeds begin).
  std::optional<InputPrefetcher> Made;
  if (O.CandidateOnly || (O.Verify && J.Candidate))
    Made.emplace(S.Spec, inputRequests(*Plan), S.OnDevice);
  size_t First = 0;

  if (O.CandidateOnly) {
    for (const PlannedRun &Run : *Plan) {
      Made->skipTo(First);
      First += Run.Seeds.size();
      RunResult Out;
      runCandidateOnly(S, Run, Out, *Made);
      R.Runs.push_back(std::move(Out));
      if (R.ContextLost)
        break;
    }
    Made.reset();
    summarizeVerdict(R);
    Clock.lap(Seconds.Verify);
    return R;
  }

  if (O.Verify && J.Candidate) {
    for (const PlannedRun &Run : *Plan) {
      Made->skipTo(First);
      First += Run.Seeds.size();
      if (Log)
        *Log << "verify " << Run.Name << "\n";
      RunResult Out;
      verifyRun(S, Run, Out, *Made);
      R.Runs.push_back(std::move(Out));
      if (R.ContextLost)
        break;
    }
    // Nothing may still be in the making while kernels are timed: a run
    // that stopped early or a lost context can leave one seed pending.
    Made.reset();
  }
  summarizeVerdict(R);
  Clock.lap(Seconds.Verify);

  if (O.Profile && !R.ContextLost && R.V != Verdict::Fail) {
    bool FromCache = false;
    if (auto BW = deviceCopyBandwidth(**Ctx, O.CacheDir, &FromCache))
      R.CopyBandwidthGBps = *BW;
    else
      R.Warnings.push_back("copy bandwidth unknown (no roofline): " +
                           toString(BW.takeError()));
    for (const PlannedRun &Run : *Plan) {
      if (Run.Kind != RunKind::Shape)
        continue;
      if (Log)
        *Log << "profile " << Run.Name << "\n";
      RunResult *Out = nullptr;
      for (RunResult &Existing : R.Runs)
        if (Existing.Name == Run.Name)
          Out = &Existing;
      if (!Out) {
        R.Runs.push_back(startRunResult(Run));
        Out = &R.Runs.back();
      }
      profileRun(S, Run, *Out);
      if (R.ContextLost)
        break;
    }
    R.V = Verdict::Pass;
    R.Reason.clear();
    summarizeVerdict(R);
    Clock.lap(Seconds.Profile);
  }

  if (J.Candidate && R.V == Verdict::Pass && O.Sanitize)
    runSanitizers(J, R, Log);
  if (O.Ncu && R.V == Verdict::Pass)
    runNcu(J, R, Log);
  return R;
}

std::string jobRunnerExecutable() {
  static int Anchor;
  return sys::fs::getMainExecutable(nullptr, &Anchor);
}

JobResult runJobIsolated(const VerifyJob &J, unsigned TimeoutSeconds,
                         raw_ostream *Log, StringRef Executable) {
  std::string Exe = Executable.empty() ? jobRunnerExecutable() : Executable.str();
  SmallString<128> JobPath, ResultPath, ErrPath;
  if (std::error_code EC =
          sys::fs::createTemporaryFile("astra-job", "json", JobPath))
    return errorResult("cannot create a temporary job file: " + EC.message());
  if (std::error_code EC =
          sys::fs::createTemporaryFile("astra-result", "json", ResultPath))
    return errorResult("cannot create a temporary result file: " +
                       EC.message());
  if (std::error_code EC =
          sys::fs::createTemporaryFile("astra-job", "log", ErrPath))
    return errorResult("cannot create a temporary log file: " + EC.message());
  auto Cleanup = [&] {
    sys::fs::remove(JobPath);
    sys::fs::remove(ResultPath);
    sys::fs::remove(ErrPath);
  };
  sys::fs::remove(ResultPath); // The child writes it only when it finishes.
  if (Error E = writeFileAtomically(JobPath, writeJobJson(J))) {
    Cleanup();
    return errorResult(toString(std::move(E)));
  }
  std::vector<StringRef> Args = {Exe, "run-job", JobPath, "-o", ResultPath};
  // The child writes its progress (runs, per-seed times) only when asked;
  // the caller shows it only when it passed a log.
  if (Log)
    Args.push_back("--verbose");
  std::optional<StringRef> Redirects[] = {std::nullopt, StringRef(ErrPath),
                                          StringRef(ErrPath)};
  std::string ErrMsg;
  bool Failed = false;
  auto Start = std::chrono::steady_clock::now();
  int RC = sys::ExecuteAndWait(Exe, Args, std::nullopt, Redirects,
                               TimeoutSeconds, 0, &ErrMsg, &Failed);
  double Elapsed = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - Start)
                       .count();
  std::string ChildLog;
  if (auto Text = readFile(ErrPath))
    ChildLog = *Text;
  else
    consumeError(Text.takeError());
  if (Log && !ChildLog.empty())
    *Log << ChildLog;

  JobResult R;
  bool HaveResult = false;
  if (sys::fs::exists(ResultPath)) {
    if (auto Text = readFile(ResultPath)) {
      if (auto Parsed = parseResultJson(*Text, ResultPath)) {
        R = std::move(*Parsed);
        HaveResult = true;
      } else {
        R = errorResult("the verifier process wrote an unreadable result: " +
                        toString(Parsed.takeError()));
        HaveResult = true;
      }
    } else {
      consumeError(Text.takeError());
    }
  }
  Cleanup();
  if (HaveResult)
    return R;
  if (Failed)
    return errorResult("could not start the verifier process " + Exe + ": " +
                       ErrMsg);
  std::string Tail = lastLines(ChildLog, 5);
  std::string More = Tail.empty() ? "" : "; its last output:\n" + Tail;
  bool TimedOut = StringRef(ErrMsg).contains("timed out") ||
                  (TimeoutSeconds && Elapsed >= TimeoutSeconds);
  if (TimedOut) {
    JobResult T;
    T.V = J.Candidate ? Verdict::Fail : Verdict::Error;
    T.Kind = "timeout";
    T.Reason = formatv("timed out after {0} s: the verifier process was "
                       "killed (a kernel that never finishes?)",
                       TimeoutSeconds)
                   .str() +
               More;
    return T;
  }
  if (RC == -2 || RC < 0) {
    JobResult T;
    T.V = Verdict::Error;
    T.Kind = "crash";
    T.Reason = "the verifier process crashed (" +
               (ErrMsg.empty() ? std::string("killed") : ErrMsg) + ")" + More;
    return T;
  }
  return errorResult(formatv("the verifier process exited with code {0} "
                             "without a result",
                             RC)
                         .str() +
                     More);
}

} // namespace astra
