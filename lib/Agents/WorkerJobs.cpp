//===- WorkerJobs.cpp -----------------------------------------------------===//
#include "astra/Agents/WorkerJobs.h"
#include "astra/Engine/JobRunner.h"
#include "astra/Support/FileIO.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace llvm;

namespace astra {

JobResult infrastructureResult(const exec::TaskOutcome &O) {
  JobResult R;
  R.V = Verdict::Error;
  R.Kind = "infrastructure";
  R.Reason = O.S == exec::TaskOutcome::Cancelled ? "cancelled (interrupted)"
                                                 : O.describe();
  return R;
}

std::vector<JobResult> runJobsOnWorkers(exec::Executor &E,
                                        ArrayRef<VerifyJob> Jobs,
                                        unsigned TimeoutSeconds,
                                        raw_ostream *Log) {
  static unsigned Counter = 0;
  std::vector<JobResult> Out(Jobs.size());
  std::vector<exec::Task> Tasks;
  std::vector<std::string> JobFiles;
  std::string Exe = jobRunnerExecutable();
  for (size_t I = 0; I < Jobs.size(); ++I) {
    std::string Stem = "job-" + std::to_string(++Counter);
    auto In = [&](StringRef Suffix) {
      SmallString<256> P(E.taskDirectory());
      sys::path::append(P, Stem + Suffix.str());
      return std::string(P);
    };
    exec::Task T;
    T.Name = Stem;
    T.ResultPath = In(".result.json");
    T.LogPath = In(".log");
    T.TimeoutSeconds = TimeoutSeconds;
    std::string JobPath = In(".json");
    T.Args = {Exe, "run-job", JobPath, "-o", T.ResultPath};
    if (Log)
      T.Args.push_back("--verbose");
    if (Error Err = writeFileAtomically(JobPath, writeJobJson(Jobs[I]))) {
      Out[I] = errorResult(toString(std::move(Err)));
      T.Args = {"/bin/false"}; // Fails fast; its result is already decided.
    }
    JobFiles.push_back(JobPath);
    Tasks.push_back(std::move(T));
  }
  std::vector<exec::TaskOutcome> Ends = E.run(Tasks);
  for (size_t I = 0; I < Jobs.size(); ++I) {
    const exec::Task &T = Tasks[I];
    if (Log)
      if (auto Text = readFile(T.LogPath))
        *Log << *Text;
      else
        consumeError(Text.takeError());
    if (T.Args.front() != "/bin/false") {
      if (Ends[I].S == exec::TaskOutcome::Finished) {
        auto Text = readFile(T.ResultPath);
        auto Parsed = Text ? parseResultJson(*Text, T.ResultPath)
                           : Expected<JobResult>(Text.takeError());
        Out[I] = Parsed ? std::move(*Parsed)
                        : errorResult("the verifier process wrote an "
                                      "unreadable result: " +
                                      toString(Parsed.takeError()));
      } else {
        Out[I] = infrastructureResult(Ends[I]);
      }
    }
    for (const std::string &F : {JobFiles[I], T.ResultPath, T.LogPath,
                                 T.ResultPath + ".status"})
      sys::fs::remove(F);
  }
  return Out;
}

} // namespace astra
