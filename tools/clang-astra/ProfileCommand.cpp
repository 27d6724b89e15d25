//===- ProfileCommand.cpp - clang-astra profile ---------------------------===//
//
// Times a kernel on every shape set of its spec (and, with --candidate, a
// rewrite of it in the same process, interleaved) and reports the median,
// the spread, the bandwidth and its share of the device's measured copy
// bandwidth. Runs in a child process like verify.
//
//===----------------------------------------------------------------------===//
#include "Common.h"
#include "Subcommands.h"
#include "astra/Engine/JobRunner.h"
#include "astra/Engine/Report.h"

#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace astra {
namespace tool {

static cl::SubCommand ProfileCmd(
    "profile", "Time a kernel (and optionally a rewrite of it) on the GPU");
static cl::list<std::string> Files(cl::Positional, cl::desc("<file>"),
                                   cl::sub(ProfileCmd), cl::cat(AstraCategory));
static cl::opt<std::string>
    CandidateFile("candidate",
                  cl::desc("A rewritten file to time against the original"),
                  cl::value_desc("file"), cl::sub(ProfileCmd),
                  cl::cat(AstraCategory));
static cl::opt<std::string> CandidateSpec(
    "candidate-spec",
    cl::desc("The candidate's spec, when its launch differs from the "
             "original's (default: <candidate>.astra.json when it exists)"),
    cl::value_desc("file"), cl::sub(ProfileCmd), cl::cat(AstraCategory));
static cl::opt<std::string>
    KernelName("kernel",
               cl::desc("The kernel (as `list` names it; default: the only "
                        "kernel of the spec)"),
               cl::sub(ProfileCmd), cl::cat(AstraCategory));
static cl::opt<std::string>
    SpecFileOpt("spec", cl::desc("Spec file (default: <file>.astra.json)"),
                cl::value_desc("file"), cl::sub(ProfileCmd),
                cl::cat(AstraCategory));
static cl::list<std::string>
    ShapeNames("shape", cl::desc("Only these shape sets (comma-separated)"),
               cl::CommaSeparated, cl::sub(ProfileCmd), cl::cat(AstraCategory));
static cl::opt<unsigned> Runs("runs",
                              cl::desc("Timed runs per kernel and shape set "
                                       "(default 50)"),
                              cl::init(50), cl::sub(ProfileCmd),
                              cl::cat(AstraCategory));
static cl::opt<unsigned> Warmup("warmup",
                                cl::desc("Untimed runs first (default 5)"),
                                cl::init(5), cl::sub(ProfileCmd),
                                cl::cat(AstraCategory));
static cl::opt<unsigned>
    WarmupMs("warmup-ms",
             cl::desc("Untimed runs last at least this many milliseconds "
                      "(default 50; idle GPU clocks take time to come up)"),
             cl::init(50), cl::sub(ProfileCmd), cl::cat(AstraCategory));
static cl::opt<bool>
    NoFlush("no-flush",
            cl::desc("Do not flush the L2 cache before each timed run"),
            cl::sub(ProfileCmd), cl::cat(AstraCategory));
static cl::opt<uint64_t> SeedOpt("seed",
                                 cl::desc("Seed of the inputs (default 1)"),
                                 cl::init(1), cl::sub(ProfileCmd),
                                 cl::cat(AstraCategory));
static cl::opt<bool> Ncu("ncu",
                         cl::desc("Add Nsight Compute metrics (DRAM "
                                  "throughput, occupancy, warp stalls)"),
                         cl::sub(ProfileCmd), cl::cat(AstraCategory));
static cl::opt<double>
    KernelTimeout("kernel-timeout",
                  cl::desc("Seconds after which a kernel counts as hung "
                           "(default 10)"),
                  cl::init(10), cl::sub(ProfileCmd), cl::cat(AstraCategory));
static cl::opt<unsigned>
    JobTimeout("timeout",
               cl::desc("Seconds the whole profile may take (default 1800)"),
               cl::init(1800), cl::sub(ProfileCmd), cl::cat(AstraCategory));
static cl::opt<int> DeviceOpt("device", cl::desc("GPU ordinal (default 0)"),
                              cl::init(0), cl::sub(ProfileCmd),
                              cl::cat(AstraCategory));
enum class Format { Text, Json };
static cl::opt<Format> OutFormat(
    "format", cl::desc("Output format"),
    cl::values(clEnumValN(Format::Text, "text", "a report (default)"),
               clEnumValN(Format::Json, "json", "the job result as JSON")),
    cl::init(Format::Text), cl::sub(ProfileCmd), cl::cat(AstraCategory));

static int runProfile(const Session &S) {
  if (Files.size() != 1)
    return reportError("profile: expected exactly one file (see --help)");
  if (Runs == 0)
    return reportError("profile: --runs must be at least 1");
  auto J = jobFromFiles(S, {Files.front(), SpecFileOpt, KernelName,
                            CandidateFile, CandidateSpec});
  if (!J)
    return reportError(J.takeError());
  VerifyJob &Job = *J;
  Job.Shapes = ShapeNames;
  Job.Seeds = {SeedOpt};
  JobOptions &O = Job.Options;
  O.Verify = false;
  O.Adversarial = false;
  O.Profile = true;
  O.Runs = Runs;
  O.Warmup = Warmup;
  O.WarmupMs = WarmupMs;
  O.FlushL2 = !NoFlush;
  O.Ncu = Ncu;
  O.KernelTimeout = KernelTimeout;
  O.Device = DeviceOpt;

  JobResult R = runJobIsolated(Job, JobTimeout, Verbose ? &errs() : nullptr);
  if (OutFormat == Format::Json)
    outs() << writeResultJson(R);
  else
    printProfileReport(outs(), Job, R);
  return R.passed() ? 0 : 1;
}

static SubcommandRegistration Reg(ProfileCmd, runProfile);

} // namespace tool
} // namespace astra
