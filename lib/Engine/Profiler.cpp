//===- Profiler.cpp - Timing with CUDA events -----------------------------===//
#include "astra/Engine/Profiler.h"
#include "astra/Compile/PtxCompiler.h"
#include "astra/Engine/Compare.h"
#include "astra/Engine/DeviceCompare.h"
#include "astra/Engine/Inputs.h"
#include "astra/Engine/KernelRunner.h"
#include "astra/Engine/ScaleRules.h"
#include "astra/Engine/Validity.h"
#include "astra/Support/FileIO.h"
#include "astra/Support/Json.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <chrono>
#include <set>

using namespace llvm;

namespace astra {

Expected<double> measureCopyBandwidth(GpuContext &C, uint64_t Bytes) {
  auto Src = DeviceAlloc::allocate(C, Bytes, "copy bandwidth source");
  if (!Src)
    return Src.takeError();
  auto Dst = DeviceAlloc::allocate(C, Bytes, "copy bandwidth destination");
  if (!Dst)
    return Dst.takeError();
  const cu::Api &A = C.api();
  if (Error E = C.check(A.MemsetD8Async(Src->ptr(), 0x5A, Bytes, C.stream()),
                        "cuMemsetD8Async"))
    return E;
  std::vector<double> Ms;
  for (int I = 0; I < 12; ++I) {
    auto Start = GpuEvent::create(C);
    if (!Start)
      return Start.takeError();
    auto Stop = GpuEvent::create(C);
    if (!Stop)
      return Stop.takeError();
    if (Error E = Start->record())
      return E;
    if (Error E = C.check(A.MemcpyDtoDAsync(Dst->ptr(), Src->ptr(), Bytes,
                                            C.stream()),
                          "cuMemcpyDtoDAsync", "copy bandwidth"))
      return E;
    if (Error E = Stop->record())
      return E;
    if (Error E = C.wait(60, "device-to-device copy"))
      return E;
    auto T = GpuEvent::elapsedMs(*Start, *Stop);
    if (!T)
      return T.takeError();
    if (I >= 2) // The first copies warm up clocks and page tables.
      Ms.push_back(*T);
  }
  std::sort(Ms.begin(), Ms.end());
  double Median = Ms[Ms.size() / 2];
  if (!(Median > 0))
    return createStringError(inconvertibleErrorCode(),
                             "the device-to-device copy took no measurable "
                             "time");
  return 2.0 * double(Bytes) / (Median * 1e-3) / 1e9;
}

static std::string bandwidthCachePath(StringRef CacheDir,
                                      const DeviceInfo &D) {
  std::string Key = D.Name + "-driver" + D.driverString();
  for (char &Ch : Key)
    if (!isAlnum(Ch) && Ch != '.' && Ch != '-')
      Ch = '_';
  SmallString<256> P(CacheDir);
  sys::path::append(P, "bandwidth", Key + ".json");
  return std::string(P);
}

Expected<double> deviceCopyBandwidth(GpuContext &C, StringRef CacheDir,
                                     bool *FromCache) {
  CompileOptions O;
  O.CacheDir = CacheDir.str();
  std::string Dir = ptxCacheDirectory(O);
  const DeviceInfo &D = C.info();
  std::string Path = Dir.empty() ? "" : bandwidthCachePath(Dir, D);
  if (FromCache)
    *FromCache = false;
  if (!Path.empty()) {
    if (auto Text = readFile(Path)) {
      rapidjson::Document Doc;
      if (!parseJsonWithComments(*Text, Path, Doc) && Doc.IsObject() &&
          Doc.HasMember("copy_gbps") && Doc["copy_gbps"].IsNumber() &&
          Doc.HasMember("device") && Doc["device"].IsString() &&
          Doc["device"].GetString() == D.Name &&
          Doc["copy_gbps"].GetDouble() > 0) {
        if (FromCache)
          *FromCache = true;
        return Doc["copy_gbps"].GetDouble();
      }
    } else {
      consumeError(Text.takeError());
    }
  }
  // 1 GiB each way (as the brief's H100 number), less on small devices.
  size_t Free = 0, Total = 0;
  if (Error E = C.check(C.api().MemGetInfo(&Free, &Total), "cuMemGetInfo"))
    return E;
  uint64_t Bytes = std::min<uint64_t>(uint64_t(1) << 30, Free / 4);
  Bytes &= ~((uint64_t(1) << 20) - 1);
  if (Bytes == 0)
    return createStringError(inconvertibleErrorCode(),
                             "too little free GPU memory to measure the copy "
                             "bandwidth");
  auto GBps = measureCopyBandwidth(C, Bytes);
  if (!GBps)
    return GBps.takeError();
  if (!Path.empty()) {
    JsonWriter W;
    W.objectBegin();
    W.field("device", D.Name);
    W.field("driver", D.driverString());
    W.field("copy_gbps", *GBps);
    W.field("bytes", (unsigned long long)Bytes);
    W.objectEnd();
    // A cache that cannot be written only costs a re-measurement.
    if (!sys::fs::create_directories(sys::path::parent_path(Path)))
      consumeError(writeFileAtomically(Path, W.str()));
  }
  return *GBps;
}

namespace {

/// One kernel being timed. Before each launch its in-out buffers get their
/// initial values back and outputs and scratch their poison (so the output
/// check after timing sees only what the last launch wrote), both by
/// device-to-device copies of what KernelRunner::saveWritten() kept.
struct Timed {
  KernelRunner *K = nullptr;
  bool IsCandidate = false;
  std::vector<double> SamplesUs;
};

/// Saves the copies the resets restore; call after upload() and poison().
Error prepare(GpuContext &C, Timed &T) {
  if (Error E = T.K->saveWritten())
    return E;
  return C.wait(60, "saving the in-out and output buffers");
}

/// Queues the resets, the flush and the timed launch of \p T.
Error queueTimed(GpuContext &C, Timed &T, const DeviceAlloc *Flush,
                 unsigned Iter, const GpuEvent &Start, const GpuEvent &Stop) {
  if (Error E = T.K->restoreWritten())
    return E;
  if (Flush)
    if (Error E = C.check(C.api().MemsetD8Async(Flush->ptr(),
                                          (unsigned char)(Iter * 37 + 1),
                                          Flush->size(), C.stream()),
                          "cuMemsetD8Async", "flushing the L2 cache"))
      return E;
  if (Error E = Start.record())
    return E;
  if (Error E = T.K->launch())
    return E;
  return Stop.record();
}

} // namespace

void profileRun(EngineSession &S, const PlannedRun &Run, RunResult &Out) {
  if (Out.Name.empty())
    Out = startRunResult(Run);
  const JobOptions &O = S.Job.Options;
  uint64_t Seed = Run.Seeds.empty() ? 0 : Run.Seeds.front();
  std::string Where = describeRun(Run, Seed) + " (profiling)";
  // The program's own data where the capture has it: a gather's indices,
  // a mask's density, change what the kernel costs.
  ValueMode Mode = S.Spec.capturedBlobs(Run.Shape).empty() ? ValueMode::Spec
                                                           : ValueMode::Captured;
  auto Inputs = planInputs(S.Spec, Run.Vars, Seed, Mode, S.OnDevice && S.Ops);
  if (!Inputs) {
    recordRunError(S, Inputs.takeError(), false, Where, Seed, Out);
    return;
  }
  std::unique_ptr<KernelRunner> B, C;
  {
    auto R = KernelRunner::create(S.Ctx, S.Baseline, S.Spec, S.Spec.Launch,
                                  Run.Vars, false, "baseline");
    if (!R) {
      recordRunError(S, R.takeError(), false, Where, Seed, Out);
      return;
    }
    B = std::move(*R);
  }
  if (S.Candidate) {
    auto R = KernelRunner::create(S.Ctx, S.Candidate, S.Spec,
                                  S.CandidateLaunch, Run.Vars, false,
                                  "candidate");
    if (!R) {
      recordRunError(S, R.takeError(), true, Where, Seed, Out);
      return;
    }
    C = std::move(*R);
  }
  std::vector<Timed> Kernels(C ? 2 : 1);
  Kernels[0].K = B.get();
  if (C) {
    Kernels[1].K = C.get();
    Kernels[1].IsCandidate = true;
  }
  for (Timed &T : Kernels) {
    T.K->setDeviceOps(S.Ops);
    Error E = T.K->upload(*Inputs);
    if (!E)
      E = T.K->poison(0);
    if (!E)
      E = prepare(S.Ctx, T);
    if (E) {
      recordRunError(S, std::move(E), T.IsCandidate, Where, Seed, Out);
      return;
    }
  }
  std::optional<DeviceAlloc> Flush;
  if (O.FlushL2) {
    uint64_t Bytes = std::max<uint64_t>(2 * S.Ctx.info().L2Bytes, 8 << 20);
    auto F = DeviceAlloc::allocate(S.Ctx, Bytes, "the L2 flush buffer");
    if (!F) {
      recordRunError(S, F.takeError(), false, Where, Seed, Out);
      return;
    }
    Flush = std::move(*F);
  }
  auto Start = GpuEvent::create(S.Ctx);
  if (!Start) {
    recordRunError(S, Start.takeError(), false, Where, Seed, Out);
    return;
  }
  auto Stop = GpuEvent::create(S.Ctx);
  if (!Stop) {
    recordRunError(S, Stop.takeError(), false, Where, Seed, Out);
    return;
  }
  // A B A B ...: both kernels see the same clocks and thermal state. The
  // untimed rounds last at least O.Warmup rounds and O.WarmupMs: on the
  // H100 a 5.6 us transpose was timed at 33.8 us, baseline and candidate
  // alike, right after a 61 s verification during which the GPU sat idle;
  // five launches of a microsecond kernel may not be time enough for idle
  // clocks to come up.
  auto WarmupStart = std::chrono::steady_clock::now();
  auto WarmedUp = [&](unsigned Iter) {
    if (Iter < O.Warmup)
      return false;
    // A bound on the rounds, for kernels too short to measure host time by.
    if (Iter >= O.Warmup + 100000)
      return true;
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now() - WarmupStart)
               .count() >= double(O.WarmupMs);
  };
  unsigned TimedRounds = 0;
  for (unsigned Iter = 0; TimedRounds < O.Runs; ++Iter) {
    bool IsTimed = WarmedUp(Iter);
    if (IsTimed)
      ++TimedRounds;
    for (Timed &T : Kernels) {
      Error E = queueTimed(S.Ctx, T, Flush ? &*Flush : nullptr, Iter, *Start,
                           *Stop);
      if (!E)
        E = S.Ctx.wait(S.timeout(), T.IsCandidate ? "candidate kernel"
                                                  : "baseline kernel");
      if (E) {
        recordRunError(S, std::move(E), T.IsCandidate, Where, Seed, Out);
        return;
      }
      if (!IsTimed)
        continue;
      auto Ms = GpuEvent::elapsedMs(*Start, *Stop);
      if (!Ms) {
        recordRunError(S, Ms.takeError(), T.IsCandidate, Where, Seed, Out);
        return;
      }
      T.SamplesUs.push_back(double(*Ms) * 1000.0);
    }
  }

  TimingResult TR;
  TR.Baseline = computeStats(Kernels[0].SamplesUs);
  if (C)
    TR.Candidate = computeStats(Kernels[1].SamplesUs);
  if (auto Bytes = S.Spec.bytesMoved(Run.Vars))
    TR.Bytes = *Bytes;
  else
    Out.Warnings.push_back("bytes moved unknown: " + toString(Bytes.takeError()));
  if (S.Spec.Flops) {
    if (auto F = S.Spec.Flops->eval(Run.Vars))
      TR.Flops = F->real();
    else
      Out.Warnings.push_back("flops unknown: " + toString(F.takeError()));
  }
  auto GBps = [&](const TimingStats &T) {
    return T.MedianUs > 0 ? double(TR.Bytes) / (T.MedianUs * 1e3) : 0.0;
  };
  TR.BaselineGBps = GBps(TR.Baseline);
  TR.RooflineGBps = S.Result.CopyBandwidthGBps;
  if (TR.RooflineGBps > 0)
    TR.BaselineRoofline = TR.BaselineGBps / TR.RooflineGBps;
  if (TR.Candidate) {
    TR.CandidateGBps = GBps(*TR.Candidate);
    if (TR.RooflineGBps > 0)
      TR.CandidateRoofline = TR.CandidateGBps / TR.RooflineGBps;
    if (TR.Candidate->MedianUs > 0)
      TR.Speedup = TR.Baseline.MedianUs / TR.Candidate->MedianUs;
  }
  if (TR.Baseline.MedianUs < 5)
    Out.Warnings.push_back(formatv(
        "the baseline runs {0:f1} us on shape set '{1}': launch overhead and "
        "the event resolution (about 0.5 us) dominate such short kernels; "
        "prefer a larger shape set for speedups",
        TR.Baseline.MedianUs, Run.Name));
  Out.Timing = TR;

  // The outputs of the last timed launches must still agree: on the device
  // where the verification compares there (only a failure's evidence comes
  // to the host), else on the host.
  if (!C)
    return;
  std::set<std::string> Checked;
  if (S.Spec.Check)
    for (std::string &N : validityCheckedBuffers(*S.Spec.Check))
      Checked.insert(N);
  bool Device = S.OnDevice && S.Ops && !S.Spec.Check;
  for (const ArgSpec &A : S.Spec.Args)
    if (A.IsBuffer && A.R != Role::Input && A.Type == DType::F64)
      Device = false;
  std::map<std::string, HostBuffer> BO, CO;
  if (!Device || S.Spec.Check) {
    auto BD = B->downloadWritten();
    if (!BD) {
      recordRunError(S, BD.takeError(), false, Where, Seed, Out);
      return;
    }
    auto CD = C->downloadWritten();
    if (!CD) {
      recordRunError(S, CD.takeError(), true, Where, Seed, Out);
      return;
    }
    BO = std::move(*BD);
    CO = std::move(*CD);
  }
  for (const ArgSpec &A : S.Spec.Args) {
    if (!A.IsBuffer || (A.R != Role::Output && A.R != Role::InOut) ||
        Checked.count(A.Name))
      continue;
    Tolerance Tol = toleranceFor(S.Spec, A);
    std::optional<Mismatch> Example;
    std::string Why;
    if (Device) {
      std::optional<Error> Lost;
      auto Element = [&](uint64_t I)
          -> std::optional<std::pair<HostBuffer, HostBuffer>> {
        auto E1 = B->downloadElement(A.Name, I, /*Saved=*/false);
        auto A1 = C->downloadElement(A.Name, I, /*Saved=*/false);
        if (E1 && A1)
          return std::make_pair(std::move(*E1), std::move(*A1));
        Lost = joinErrors(E1 ? Error::success() : E1.takeError(),
                          A1 ? Error::success() : A1.takeError());
        return std::nullopt;
      };
      cu::DevicePtr BA = B->address(A.Name), CA = C->address(A.Name);
      auto Cmp = compareOnDevice(*S.Ops, A.Name, A.Type, C->count(A.Name), BA,
                                 CA, Tol, 0, false, S.timeout(), Element);
      std::optional<ScaleVerdict> SV;
      if (Cmp && Cmp->ok() && scaleRulesApply(Run)) {
        auto V = checkScaleOnDevice(
            A.Name, A.Type, C->count(A.Name), Tol.Rtol, *S.Ops, BA, CA,
            S.timeout(), [&](uint64_t I) {
              auto P = Element(I);
              return P ? std::move(*P)
                       : std::make_pair(HostBuffer(A.Type, 1),
                                        HostBuffer(A.Type, 1));
            });
        if (!V) {
          recordRunError(S, V.takeError(), true, Where, Seed, Out);
          if (Lost)
            consumeError(std::move(*Lost));
          return;
        }
        SV = std::move(*V);
      }
      Error E = Cmp ? Error::success() : Cmp.takeError();
      if (Lost)
        E = joinErrors(std::move(E), std::move(*Lost));
      if (E) {
        recordRunError(S, std::move(E), true, Where, Seed, Out);
        return;
      }
      Example = Cmp->First;
      Why = describe(*Cmp);
      if (Cmp->ok()) {
        if (!SV || SV->ok())
          continue;
        Example = SV->Example;
        Why = SV->Kind + ": " + describe(*SV);
      }
    } else {
      Comparison Cmp =
          compareBuffers(A.Name, BO.at(A.Name), CO.at(A.Name), Tol, 0);
      Example = Cmp.First;
      Why = describe(Cmp);
      if (Cmp.ok() && scaleRulesApply(Run)) {
        ScaleVerdict SV =
            checkScale(A.Name, BO.at(A.Name), CO.at(A.Name), Tol.Rtol);
        if (SV.ok())
          continue;
        Example = SV.Example;
        Why = SV.Kind + ": " + describe(SV);
      } else if (Cmp.ok()) {
        continue;
      }
    }
    FailureInfo F;
    F.Kind = "changed-when-timed";
    F.Seed = Seed;
    F.Buffer = A.Name;
    if (Example) {
      F.Index = Example->Index;
      F.Expected = Example->Expected;
      F.Actual = Example->Actual;
    }
    F.Message = "candidate's '" + A.Name + "' after the timed runs differs "
                "from the baseline's on " + Where + ": " + Why;
    recordFailure(Out, std::move(F));
    return;
  }
  if (S.Spec.Check) {
    std::map<std::string, const HostBuffer *> Bufs;
    for (const ArgSpec &A : S.Spec.Args)
      if (A.IsBuffer)
        Bufs[A.Name] =
            A.R == Role::Input ? &Inputs->allOnHost().at(A.Name) : &CO.at(A.Name);
    auto V = runValidityCheck(*S.Spec.Check, S.Spec, Run.Vars, Bufs);
    if (!V) {
      recordRunError(S, V.takeError(), false, Where, Seed, Out);
      return;
    }
    if (!V->Ok) {
      FailureInfo F;
      F.Kind = "changed-when-timed";
      F.Seed = Seed;
      F.Buffer = V->Buffer;
      F.Index = V->Index;
      F.Message = "candidate fails the " + S.Spec.Check->Name +
                  " check after the timed runs on " + Where + ": " + V->Message;
      recordFailure(Out, std::move(F));
    }
  }
}

} // namespace astra
