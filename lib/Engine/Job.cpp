//===- Job.cpp - Job and result JSON --------------------------------------===//
#include "astra/Engine/Job.h"
#include "astra/Support/Json.h"

#include "llvm/Support/Base64.h"
#include "llvm/Support/FormatVariadic.h"

#include <rapidjson/writer.h>

#include <algorithm>
#include <cmath>

using namespace llvm;

namespace astra {

StringRef verdictName(Verdict V) {
  switch (V) {
  case Verdict::Pass:
    return "pass";
  case Verdict::Fail:
    return "fail";
  case Verdict::Error:
    return "error";
  }
  return "error";
}

JobResult errorResult(StringRef Reason) {
  JobResult R;
  R.V = Verdict::Error;
  R.Kind = "error";
  R.Reason = Reason.str();
  return R;
}

TimingStats computeStats(std::vector<double> S) {
  TimingStats T;
  T.Runs = unsigned(S.size());
  if (S.empty())
    return T;
  std::sort(S.begin(), S.end());
  auto Pct = [&](const std::vector<double> &V, double P) {
    double Pos = P * double(V.size() - 1);
    size_t Lo = size_t(std::floor(Pos));
    size_t Hi = std::min(Lo + 1, V.size() - 1);
    return V[Lo] + (V[Hi] - V[Lo]) * (Pos - double(Lo));
  };
  T.MedianUs = Pct(S, 0.5);
  T.P10Us = Pct(S, 0.1);
  T.P90Us = Pct(S, 0.9);
  T.MinUs = S.front();
  double Sum = 0;
  for (double X : S)
    Sum += X;
  T.MeanUs = Sum / double(S.size());
  std::vector<double> Dev;
  for (double X : S)
    Dev.push_back(std::fabs(X - T.MedianUs));
  std::sort(Dev.begin(), Dev.end());
  T.MadUs = Pct(Dev, 0.5);
  return T;
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

static void writeEnv(JsonWriter &W, const Env &E) {
  W.objectBegin();
  for (auto &[K, V] : E) {
    W.key(K);
    if (V.IsInt)
      W.value((long long)V.I);
    else
      W.value(V.D);
  }
  W.objectEnd();
}

static void writeImage(JsonWriter &W, const KernelImage &K) {
  W.objectBegin();
  W.field("entry", K.Entry);
  W.field("source", K.Source);
  W.field("ptx", K.Ptx);
  if (!K.Cubin.empty())
    W.field("cubin_base64", encodeBase64(K.Cubin));
  W.objectEnd();
}

static void writeDims(JsonWriter &W, const SpecExpr (&D)[3]) {
  W.arrayBegin();
  for (const SpecExpr &E : D)
    W.value(E.empty() ? std::string("1") : E.text());
  W.arrayEnd();
}

static void writeLaunch(JsonWriter &W, const std::optional<LaunchSpec> &L) {
  if (!L) {
    W.null();
    return;
  }
  W.objectBegin();
  W.key("grid");
  writeDims(W, L->Grid);
  W.key("block");
  writeDims(W, L->Block);
  W.field("shmem", L->Shmem.empty() ? std::string("0") : L->Shmem.text());
  W.objectEnd();
}

std::string writeJobJson(const VerifyJob &J) {
  JsonWriter W;
  W.objectBegin();
  W.field("version", 1);
  W.field("kernel", J.Spec.Kernel);
  W.field("spec_path", J.Spec.SpecPath);
  W.key("baseline");
  writeImage(W, J.Baseline);
  W.key("candidate");
  if (J.Candidate)
    writeImage(W, *J.Candidate);
  else
    W.null();
  W.key("candidate_launch");
  writeLaunch(W, J.CandidateLaunch);
  W.key("launch_space");
  W.arrayBegin();
  for (const LaunchVariant &V : J.LaunchSpace) {
    W.objectBegin();
    W.field("name", V.Name);
    W.field("shape", V.Shape);
    W.key("vars");
    writeEnv(W, V.Vars);
    W.key("launch");
    writeLaunch(W, V.Launch);
    W.key("candidate_launch");
    writeLaunch(W, V.CandidateLaunch);
    W.field("note", V.Note);
    W.objectEnd();
  }
  W.arrayEnd();
  W.key("notes");
  W.arrayBegin();
  for (const std::string &N : J.Notes)
    W.value(N);
  W.arrayEnd();
  W.key("shapes");
  W.arrayBegin();
  for (const std::string &S : J.Shapes)
    W.value(S);
  W.arrayEnd();
  W.key("seeds");
  W.arrayBegin();
  for (uint64_t S : J.Seeds)
    W.value((unsigned long long)S);
  W.arrayEnd();
  const JobOptions &O = J.Options;
  W.key("options");
  W.objectBegin();
  W.field("verify", O.Verify);
  W.field("adversarial", O.Adversarial);
  W.field("profile", O.Profile);
  W.field("runs", O.Runs);
  W.field("warmup", O.Warmup);
  W.field("warmup_ms", O.WarmupMs);
  W.field("flush_l2", O.FlushL2);
  W.field("sanitize", O.Sanitize);
  W.field("ncu", O.Ncu);
  W.field("kernel_timeout_s", O.KernelTimeout);
  W.field("device", O.Device);
  W.field("cache_dir", O.CacheDir);
  W.field("candidate_only", O.CandidateOnly);
  W.objectEnd();
  W.key("spec");
  writeKernelSpecJson(W, J.Spec);
  W.objectEnd();
  return W.str();
}

static void writeStats(JsonWriter &W, const TimingStats &T) {
  W.objectBegin();
  W.field("runs", T.Runs);
  W.field("median_us", T.MedianUs);
  W.field("p10_us", T.P10Us);
  W.field("p90_us", T.P90Us);
  W.field("mad_us", T.MadUs);
  W.field("min_us", T.MinUs);
  W.field("mean_us", T.MeanUs);
  W.objectEnd();
}

static void writeResources(JsonWriter &W, StringRef Key,
                           const std::optional<KernelResourceInfo> &R) {
  W.key(Key);
  if (!R) {
    W.null();
    return;
  }
  W.objectBegin();
  W.field("registers", R->Registers);
  W.field("local_bytes", R->LocalBytes);
  W.field("shared_bytes", R->SharedBytes);
  W.field("const_bytes", R->ConstBytes);
  W.field("max_threads_per_block", R->MaxThreadsPerBlock);
  W.objectEnd();
}

static void writeFailure(JsonWriter &W, const FailureInfo &F) {
  W.objectBegin();
  W.field("kind", F.Kind);
  W.field("buffer", F.Buffer);
  W.field("index", (unsigned long long)F.Index);
  W.field("expected", F.Expected);
  W.field("actual", F.Actual);
  W.key("seed");
  if (F.Seed)
    W.value((unsigned long long)*F.Seed);
  else
    W.null();
  W.field("message", F.Message);
  W.objectEnd();
}

static void writeStrings(JsonWriter &W, StringRef Key,
                         const std::vector<std::string> &V) {
  W.key(Key);
  W.arrayBegin();
  for (const std::string &S : V)
    W.value(S);
  W.arrayEnd();
}

std::string writeResultJson(const JobResult &R) {
  JsonWriter W;
  W.objectBegin();
  W.field("version", 1);
  W.field("verdict", verdictName(R.V));
  W.field("kind", R.Kind);
  W.field("reason", R.Reason);
  W.key("device");
  W.objectBegin();
  W.field("name", R.Device.Name);
  W.field("driver", R.Device.Driver);
  W.field("sm_count", R.Device.SmCount);
  W.field("compute_capability",
          formatv("{0}.{1}", R.Device.CcMajor, R.Device.CcMinor).str());
  W.field("l2_bytes", (unsigned long long)R.Device.L2Bytes);
  W.field("memory_bytes", (unsigned long long)R.Device.MemoryBytes);
  W.objectEnd();
  W.field("copy_bandwidth_gbps", R.CopyBandwidthGBps);
  W.key("seconds");
  W.objectBegin();
  W.field("context", R.Seconds.Context);
  W.field("load", R.Seconds.Load);
  W.field("verify", R.Seconds.Verify);
  W.field("profile", R.Seconds.Profile);
  W.objectEnd();
  W.key("seeds");
  W.arrayBegin();
  for (uint64_t S : R.Seeds)
    W.value((unsigned long long)S);
  W.arrayEnd();
  W.key("resources");
  W.objectBegin();
  writeResources(W, "baseline", R.BaselineResources);
  writeResources(W, "candidate", R.CandidateResources);
  W.objectEnd();
  writeStrings(W, "warnings", R.Warnings);
  W.key("runs");
  W.arrayBegin();
  for (const RunResult &Run : R.Runs) {
    W.objectBegin();
    W.field("name", Run.Name);
    W.field("shape", Run.Shape);
    W.field("kind", Run.Kind);
    W.key("vars");
    writeEnv(W, Run.Vars);
    W.field("verdict", verdictName(Run.V));
    W.key("seeds");
    W.arrayBegin();
    for (uint64_t S : Run.SeedsRun)
      W.value((unsigned long long)S);
    W.arrayEnd();
    W.field("max_abs_error", Run.MaxAbsErr);
    W.field("max_rel_error", Run.MaxRelErr);
    W.key("failure");
    if (Run.Failure)
      writeFailure(W, *Run.Failure);
    else
      W.null();
    writeStrings(W, "warnings", Run.Warnings);
    W.key("timing");
    if (Run.Timing) {
      const TimingResult &T = *Run.Timing;
      W.objectBegin();
      W.key("baseline");
      writeStats(W, T.Baseline);
      W.key("candidate");
      if (T.Candidate)
        writeStats(W, *T.Candidate);
      else
        W.null();
      W.field("bytes", (long long)T.Bytes);
      W.field("flops", T.Flops);
      W.field("baseline_gbps", T.BaselineGBps);
      W.field("candidate_gbps", T.CandidateGBps);
      W.field("roofline_gbps", T.RooflineGBps);
      W.field("baseline_roofline", T.BaselineRoofline);
      W.field("candidate_roofline", T.CandidateRoofline);
      W.field("speedup", T.Speedup);
      W.objectEnd();
    } else {
      W.null();
    }
    W.objectEnd();
  }
  W.arrayEnd();
  W.key("ncu");
  W.objectBegin();
  for (auto &[Kernel, M] : R.NcuMetrics) {
    W.key(Kernel);
    W.objectBegin();
    for (auto &[K, V] : M)
      W.field(K, V);
    W.objectEnd();
  }
  W.objectEnd();
  W.objectEnd();
  return W.str();
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

namespace {

using JValue = rapidjson::Value;

using Reader = JsonFieldReader;

Error readImage(const Reader &R, const JValue &V, StringRef Field,
                KernelImage &K) {
  if (Error E = R.str(V, Field, "entry", K.Entry))
    return E;
  if (Error E = R.str(V, Field, "ptx", K.Ptx))
    return E;
  std::string Cubin;
  if (Error E = R.str(V, Field, "cubin_base64", Cubin, false))
    return E;
  if (!Cubin.empty()) {
    std::vector<char> Bytes;
    if (Error E = decodeBase64(Cubin, Bytes))
      return R.fail((Field + ".cubin_base64").str(),
                    "not base64: " + toString(std::move(E)));
    K.Cubin.assign(Bytes.begin(), Bytes.end());
  }
  return R.str(V, Field, "source", K.Source, false);
}

/// The optional object "vars" of \p O (a shape set's variables).
Error readEnv(const Reader &R, const JValue &O, StringRef Field, Env &Out) {
  auto Vars = R.get(O, Field, "vars", false);
  if (!Vars)
    return Vars.takeError();
  if (!*Vars)
    return Error::success();
  std::string F = Reader::join(Field, "vars");
  if (!(*Vars)->IsObject())
    return R.fail(F, "expected an object");
  for (auto &M : (*Vars)->GetObject()) {
    std::string K(M.name.GetString(), M.name.GetStringLength());
    if (M.value.IsInt64())
      Out[K] = Value::ofInt(M.value.GetInt64());
    else if (M.value.IsNumber())
      Out[K] = Value::ofReal(M.value.GetDouble());
    else
      return R.fail(F + "." + K, "expected a number");
  }
  return Error::success();
}

Error readDims(const Reader &R, const JValue &O, StringRef Field,
               StringRef Key, SpecExpr (&D)[3]) {
  auto V = R.get(O, Field, Key);
  if (!V)
    return V.takeError();
  std::string F = Reader::join(Field, Key);
  if (!(*V)->IsArray() || (*V)->Size() < 1 || (*V)->Size() > 3)
    return R.fail(F, "expected an array of 1 to 3 expressions");
  for (unsigned I = 0; I < 3; ++I) {
    if (I >= (*V)->Size()) {
      D[I] = SpecExpr::constant(1);
      continue;
    }
    const JValue &X = (**V)[I];
    std::string Text = X.IsString() ? std::string(X.GetString())
                       : X.IsInt64() ? std::to_string(X.GetInt64())
                                     : std::string();
    auto E = SpecExpr::parse(Text);
    if (Text.empty() || !E)
      return R.fail(F, "element " + Twine(I) + ": " +
                           (E ? std::string("expected an expression")
                              : toString(E.takeError())));
    D[I] = std::move(*E);
  }
  return Error::success();
}

/// The optional launch object \p Key of \p O (null or absent: none).
Error readLaunch(const Reader &R, const JValue &O, StringRef Field,
                 StringRef Key, std::optional<LaunchSpec> &Out) {
  auto V = R.get(O, Field, Key, false);
  if (!V)
    return V.takeError();
  if (!*V || (*V)->IsNull())
    return Error::success();
  std::string F = Reader::join(Field, Key);
  LaunchSpec L;
  if (Error E = readDims(R, **V, F, "grid", L.Grid))
    return E;
  if (Error E = readDims(R, **V, F, "block", L.Block))
    return E;
  std::string Shmem = "0";
  if (Error E = R.str(**V, F, "shmem", Shmem, false))
    return E;
  auto SE = SpecExpr::parse(Shmem);
  if (!SE)
    return R.fail(Reader::join(F, "shmem"), toString(SE.takeError()));
  L.Shmem = std::move(*SE);
  Out = std::move(L);
  return Error::success();
}

Expected<rapidjson::Document> parseDoc(StringRef Text, StringRef Path) {
  rapidjson::Document Doc;
  if (Error E = parseJsonWithComments(Text, Path, Doc))
    return E;
  if (!Doc.IsObject())
    return createStringError(inconvertibleErrorCode(),
                             Path + ": expected a JSON object");
  return Doc;
}

} // namespace

Expected<VerifyJob> parseJobJson(StringRef Text, StringRef Path) {
  auto DocOr = parseDoc(Text, Path);
  if (!DocOr)
    return DocOr.takeError();
  const rapidjson::Document &Doc = *DocOr;
  Reader R(Path);
  VerifyJob J;
  int Version = 0;
  if (Error E = R.integer(Doc, "", "version", Version, 1, true))
    return E;
  if (Version != 1)
    return R.fail("version", formatv("this clang-astra reads job version 1, "
                                      "not {0}",
                                      Version));
  std::string Kernel, SpecPath;
  if (Error E = R.str(Doc, "", "kernel", Kernel))
    return E;
  if (Error E = R.str(Doc, "", "spec_path", SpecPath, false))
    return E;
  auto Base = R.get(Doc, "", "baseline");
  if (!Base)
    return Base.takeError();
  if (Error E = readImage(R, **Base, "baseline", J.Baseline))
    return E;
  auto Cand = R.get(Doc, "", "candidate", false);
  if (!Cand)
    return Cand.takeError();
  if (*Cand) {
    J.Candidate.emplace();
    if (Error E = readImage(R, **Cand, "candidate", *J.Candidate))
      return E;
  }
  if (Error E = readLaunch(R, Doc, "", "candidate_launch", J.CandidateLaunch))
    return E;
  if (auto LS = R.get(Doc, "", "launch_space", false); !LS) {
    return LS.takeError();
  } else if (*LS) {
    if (!(*LS)->IsArray())
      return R.fail("launch_space", "expected an array");
    for (unsigned I = 0; I < (*LS)->Size(); ++I) {
      const JValue &VJ = (**LS)[I];
      std::string F = "launch_space[" + std::to_string(I) + "]";
      if (!VJ.IsObject())
        return R.fail(F, "expected an object");
      LaunchVariant V;
      if (Error E = R.str(VJ, F, "name", V.Name))
        return E;
      if (Error E = R.str(VJ, F, "shape", V.Shape))
        return E;
      if (Error E = readEnv(R, VJ, F, V.Vars))
        return E;
      std::optional<LaunchSpec> L;
      if (Error E = readLaunch(R, VJ, F, "launch", L))
        return E;
      if (!L)
        return R.fail(F + ".launch", "expected a launch");
      V.Launch = std::move(*L);
      if (Error E = readLaunch(R, VJ, F, "candidate_launch", V.CandidateLaunch))
        return E;
      if (Error E = R.str(VJ, F, "note", V.Note, false))
        return E;
      J.LaunchSpace.push_back(std::move(V));
    }
  }
  if (Error E = R.strings(Doc, "", "notes", J.Notes))
    return E;
  if (Error E = R.strings(Doc, "", "shapes", J.Shapes))
    return E;
  if (Error E = R.seeds(Doc, "", "seeds", J.Seeds))
    return E;

  auto Opt = R.get(Doc, "", "options", false);
  if (!Opt)
    return Opt.takeError();
  if (*Opt) {
    const JValue &O = **Opt;
    JobOptions &JO = J.Options;
    for (auto [Key, Slot] :
         {std::pair<StringRef, bool *>{"verify", &JO.Verify},
          {"adversarial", &JO.Adversarial},
          {"profile", &JO.Profile},
          {"flush_l2", &JO.FlushL2},
          {"sanitize", &JO.Sanitize},
          {"ncu", &JO.Ncu},
          {"candidate_only", &JO.CandidateOnly}})
      if (Error E = R.boolean(O, "options", Key, *Slot))
        return E;
    if (Error E = R.integer(O, "options", "runs", JO.Runs, 1))
      return E;
    if (Error E = R.integer(O, "options", "warmup", JO.Warmup, 0))
      return E;
    if (Error E = R.integer(O, "options", "warmup_ms", JO.WarmupMs, 0))
      return E;
    if (Error E = R.integer(O, "options", "device", JO.Device, 0))
      return E;
    if (Error E = R.number(O, "options", "kernel_timeout_s", JO.KernelTimeout))
      return E;
    if (!(JO.KernelTimeout > 0))
      return R.fail("options.kernel_timeout_s", "must be positive");
    if (Error E = R.str(O, "options", "cache_dir", JO.CacheDir, false))
      return E;
  }

  auto Spec = R.get(Doc, "", "spec");
  if (!Spec)
    return Spec.takeError();
  rapidjson::StringBuffer Buf;
  rapidjson::Writer<rapidjson::StringBuffer> W(Buf);
  (*Spec)->Accept(W);
  auto KS = parseKernelSpecJson(StringRef(Buf.GetString(), Buf.GetSize()),
                                Kernel, SpecPath.empty() ? Path : SpecPath);
  if (!KS)
    return createStringError(inconvertibleErrorCode(),
                             Path + ": spec: " + toString(KS.takeError()));
  J.Spec = std::move(*KS);
  J.Spec.Kernel = Kernel;
  if (!SpecPath.empty())
    J.Spec.SpecPath = SpecPath;
  return J;
}

static Error readStats(const Reader &R, const JValue &V, StringRef Field,
                       TimingStats &T) {
  if (Error E = R.integer(V, Field, "runs", T.Runs, 0))
    return E;
  for (auto [Key, Slot] : {std::pair<StringRef, double *>{"median_us", &T.MedianUs},
                           {"p10_us", &T.P10Us},
                           {"p90_us", &T.P90Us},
                           {"mad_us", &T.MadUs},
                           {"min_us", &T.MinUs},
                           {"mean_us", &T.MeanUs}})
    if (Error E = R.number(V, Field, Key, *Slot))
      return E;
  return Error::success();
}

static Error readResources(const Reader &R, const JValue &V, StringRef Field,
                           std::optional<KernelResourceInfo> &Out) {
  KernelResourceInfo K;
  for (auto [Key, Slot] :
       {std::pair<StringRef, int *>{"registers", &K.Registers},
        {"local_bytes", &K.LocalBytes},
        {"shared_bytes", &K.SharedBytes},
        {"const_bytes", &K.ConstBytes},
        {"max_threads_per_block", &K.MaxThreadsPerBlock}})
    if (Error E = R.integer(V, Field, Key, *Slot, 0))
      return E;
  Out = K;
  return Error::success();
}

static Expected<Verdict> readVerdict(const Reader &R, const JValue &V,
                                     StringRef Field) {
  std::string S;
  if (Error E = R.str(V, Field, "verdict", S))
    return E;
  if (S == "pass")
    return Verdict::Pass;
  if (S == "fail")
    return Verdict::Fail;
  if (S == "error")
    return Verdict::Error;
  return R.fail(Reader::join(Field, "verdict"),
                "expected pass, fail or error, got '" + S + "'");
}

Expected<JobResult> parseResultJson(StringRef Text, StringRef Path) {
  auto DocOr = parseDoc(Text, Path);
  if (!DocOr)
    return DocOr.takeError();
  const rapidjson::Document &Doc = *DocOr;
  Reader R(Path);
  JobResult Res;
  auto V = readVerdict(R, Doc, "");
  if (!V)
    return V.takeError();
  Res.V = *V;
  if (Error E = R.str(Doc, "", "kind", Res.Kind, false))
    return E;
  if (Error E = R.str(Doc, "", "reason", Res.Reason, false))
    return E;
  if (auto D = R.get(Doc, "", "device", false); !D) {
    return D.takeError();
  } else if (*D) {
    const JValue &DV = **D;
    DeviceSummary &DS = Res.Device;
    std::string CC;
    if (Error E = R.str(DV, "device", "name", DS.Name, false))
      return E;
    if (Error E = R.str(DV, "device", "driver", DS.Driver, false))
      return E;
    if (Error E = R.integer(DV, "device", "sm_count", DS.SmCount, 0))
      return E;
    if (Error E = R.str(DV, "device", "compute_capability", CC, false))
      return E;
    auto [Maj, Min] = StringRef(CC).split('.');
    Maj.getAsInteger(10, DS.CcMajor);
    Min.getAsInteger(10, DS.CcMinor);
    if (Error E = R.integer(DV, "device", "l2_bytes", DS.L2Bytes, 0))
      return E;
    if (Error E = R.integer(DV, "device", "memory_bytes", DS.MemoryBytes, 0))
      return E;
  }
  if (Error E = R.number(Doc, "", "copy_bandwidth_gbps", Res.CopyBandwidthGBps))
    return E;
  if (auto Sec = R.get(Doc, "", "seconds", false); !Sec) {
    return Sec.takeError();
  } else if (*Sec) {
    for (auto [Key, Slot] : {std::pair<StringRef, double *>{
                                 "context", &Res.Seconds.Context},
                             {"load", &Res.Seconds.Load},
                             {"verify", &Res.Seconds.Verify},
                             {"profile", &Res.Seconds.Profile}})
      if (Error E = R.number(**Sec, "seconds", Key, *Slot))
        return E;
  }
  if (Error E = R.seeds(Doc, "", "seeds", Res.Seeds))
    return E;
  if (auto Rs = R.get(Doc, "", "resources", false); !Rs) {
    return Rs.takeError();
  } else if (*Rs) {
    for (auto [Key, Slot] :
         {std::pair<StringRef, std::optional<KernelResourceInfo> *>{
              "baseline", &Res.BaselineResources},
          {"candidate", &Res.CandidateResources}}) {
      auto K = R.get(**Rs, "resources", Key, false);
      if (!K)
        return K.takeError();
      if (*K)
        if (Error E = readResources(R, **K, ("resources." + Key).str(), *Slot))
          return E;
    }
  }
  if (Error E = R.strings(Doc, "", "warnings", Res.Warnings))
    return E;

  auto Runs = R.get(Doc, "", "runs", false);
  if (!Runs)
    return Runs.takeError();
  if (*Runs) {
    if (!(*Runs)->IsArray())
      return R.fail("runs", "expected an array");
    unsigned I = 0;
    for (const JValue &RV : (*Runs)->GetArray()) {
      std::string F = formatv("runs[{0}]", I++).str();
      RunResult Run;
      if (Error E = R.str(RV, F, "name", Run.Name))
        return E;
      if (Error E = R.str(RV, F, "shape", Run.Shape, false))
        return E;
      if (Error E = R.str(RV, F, "kind", Run.Kind, false))
        return E;
      auto RVd = readVerdict(R, RV, F);
      if (!RVd)
        return RVd.takeError();
      Run.V = *RVd;
      if (Error E = readEnv(R, RV, F, Run.Vars))
        return E;
      if (Error E = R.seeds(RV, F, "seeds", Run.SeedsRun))
        return E;
      if (Error E = R.number(RV, F, "max_abs_error", Run.MaxAbsErr))
        return E;
      if (Error E = R.number(RV, F, "max_rel_error", Run.MaxRelErr))
        return E;
      if (Error E = R.strings(RV, F, "warnings", Run.Warnings))
        return E;
      if (auto FV = R.get(RV, F, "failure", false); !FV) {
        return FV.takeError();
      } else if (*FV) {
        FailureInfo FI;
        std::string FF = F + ".failure";
        if (Error E = R.str(**FV, FF, "kind", FI.Kind))
          return E;
        if (Error E = R.str(**FV, FF, "buffer", FI.Buffer, false))
          return E;
        if (Error E = R.integer(**FV, FF, "index", FI.Index, 0))
          return E;
        if (Error E = R.str(**FV, FF, "expected", FI.Expected, false))
          return E;
        if (Error E = R.str(**FV, FF, "actual", FI.Actual, false))
          return E;
        if (Error E = R.str(**FV, FF, "message", FI.Message, false))
          return E;
        auto SV = R.get(**FV, FF, "seed", false);
        if (!SV)
          return SV.takeError();
        if (*SV) {
          if (!(*SV)->IsUint64())
            return R.fail(FF + ".seed", "expected an unsigned integer");
          FI.Seed = (*SV)->GetUint64();
        }
        Run.Failure = std::move(FI);
      }
      if (auto TV = R.get(RV, F, "timing", false); !TV) {
        return TV.takeError();
      } else if (*TV) {
        TimingResult T;
        std::string TF = F + ".timing";
        auto B = R.get(**TV, TF, "baseline");
        if (!B)
          return B.takeError();
        if (Error E = readStats(R, **B, TF + ".baseline", T.Baseline))
          return E;
        auto C = R.get(**TV, TF, "candidate", false);
        if (!C)
          return C.takeError();
        if (*C) {
          T.Candidate.emplace();
          if (Error E = readStats(R, **C, TF + ".candidate", *T.Candidate))
            return E;
        }
        if (Error E = R.integer(**TV, TF, "bytes", T.Bytes, 0))
          return E;
        for (auto [Key, Slot] :
             {std::pair<StringRef, double *>{"baseline_gbps", &T.BaselineGBps},
              {"candidate_gbps", &T.CandidateGBps},
              {"roofline_gbps", &T.RooflineGBps},
              {"baseline_roofline", &T.BaselineRoofline},
              {"candidate_roofline", &T.CandidateRoofline}})
          if (Error E = R.number(**TV, TF, Key, *Slot))
            return E;
        for (auto [Key, Slot] :
             {std::pair<StringRef, std::optional<double> *>{"flops", &T.Flops},
              {"speedup", &T.Speedup}}) {
          double D = 0;
          auto X = R.get(**TV, TF, Key, false);
          if (!X)
            return X.takeError();
          if (*X) {
            if (Error E = R.number(**TV, TF, Key, D))
              return E;
            *Slot = D;
          }
        }
        Run.Timing = std::move(T);
      }
      Res.Runs.push_back(std::move(Run));
    }
  }
  if (auto N = R.get(Doc, "", "ncu", false); !N) {
    return N.takeError();
  } else if (*N) {
    if (!(*N)->IsObject())
      return R.fail("ncu", "expected an object");
    for (auto &K : (*N)->GetObject()) {
      std::string Kernel(K.name.GetString(), K.name.GetStringLength());
      if (!K.value.IsObject())
        return R.fail("ncu." + Kernel, "expected an object");
      for (auto &M : K.value.GetObject()) {
        if (!M.value.IsString())
          return R.fail("ncu." + Kernel, "expected string values");
        Res.NcuMetrics[Kernel][M.name.GetString()] = M.value.GetString();
      }
    }
  }
  return Res;
}

} // namespace astra
