//===- VerifyCommand.cpp - clang-astra verify -----------------------------===//
//
// Differentially tests a rewritten file against the original on the GPU:
// both are compiled through the NVPTX gate, the kernel is found in each by
// name, and a job runs in a child process so a candidate that crashes or
// hangs cannot take the tool with it. Exit 0 on pass, 1 on fail or error.
//
//===----------------------------------------------------------------------===//
#include "Common.h"
#include "Subcommands.h"
#include "astra/Engine/JobRunner.h"
#include "astra/Engine/KernelSource.h"
#include "astra/Engine/Report.h"
#include "astra/Frontend/KernelModel.h"
#include "astra/Support/FileIO.h"

#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace astra {
namespace tool {

static cl::SubCommand VerifyCmd(
    "verify", "Differentially test a rewritten kernel against the original "
              "on the GPU");
static cl::list<std::string> Files(cl::Positional, cl::desc("<file>"),
                                   cl::sub(VerifyCmd), cl::cat(AstraCategory));
static cl::opt<std::string>
    CandidateFile("candidate", cl::desc("The rewritten file to test"),
                  cl::value_desc("file"), cl::sub(VerifyCmd),
                  cl::cat(AstraCategory));
static cl::opt<std::string> CandidateSpec(
    "candidate-spec",
    cl::desc("The candidate's spec, when its launch differs from the "
             "original's (default: <candidate>.astra.json when it exists)"),
    cl::value_desc("file"), cl::sub(VerifyCmd), cl::cat(AstraCategory));
static cl::opt<std::string>
    KernelName("kernel",
               cl::desc("The kernel (as `list` names it; default: the only "
                        "kernel of the spec)"),
               cl::sub(VerifyCmd), cl::cat(AstraCategory));
static cl::opt<std::string>
    SpecFileOpt("spec", cl::desc("Spec file (default: <file>.astra.json)"),
                cl::value_desc("file"), cl::sub(VerifyCmd),
                cl::cat(AstraCategory));
static cl::list<std::string>
    ShapeNames("shape", cl::desc("Only these shape sets (comma-separated)"),
               cl::CommaSeparated, cl::sub(VerifyCmd), cl::cat(AstraCategory));
static cl::opt<uint64_t>
    SeedOpt("seed", cl::desc("Run this one seed (replays a printed failure)"),
            cl::sub(VerifyCmd), cl::cat(AstraCategory));
static cl::opt<unsigned>
    NumSeeds("seeds", cl::desc("Fresh seeds per shape set (default 5)"),
             cl::init(5), cl::sub(VerifyCmd), cl::cat(AstraCategory));
static cl::opt<bool>
    NoAdversarial("no-adversarial",
                  cl::desc("Skip the odd-size, misaligned and value-range runs"),
                  cl::sub(VerifyCmd), cl::cat(AstraCategory));
static cl::opt<bool>
    Sanitize("sanitize",
             cl::desc("Also run the candidate under compute-sanitizer "
                      "memcheck and racecheck"),
             cl::sub(VerifyCmd), cl::cat(AstraCategory));
static cl::opt<double>
    KernelTimeout("kernel-timeout",
                  cl::desc("Seconds after which a kernel counts as hung "
                           "(default 10)"),
                  cl::init(10), cl::sub(VerifyCmd), cl::cat(AstraCategory));
static cl::opt<unsigned>
    JobTimeout("timeout",
               cl::desc("Seconds the whole verification may take (default "
                        "900)"),
               cl::init(900), cl::sub(VerifyCmd), cl::cat(AstraCategory));
static cl::opt<int> DeviceOpt("device", cl::desc("GPU ordinal (default 0)"),
                              cl::init(0), cl::sub(VerifyCmd),
                              cl::cat(AstraCategory));
static cl::opt<std::string>
    SaveJob("save-job", cl::desc("Also write the job (JSON) here"),
            cl::value_desc("file"), cl::sub(VerifyCmd), cl::cat(AstraCategory));
enum class Format { Text, Json };
static cl::opt<Format> OutFormat(
    "format", cl::desc("Output format"),
    cl::values(clEnumValN(Format::Text, "text", "a report (default)"),
               clEnumValN(Format::Json, "json", "the job result as JSON")),
    cl::init(Format::Text), cl::sub(VerifyCmd), cl::cat(AstraCategory));

static int runVerify(const Session &S) {
  if (Files.size() != 1)
    return reportError("verify: expected exactly one original file (see "
                       "--help)");
  if (CandidateFile.empty())
    return reportError("verify: --candidate <file> is required");
  if (NumSeeds == 0)
    return reportError("verify: --seeds must be at least 1");
  if (!(KernelTimeout > 0))
    return reportError("verify: --kernel-timeout must be positive");
  auto J = jobFromFiles(S, {Files.front(), SpecFileOpt, KernelName,
                            CandidateFile, CandidateSpec});
  if (!J)
    return reportError(J.takeError());
  VerifyJob &Job = *J;
  Job.Shapes = ShapeNames;
  Job.Seeds = SeedOpt.getNumOccurrences() ? std::vector<uint64_t>{SeedOpt}
                                           : freshSeeds(NumSeeds);
  Job.Options.Verify = true;
  Job.Options.Adversarial = !NoAdversarial;
  Job.Options.Sanitize = Sanitize;
  Job.Options.KernelTimeout = KernelTimeout;
  Job.Options.Device = DeviceOpt;
  if (!SaveJob.empty())
    if (Error E = writeFileAtomically(SaveJob, writeJobJson(Job)))
      return reportError(std::move(E));

  JobResult R = runJobIsolated(Job, JobTimeout, Verbose ? &errs() : nullptr);
  if (OutFormat == Format::Json)
    outs() << writeResultJson(R);
  else
    printVerifyReport(outs(), Job, R);
  return R.passed() ? 0 : 1;
}

static SubcommandRegistration Reg(VerifyCmd, runVerify);

} // namespace tool
} // namespace astra
