//===- SlurmBackend.h - Tasks as Slurm batch jobs ---------------*- C++ -*-===//
//
// Each attempt is one `sbatch` job running the task's command on a node that
// Slurm chooses, with the user's `--slurm-args` (partition, account, gres,
// time). The task's files live in a directory all nodes share (--job-dir);
// the job writes its exit status beside its result, and the backend learns
// that a job ended from `squeue` (which keeps finished jobs for MinJobAge)
// and from those files. A worker here is a slot for one submitted job:
// their number caps how many jobs are in Slurm's queue at once.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_EXEC_SLURMBACKEND_H
#define ASTRA_EXEC_SLURMBACKEND_H

#include "astra/Exec/Executor.h"

#include <chrono>
#include <map>
#include <optional>

namespace astra {
namespace exec {

class SlurmBackend : public Backend {
public:
  /// \p Slots: jobs in Slurm at once. \p SbatchArgs: the user's options,
  /// given to every sbatch. \p TaskDir: this run's directory under the
  /// shared job directory (created by the caller). \p RunName: the job name
  /// every job of this run gets (how squeue finds them).
  SlurmBackend(unsigned Slots, std::vector<std::string> SbatchArgs,
               std::string TaskDir, std::string RunName);
  ~SlurmBackend() override;

  unsigned workers() const override { return Slots.size(); }
  std::string workerName(unsigned W) const override;
  std::string taskDirectory() const override { return TaskDir; }
  llvm::Error start(unsigned W, const Task &T) override;
  std::vector<std::pair<unsigned, AttemptEnd>> poll(double Seconds) override;
  void cancelAll() override;

  /// The job script of \p T: runs its command, writes its exit status to
  /// \p StatusPath (exposed for tests).
  static std::string jobScript(const Task &T, llvm::StringRef StatusPath);
  /// Splits --slurm-args the way a shell would (quotes, backslashes).
  static llvm::Expected<std::vector<std::string>>
  splitArgs(llvm::StringRef Text);
  /// Whether a squeue state means the job may still run.
  static bool activeState(llvm::StringRef State);

private:
  struct Submitted {
    std::string JobId;
    Task T;
    std::string StatusPath;
    std::string LastState;
    std::optional<std::chrono::steady_clock::time_point> RunningSince;
  };
  /// Runs a Slurm command; its output on success.
  llvm::Expected<std::string> slurm(const std::vector<std::string> &Args,
                                    unsigned TimeoutSeconds = 60);
  /// Job id -> state, for the jobs of this run squeue still knows.
  llvm::Expected<std::map<std::string, std::string>> states();

  std::vector<std::string> SbatchArgs;
  std::string TaskDir, RunName;
  std::vector<std::optional<Submitted>> Slots;
  unsigned Counter = 0;
  std::chrono::steady_clock::time_point LastPoll;
};

} // namespace exec
} // namespace astra

#endif
