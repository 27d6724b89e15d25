//===- EngineJobTest.cpp - Run plans, jobs, results, isolation ------------===//
#include "astra/Engine/ExternalTools.h"
#include "astra/Engine/Job.h"
#include "astra/Engine/JobRunner.h"
#include "astra/Engine/KernelRunner.h"
#include "astra/Engine/PtxParams.h"
#include "astra/Engine/RunPlan.h"
#include "astra/Support/FileIO.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"

#include <cmath>
#include <cstring>

using namespace astra;
using namespace llvm;

namespace {

const char *SpecText = R"spec({
  "version": 1,
  "kernels": {
    "rms": {
      "shapes": {"big": {"T": 64, "d": 4096}, "small": {"T": 16, "d": 1024}},
      "args": {
        "x": {"dtype": "bf16", "count": "T * d", "role": "inout", "init": "normal(0, 1)"},
        "w": {"dtype": "bf16", "count": "d", "role": "input", "init": "constant(1)"},
        "idx": {"dtype": "i32", "count": "T", "role": "input", "init": "permutation(T)", "align": 16},
        "out": {"dtype": "f32", "count": "T * d", "role": "output"},
        "eps": {"value": "1e-6", "dtype": "f32"},
        "d": {"value": "d", "dtype": "i32"},
      },
      "launch": {"grid": "T", "block": "min(d / 8, 1024)"},
      "adversarial": {"vary": ["d"]},
    },
  },
})spec";

KernelSpec loadSpec() {
  auto F = parseSpec(SpecText, "rms.cu.astra.json");
  if (!F) {
    ADD_FAILURE() << toString(F.takeError());
    return {};
  }
  return *F->find("rms");
}

TEST(EngineJobTest, OddSizes) {
  EXPECT_EQ(oddSize(4096), 4101);
  EXPECT_EQ(oddSize(4101), 4101);
  EXPECT_EQ(oddSize(8), 13);
  EXPECT_EQ(oddSize(7), 5);
  EXPECT_EQ(oddSize(2), 5);
  EXPECT_EQ(oddSize(1), 1);
  for (int64_t V = 2; V < 5000; ++V) {
    int64_t O = oddSize(V);
    ASSERT_EQ(O % 2, 1) << V;
    ASSERT_LE(std::llabs(O - V), 7) << V;
  }
}

TEST(EngineJobTest, PlanAddsAdversarialRunsFromTheSmallestShape) {
  KernelSpec S = loadSpec();
  auto Plan = planRuns(S, {}, {11, 22}, true);
  ASSERT_TRUE(bool(Plan)) << toString(Plan.takeError());
  std::vector<std::string> Names;
  for (const PlannedRun &R : *Plan)
    Names.push_back(R.Name);
  EXPECT_EQ(Names, (std::vector<std::string>{
                       "big", "small", "small+odd", "small+odd/misaligned",
                       "small/values=large", "small/values=negative",
                       "small/values=zeros", "small/values=denormal"}));
  const PlannedRun &Odd = (*Plan)[2];
  EXPECT_EQ(Odd.Kind, RunKind::OddSizes);
  EXPECT_EQ(Odd.Vars.at("d").I, 1029);
  EXPECT_EQ(Odd.Vars.at("T").I, 16) << "only vary variables change";
  EXPECT_EQ(Odd.Seeds, (std::vector<uint64_t>{11, 22}));
  const PlannedRun &Mis = (*Plan)[3];
  EXPECT_TRUE(Mis.Misalign);
  EXPECT_EQ(Mis.Vars.at("d").I, 1029);
  EXPECT_EQ(Mis.Seeds, (std::vector<uint64_t>{11}));
  EXPECT_EQ((*Plan)[4].Values, ValueMode::Large);
  EXPECT_TRUE(canMisalign(*S.arg("x")));
  EXPECT_FALSE(canMisalign(*S.arg("idx"))) << "align 16 forbids it";

  auto Only = planRuns(S, {"small"}, {5}, false);
  ASSERT_TRUE(bool(Only));
  ASSERT_EQ(Only->size(), 1u);
  EXPECT_EQ(Only->front().Name, "small");

  auto Bad = planRuns(S, {"medium"}, {5}, false);
  ASSERT_FALSE(bool(Bad));
  EXPECT_EQ(toString(Bad.takeError()),
            "rms.cu.astra.json: kernel 'rms': no shape set 'medium' (shape "
            "sets: big, small)");
  auto NoSeeds = planRuns(S, {}, {}, false);
  EXPECT_FALSE(bool(NoSeeds));
  consumeError(NoSeeds.takeError());
}

TEST(EngineJobTest, AdversarialRunsFromAnotherBase) {
  // A shape-split clone holding only the large set: its adversarial runs
  // start from the original's small set, which is not run in full; the
  // job's JSON carries it to the child process.
  KernelSpec Clone = loadSpec();
  ShapeSet Small = *Clone.shape("small");
  Clone.Shapes.erase(Clone.Shapes.begin() + 1);
  ASSERT_EQ(Clone.Shapes.size(), 1u);
  VerifyJob J;
  J.Spec = Clone;
  J.Seeds = {11, 22};
  setAdversarialBase(J, Small);
  EXPECT_EQ(J.Shapes, std::vector<std::string>{"big"});
  auto Plan = planRuns(J.Spec, J.Shapes, J.Seeds, true);
  ASSERT_TRUE(bool(Plan)) << toString(Plan.takeError());
  std::vector<std::string> Names;
  for (const PlannedRun &R : *Plan)
    Names.push_back(R.Name);
  EXPECT_EQ(Names, (std::vector<std::string>{
                       "big", "small+odd", "small+odd/misaligned",
                       "small/values=large", "small/values=negative",
                       "small/values=zeros", "small/values=denormal"}));
  J.Baseline = {"// ptx", "rms", "rms.cu"};
  auto Back = parseJobJson(writeJobJson(J), "job.json");
  ASSERT_TRUE(bool(Back)) << toString(Back.takeError());
  auto Again = planRuns(Back->Spec, Back->Shapes, Back->Seeds, true);
  ASSERT_TRUE(bool(Again));
  EXPECT_EQ(Again->size(), Names.size());
  // Without the clone's own sets named, all of the spec's run in full;
  // a set of its own as the base changes nothing.
  VerifyJob Own;
  Own.Spec = loadSpec();
  setAdversarialBase(Own, Small);
  EXPECT_TRUE(Own.Shapes.empty());
  EXPECT_EQ(Own.Spec.Shapes.size(), 2u);
}

TEST(EngineJobTest, LaunchSpaceRunsAfterTheOthersEvenWithoutAdversarial) {
  KernelSpec S = loadSpec();
  LaunchVariant V;
  V.Name = "block=64";
  V.Shape = "small";
  V.Vars = S.shape("small")->Vars;
  V.Launch = S.Launch;
  V.Launch.Block[0] = SpecExpr::constant(64);
  for (bool Adversarial : {true, false}) {
    auto Plan = planRuns(S, {}, {7, 8}, Adversarial, {V});
    ASSERT_TRUE(bool(Plan)) << toString(Plan.takeError());
    const PlannedRun &R = Plan->back();
    EXPECT_EQ(R.Name, "small@block=64");
    EXPECT_EQ(R.Kind, RunKind::LaunchSpace);
    EXPECT_EQ(R.Seeds, (std::vector<uint64_t>{7}));
    ASSERT_TRUE(R.Launch);
    EXPECT_EQ(R.Launch->Block[0].text(), "64");
    EXPECT_FALSE(R.CandidateLaunch);
  }
}

TEST(EngineJobTest, PlanRespectsTheSpecsAdversarialSwitches) {
  KernelSpec S = loadSpec();
  S.Adversarial.Misalign = false;
  S.Adversarial.Values = false;
  S.Adversarial.Vary.clear();
  auto Plan = planRuns(S, {}, {1}, true);
  ASSERT_TRUE(bool(Plan));
  EXPECT_EQ(Plan->size(), 2u);
}

TEST(EngineJobTest, Stats) {
  TimingStats T = computeStats({5, 1, 4, 2, 3});
  EXPECT_EQ(T.Runs, 5u);
  EXPECT_DOUBLE_EQ(T.MedianUs, 3);
  EXPECT_DOUBLE_EQ(T.P10Us, 1.4);
  EXPECT_DOUBLE_EQ(T.P90Us, 4.6);
  EXPECT_DOUBLE_EQ(T.MadUs, 1);
  EXPECT_DOUBLE_EQ(T.MinUs, 1);
  EXPECT_DOUBLE_EQ(T.MeanUs, 3);
  EXPECT_DOUBLE_EQ(computeStats({1, 2, 3, 10}).MedianUs, 2.5);
  EXPECT_EQ(computeStats({}).Runs, 0u);
}

VerifyJob sampleJob() {
  VerifyJob J;
  J.Spec = loadSpec();
  J.Baseline = {".version 8.8\n.visible .entry _Z3rmsv()\n{ ret; }\n", "_Z3rmsv",
                "rms.cu"};
  J.Candidate = KernelImage{"// candidate \"quoted\"\n", "_Z3rmsv", "cand 1"};
  LaunchSpec L;
  L.Grid[0] = cantFail(SpecExpr::parse("T"));
  L.Grid[1] = SpecExpr::constant(1);
  L.Grid[2] = SpecExpr::constant(1);
  L.Block[0] = cantFail(SpecExpr::parse("cdiv(d, 4)"));
  L.Block[1] = SpecExpr::constant(1);
  L.Block[2] = SpecExpr::constant(1);
  L.Shmem = cantFail(SpecExpr::parse("4 * d"));
  J.CandidateLaunch = L;
  LaunchVariant V;
  V.Name = "block=32 (d=32)";
  V.Shape = "small";
  V.Vars = J.Spec.shape("small")->Vars;
  V.Vars["d"] = Value::ofInt(32);
  V.Launch = L;
  V.Launch.Block[0] = SpecExpr::constant(32);
  V.CandidateLaunch = L;
  V.Note = "grid as in the spec";
  J.LaunchSpace.push_back(V);
  J.Notes = {"launches this file does not show are not verified"};
  J.Shapes = {"small"};
  J.Seeds = {0, 42, 18446744073709551615ull};
  J.Options.Profile = true;
  J.Options.Runs = 77;
  J.Options.WarmupMs = 120;
  J.Options.KernelTimeout = 2.5;
  J.Options.Sanitize = true;
  J.Options.CacheDir = "/tmp/c";
  return J;
}

TEST(EngineJobTest, JobJsonRoundTrip) {
  VerifyJob J = sampleJob();
  std::string Text = writeJobJson(J);
  auto Back = parseJobJson(Text, "job.json");
  ASSERT_TRUE(bool(Back)) << toString(Back.takeError()) << "\n" << Text;
  EXPECT_EQ(Back->Baseline.Ptx, J.Baseline.Ptx);
  EXPECT_EQ(Back->Baseline.Entry, "_Z3rmsv");
  ASSERT_TRUE(Back->Candidate);
  EXPECT_EQ(Back->Candidate->Ptx, J.Candidate->Ptx);
  EXPECT_EQ(Back->Candidate->Source, "cand 1");
  ASSERT_TRUE(Back->CandidateLaunch);
  EXPECT_EQ(Back->CandidateLaunch->Block[0].text(), "cdiv(d, 4)");
  EXPECT_EQ(Back->CandidateLaunch->Shmem.text(), "4 * d");
  ASSERT_EQ(Back->LaunchSpace.size(), 1u);
  const LaunchVariant &V = Back->LaunchSpace[0];
  EXPECT_EQ(V.Name, "block=32 (d=32)");
  EXPECT_EQ(V.Shape, "small");
  EXPECT_EQ(V.Vars.at("d").I, 32);
  EXPECT_EQ(V.Launch.Block[0].text(), "32");
  ASSERT_TRUE(V.CandidateLaunch);
  EXPECT_EQ(V.CandidateLaunch->Block[0].text(), "cdiv(d, 4)");
  EXPECT_EQ(V.Note, "grid as in the spec");
  EXPECT_EQ(Back->Notes, J.Notes);
  EXPECT_EQ(Back->Shapes, J.Shapes);
  EXPECT_EQ(Back->Seeds, J.Seeds);
  EXPECT_TRUE(Back->Options.Profile);
  EXPECT_TRUE(Back->Options.Sanitize);
  EXPECT_EQ(Back->Options.Runs, 77u);
  EXPECT_EQ(Back->Options.WarmupMs, 120u);
  EXPECT_EQ(Back->Options.KernelTimeout, 2.5);
  EXPECT_EQ(Back->Options.CacheDir, "/tmp/c");
  EXPECT_EQ(Back->Spec.Kernel, "rms");
  EXPECT_EQ(Back->Spec.SpecPath, "rms.cu.astra.json");
  ASSERT_EQ(Back->Spec.Args.size(), J.Spec.Args.size());
  EXPECT_EQ(Back->Spec.arg("x")->R, Role::InOut);
  EXPECT_EQ(Back->Spec.arg("x")->Type, DType::BF16);
  EXPECT_EQ(Back->Spec.arg("idx")->Align, 16u);
  EXPECT_EQ(Back->Spec.arg("eps")->ScalarType, DType::F32);
  EXPECT_EQ(Back->Spec.Adversarial.Vary, J.Spec.Adversarial.Vary);
  ASSERT_EQ(Back->Spec.Shapes.size(), 2u);
  EXPECT_EQ(Back->Spec.shape("big")->Vars.at("d").I, 4096);
  // Writing the parsed job again gives the same text: nothing was lost.
  EXPECT_EQ(writeJobJson(*Back), Text);
}

TEST(EngineJobTest, CubinTravelsAsBase64AndIsWhatTheDriverLoads) {
  VerifyJob J = sampleJob();
  EXPECT_EQ(&J.Baseline.code(), &J.Baseline.Ptx);
  // An ELF image holds NULs and bytes that are not UTF-8.
  std::string Bin("\x7f" "ELF\0\x01\xff\xfe tail", 13);
  J.Candidate->Cubin = Bin;
  std::string Text = writeJobJson(J);
  EXPECT_NE(Text.find("\"cubin_base64\": \"f0VMRgAB//4gdGFpbA==\""),
            std::string::npos)
      << Text;
  auto Back = parseJobJson(Text, "job.json");
  ASSERT_TRUE(bool(Back)) << toString(Back.takeError());
  EXPECT_EQ(Back->Candidate->Cubin, Bin);
  EXPECT_EQ(Back->Candidate->code(), Bin);
  EXPECT_TRUE(Back->Baseline.Cubin.empty());
  std::string Bad = Text;
  Bad.replace(Bad.find("f0VMRgAB"), 8, "f0V*RgAB");
  auto E = parseJobJson(Bad, "job.json");
  ASSERT_FALSE(bool(E));
  EXPECT_NE(toString(E.takeError())
                .find("job.json: candidate.cubin_base64: not base64"),
            std::string::npos);
}

TEST(EngineJobTest, JobJsonErrorsNameTheField) {
  VerifyJob J = sampleJob();
  std::string Text = writeJobJson(J);
  auto Replace = [&](StringRef From, StringRef To) {
    std::string T = Text;
    size_t P = T.find(From.str());
    EXPECT_NE(P, std::string::npos) << From.str();
    if (P != std::string::npos)
      T.replace(P, From.size(), To.str());
    return T;
  };
  auto Err = [](Expected<VerifyJob> J) {
    return J ? std::string("parsed") : toString(J.takeError());
  };
  EXPECT_EQ(Err(parseJobJson(Replace("\"runs\": 77", "\"runs\": 0"), "j.json")),
            "j.json: options.runs: must be at least 1");
  EXPECT_EQ(Err(parseJobJson(Replace("\"entry\": \"_Z3rmsv\"", "\"entry\": 5"),
                             "j.json")),
            "j.json: baseline.entry: expected a string");
  EXPECT_EQ(Err(parseJobJson(Replace("\"version\": 1", "\"version\": 2"),
                             "j.json")),
            "j.json: version: this clang-astra reads job version 1, not 2");
  EXPECT_EQ(Err(parseJobJson(Replace("\"seeds\": [", "\"seeds\": [-3, "),
                             "j.json")),
            "j.json: seeds[0]: must be at least 0");
  std::string E = Err(parseJobJson("{", "j.json"));
  EXPECT_NE(E.find("j.json:1:"), std::string::npos) << E;
  std::string S = Err(parseJobJson(Replace("\"count\": \"d\"", "\"count\": \"D\""),
                                   "j.json"));
  EXPECT_NE(S.find("j.json: spec: "), std::string::npos) << S;
  EXPECT_NE(S.find("'D'"), std::string::npos) << S;
}

JobResult sampleResult() {
  JobResult R;
  R.V = Verdict::Fail;
  R.Kind = "unwritten";
  R.Reason = "candidate did not write every element of 'out'";
  R.Device = {"NVIDIA H100 80GB HBM3", "13.0", 132, 9, 0, 52428800,
              85520809984ull};
  R.BaselineResources = KernelResourceInfo{32, 0, 1024, 0, 1024};
  R.Warnings = {"w1"};
  R.Seeds = {7, 8};
  R.CopyBandwidthGBps = 3004.5;
  R.Seconds = {0.25, 0.5, 1.5, 0.75};
  RunResult Run;
  Run.Name = "small+odd";
  Run.Shape = "small";
  Run.Kind = "odd-sizes";
  Run.Vars["d"] = Value::ofInt(1029);
  Run.Vars["eps"] = Value::ofReal(0.5);
  Run.SeedsRun = {7};
  Run.V = Verdict::Fail;
  Run.MaxAbsErr = 0.25;
  Run.MaxRelErr = 1e-3;
  FailureInfo F;
  F.Kind = "unwritten";
  F.Buffer = "out";
  F.Index = 1028;
  F.Expected = "0.5";
  F.Actual = "nan (0x7fffdead)";
  F.Seed = 7;
  F.Message = "m";
  Run.Failure = F;
  Run.Warnings = {"weak"};
  TimingResult T;
  T.Baseline = computeStats({1, 2, 3});
  T.Candidate = computeStats({1, 1, 1});
  T.Bytes = 123456789;
  T.Flops = 1e9;
  T.BaselineGBps = 100;
  T.CandidateGBps = 200;
  T.RooflineGBps = 3004.5;
  T.BaselineRoofline = 0.03;
  T.CandidateRoofline = 0.06;
  T.Speedup = 2;
  Run.Timing = T;
  R.Runs.push_back(Run);
  R.NcuMetrics["candidate"]["dram_throughput_pct"] = "91.2";
  return R;
}

TEST(EngineJobTest, ResultJsonRoundTrip) {
  JobResult R = sampleResult();
  std::string Text = writeResultJson(R);
  auto Back = parseResultJson(Text, "r.json");
  ASSERT_TRUE(bool(Back)) << toString(Back.takeError()) << "\n" << Text;
  EXPECT_EQ(Back->V, Verdict::Fail);
  EXPECT_EQ(Back->Kind, "unwritten");
  EXPECT_EQ(Back->Device.Name, R.Device.Name);
  EXPECT_EQ(Back->Device.CcMajor, 9);
  EXPECT_EQ(Back->Device.MemoryBytes, 85520809984ull);
  // The job's phases, for optimize's stages.
  EXPECT_EQ(Back->Seconds.Context, 0.25);
  EXPECT_EQ(Back->Seconds.Load, 0.5);
  EXPECT_EQ(Back->Seconds.Verify, 1.5);
  EXPECT_EQ(Back->Seconds.Profile, 0.75);
  ASSERT_TRUE(Back->BaselineResources);
  EXPECT_EQ(Back->BaselineResources->SharedBytes, 1024);
  EXPECT_FALSE(Back->CandidateResources);
  ASSERT_EQ(Back->Runs.size(), 1u);
  const RunResult &Run = Back->Runs[0];
  EXPECT_EQ(Run.Vars.at("d").I, 1029);
  EXPECT_FALSE(Run.Vars.at("eps").IsInt);
  ASSERT_TRUE(Run.Failure);
  EXPECT_EQ(Run.Failure->Actual, "nan (0x7fffdead)");
  EXPECT_EQ(*Run.Failure->Seed, 7u);
  ASSERT_TRUE(Run.Timing);
  EXPECT_EQ(Run.Timing->Bytes, 123456789);
  EXPECT_EQ(*Run.Timing->Speedup, 2.0);
  EXPECT_EQ(Run.Timing->Baseline.MedianUs, 2.0);
  EXPECT_EQ(Back->NcuMetrics["candidate"]["dram_throughput_pct"], "91.2");
  EXPECT_EQ(writeResultJson(*Back), Text);
}

TEST(EngineJobTest, SummarizeVerdict) {
  JobResult R;
  R.V = Verdict::Pass;
  RunResult A, B, C;
  A.Name = "a";
  B.Name = "b";
  B.V = Verdict::Error;
  B.Failure = FailureInfo{"error", "", 0, "", "", std::nullopt, "baseline broke"};
  C.Name = "c";
  C.V = Verdict::Fail;
  C.Failure = FailureInfo{"mismatch", "out", 3, "1", "2", 9, "wrong"};
  R.Runs = {A, B, C};
  summarizeVerdict(R);
  EXPECT_EQ(R.V, Verdict::Fail) << "a failure outranks an error";
  EXPECT_EQ(R.Kind, "mismatch");
  EXPECT_EQ(R.Reason, "wrong");
  JobResult P;
  P.V = Verdict::Pass;
  P.Runs = {A};
  summarizeVerdict(P);
  EXPECT_TRUE(P.passed());
}

const char *Ptx = R"(
.version 8.8
.target sm_90
.address_size 64

	// .globl	_Z5scalePKfPffii
.visible .entry _Z5scalePKfPffii(
	.param .u64 .ptr .align 1 _Z5scalePKfPffii_param_0,
	.param .u64 .ptr .align 1 _Z5scalePKfPffii_param_1,
	.param .f32 _Z5scalePKfPffii_param_2,
	.param .u32 _Z5scalePKfPffii_param_3,
	.param .align 4 .b8 _Z5scalePKfPffii_param_4[12]
)
{
	ret;
}
.visible .entry _Z5scalePKfPffiii()
{
	ret;
}
)";

TEST(EngineJobTest, PtxParams) {
  auto P = ptxEntryParams(Ptx, "_Z5scalePKfPffii");
  ASSERT_TRUE(P);
  ASSERT_EQ(P->size(), 5u);
  EXPECT_EQ((*P)[0].Bytes, 8u);
  EXPECT_EQ((*P)[2].Type, ".f32");
  EXPECT_EQ((*P)[3].Bytes, 4u);
  EXPECT_TRUE((*P)[4].IsArray);
  EXPECT_EQ((*P)[4].Bytes, 12u);
  auto Q = ptxEntryParams(Ptx, "_Z5scalePKfPffiii");
  ASSERT_TRUE(Q) << "an entry whose name extends another's is its own";
  EXPECT_EQ(Q->size(), 0u);
  EXPECT_FALSE(ptxEntryParams(Ptx, "_Z5scale"));
  EXPECT_FALSE(usesDeviceLaunch(Ptx));
  EXPECT_TRUE(usesDeviceLaunch("call.uni (retval0), cudaLaunchDeviceV2, ("));
}

TEST(EngineJobTest, SpecAgainstPtx) {
  auto F = parseSpec(R"({"version": 1, "kernels": {"scale": {
      "shapes": {"s": {"n": 4}},
      "args": {"x": {"dtype": "f32", "count": "n", "role": "input"},
               "y": {"dtype": "f32", "count": "n", "role": "output"},
               "a": {"value": "2.5"}, "n": {"value": "n"}},
      "launch": {"grid": "1", "block": "n"}}}})",
                     "s.json");
  ASSERT_TRUE(bool(F)) << toString(F.takeError());
  KernelSpec S = *F->find("scale");
  std::vector<PtxParam> P = *ptxEntryParams(Ptx, "_Z5scalePKfPffii");
  P.pop_back(); // the struct
  ASSERT_FALSE(bool(checkSpecAgainstPtx(S, P, "_Z5scalePKfPffii")));
  EXPECT_EQ(S.arg("a")->ScalarType, DType::F32) << "taken from .f32";
  EXPECT_EQ(S.arg("n")->ScalarType, DType::I32) << "taken from .u32";
  KernelSpec T = *F->find("scale");
  std::vector<PtxParam> Short(P.begin(), P.begin() + 3);
  EXPECT_EQ(toString(checkSpecAgainstPtx(T, Short, "k")),
            "s.json: kernel 'scale': the spec describes 4 arguments but kernel "
            "k takes 3 parameters");
  std::vector<PtxParam> Swapped = P;
  std::swap(Swapped[0], Swapped[2]);
  std::string E = toString(checkSpecAgainstPtx(T, Swapped, "k"));
  EXPECT_NE(E.find("args.x: parameter 0 of k is 4 bytes (.f32); the spec says "
                   "it is a buffer"),
            std::string::npos)
      << E;
}

TEST(EngineJobTest, PackScalar) {
  KernelSpec S;
  S.Kernel = "k";
  S.SpecPath = "k.json";
  Env Vars;
  Vars["n"] = Value::ofInt(3000000000ll);
  ArgSpec A;
  A.Name = "a";
  auto Pack = [&](StringRef Expr, DType T) {
    A.ScalarValue = cantFail(SpecExpr::parse(Expr));
    A.ScalarType = T;
    return packScalar(S, A, Vars);
  };
  auto F = cantFail(Pack("2.5", DType::F32));
  float FV = 2.5f;
  ASSERT_EQ(F.size(), 4u);
  EXPECT_EQ(0, std::memcmp(F.data(), &FV, 4));
  auto I = cantFail(Pack("-1", DType::I32));
  EXPECT_EQ(I, (std::vector<uint8_t>{0xff, 0xff, 0xff, 0xff}));
  auto U = cantFail(Pack("n", DType::I32));
  EXPECT_EQ(U, (std::vector<uint8_t>{0x00, 0x5e, 0xd0, 0xb2}))
      << "an unsigned value that fits 32 bits is accepted";
  auto L = cantFail(Pack("n * 4", DType::I64));
  EXPECT_EQ(L.size(), 8u);
  auto H = cantFail(Pack("1", DType::BF16));
  EXPECT_EQ(H, (std::vector<uint8_t>{0x80, 0x3f}));
  auto Big = Pack("n * 2", DType::I32);
  ASSERT_FALSE(bool(Big));
  EXPECT_EQ(toString(Big.takeError()),
            "k.json: kernel 'k': args.a.value: 'n * 2' = 6000000000 does not "
            "fit the parameter's type i32");
  auto Frac = Pack("1.5", DType::I64);
  ASSERT_FALSE(bool(Frac));
  EXPECT_NE(toString(Frac.takeError()).find("the parameter is an integer"),
            std::string::npos);
}

TEST(EngineJobTest, SanitizerOutput) {
  const char *Clean = "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 "
                      "errors\n";
  EXPECT_EQ(parseSanitizerOutput(Clean, nullptr), 0);
  const char *Bad =
      "========= COMPUTE-SANITIZER\n"
      "========= Invalid __global__ write of size 4 bytes\n"
      "=========     at bad_kernel(float *)+0x70\n"
      "=========     by thread (0,0,0) in block (0,0,0)\n"
      "=========     Address 0x7f00 is out of bounds\n"
      "=========\n"
      "========= Invalid __global__ write of size 4 bytes\n"
      "========= ERROR SUMMARY: 2 errors\n";
  std::string First;
  EXPECT_EQ(parseSanitizerOutput(Bad, &First), 2);
  EXPECT_EQ(First, "Invalid __global__ write of size 4 bytes\n  at "
                   "bad_kernel(float *)+0x70\n  by thread (0,0,0) in block "
                   "(0,0,0)\n  Address 0x7f00 is out of bounds");
  EXPECT_EQ(parseSanitizerOutput("no summary", nullptr), -1);
  const char *Race =
      "========= COMPUTE-SANITIZER\n"
      "========= Warning: Race reported between Write access at "
      "mul_add(const float *, const float *, float *, int)+0x1d0\n"
      "=========     and Read access at mul_add+0x1f0 [64 hazards]\n"
      "=========\n"
      "========= RACECHECK SUMMARY: 1 hazard displayed (0 errors, 1 warning)\n"
      "========= ERROR SUMMARY: 0 errors\n";
  EXPECT_EQ(parseSanitizerOutput(Race, &First), 1);
  EXPECT_EQ(First, "Warning: Race reported between Write access at "
                   "mul_add(const float *, const float *, float *, "
                   "int)+0x1d0\n  and Read access at mul_add+0x1f0 [64 "
                   "hazards]");
}

TEST(EngineJobTest, NcuCsv) {
  const char *Csv =
      "==PROF== Connected to process 123\n"
      "\"ID\",\"Kernel Name\",\"Block Size\",\"dram__throughput.avg.pct_of_"
      "peak_sustained_elapsed\",\"sm__warps_active.avg.pct_of_peak_sustained_"
      "active\",\"smsp__average_warps_issue_stalled_long_scoreboard_per_issue_"
      "active.ratio\",\"smsp__average_warps_issue_stalled_barrier_per_issue_"
      "active.ratio\",\"smsp__average_warps_issue_stalled_wait_per_issue_"
      "active.ratio\",\"smsp__average_warps_issue_stalled_drain_per_issue_"
      "active.ratio\"\n"
      "\"\",\"\",\"\",\"%\",\"%\",\"ratio\",\"ratio\",\"ratio\",\"ratio\"\n"
      "\"0\",\"copy(float*, int)\",\"(256, 1, 1)\",\"91.5\",\"78.25\","
      "\"12.5\",\"0.25\",\"1,234.5\",\"0\"\n";
  auto Raw = parseNcuRawCsv(Csv);
  EXPECT_EQ(Raw["Kernel Name"], "copy(float*, int)");
  EXPECT_EQ(Raw["Block Size"], "(256, 1, 1)");
  auto S = summarizeNcuMetrics(Raw);
  EXPECT_EQ(S["dram_throughput_pct"], "91.5");
  EXPECT_EQ(S["achieved_occupancy_pct"], "78.25");
  EXPECT_EQ(S["top_stalls"], "wait 1234.50, long_scoreboard 12.50, barrier 0.25");
}

/// A stand-in for `clang-astra run-job`: a shell script.
std::string script(StringRef Name, StringRef Body) {
  SmallString<128> P;
  EXPECT_FALSE(sys::fs::createTemporaryFile(Name, "sh", P));
  cantFail(writeFileAtomically(P, ("#!/bin/sh\n" + Body + "\n").str()));
  sys::fs::setPermissions(P, sys::fs::perms::all_exe | sys::fs::owner_read |
                                 sys::fs::owner_write);
  return std::string(P);
}

TEST(EngineJobTest, IsolatedRunReadsTheChildsResult) {
  SmallString<128> Res;
  ASSERT_FALSE(sys::fs::createTemporaryFile("astra-canned", "json", Res));
  cantFail(writeFileAtomically(Res, writeResultJson(sampleResult())));
  // Called as: <exe> run-job <job> -o <result>.
  std::string S = script("astra-fake-runjob",
                         "test \"$1\" = run-job || exit 3\n"
                         "grep -q '\"kernel\": \"rms\"' \"$2\" || exit 4\n"
                         "cp " + Res.str().str() + " \"$4\"");
  JobResult R = runJobIsolated(sampleJob(), 30, nullptr, S);
  EXPECT_EQ(R.V, Verdict::Fail) << R.Reason;
  EXPECT_EQ(R.Kind, "unwritten");
  ASSERT_EQ(R.Runs.size(), 1u);
  sys::fs::remove(S);
  sys::fs::remove(Res);
}

TEST(EngineJobTest, IsolatedRunThatHangsTimesOut) {
  std::string S = script("astra-fake-hang", "echo started; exec sleep 60");
  auto Start = std::chrono::steady_clock::now();
  JobResult R = runJobIsolated(sampleJob(), 1, nullptr, S);
  double Took = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                              Start)
                    .count();
  EXPECT_LT(Took, 30);
  EXPECT_EQ(R.V, Verdict::Fail) << "a candidate that hangs fails";
  EXPECT_EQ(R.Kind, "timeout");
  EXPECT_NE(R.Reason.find("timed out after 1 s"), std::string::npos)
      << R.Reason;
  EXPECT_NE(R.Reason.find("started"), std::string::npos)
      << "the child's last output is kept: " << R.Reason;
  sys::fs::remove(S);
}

TEST(EngineJobTest, IsolatedRunThatCrashes) {
  std::string S = script("astra-fake-crash", "echo dying >&2; kill -SEGV $$");
  JobResult R = runJobIsolated(sampleJob(), 30, nullptr, S);
  EXPECT_EQ(R.V, Verdict::Error);
  EXPECT_EQ(R.Kind, "crash");
  EXPECT_NE(R.Reason.find("the verifier process crashed"), std::string::npos)
      << R.Reason;
  EXPECT_NE(R.Reason.find("dying"), std::string::npos) << R.Reason;
  sys::fs::remove(S);

  std::string E = script("astra-fake-exit", "exit 7");
  JobResult X = runJobIsolated(sampleJob(), 30, nullptr, E);
  EXPECT_EQ(X.V, Verdict::Error);
  EXPECT_NE(X.Reason.find("exited with code 7 without a result"),
            std::string::npos)
      << X.Reason;
  sys::fs::remove(E);
}

} // namespace
