//===- Task.h - One unit of work for an executor ----------------*- C++ -*-===//
//
// A task is a command line that writes a result file: `clang-astra run-job
// job.json -o result.json` (one candidate's verification and timing), or a
// whole `clang-astra bench <file>` (one kernel file of a suite). Executors
// run tasks on workers (a local GPU, a Slurm job) and say how each attempt
// ended; they never look inside a result.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_EXEC_TASK_H
#define ASTRA_EXEC_TASK_H

#include <string>
#include <vector>

namespace astra {
namespace exec {

/// The exit status a task's process uses to say "this worker cannot run
/// tasks" (no usable GPU: the driver is gone, the device fell off the bus).
/// The task is retried elsewhere and the worker gets no more tasks. 75 is
/// sysexits' EX_TEMPFAIL: a failure of the place, not of the work.
constexpr int WorkerLostExitCode = 75;

/// The variable every task's process gets (value 1), so that it reports a
/// missing GPU with WorkerLostExitCode rather than as its own failure.
constexpr const char *WorkerEnvVar = "ASTRA_EXEC_WORKER";

struct Task {
  /// For progress and messages ("r1c2", "kernels/gelu.cu").
  std::string Name;
  /// The command; Args[0] is the program's absolute path.
  std::vector<std::string> Args;
  /// The file the command writes when it finishes. Its absence after the
  /// command ended means the attempt failed (crash, kill, cancel).
  std::string ResultPath;
  /// The command's stdout and stderr.
  std::string LogPath;
  /// Seconds one attempt may run (0: no limit).
  unsigned TimeoutSeconds = 0;
};

/// How one attempt ended, as the backend saw it.
struct AttemptEnd {
  enum Kind {
    Finished,   ///< The result file is there.
    Failed,     ///< No result: crashed, killed, timed out, cancelled.
    WorkerLost, ///< The worker cannot run tasks (WorkerLostExitCode).
  };
  Kind K = Failed;
  /// Why it failed ("killed by signal 9 (Killed)", "timed out after 5 s").
  std::string Why;
};

/// What became of a task after its attempts.
struct TaskOutcome {
  enum State {
    NotRun,    ///< Never started (the run was interrupted first).
    Finished,  ///< Its result file is there.
    Infrastructure, ///< Every attempt failed: the place, not the work.
    Cancelled, ///< Ended by an interrupt of this process.
  };
  State S = NotRun;
  unsigned Attempts = 0;
  /// The worker of the last attempt ("gpu 1", "slurm").
  std::string Worker;
  /// One line per failed attempt: "gpu 1: timed out after 5 s".
  std::vector<std::string> Failures;

  /// "infrastructure failure: gpu 1: killed by signal 9 (Killed); retried
  /// on gpu 0: killed by signal 9 (Killed)".
  std::string describe() const;
};

} // namespace exec
} // namespace astra

#endif
