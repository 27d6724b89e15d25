//===- DifferentialTest.cpp - Baseline vs candidate on the GPU ------------===//
#include "astra/Engine/DifferentialTest.h"
#include "astra/Engine/Compare.h"
#include "astra/Engine/DeviceCompare.h"
#include "astra/Engine/Inputs.h"
#include "astra/Engine/KernelRunner.h"
#include "astra/Engine/ScaleRules.h"
#include "astra/Engine/Validity.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <chrono>
#include <set>

using namespace llvm;

namespace astra {

std::string describeRun(const PlannedRun &Run, std::optional<uint64_t> Seed) {
  std::string S = "shape set '" + Run.Name + "'";
  if (Run.Kind == RunKind::OddSizes || Run.Kind == RunKind::LaunchSpace) {
    std::vector<std::string> Vs;
    for (auto &[K, V] : Run.Vars)
      Vs.push_back(K + "=" + V.str());
    S += " (" + join(Vs, ", ") + ")";
  }
  if (Seed)
    S += ", seed " + std::to_string(*Seed);
  return S;
}

RunResult startRunResult(const PlannedRun &Run) {
  RunResult Out;
  Out.Name = Run.Name;
  Out.Shape = Run.Shape;
  Out.Kind = runKindName(Run.Kind).str();
  if (Run.Kind == RunKind::Values)
    Out.Kind += "=" + valueModeName(Run.Values).str();
  Out.Vars = Run.Vars;
  return Out;
}

void recordFailure(RunResult &Out, FailureInfo F) {
  if (Out.V != Verdict::Pass)
    return;
  Out.V = Verdict::Fail;
  Out.Failure = std::move(F);
}

static void recordError(RunResult &Out, StringRef Message,
                        std::optional<uint64_t> Seed, bool Baseline = false) {
  if (Out.V == Verdict::Error)
    return;
  Out.V = Verdict::Error;
  Out.BaselineError = Baseline;
  FailureInfo F;
  F.Kind = "error";
  F.Message = Message.str();
  F.Seed = Seed;
  Out.Failure = std::move(F);
}

void recordRunError(EngineSession &S, Error E, bool IsCandidate,
                    StringRef Where, std::optional<uint64_t> Seed,
                    RunResult &Out) {
  StringRef Who = IsCandidate ? "candidate" : "baseline";
  FailureInfo F;
  F.Seed = Seed;
  handleAllErrors(
      std::move(E),
      [&](const TimeoutError &T) {
        S.Result.ContextLost = true;
        F.Kind = "timeout";
        F.Message = formatv("{0} timed out: the kernel did not finish within "
                            "{1} s on {2} (an infinite loop or a deadlock?)",
                            Who, formatv("{0}", llvm::format("%g", T.seconds())),
                            Where)
                        .str();
      },
      [&](const CudaError &C) {
        if (isStickyCudaError(C.code())) {
          S.Result.ContextLost = true;
          F.Kind = "crash";
          F.Message = formatv("{0} crashed: {1} ({2}) on {3}", Who, C.name(),
                              C.text(), Where)
                          .str();
        } else if (C.call() == "cuLaunchKernel" ||
                   C.call() == "cuFuncSetAttribute") {
          F.Kind = "launch-error";
          F.Message = formatv("{0} could not be launched on {1}: {2}", Who,
                              Where, C.message())
                          .str();
        } else {
          F.Kind = "error";
          F.Message = (Who + " run failed on " + Where + ": " + C.message()).str();
        }
      },
      [&](const ErrorInfoBase &EI) {
        F.Kind = "error";
        F.Message = (Who + " run failed on " + Where + ": " + EI.message()).str();
      });
  if (IsCandidate && F.Kind != "error") {
    recordFailure(Out, std::move(F));
    return;
  }
  // The baseline is the reference: when it crashes, hangs or cannot be
  // launched, the spec (sizes, launch) is what is wrong.
  if (!IsCandidate && F.Kind != "error")
    F.Message += "; the baseline must run cleanly on every shape set the spec "
                 "gives and at every launch its launch sites can make (check "
                 "the counts, the launch configuration and \"launch_space\")";
  recordError(Out, F.Message, Seed, /*Baseline=*/!IsCandidate);
}

namespace {

/// The per-seed work of one planned run.
class RunVerifier {
public:
  RunVerifier(EngineSession &S, const PlannedRun &Run, RunResult &Out,
              KernelRunner &B, KernelRunner &C)
      : S(S), Run(Run), Out(Out), B(B), C(C) {
    if (S.Spec.Check)
      for (std::string &N : validityCheckedBuffers(*S.Spec.Check))
        Checked.insert(N);
    for (const ArgSpec &A : S.Spec.Args) {
      if (!A.IsBuffer || (A.R != Role::Output && A.R != Role::InOut))
        continue;
      Written.push_back(&A);
      if (!Checked.count(A.Name))
        Compared.push_back(&A);
    }
    // A validity check reads every buffer on the host, and f64 outputs'
    // squares overflow the device's sums of the scale rules: those runs
    // compare on the host.
    OnDevice = S.OnDevice && S.Ops && !S.Spec.Check;
    for (const ArgSpec *A : Compared)
      OnDevice = OnDevice && A->Type != DType::F64;
  }

  /// Runs one seed on the inputs \p Made gives next; false when the run
  /// should stop (failure or error).
  bool runSeed(uint64_t Seed, InputPrefetcher &Made);
  /// Warnings for outputs that were weak on every seed.
  void finish();
  /// Where the last seed's time went ("inputs <s> s, baseline <s> s,
  /// candidate <s> s"), for the verbose log: big shapes cost seconds per
  /// seed, and this says which part to make cheaper.
  std::string lastSeedTimes() const;

private:
  bool runKernel(KernelRunner &K, bool IsCandidate, uint64_t Seed);
  bool fail(StringRef Kind, const Twine &Msg, uint64_t Seed,
            const std::optional<Mismatch> &Example = std::nullopt);
  bool checkInputs(InputSet &Inputs, KernelRunner &K, bool IsCandidate,
                   uint64_t Seed);
  /// compareBuffers (\p Bitwise: compareBitwise) of \p A on the device: the
  /// expected values in the copy \p Exp saved, the actual ones in \p Act's
  /// buffer; only the first failing element of each side comes to the host.
  /// Nullopt after an error (recorded).
  std::optional<Comparison> compareOnDevice(const ArgSpec &A,
                                            const KernelRunner &Exp,
                                            const KernelRunner &Act,
                                            Tolerance Tol, int PoisonVariant,
                                            bool Bitwise, uint64_t Seed);
  /// checkScale of \p A on the device (the baseline's saved output against
  /// the candidate's); nullopt after an error (recorded).
  std::optional<ScaleVerdict> scaleOnDevice(const ArgSpec &A, uint64_t Seed);
  /// weakOutputWarning of the baseline's saved \p A on the device; nullopt
  /// after an error (recorded).
  std::optional<std::string> weakOnDevice(const ArgSpec &A, uint64_t Seed);
  /// Whether any of \p Bufs differs from what \p K's last saveWritten()
  /// kept; nullopt after an error (recorded).
  std::optional<bool> changedSinceSave(KernelRunner &K,
                                       llvm::ArrayRef<const ArgSpec *> Bufs,
                                       bool IsCandidate, uint64_t Seed);
  bool checkGuards(KernelRunner &K, bool IsCandidate, uint64_t Seed);
  /// Runs the validity check on a run's buffers; nullopt when it passed.
  std::optional<ValidityResult>
  validity(const std::map<std::string, HostBuffer> &Inputs,
           const std::map<std::string, HostBuffer> &Outputs, uint64_t Seed);

  EngineSession &S;
  const PlannedRun &Run;
  RunResult &Out;
  KernelRunner &B, &C;
  std::set<std::string> Checked;
  std::vector<const ArgSpec *> Compared;
  /// Outputs and in-outs: compared, or judged by the validity check.
  std::vector<const ArgSpec *> Written;
  std::set<std::string> Nondeterministic; ///< Baseline outputs.
  std::set<std::string> UntouchedWarned;
  std::map<std::string, std::string> Weak; ///< Weak on every seed so far.
  bool FirstSeed = true;
  /// Outputs compared on the device (only the evidence of a failure comes
  /// to the host), inputs made there.
  bool OnDevice = false;
  /// Seconds the last seed spent waiting for its inputs (made while the
  /// seed before it ran), on the baseline, on the candidate (runs, transfers
  /// and checks).
  double InputSeconds = 0, BaselineSeconds = 0, CandidateSeconds = 0;
};

static double secondsSince(std::chrono::steady_clock::time_point T) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - T)
      .count();
}

std::string RunVerifier::lastSeedTimes() const {
  return formatv("inputs {0:f2} s, baseline {1:f2} s, candidate {2:f2} s",
                 InputSeconds, BaselineSeconds, CandidateSeconds)
      .str();
}

bool RunVerifier::fail(StringRef Kind, const Twine &Msg, uint64_t Seed,
                       const std::optional<Mismatch> &Example) {
  FailureInfo F;
  F.Kind = Kind.str();
  F.Seed = Seed;
  F.Message = Msg.str();
  if (Example) {
    F.Buffer = Example->Buffer;
    F.Index = Example->Index;
    F.Expected = Example->Expected;
    F.Actual = Example->Actual;
  }
  recordFailure(Out, std::move(F));
  return false;
}

bool RunVerifier::runKernel(KernelRunner &K, bool IsCandidate, uint64_t Seed) {
  if (Error E = K.run(S.timeout())) {
    recordRunError(S, std::move(E), IsCandidate, describeRun(Run, Seed), Seed,
                   Out);
    return false;
  }
  return true;
}

bool RunVerifier::checkGuards(KernelRunner &K, bool IsCandidate,
                              uint64_t Seed) {
  auto G = K.checkGuards();
  if (!G) {
    recordRunError(S, G.takeError(), IsCandidate, describeRun(Run, Seed), Seed,
                   Out);
    return false;
  }
  if (G->empty())
    return true;
  if (!IsCandidate) {
    recordError(Out,
                *G + " on " + describeRun(Run, Seed) +
                    "; the spec's count for that buffer is too small",
                Seed, /*Baseline=*/true);
    return false;
  }
  return fail("out-of-bounds", *G + " on " + describeRun(Run, Seed), Seed);
}

bool RunVerifier::checkInputs(InputSet &Inputs, KernelRunner &K,
                              bool IsCandidate, uint64_t Seed) {
  for (const ArgSpec &A : S.Spec.Args) {
    if (!A.IsBuffer || A.R != Role::Input)
      continue;
    // On the device against the baseline's pristine copy; only a changed
    // input comes to the host, to be described.
    auto Changed = K.differsFromPristine(A.Name, B, S.timeout());
    if (!Changed) {
      recordRunError(S, Changed.takeError(), IsCandidate,
                     describeRun(Run, Seed), Seed, Out);
      return false;
    }
    if (!*Changed)
      continue;
    auto After = K.downloadBuffer(A.Name);
    if (!After) {
      recordRunError(S, After.takeError(), IsCandidate, describeRun(Run, Seed),
                     Seed, Out);
      return false;
    }
    const HostBuffer *Uploaded = Inputs.host(A.Name);
    if (!Uploaded) {
      recordError(Out, "internal error: no inputs for '" + A.Name + "'", Seed);
      return false;
    }
    Comparison Cmp = compareBitwise(A.Name, *Uploaded, *After);
    if (Cmp.ok())
      continue;
    if (!IsCandidate) {
      recordError(Out,
                  "the baseline writes to '" + A.Name + "', which the spec " +
                      "calls an input, on " + describeRun(Run, Seed) + ": " +
                      describe(Cmp) + "; make it \"inout\" in the spec",
                  Seed, /*Baseline=*/true);
      return false;
    }
    return fail("input-modified",
                "candidate wrote to input '" + A.Name + "' on " +
                    describeRun(Run, Seed) + ": " + describe(Cmp),
                Seed, Cmp.First);
  }
  return true;
}

std::optional<bool>
RunVerifier::changedSinceSave(KernelRunner &K, ArrayRef<const ArgSpec *> Bufs,
                              bool IsCandidate, uint64_t Seed) {
  for (const ArgSpec *A : Bufs) {
    auto Changed = K.changedSinceSave(A->Name, S.timeout());
    if (!Changed) {
      recordRunError(S, Changed.takeError(), IsCandidate,
                     describeRun(Run, Seed), Seed, Out);
      return std::nullopt;
    }
    if (*Changed)
      return true;
  }
  return false;
}

std::optional<ValidityResult>
RunVerifier::validity(const std::map<std::string, HostBuffer> &Inputs,
                      const std::map<std::string, HostBuffer> &Outputs,
                      uint64_t Seed) {
  if (!S.Spec.Check)
    return std::nullopt;
  // Inputs as generated (they were checked unchanged), everything the
  // kernel writes as the run left it.
  std::map<std::string, const HostBuffer *> Bufs;
  for (const ArgSpec &A : S.Spec.Args)
    if (A.IsBuffer)
      Bufs[A.Name] = A.R == Role::Input ? &Inputs.at(A.Name) : &Outputs.at(A.Name);
  auto R = runValidityCheck(*S.Spec.Check, S.Spec, Run.Vars, Bufs);
  if (!R) {
    ValidityResult Bad;
    Bad.Ok = false;
    Bad.Message = "error: " + toString(R.takeError());
    return Bad;
  }
  if (R->Ok)
    return std::nullopt;
  return *R;
}

std::optional<Comparison>
RunVerifier::compareOnDevice(const ArgSpec &A, const KernelRunner &Exp,
                             const KernelRunner &Act, Tolerance Tol,
                             int PoisonVariant, bool Bitwise, uint64_t Seed) {
  std::optional<Error> ElementError;
  auto Element = [&](uint64_t I)
      -> std::optional<std::pair<HostBuffer, HostBuffer>> {
    auto E1 = Exp.downloadElement(A.Name, I, /*Saved=*/true);
    auto A1 = Act.downloadElement(A.Name, I, /*Saved=*/false);
    if (E1 && A1)
      return std::make_pair(std::move(*E1), std::move(*A1));
    ElementError = joinErrors(E1 ? Error::success() : E1.takeError(),
                              A1 ? Error::success() : A1.takeError());
    return std::nullopt;
  };
  auto Cmp = astra::compareOnDevice(
      *S.Ops, A.Name, A.Type, Act.count(A.Name), Exp.savedAddress(A.Name),
      Act.address(A.Name), Tol, PoisonVariant, Bitwise, S.timeout(), Element);
  Error E = Cmp ? Error::success() : Cmp.takeError();
  if (ElementError)
    E = joinErrors(std::move(E), std::move(*ElementError));
  if (E) {
    recordRunError(S, std::move(E), &Act == &C, describeRun(Run, Seed), Seed,
                   Out);
    return std::nullopt;
  }
  return std::move(*Cmp);
}

std::optional<ScaleVerdict> RunVerifier::scaleOnDevice(const ArgSpec &A,
                                                       uint64_t Seed) {
  std::optional<Error> ElementError;
  auto Element = [&](uint64_t I) {
    auto E1 = B.downloadElement(A.Name, I, /*Saved=*/true);
    auto A1 = C.downloadElement(A.Name, I, /*Saved=*/false);
    if (E1 && A1)
      return std::make_pair(std::move(*E1), std::move(*A1));
    ElementError = joinErrors(E1 ? Error::success() : E1.takeError(),
                              A1 ? Error::success() : A1.takeError());
    return std::make_pair(HostBuffer(A.Type, 1), HostBuffer(A.Type, 1));
  };
  auto V = checkScaleOnDevice(A.Name, A.Type, C.count(A.Name),
                              toleranceFor(S.Spec, A).Rtol, *S.Ops,
                              B.savedAddress(A.Name), C.address(A.Name),
                              S.timeout(), Element);
  Error E = V ? Error::success() : V.takeError();
  if (ElementError)
    E = joinErrors(std::move(E), std::move(*ElementError));
  if (E) {
    recordRunError(S, std::move(E), true, describeRun(Run, Seed), Seed, Out);
    return std::nullopt;
  }
  return std::move(*V);
}

std::optional<std::string> RunVerifier::weakOnDevice(const ArgSpec &A,
                                                     uint64_t Seed) {
  uint64_t N = B.count(A.Name);
  auto Differ = S.Ops->differentFromFirst(N, dtypeCode(A.Type),
                                          B.savedAddress(A.Name), S.timeout(),
                                          "the baseline's '" + A.Name + "'");
  if (!Differ) {
    recordRunError(S, Differ.takeError(), false, describeRun(Run, Seed), Seed,
                   Out);
    return std::nullopt;
  }
  if (*Differ || N <= 1)
    return std::string();
  auto First = B.downloadElement(A.Name, 0, /*Saved=*/true);
  if (!First) {
    recordRunError(S, First.takeError(), false, describeRun(Run, Seed), Seed,
                   Out);
    return std::nullopt;
  }
  return weakOutputWarning(A.Name, *First, N, /*Constant=*/true);
}

bool RunVerifier::runSeed(uint64_t Seed, InputPrefetcher &Made) {
  Out.SeedsRun.push_back(Seed);
  std::string Where = describeRun(Run, Seed);
  InputSeconds = BaselineSeconds = CandidateSeconds = 0;
  auto InputsOr = Made.next(&InputSeconds);
  auto Start = std::chrono::steady_clock::now();
  if (!InputsOr) {
    recordError(Out, "inputs for " + Where + ": " +
                         toString(InputsOr.takeError()),
                Seed);
    return false;
  }
  InputSet &Inputs = *InputsOr;
  // On the device unless the baseline does not repeat itself (found below).
  bool Device = OnDevice;

  // The baseline, twice: its own repeatability decides how strictly the
  // candidate's repeatability is judged. The inputs go up once; the
  // in-outs are reset, and the candidate's buffers filled, from the
  // baseline's pristine device copies.
  std::map<std::string, HostBuffer> Ref, Ref2;
  bool BaselineRepeats = true;
  for (int Pass = 0; Pass < 2; ++Pass) {
    Error E = Pass == 0 ? B.upload(Inputs) : B.loadPristine(B, true);
    if (!E && Pass == 0)
      E = B.savePristine();
    if (!E)
      E = B.poison(unsigned(Pass));
    if (E) {
      recordRunError(S, std::move(E), false, Where, Seed, Out);
      return false;
    }
    if (!runKernel(B, false, Seed))
      return false;
    if (!checkGuards(B, false, Seed) || !checkInputs(Inputs, B, false, Seed))
      return false;
    if (Pass == 1) {
      // Bit-identical to the first run (so nothing left unwritten: the two
      // runs had different poison): the second run is not needed on the
      // host.
      auto Changed = changedSinceSave(B, Compared, false, Seed);
      if (!Changed)
        return false;
      if (!*Changed)
        break;
      BaselineRepeats = false;
      if (Device) {
        // Holes or float atomics: the host judges this seed, with the
        // baseline's first run from its saved copy.
        auto Saved = B.downloadSaved();
        if (!Saved) {
          recordRunError(S, Saved.takeError(), false, Where, Seed, Out);
          return false;
        }
        Ref = std::move(*Saved);
        Device = false;
      }
    }
    if (Pass == 0 && Device) {
      // The first run stays on the device, in the saved copy.
      if (Error E = B.saveWritten()) {
        recordRunError(S, std::move(E), false, Where, Seed, Out);
        return false;
      }
      continue;
    }
    auto D = B.downloadWritten();
    if (!D) {
      recordRunError(S, D.takeError(), false, Where, Seed, Out);
      return false;
    }
    if (Pass == 0) {
      if (Error E = B.saveWritten()) {
        recordRunError(S, std::move(E), false, Where, Seed, Out);
        return false;
      }
    }
    (Pass == 0 ? Ref : Ref2) = std::move(*D);
  }
  // Elements the baseline never writes keep whatever was there before (the
  // poison here): the candidate must leave them alone too.
  std::map<std::string, std::vector<bool>> Untouched;
  for (const ArgSpec *A : BaselineRepeats ? ArrayRef<const ArgSpec *>()
                                          : ArrayRef<const ArgSpec *>(Compared)) {
    const HostBuffer &R0 = Ref.at(A->Name), &R1 = Ref2.at(A->Name);
    std::vector<bool> Mask = unwrittenInBoth(R0, R1);
    size_t N = std::count(Mask.begin(), Mask.end(), true);
    if (N && UntouchedWarned.insert(A->Name).second)
      Out.Warnings.push_back(formatv(
          "the baseline leaves {0} of {1} elements of '{2}' unwritten; the "
          "candidate must leave them unwritten too",
          N, R0.count(), A->Name));
    if (N)
      Untouched[A->Name] = std::move(Mask);
    // Poison differs between the runs only where nothing was written.
    Comparison Same = N ? compareBitwise(A->Name, normalizePoison(R0, 0),
                                         normalizePoison(R1, 1))
                        : compareBitwise(A->Name, R0, R1);
    if (!Same.ok() && Nondeterministic.insert(A->Name).second)
      Out.Warnings.push_back(formatv(
          "the baseline's '{0}' differs between two runs on the same inputs "
          "(max difference {1:e2}; float atomics?): the candidate's own "
          "repeatability on '{0}' is judged with the tolerance, not bit for bit",
          A->Name, Same.MaxAbsErr));
  }
  // What a candidate run with poison \p Variant must hold: the baseline's
  // output, with that poison where the baseline writes nothing. A reference,
  // not a copy, in the common case (outputs are hundreds of MB).
  HostBuffer Holey;
  auto Expected = [&](const ArgSpec *A, unsigned Variant) -> const HostBuffer & {
    auto It = Untouched.find(A->Name);
    if (It == Untouched.end())
      return Ref.at(A->Name);
    Holey = withPoisonAt(Ref.at(A->Name), It->second, Variant);
    return Holey;
  };
  if (auto V = S.Spec.Check ? validity(Inputs.allOnHost(), Ref, Seed)
                            : std::nullopt) {
    recordError(Out,
                "the baseline fails the spec's " + S.Spec.Check->Name +
                    " check on " + Where + ": " + V->Message +
                    "; the check's parameters or the spec are wrong",
                Seed, /*Baseline=*/true);
    return false;
  }
  if (Run.Kind == RunKind::Shape) {
    for (const ArgSpec *A : Compared) {
      std::string W;
      if (Device) {
        auto DW = weakOnDevice(*A, Seed);
        if (!DW)
          return false;
        W = std::move(*DW);
      } else {
        W = weakOutputWarning(A->Name, Ref.at(A->Name));
      }
      if (FirstSeed) {
        if (!W.empty())
          Weak[A->Name] = W;
      } else if (W.empty()) {
        Weak.erase(A->Name);
      }
    }
  }
  FirstSeed = false;

  // Large-magnitude inputs scale the absolute error of legitimate float
  // reorderings with them (see largeValueTolerance).
  bool LargeValues = Run.Kind == RunKind::Values && Run.Values == ValueMode::Large;
  std::map<std::string, Tolerance> Tol;
  for (const ArgSpec *A : Compared) {
    Tolerance T = toleranceFor(S.Spec, *A);
    if (LargeValues && Device && isFloating(A->Type)) {
      cu::DevicePtr Saved = B.savedAddress(A->Name);
      auto M = S.Ops->moments(B.count(A->Name), dtypeCode(A->Type), 0, Saved,
                              Saved, S.timeout(),
                              "the baseline's '" + A->Name + "'");
      if (!M) {
        recordRunError(S, M.takeError(), false, Where, Seed, Out);
        return false;
      }
      T = largeValueTolerance(T, M->SumE2, M->Finite);
    } else if (LargeValues && isFloating(A->Type)) {
      // Only floats: an integer output is compared exactly, and on the
      // device path its baseline never comes to the host.
      T = largeValueTolerance(T, Ref.at(A->Name));
    }
    Tol[A->Name] = T;
  }
  auto tolerance = [&](const ArgSpec *A) { return Tol.at(A->Name); };
  bool ScaleRules = scaleRulesApply(Run);

  BaselineSeconds = secondsSince(Start);
  Start = std::chrono::steady_clock::now();
  // The candidate's time, however its checks end.
  struct StopWatch {
    double &Into;
    std::chrono::steady_clock::time_point From;
    ~StopWatch() { Into = secondsSince(From); }
  } CandidateClock{CandidateSeconds, Start};

  // The candidate, twice, with different poison. What its first run wrote,
  // per compared buffer: its download, or the baseline's output where the
  // device showed the two bit for bit the same.
  std::map<std::string, HostBuffer> First;
  std::map<std::string, const HostBuffer *> FirstOf;
  for (int Pass = 0; Pass < 2; ++Pass) {
    Error E = C.loadPristine(B, Pass == 1);
    if (!E)
      E = C.poison(unsigned(Pass));
    if (E) {
      recordRunError(S, std::move(E), true, Where, Seed, Out);
      return false;
    }
    if (!runKernel(C, true, Seed))
      return false;
    if (!checkGuards(C, true, Seed) || !checkInputs(Inputs, C, true, Seed))
      return false;
    if (Pass == 1 && Untouched.empty()) {
      // Where the baseline writes everything, a second run that left every
      // written buffer bit for bit as the first passes every check the
      // first passed (same values; nothing unwritten, or the other poison
      // would show).
      auto Changed = changedSinceSave(C, Written, true, Seed);
      if (!Changed)
        return false;
      if (!*Changed)
        return true;
    }
    // Outputs bit for bit what the baseline's first run wrote (compared on
    // the device with the baseline's saved copy) pass the comparison below
    // without a difference of any kind, so they need not cross to the host.
    // Only where the baseline leaves holes does the expectation differ from
    // its output (the poison of this run), and a validity check reads
    // every output.
    std::set<std::string> Same;
    if (Pass == 0 || Untouched.empty()) {
      for (const ArgSpec *A : Compared) {
        if (Untouched.count(A->Name))
          continue;
        auto Differs = C.differsFromSaved(A->Name, B, S.timeout());
        if (!Differs) {
          recordRunError(S, Differs.takeError(), true, Where, Seed, Out);
          return false;
        }
        if (!*Differs)
          Same.insert(A->Name);
      }
    }
    // The first run needs no download when every output was the same; the
    // second one is compared with the first on the host.
    std::map<std::string, HostBuffer> D;
    if (!Device &&
        (Pass == 1 || Same.size() < Compared.size() || S.Spec.Check)) {
      auto Got = C.downloadWritten();
      if (!Got) {
        recordRunError(S, Got.takeError(), true, Where, Seed, Out);
        return false;
      }
      D = std::move(*Got);
    }
    for (const ArgSpec *A : Compared) {
      if (Same.count(A->Name))
        continue;
      Comparison Cmp;
      if (Device) {
        auto DC = compareOnDevice(*A, B, C, tolerance(A), Pass,
                                  /*Bitwise=*/false, Seed);
        if (!DC)
          return false;
        Cmp = std::move(*DC);
      } else {
        Cmp = compareBuffers(A->Name, Expected(A, Pass), D.at(A->Name),
                             tolerance(A), Pass);
      }
      Out.MaxAbsErr = std::max(Out.MaxAbsErr, Cmp.MaxAbsErr);
      Out.MaxRelErr = std::max(Out.MaxRelErr, Cmp.MaxRelErr);
      if (!Cmp.ok()) {
        bool Unwritten =
            Cmp.First &&
            StringRef(Cmp.First->Reason).starts_with("not written");
        return fail(Unwritten ? "unwritten" : "mismatch",
                    (Unwritten ? "candidate did not write every element of '"
                               : "wrong result in '") +
                        A->Name + "' on " + Where + ": " + describe(Cmp),
                    Seed, Cmp.First);
      }
      if (!ScaleRules)
        continue;
      ScaleVerdict SV;
      if (Device) {
        auto DV = scaleOnDevice(*A, Seed);
        if (!DV)
          return false;
        SV = std::move(*DV);
      } else {
        SV = checkScale(A->Name, Expected(A, Pass), D.at(A->Name),
                        toleranceFor(S.Spec, *A).Rtol);
      }
      if (!SV.ok())
        return fail(SV.Kind,
                    "wrong result in '" + A->Name + "' on " + Where + ": " +
                        describe(SV),
                    Seed, SV.Example);
    }
    if (auto V = S.Spec.Check ? validity(Inputs.allOnHost(), D, Seed)
                              : std::nullopt) {
      FailureInfo F;
      F.Kind = "validity";
      F.Seed = Seed;
      F.Buffer = V->Buffer;
      F.Index = V->Index;
      F.Message = "candidate fails the " + S.Spec.Check->Name + " check on " +
                  Where + ": " + V->Message;
      recordFailure(Out, std::move(F));
      return false;
    }
    if (Pass == 0) {
      if (Error E = C.saveWritten()) {
        recordRunError(S, std::move(E), true, Where, Seed, Out);
        return false;
      }
      if (Device)
        continue;
      First = std::move(D);
      for (const ArgSpec *A : Compared)
        FirstOf[A->Name] =
            Same.count(A->Name) ? &Ref.at(A->Name) : &First.at(A->Name);
      continue;
    }
    for (const ArgSpec *A : Compared) {
      if (Device) {
        // Against the candidate's own first run, saved on the device (the
        // baseline wrote every element, so there are no holes).
        bool Tolerant = Nondeterministic.count(A->Name);
        auto DC = compareOnDevice(*A, C, C, tolerance(A), -1,
                                  /*Bitwise=*/!Tolerant, Seed);
        if (!DC)
          return false;
        if (DC->ok())
          continue;
        return fail("nondeterministic",
                    "candidate is not deterministic: '" + A->Name +
                        "' differs between two runs on the same inputs (a "
                        "race, or an element it does not always write) on " +
                        Where + ": " + describe(*DC),
                    Seed, DC->First);
      }
      // Where the baseline writes everything, a poison value left in either
      // run is a difference; only then is normalizing (a copy) needed.
      bool Holes = Untouched.count(A->Name);
      const HostBuffer &Raw0 = *FirstOf.at(A->Name), &Raw1 = D.at(A->Name);
      HostBuffer Run0 = Holes ? normalizePoison(Raw0, 0) : HostBuffer();
      HostBuffer Run1 = Holes ? normalizePoison(Raw1, 1) : HostBuffer();
      const HostBuffer &X0 = Holes ? Run0 : Raw0, &X1 = Holes ? Run1 : Raw1;
      Comparison Cmp =
          Nondeterministic.count(A->Name)
              ? compareBuffers(A->Name, X0, X1, tolerance(A))
              : compareBitwise(A->Name, X0, X1);
      if (Cmp.ok())
        continue;
      return fail("nondeterministic",
                  "candidate is not deterministic: '" + A->Name +
                      "' differs between two runs on the same inputs (a race, "
                      "or an element it does not always write) on " +
                      Where + ": " + describe(Cmp),
                  Seed, Cmp.First);
    }
  }
  return true;
}

void RunVerifier::finish() {
  for (auto &[Name, W] : Weak)
    Out.Warnings.push_back(W + " (on every seed of shape set '" + Run.Name +
                           "')");
}

} // namespace

/// Whether the inputs \p Made gives next are those of \p Seed of \p Run;
/// records an internal error in \p Out when not (a job's prefetcher not
/// moved to this run's first seed), rather than label one seed's results
/// with another's number.
static bool inStep(const InputPrefetcher &Made, const PlannedRun &Run,
                   uint64_t Seed, RunResult &Out) {
  const InputRequest *Q = Made.upcoming();
  if (Q && Q->Seed == Seed && Q->Mode == Run.Values)
    return true;
  recordError(Out, "internal error: the inputs made are not those of seed " +
                       std::to_string(Seed) + " of " + Run.Name,
              Seed);
  return false;
}

std::vector<InputRequest> inputRequests(ArrayRef<PlannedRun> Runs) {
  std::vector<InputRequest> Requests;
  for (const PlannedRun &Run : Runs)
    for (uint64_t Seed : Run.Seeds)
      Requests.push_back({Run.Vars, Seed, Run.Values});
  return Requests;
}

void verifyRun(EngineSession &S, const PlannedRun &Run, RunResult &Out,
               InputPrefetcher &Made) {
  Out = startRunResult(Run);
  if (!S.Candidate) {
    recordError(Out, "internal error: a verification needs a candidate",
                std::nullopt);
    return;
  }
  const LaunchSpec *CandLaunch = &S.CandidateLaunch;
  if (Run.Launch) {
    if (Run.CandidateLaunch)
      CandLaunch = &*Run.CandidateLaunch;
    else if (S.Job.CandidateLaunch) {
      recordError(Out, "internal error: the candidate changes the launch, but "
                       "the job gives no candidate launch for " + Run.Name,
                  std::nullopt);
      return;
    } else
      CandLaunch = &*Run.Launch;
  }
  auto B = KernelRunner::create(S.Ctx, S.Baseline, S.Spec,
                                Run.Launch ? *Run.Launch : S.Spec.Launch,
                                Run.Vars, Run.Misalign, "baseline");
  if (!B) {
    recordError(Out, "baseline on " + describeRun(Run, std::nullopt) + ": " +
                         toString(B.takeError()),
                std::nullopt, /*Baseline=*/true);
    return;
  }
  auto C = KernelRunner::create(S.Ctx, S.Candidate, S.Spec, *CandLaunch,
                                Run.Vars, Run.Misalign, "candidate");
  if (!C) {
    recordError(Out, "candidate on " + describeRun(Run, std::nullopt) + ": " +
                         toString(C.takeError()),
                std::nullopt);
    return;
  }
  if (!S.Ops) {
    recordError(Out, "internal error: a verification needs the device helpers",
                std::nullopt);
    return;
  }
  (*B)->setDeviceOps(S.Ops);
  (*C)->setDeviceOps(S.Ops);
  RunVerifier V(S, Run, Out, **B, **C);
  for (uint64_t Seed : Run.Seeds) {
    if (S.Log)
      *S.Log << "  " << describeRun(Run, Seed) << "\n";
    if (!inStep(Made, Run, Seed, Out))
      break;
    if (!V.runSeed(Seed, Made))
      break;
    if (S.Log)
      *S.Log << "    " << V.lastSeedTimes() << "\n";
  }
  V.finish();
  // A configuration the original itself cannot run (a launch with too many
  // registers for the block, a shape whose variables contradict each other
  // so that it writes out of bounds) is not one the program makes. A crash
  // or a hang leaves no context to go on with, and stays an error.
  if (Run.Kind == RunKind::LaunchSpace && Out.V == Verdict::Error &&
      Out.BaselineError && !S.Result.ContextLost) {
    Out.Warnings.push_back("not a launch the program can make: " +
                           Out.Failure->Message);
    Out.V = Verdict::Pass;
    Out.Failure.reset();
  }
}

void runCandidateOnly(EngineSession &S, const PlannedRun &Run, RunResult &Out,
                      InputPrefetcher &Made) {
  Out = startRunResult(Run);
  bool IsCandidate = S.Candidate != nullptr;
  const LaunchSpec &BaseLaunch = Run.Launch ? *Run.Launch : S.Spec.Launch;
  const LaunchSpec &CandLaunch =
      Run.CandidateLaunch ? *Run.CandidateLaunch
                          : Run.Launch ? *Run.Launch : S.CandidateLaunch;
  auto K = KernelRunner::create(
      S.Ctx, IsCandidate ? S.Candidate : S.Baseline, S.Spec,
      IsCandidate ? CandLaunch : BaseLaunch, Run.Vars, Run.Misalign,
      IsCandidate ? "candidate" : "baseline");
  if (!K) {
    recordError(Out, toString(K.takeError()), std::nullopt);
    return;
  }
  for (uint64_t Seed : Run.Seeds) {
    if (!inStep(Made, Run, Seed, Out))
      return;
    Out.SeedsRun.push_back(Seed);
    auto Inputs = Made.next();
    if (!Inputs) {
      recordError(Out, toString(Inputs.takeError()), Seed);
      return;
    }
    (*K)->setDeviceOps(S.Ops);
    Error E = (*K)->upload(*Inputs);
    if (!E)
      E = (*K)->poison(0);
    if (!E)
      E = (*K)->run(S.timeout());
    if (E) {
      recordRunError(S, std::move(E), IsCandidate, describeRun(Run, Seed), Seed,
                     Out);
      return;
    }
  }
}

} // namespace astra
