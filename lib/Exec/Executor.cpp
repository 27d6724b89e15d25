//===- Executor.cpp -------------------------------------------------------===//
#include "astra/Exec/Executor.h"
#include "astra/Support/InterruptGuard.h"

#include "llvm/Support/FormatVariadic.h"

#include <deque>

using namespace llvm;

namespace astra {
namespace exec {

Backend::~Backend() = default;

std::string TaskOutcome::describe() const {
  std::string Out = "infrastructure failure: ";
  for (size_t I = 0; I < Failures.size(); ++I)
    Out += (I ? "; retried on " : "") + Failures[I];
  if (Failures.empty())
    Out += "not run";
  return Out;
}

std::string ExecStatus::line() const {
  std::string L = formatv("workers {0}/{1} busy", Busy, Workers - Lost).str();
  if (Lost)
    L += formatv(" ({0} lost)", Lost).str();
  L += formatv("; jobs {0} queued, {1} running, {2} done", Queued, Running,
               Done)
           .str();
  if (Retried)
    L += formatv(", {0} retried", Retried).str();
  if (Failed)
    L += formatv(", {0} failed", Failed).str();
  return L;
}

Executor::Executor(std::unique_ptr<Backend> B, unsigned MaxAttempts)
    : B(std::move(B)), MaxAttempts(MaxAttempts ? MaxAttempts : 1) {}

Executor::~Executor() = default;

unsigned Executor::pickWorker(const std::vector<bool> &Idle,
                              const std::vector<bool> &Lost, unsigned Avoid) {
  bool OtherAlive = false;
  for (unsigned W = 0; W < Lost.size(); ++W)
    OtherAlive |= !Lost[W] && W != Avoid;
  for (unsigned W = 0; W < Idle.size(); ++W)
    if (Idle[W] && !Lost[W] && (W != Avoid || !OtherAlive))
      return W;
  return ~0u;
}

std::vector<TaskOutcome>
Executor::run(ArrayRef<Task> Tasks,
              function_ref<void(size_t, const TaskOutcome &)> OnEnd) {
  if (Stop)
    return runWith(Tasks, OnEnd, Stop);
  // Ends the process with the signal after the cancel, when one came.
  InterruptGuard Guard;
  return runWith(Tasks, OnEnd, Guard.flag());
}

std::vector<TaskOutcome>
Executor::runWith(ArrayRef<Task> Tasks,
                  function_ref<void(size_t, const TaskOutcome &)> OnEnd,
                  const volatile std::sig_atomic_t *Flag) {
  std::vector<TaskOutcome> Out(Tasks.size());
  unsigned N = B->workers();
  std::vector<bool> Idle(N, true), Lost(N, false);
  std::vector<size_t> OnWorker(N, 0);
  // Retries go first: a task that failed is not starved by the queue.
  std::deque<size_t> Queue;
  for (size_t I = 0; I < Tasks.size(); ++I)
    Queue.push_back(I);
  std::vector<unsigned> LastWorker(Tasks.size(), ~0u);
  ExecStatus St;
  St.Workers = N;
  St.Queued = Tasks.size();
  auto Report = [&] {
    if (OnStatus)
      OnStatus(St);
  };
  auto Fail = [&](size_t I, unsigned W, const std::string &Why,
                  bool WorkerLost) {
    TaskOutcome &O = Out[I];
    O.Failures.push_back(B->workerName(W) + ": " + Why);
    if (WorkerLost && !Lost[W]) {
      Lost[W] = true;
      ++St.Lost;
    }
    bool AnyAlive = false;
    for (unsigned V = 0; V < N; ++V)
      AnyAlive |= !Lost[V];
    if (O.Attempts < MaxAttempts && AnyAlive) {
      Queue.push_front(I);
      ++St.Queued;
      ++St.Retried;
      return;
    }
    O.S = TaskOutcome::Infrastructure;
    ++St.Done;
    ++St.Failed;
    if (OnEnd)
      OnEnd(I, O);
  };
  size_t Left = Tasks.size();
  Report();
  while (Left) {
    if (Flag && *Flag) {
      B->cancelAll();
      for (TaskOutcome &O : Out)
        if (O.S == TaskOutcome::NotRun && O.Attempts)
          O.S = TaskOutcome::Cancelled;
      return Out;
    }
    // Hand out work: each queued task to a worker it may go to.
    bool Started = false;
    struct StartFailure {
      size_t I;
      unsigned W;
      std::string Why;
    };
    std::vector<StartFailure> NotStarted;
    for (auto It = Queue.begin(); It != Queue.end();) {
      size_t I = *It;
      unsigned W = pickWorker(Idle, Lost, LastWorker[I]);
      if (W == ~0u) {
        // A task waiting for another worker than its last must not hold
        // back the tasks after it; any other wait means all are busy.
        bool AnyIdle = false;
        for (unsigned V = 0; V < N; ++V)
          AnyIdle |= Idle[V] && !Lost[V];
        if (!AnyIdle)
          break;
        ++It;
        continue;
      }
      It = Queue.erase(It);
      --St.Queued;
      TaskOutcome &O = Out[I];
      ++O.Attempts;
      O.Worker = B->workerName(W);
      LastWorker[I] = W;
      if (Error E = B->start(W, Tasks[I])) {
        // Handled after the hand-out: a retry goes to the queue's front.
        NotStarted.push_back({I, W, "could not start: " + toString(std::move(E))});
        Started = true;
        continue;
      }
      Idle[W] = false;
      OnWorker[W] = I;
      ++St.Busy;
      ++St.Running;
      Started = true;
    }
    for (StartFailure &F : NotStarted) {
      Fail(F.I, F.W, F.Why, false);
      if (Out[F.I].S == TaskOutcome::Infrastructure)
        --Left;
    }
    // Every worker lost: what is queued cannot run anywhere.
    bool AnyAlive = false;
    for (unsigned V = 0; V < N; ++V)
      AnyAlive |= !Lost[V];
    if (!AnyAlive) {
      while (!Queue.empty()) {
        size_t I = Queue.front();
        Queue.pop_front();
        --St.Queued;
        TaskOutcome &O = Out[I];
        O.S = TaskOutcome::Infrastructure;
        if (O.Failures.empty())
          O.Failures.push_back("no worker left to run it");
        ++St.Done;
        ++St.Failed;
        --Left;
        if (OnEnd)
          OnEnd(I, O);
      }
      Report();
      break;
    }
    if (Started)
      Report();
    if (!Left)
      break;
    for (auto &[W, End] : B->poll(0.05)) {
      size_t I = OnWorker[W];
      Idle[W] = true;
      --St.Busy;
      --St.Running;
      if (End.K == AttemptEnd::Finished) {
        Out[I].S = TaskOutcome::Finished;
        ++St.Done;
        --Left;
        if (OnEnd)
          OnEnd(I, Out[I]);
      } else {
        Fail(I, W, End.Why, End.K == AttemptEnd::WorkerLost);
        if (Out[I].S == TaskOutcome::Infrastructure)
          --Left;
      }
      Report();
    }
  }
  return Out;
}

void InOrder::arrived(size_t I, const TaskOutcome &O) {
  Pending[I] = O;
  while (Next < Pending.size() && Pending[Next]) {
    Deliver(Next, *Pending[Next]);
    ++Next;
  }
}

} // namespace exec
} // namespace astra
