//===- Job.cpp - Job and result JSON --------------------------------------===//
#include "astra/Engine/Job.h"
#include "astra/Support/Json.h"
#include "astra/Support/JsonMap.h"

#include "llvm/Support/Base64.h"
#include "llvm/Support/FormatVariadic.h"

#include <rapidjson/writer.h>

#include <algorithm>
#include <cmath>

using namespace llvm;

namespace astra {

/// The verdicts as jobs' results and reports spell them.
static const std::pair<StringRef, Verdict> VerdictNames[] = {
    {"pass", Verdict::Pass},
    {"fail", Verdict::Fail},
    {"error", Verdict::Error}};

StringRef verdictName(Verdict V) {
  for (auto &[Name, X] : VerdictNames)
    if (X == V)
      return Name;
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
// The formats (docs/engine.md): one mapping each reads and writes them.
//===----------------------------------------------------------------------===//

/// A shape variable: an integer or a real.
static void mapJson(JsonIO &IO, Value &V) {
  if (IO.writing()) {
    if (V.IsInt)
      IO.writer().value((long long)V.I);
    else
      IO.writer().value(V.D);
    return;
  }
  if (!IO.expect(&rapidjson::Value::IsNumber, "expected a number"))
    return;
  V = IO.value().IsInt64() ? Value::ofInt(IO.value().GetInt64())
                           : Value::ofReal(IO.value().GetDouble());
}

static void mapJson(JsonIO &IO, Verdict &V) {
  IO.enumeration<Verdict>(V, VerdictNames);
}

static void mapJson(JsonIO &IO, KernelImage &K) {
  IO.object([&] {
    IO.required("entry", K.Entry);
    IO.optional("source", K.Source);
    IO.required("ptx", K.Ptx);
    // The cubin is binary; JSON strings are text.
    std::string Cubin = IO.writing() ? encodeBase64(K.Cubin) : "";
    IO.nonEmpty("cubin_base64", Cubin);
    if (IO.reading() && IO.ok() && !Cubin.empty()) {
      std::vector<char> Bytes;
      if (Error E = decodeBase64(Cubin, Bytes))
        return IO.fail("cubin_base64", "not base64: " + toString(std::move(E)));
      K.Cubin.assign(Bytes.begin(), Bytes.end());
    }
  });
}

/// Grid or block: written as three expressions, read from one to three
/// (strings or integers; missing dimensions are 1).
static void mapJson(JsonIO &IO, SpecExpr (&D)[3]) {
  if (IO.writing()) {
    IO.writer().arrayBegin();
    for (const SpecExpr &E : D)
      IO.writer().value(E.empty() ? std::string("1") : E.text());
    IO.writer().arrayEnd();
    return;
  }
  const rapidjson::Value &V = IO.value();
  if (!V.IsArray() || V.Size() < 1 || V.Size() > 3)
    return IO.fail("expected an array of 1 to 3 expressions");
  for (unsigned I = 0; I < 3; ++I) {
    if (I >= V.Size()) {
      D[I] = SpecExpr::constant(1);
      continue;
    }
    const rapidjson::Value &X = V[I];
    std::string Text = X.IsString()  ? std::string(X.GetString())
                       : X.IsInt64() ? std::to_string(X.GetInt64())
                                     : std::string();
    auto E = SpecExpr::parse(Text);
    if (Text.empty() || !E)
      return IO.fail("element " + Twine(I) + ": " +
                     (E ? std::string("expected an expression")
                        : toString(E.takeError())));
    D[I] = std::move(*E);
  }
}

static void mapJson(JsonIO &IO, LaunchSpec &L) {
  IO.object([&] {
    IO.required("grid", L.Grid);
    IO.required("block", L.Block);
    std::string Shmem = L.Shmem.empty() ? "0" : L.Shmem.text();
    IO.optional("shmem", Shmem);
    if (IO.reading() && IO.ok()) {
      auto SE = SpecExpr::parse(Shmem);
      if (!SE)
        return IO.fail("shmem", toString(SE.takeError()));
      L.Shmem = std::move(*SE);
    }
  });
}

static void mapJson(JsonIO &IO, LaunchVariant &V) {
  IO.object([&] {
    IO.required("name", V.Name);
    IO.required("shape", V.Shape);
    IO.optional("vars", V.Vars);
    IO.required("launch", V.Launch);
    IO.optional("candidate_launch", V.CandidateLaunch);
    IO.optional("note", V.Note);
  });
}

static void mapJson(JsonIO &IO, JobOptions &O) {
  IO.object([&] {
    IO.optional("verify", O.Verify);
    IO.optional("adversarial", O.Adversarial);
    IO.optional("profile", O.Profile);
    IO.optional("runs", O.Runs, atLeast(1));
    IO.optional("warmup", O.Warmup);
    IO.optional("warmup_ms", O.WarmupMs);
    IO.optional("flush_l2", O.FlushL2);
    IO.optional("sanitize", O.Sanitize);
    IO.optional("ncu", O.Ncu);
    IO.optional("kernel_timeout_s", O.KernelTimeout, [](double T) {
      return T > 0 ? std::string() : std::string("must be positive");
    });
    IO.optional("device", O.Device, atLeast(0));
    IO.optional("cache_dir", O.CacheDir);
    IO.optional("candidate_only", O.CandidateOnly);
  });
}

/// The job file: \p Path names it in errors and is the spec's path when the
/// job does not carry one.
static void mapJob(JsonIO &IO, VerifyJob &J, StringRef Path) {
  IO.object([&] {
    int Version = 1;
    IO.required("version", Version, atLeast(1));
    if (IO.reading() && IO.ok() && Version != 1)
      return IO.fail("version",
                     formatv("this clang-astra reads job version 1, not {0}",
                             Version));
    std::string Kernel = J.Spec.Kernel, SpecPath = J.Spec.SpecPath;
    IO.required("kernel", Kernel);
    IO.optional("spec_path", SpecPath);
    IO.required("baseline", J.Baseline);
    IO.optional("candidate", J.Candidate);
    IO.optional("candidate_launch", J.CandidateLaunch);
    IO.optional("launch_space", J.LaunchSpace);
    IO.optional("notes", J.Notes);
    IO.optional("shapes", J.Shapes);
    IO.optional("seeds", J.Seeds);
    IO.optional("options", J.Options);
    // The spec has its own reader: strict, with every problem and its line.
    IO.member("spec", /*Required=*/true, [&] {
      if (IO.writing())
        return writeKernelSpecJson(IO.writer(), J.Spec);
      rapidjson::StringBuffer Buf;
      rapidjson::Writer<rapidjson::StringBuffer> W(Buf);
      IO.value().Accept(W);
      auto KS = parseKernelSpecJson(StringRef(Buf.GetString(), Buf.GetSize()),
                                    Kernel, SpecPath.empty() ? Path : SpecPath);
      if (!KS)
        return IO.fail(toString(KS.takeError()));
      J.Spec = std::move(*KS);
      J.Spec.Kernel = Kernel;
      if (!SpecPath.empty())
        J.Spec.SpecPath = SpecPath;
    });
  });
}

static void mapJson(JsonIO &IO, TimingStats &T) {
  IO.object([&] {
    IO.optional("runs", T.Runs);
    IO.optional("median_us", T.MedianUs);
    IO.optional("p10_us", T.P10Us);
    IO.optional("p90_us", T.P90Us);
    IO.optional("mad_us", T.MadUs);
    IO.optional("min_us", T.MinUs);
    IO.optional("mean_us", T.MeanUs);
  });
}

static void mapJson(JsonIO &IO, KernelResourceInfo &R) {
  IO.object([&] {
    IO.optional("registers", R.Registers, atLeast(0));
    IO.optional("local_bytes", R.LocalBytes, atLeast(0));
    IO.optional("shared_bytes", R.SharedBytes, atLeast(0));
    IO.optional("const_bytes", R.ConstBytes, atLeast(0));
    IO.optional("max_threads_per_block", R.MaxThreadsPerBlock, atLeast(0));
  });
}

static void mapJson(JsonIO &IO, FailureInfo &F) {
  IO.object([&] {
    IO.required("kind", F.Kind);
    IO.optional("buffer", F.Buffer);
    IO.optional("index", F.Index);
    IO.optional("expected", F.Expected);
    IO.optional("actual", F.Actual);
    IO.optional("seed", F.Seed);
    IO.optional("message", F.Message);
  });
}

static void mapJson(JsonIO &IO, TimingResult &T) {
  IO.object([&] {
    IO.required("baseline", T.Baseline);
    IO.optional("candidate", T.Candidate);
    IO.optional("bytes", T.Bytes, atLeast(0));
    IO.optional("flops", T.Flops);
    IO.optional("baseline_gbps", T.BaselineGBps);
    IO.optional("candidate_gbps", T.CandidateGBps);
    IO.optional("roofline_gbps", T.RooflineGBps);
    IO.optional("baseline_roofline", T.BaselineRoofline);
    IO.optional("candidate_roofline", T.CandidateRoofline);
    IO.optional("speedup", T.Speedup);
  });
}

static void mapJson(JsonIO &IO, RunResult &R) {
  IO.object([&] {
    IO.required("name", R.Name);
    IO.optional("shape", R.Shape);
    IO.optional("kind", R.Kind);
    IO.optional("vars", R.Vars);
    IO.required("verdict", R.V);
    IO.optional("seeds", R.SeedsRun);
    IO.optional("max_abs_error", R.MaxAbsErr);
    IO.optional("max_rel_error", R.MaxRelErr);
    IO.optional("failure", R.Failure);
    IO.optional("warnings", R.Warnings);
    IO.optional("timing", R.Timing);
  });
}

static void mapJson(JsonIO &IO, DeviceSummary &D) {
  IO.object([&] {
    IO.optional("name", D.Name);
    IO.optional("driver", D.Driver);
    IO.optional("sm_count", D.SmCount, atLeast(0));
    std::string CC = formatv("{0}.{1}", D.CcMajor, D.CcMinor).str();
    IO.optional("compute_capability", CC);
    if (IO.reading()) {
      auto [Maj, Min] = StringRef(CC).split('.');
      Maj.getAsInteger(10, D.CcMajor);
      Min.getAsInteger(10, D.CcMinor);
    }
    IO.optional("l2_bytes", D.L2Bytes);
    IO.optional("memory_bytes", D.MemoryBytes);
  });
}

static void mapJson(JsonIO &IO, JobResult::Phases &S) {
  IO.object([&] {
    IO.optional("context", S.Context);
    IO.optional("load", S.Load);
    IO.optional("verify", S.Verify);
    IO.optional("profile", S.Profile);
  });
}

static void mapJson(JsonIO &IO, JobResult &R) {
  IO.object([&] {
    IO.writeOnly("version", 1);
    IO.required("verdict", R.V);
    IO.optional("kind", R.Kind);
    IO.optional("reason", R.Reason);
    IO.optional("device", R.Device);
    IO.optional("copy_bandwidth_gbps", R.CopyBandwidthGBps);
    IO.optional("seconds", R.Seconds);
    IO.optional("seeds", R.Seeds);
    IO.member("resources", /*Required=*/false, [&] {
      IO.object([&] {
        IO.optional("baseline", R.BaselineResources);
        IO.optional("candidate", R.CandidateResources);
      });
    });
    IO.optional("warnings", R.Warnings);
    IO.optional("runs", R.Runs);
    IO.optional("ncu", R.NcuMetrics);
  });
}

std::string writeJobJson(const VerifyJob &J) {
  JsonWriter W;
  JsonIO IO(W);
  mapJob(IO, const_cast<VerifyJob &>(J), J.Spec.SpecPath);
  return W.str();
}

std::string writeResultJson(const JobResult &R) { return writeJson(R); }

/// Parses \p Text (comments allowed) into an object document.
static Expected<rapidjson::Document> parseDoc(StringRef Text, StringRef Path) {
  rapidjson::Document Doc;
  if (Error E = parseJsonWithComments(Text, Path, Doc))
    return E;
  if (!Doc.IsObject())
    return createStringError(inconvertibleErrorCode(),
                             Path + ": expected a JSON object");
  return Doc;
}

Expected<VerifyJob> parseJobJson(StringRef Text, StringRef Path) {
  auto Doc = parseDoc(Text, Path);
  if (!Doc)
    return Doc.takeError();
  VerifyJob J;
  JsonIO IO(*Doc, Path);
  mapJob(IO, J, Path);
  if (Error E = IO.takeError())
    return E;
  return J;
}

Expected<JobResult> parseResultJson(StringRef Text, StringRef Path) {
  auto Doc = parseDoc(Text, Path);
  if (!Doc)
    return Doc.takeError();
  JobResult R;
  if (Error E = readJson(*Doc, Path, R))
    return E;
  return R;
}

} // namespace astra
