//===- RunJobCommand.cpp - clang-astra run-job ----------------------------===//
//
// Runs one self-contained verify/profile job (docs/engine.md) in this
// process and writes its result as JSON. This is what runJobIsolated starts
// as a child process, and the unit a batch scheduler would start on a GPU
// node. Exit 0 when the verdict is pass, 1 otherwise.
//
//===----------------------------------------------------------------------===//
#include "Common.h"
#include "Subcommands.h"
#include "astra/Engine/JobRunner.h"
#include "astra/Exec/Task.h"
#include "astra/Support/FileIO.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <unistd.h>

using namespace llvm;

namespace astra {
namespace tool {

static cl::SubCommand RunJobCmd("run-job",
                                "Run one verify/profile job (JSON) on this "
                                "machine's GPU");
static cl::list<std::string> Files(cl::Positional, cl::desc("<job.json>"),
                                   cl::sub(RunJobCmd), cl::cat(AstraCategory));
static cl::opt<std::string> OutputFile("o",
                                       cl::desc("Write the result here "
                                                "(default: standard output)"),
                                       cl::value_desc("result.json"),
                                       cl::sub(RunJobCmd),
                                       cl::cat(AstraCategory));

static int runRunJob(const Session &S) {
  if (Files.size() != 1)
    return reportError("run-job: expected exactly one job file");
  auto Text = readFile(Files.front());
  if (!Text)
    return reportError(Text.takeError());
  auto Job = parseJobJson(*Text, Files.front());
  JobResult R = Job ? runJob(*Job, Verbose ? &errs() : nullptr)
                    : errorResult(toString(Job.takeError()));
  std::string Json = writeResultJson(R);
  int RC = R.passed() ? 0 : 1;
  // On an executor's worker, a GPU that cannot be opened is the worker's
  // failure, not the job's: the job goes to another worker.
  if (R.Kind == "no-device" && std::getenv(exec::WorkerEnvVar))
    RC = exec::WorkerLostExitCode;
  if (OutputFile.empty()) {
    outs() << Json;
  } else if (Error E = writeFileAtomically(OutputFile, Json)) {
    RC = reportError(std::move(E));
  }
  if (R.ContextLost) {
    // A crashed or still-running kernel: the driver's own teardown at exit
    // can block on it, and the result is already out.
    outs().flush();
    errs().flush();
    _exit(RC);
  }
  return RC;
}

static SubcommandRegistration Reg(RunJobCmd, runRunJob);

} // namespace tool
} // namespace astra
