//===- Executor.h - Tasks handed out to workers, with retries ---*- C++ -*-===//
//
// The Executor hands a batch of tasks to the workers of a Backend (local
// GPUs, Slurm) as they become free, in task order, and collects the results
// as they finish. It is not a scheduler: it keeps one task per worker and
// lets the backend (the process, Slurm) do the rest. A failed attempt (the
// process died, hung past its limit, lost its GPU, was cancelled) is retried
// once on another worker where there is one; a second failure makes the
// task an infrastructure failure, which callers report as such, never as a
// wrong result. An interrupt (SIGINT, SIGTERM, SIGHUP, SIGQUIT) while a
// batch runs cancels every attempt under way and everything queued, and
// then ends this process with that signal: no job is left behind and the
// caller writes nothing.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_EXEC_EXECUTOR_H
#define ASTRA_EXEC_EXECUTOR_H

#include "astra/Exec/Task.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <csignal>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace astra {
namespace exec {

/// Where tasks run. A worker is a slot that runs one attempt at a time.
class Backend {
public:
  virtual ~Backend();
  virtual unsigned workers() const = 0;
  /// "gpu 1", "slurm job slot 3".
  virtual std::string workerName(unsigned W) const = 0;
  /// A directory for the tasks' files that every worker can read and
  /// write (for Slurm: under --job-dir, on a shared file system).
  virtual std::string taskDirectory() const = 0;
  /// Starts an attempt of \p T on the idle worker \p W. An error is an
  /// attempt that failed at once.
  virtual llvm::Error start(unsigned W, const Task &T) = 0;
  /// Waits up to \p Seconds for attempts to end; returns each that did.
  virtual std::vector<std::pair<unsigned, AttemptEnd>> poll(double Seconds) = 0;
  /// Ends every attempt under way and returns once none is left.
  virtual void cancelAll() = 0;
};

/// Workers and tasks at one moment, for progress lines.
struct ExecStatus {
  unsigned Workers = 0, Busy = 0, Lost = 0;
  size_t Queued = 0, Running = 0, Done = 0, Failed = 0, Retried = 0;
  /// "workers 1/2 busy; jobs 3 queued, 1 running, 4 done".
  std::string line() const;
};

class Executor {
public:
  explicit Executor(std::unique_ptr<Backend> B, unsigned MaxAttempts = 2);
  ~Executor();

  unsigned workers() const { return B->workers(); }
  std::string taskDirectory() const { return B->taskDirectory(); }
  /// Called whenever the counts change (from the thread that calls run).
  void setStatusCallback(std::function<void(const ExecStatus &)> F) {
    OnStatus = std::move(F);
  }
  /// Polled between polls of the backend: non-zero cancels the batch as an
  /// interrupt would, but returns instead of raising a signal (for tests
  /// and callers with their own InterruptGuard). Without it, run installs
  /// an InterruptGuard of its own.
  void setStop(const volatile std::sig_atomic_t *Flag) { Stop = Flag; }

  /// Runs \p Tasks; \p OnEnd(I, Outcome) is called as each ends, in the
  /// order they end. Returns the outcomes in task order.
  std::vector<TaskOutcome>
  run(llvm::ArrayRef<Task> Tasks,
      llvm::function_ref<void(size_t, const TaskOutcome &)> OnEnd = {});

  /// The worker an attempt of a task goes to: the lowest-numbered idle
  /// worker that is not lost, other than \p Avoid when another worker is
  /// alive; ~0u when the task must wait (exposed for tests).
  static unsigned pickWorker(const std::vector<bool> &Idle,
                             const std::vector<bool> &Lost, unsigned Avoid);

private:
  std::vector<TaskOutcome>
  runWith(llvm::ArrayRef<Task> Tasks,
          llvm::function_ref<void(size_t, const TaskOutcome &)> OnEnd,
          const volatile std::sig_atomic_t *Flag);

  std::unique_ptr<Backend> B;
  unsigned MaxAttempts;
  std::function<void(const ExecStatus &)> OnStatus;
  const volatile std::sig_atomic_t *Stop = nullptr;
};

/// Turns outcomes that arrive in any order into calls in task order: a
/// task's outcome is passed on once every task before it has ended, so
/// what a caller prints or writes follows the order a one-worker run
/// gives.
class InOrder {
public:
  InOrder(size_t N, std::function<void(size_t, const TaskOutcome &)> Deliver)
      : Pending(N), Deliver(std::move(Deliver)) {}
  void arrived(size_t I, const TaskOutcome &O);

private:
  std::vector<std::optional<TaskOutcome>> Pending;
  size_t Next = 0;
  std::function<void(size_t, const TaskOutcome &)> Deliver;
};

} // namespace exec
} // namespace astra

#endif
