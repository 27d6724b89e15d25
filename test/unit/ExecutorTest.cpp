//===- ExecutorTest.cpp - Handing tasks to workers ------------------------===//
#include "astra/Exec/Executor.h"
#include "astra/Exec/GpuSelection.h"
#include "astra/Exec/LocalBackend.h"
#include "astra/Exec/SlurmBackend.h"
#include "astra/Support/FileIO.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"

#include <map>

using namespace astra;
using namespace astra::exec;
using namespace llvm;

namespace {

/// A backend whose attempts end after a number of polls, as scripted per
/// task name and attempt: "ok", "fail", "lost".
class FakeBackend : public Backend {
public:
  FakeBackend(unsigned N) : Running(N) {}
  unsigned workers() const override { return Running.size(); }
  std::string workerName(unsigned W) const override {
    return "w" + std::to_string(W);
  }
  std::string taskDirectory() const override { return "/tmp"; }
  Error start(unsigned W, const Task &T) override {
    EXPECT_FALSE(Running[W]) << "worker " << W << " given two tasks";
    unsigned A = ++Attempts[T.Name];
    Starts.push_back(T.Name + "@" + std::to_string(W));
    auto It = Script.find(T.Name + "#" + std::to_string(A));
    std::string What = It == Script.end() ? "ok" : It->second;
    unsigned Ticks = Length.count(T.Name) ? Length[T.Name] : 1;
    Running[W] = {What, Ticks};
    return Error::success();
  }
  std::vector<std::pair<unsigned, AttemptEnd>> poll(double) override {
    ++Polls;
    std::vector<std::pair<unsigned, AttemptEnd>> Out;
    for (unsigned W = 0; W < Running.size(); ++W) {
      if (!Running[W] || --Running[W]->second)
        continue;
      AttemptEnd E;
      std::string What = Running[W]->first;
      E.K = What == "ok"     ? AttemptEnd::Finished
            : What == "lost" ? AttemptEnd::WorkerLost
                             : AttemptEnd::Failed;
      E.Why = What == "ok" ? "" : What + "ed";
      Out.push_back({W, E});
      Running[W].reset();
    }
    return Out;
  }
  void cancelAll() override {
    ++Cancels;
    for (auto &R : Running)
      R.reset();
  }

  std::map<std::string, std::string> Script; ///< "name#attempt" -> outcome
  std::map<std::string, unsigned> Length;    ///< name -> polls it runs
  std::vector<std::string> Starts;
  std::map<std::string, unsigned> Attempts;
  std::vector<std::optional<std::pair<std::string, unsigned>>> Running;
  unsigned Polls = 0, Cancels = 0;
};

std::vector<Task> tasks(std::initializer_list<const char *> Names) {
  std::vector<Task> Out;
  for (const char *N : Names) {
    Task T;
    T.Name = N;
    Out.push_back(T);
  }
  return Out;
}

struct BatchRun {
  std::vector<TaskOutcome> Outcomes;
  std::vector<size_t> EndOrder;
  std::vector<std::string> Starts;
};

BatchRun runOn(FakeBackend *B, const std::vector<Task> &Ts,
          const volatile std::sig_atomic_t *Stop = nullptr) {
  static volatile std::sig_atomic_t Never = 0;
  Executor E{std::unique_ptr<Backend>(B)};
  E.setStop(Stop ? Stop : &Never);
  BatchRun R;
  R.Outcomes = E.run(Ts, [&](size_t I, const TaskOutcome &) {
    R.EndOrder.push_back(I);
  });
  R.Starts = B->Starts;
  return R;
}

TEST(Executor, HandsOutTasksInOrderToTheLowestIdleWorker) {
  auto *B = new FakeBackend(2);
  B->Length = {{"a", 3}, {"b", 1}, {"c", 1}, {"d", 1}};
  std::vector<std::string> *Starts = &B->Starts;
  std::vector<std::string> Seen;
  BatchRun R;
  {
    static volatile std::sig_atomic_t Never = 0;
    Executor E{std::unique_ptr<Backend>(B)};
    E.setStop(&Never);
    R.Outcomes = E.run(tasks({"a", "b", "c", "d"}),
                       [&](size_t I, const TaskOutcome &) {
                         R.EndOrder.push_back(I);
                       });
    Seen = *Starts;
  }
  // a holds worker 0; b, c and d follow each other on worker 1.
  EXPECT_EQ(Seen, (std::vector<std::string>{"a@0", "b@1", "c@1", "d@1"}));
  EXPECT_EQ(R.EndOrder, (std::vector<size_t>{1, 2, 0, 3}));
  for (const TaskOutcome &O : R.Outcomes) {
    EXPECT_EQ(O.S, TaskOutcome::Finished);
    EXPECT_EQ(O.Attempts, 1u);
  }
}

TEST(Executor, RetriesAFailedAttemptOnceOnAnotherWorker) {
  auto *B = new FakeBackend(2);
  B->Script = {{"a#1", "crash"}};
  B->Length = {{"a", 1}, {"b", 5}};
  std::vector<std::string> Seen;
  static volatile std::sig_atomic_t Never = 0;
  Executor E{std::unique_ptr<Backend>(B)};
  E.setStop(&Never);
  auto Out = E.run(tasks({"a", "b"}));
  // a's retry waits for worker 1 (b's) rather than going back to worker 0.
  EXPECT_EQ(B->Starts, (std::vector<std::string>{"a@0", "b@1", "a@1"}));
  EXPECT_EQ(Out[0].S, TaskOutcome::Finished);
  EXPECT_EQ(Out[0].Attempts, 2u);
  ASSERT_EQ(Out[0].Failures.size(), 1u);
  EXPECT_EQ(Out[0].Failures[0], "w0: crashed");
}

TEST(Executor, TwoFailedAttemptsAreAnInfrastructureFailure) {
  auto *B = new FakeBackend(2);
  B->Script = {{"a#1", "crash"}, {"a#2", "hang"}};
  BatchRun R = runOn(B, tasks({"a", "b"}));
  EXPECT_EQ(R.Outcomes[0].S, TaskOutcome::Infrastructure);
  EXPECT_EQ(R.Outcomes[0].Attempts, 2u);
  EXPECT_EQ(R.Outcomes[0].describe(),
            "infrastructure failure: w0: crashed; retried on w1: hanged");
  EXPECT_EQ(R.Outcomes[1].S, TaskOutcome::Finished);
}

TEST(Executor, OneWorkerRetriesOnItself) {
  auto *B = new FakeBackend(1);
  B->Script = {{"a#1", "crash"}};
  BatchRun R = runOn(B, tasks({"a"}));
  EXPECT_EQ(R.Starts, (std::vector<std::string>{"a@0", "a@0"}));
  EXPECT_EQ(R.Outcomes[0].S, TaskOutcome::Finished);
}

TEST(Executor, ALostWorkerGetsNoMoreTasks) {
  auto *B = new FakeBackend(2);
  B->Script = {{"a#1", "lost"}};
  B->Length = {{"b", 2}};
  BatchRun R = runOn(B, tasks({"a", "b", "c", "d"}));
  for (const std::string &S : R.Starts)
    if (S != "a@0")
      EXPECT_EQ(S.back(), '1') << S;
  for (const TaskOutcome &O : R.Outcomes)
    EXPECT_EQ(O.S, TaskOutcome::Finished);
}

TEST(Executor, NoWorkerLeftFailsWhatIsQueued) {
  auto *B = new FakeBackend(2);
  B->Script = {{"a#1", "lost"}, {"b#1", "lost"}, {"a#2", "lost"}};
  BatchRun R = runOn(B, tasks({"a", "b", "c"}));
  for (const TaskOutcome &O : R.Outcomes)
    EXPECT_EQ(O.S, TaskOutcome::Infrastructure);
  EXPECT_EQ(R.Outcomes[2].Failures,
            (std::vector<std::string>{"no worker left to run it"}));
  EXPECT_EQ(R.EndOrder.size(), 3u);
}

TEST(Executor, StopCancelsEverythingUnderWay) {
  auto *B = new FakeBackend(2);
  B->Length = {{"a", 1000}, {"b", 1000}};
  volatile std::sig_atomic_t Stop = 0;
  static volatile std::sig_atomic_t Never = 0;
  Executor E{std::unique_ptr<Backend>(B)};
  E.setStop(&Stop);
  unsigned Calls = 0;
  E.setStatusCallback([&](const ExecStatus &S) {
    if (++Calls == 2 && S.Running == 2)
      Stop = 1;
  });
  auto Out = E.run(tasks({"a", "b", "c"}));
  (void)Never;
  EXPECT_EQ(B->Cancels, 1u);
  EXPECT_EQ(Out[0].S, TaskOutcome::Cancelled);
  EXPECT_EQ(Out[1].S, TaskOutcome::Cancelled);
  EXPECT_EQ(Out[2].S, TaskOutcome::NotRun);
}

TEST(Executor, StatusCountsWorkersAndJobs) {
  auto *B = new FakeBackend(2);
  static volatile std::sig_atomic_t Never = 0;
  Executor E{std::unique_ptr<Backend>(B)};
  E.setStop(&Never);
  std::vector<std::string> Lines;
  E.setStatusCallback([&](const ExecStatus &S) { Lines.push_back(S.line()); });
  E.run(tasks({"a", "b", "c"}));
  ASSERT_GE(Lines.size(), 3u);
  EXPECT_EQ(Lines.front(), "workers 0/2 busy; jobs 3 queued, 0 running, 0 done");
  EXPECT_EQ(Lines[1], "workers 2/2 busy; jobs 1 queued, 2 running, 0 done");
  EXPECT_EQ(Lines.back(), "workers 0/2 busy; jobs 0 queued, 0 running, 3 done");
}

TEST(Executor, PickWorker) {
  std::vector<bool> Idle = {true, true}, Lost = {false, false};
  EXPECT_EQ(Executor::pickWorker(Idle, Lost, ~0u), 0u);
  EXPECT_EQ(Executor::pickWorker(Idle, Lost, 0), 1u);
  EXPECT_EQ(Executor::pickWorker({true, false}, Lost, 0), ~0u);
  EXPECT_EQ(Executor::pickWorker({true, false}, {false, true}, 0), 0u);
  EXPECT_EQ(Executor::pickWorker({false, true}, {false, true}, ~0u), ~0u);
}

TEST(InOrder, DeliversInTaskOrder) {
  std::vector<size_t> Got;
  InOrder O(4, [&](size_t I, const TaskOutcome &) { Got.push_back(I); });
  TaskOutcome T;
  O.arrived(2, T);
  O.arrived(1, T);
  EXPECT_TRUE(Got.empty());
  O.arrived(0, T);
  EXPECT_EQ(Got, (std::vector<size_t>{0, 1, 2}));
  O.arrived(3, T);
  EXPECT_EQ(Got, (std::vector<size_t>{0, 1, 2, 3}));
}

TEST(GpuSelection, Forms) {
  auto V = [](StringRef S, unsigned N, StringRef P = "") {
    auto R = selectGpus(S, N, P);
    if (!R)
      return "error: " + toString(R.takeError());
    std::string Out;
    for (const std::string &G : *R)
      Out += (Out.empty() ? "" : " ") + G;
    return Out;
  };
  EXPECT_EQ(V("all", 4), "0 1 2 3");
  EXPECT_EQ(V("all", 0), "");
  EXPECT_EQ(V("2", 4), "0 1");
  EXPECT_EQ(V("0,2", 4), "0 2");
  EXPECT_EQ(V("1", 2, "4,6"), "4");
  EXPECT_EQ(V("1,0", 2, "GPU-a,GPU-b"), "GPU-b GPU-a");
  EXPECT_EQ(V("3", 2), "error: --gpus 3: this machine shows 2 GPUs");
  EXPECT_EQ(V("0,5", 2), "error: --gpus 0,5: there is no GPU 5 (this "
                         "machine shows 2 GPUs)");
  EXPECT_EQ(V("0,0", 2), "error: --gpus 0,0: GPU 0 is named twice");
  EXPECT_EQ(V("0", 2), "error: --gpus 0: at least one GPU");
  EXPECT_EQ(V("x", 2), "error: --gpus x: expected all, a count or a list of "
                       "GPU numbers (0,2)");
}

TEST(LocalBackend, ClassifiesHowAnAttemptEnded) {
  ChildStatus Ok{0, 0}, Fail{1, 0}, Lost{WorkerLostExitCode, 0}, Sig{-1, 9};
  EXPECT_EQ(classifyEnd(Ok, true, "").K, AttemptEnd::Finished);
  // A verdict of fail is a result, not a failure of the worker.
  EXPECT_EQ(classifyEnd(Fail, true, "").K, AttemptEnd::Finished);
  EXPECT_EQ(classifyEnd(Lost, true, "no CUDA GPU").K, AttemptEnd::WorkerLost);
  AttemptEnd E = classifyEnd(Sig, false, "last words\n");
  EXPECT_EQ(E.K, AttemptEnd::Failed);
  EXPECT_EQ(E.Why, "killed by signal 9 (Killed) (last words)");
  EXPECT_EQ(classifyEnd(Fail, false, "").Why,
            "exited with code 1 without a result");
}

/// Real processes: each worker sees its own CUDA_VISIBLE_DEVICES, a hang is
/// ended at its limit, exit 75 loses the worker.
TEST(LocalBackend, RunsTasksPinnedToTheirGpu) {
  SmallString<128> Dir;
  ASSERT_FALSE(sys::fs::createUniqueDirectory("astra-exec-test", Dir));
  auto P = [&](StringRef Name) {
    SmallString<128> F(Dir);
    sys::path::append(F, Name);
    return std::string(F);
  };
  auto Sh = [&](StringRef Name, StringRef Script, unsigned Timeout = 0) {
    Task T;
    T.Name = Name.str();
    T.ResultPath = P(Name.str() + ".result");
    T.LogPath = P(Name.str() + ".log");
    T.Args = {"/bin/sh", "-c", Script.str(), "sh", T.ResultPath};
    T.TimeoutSeconds = Timeout;
    return T;
  };
  std::vector<Task> Ts = {
      Sh("a", "echo $CUDA_VISIBLE_DEVICES $ASTRA_EXEC_WORKER > \"$1\""),
      Sh("b", "sleep 30; echo late > \"$1\"", 1),
      Sh("c", "echo no GPU >&2; exit 75"),
      Sh("d", "echo $CUDA_VISIBLE_DEVICES > \"$1\""),
  };
  static volatile std::sig_atomic_t Never = 0;
  Executor E(std::make_unique<LocalBackend>(
                 std::vector<std::string>{"3", "5"}, std::string(Dir)),
             /*MaxAttempts=*/1);
  E.setStop(&Never);
  auto Out = E.run(Ts);
  EXPECT_EQ(Out[0].S, TaskOutcome::Finished);
  EXPECT_EQ(*readFile(Ts[0].ResultPath), "3 1\n");
  EXPECT_EQ(Out[1].S, TaskOutcome::Infrastructure);
  EXPECT_EQ(Out[1].describe(),
            "infrastructure failure: gpu 5: timed out after 1 s (--job-timeout)");
  EXPECT_FALSE(sys::fs::exists(Ts[1].ResultPath));
  EXPECT_EQ(Out[2].S, TaskOutcome::Infrastructure);
  EXPECT_EQ(Out[2].describe(),
            "infrastructure failure: gpu 3: the worker cannot run jobs (no GPU)");
  // c lost gpu 3; d ran on gpu 5 once b's hang was ended.
  EXPECT_EQ(Out[3].S, TaskOutcome::Finished);
  EXPECT_EQ(*readFile(Ts[3].ResultPath), "5\n");
  sys::fs::remove_directories(Dir);
}

TEST(SlurmBackend, SplitsArgumentsLikeAShell) {
  auto S = SlurmBackend::splitArgs(
      "-p gpu --gres=gpu:1  --comment='a b' \"--x=c\\\"d\" e\\ f");
  ASSERT_TRUE(bool(S));
  EXPECT_EQ(*S, (std::vector<std::string>{"-p", "gpu", "--gres=gpu:1",
                                          "--comment=a b", "--x=c\"d", "e f"}));
  auto Bad = SlurmBackend::splitArgs("-p 'gpu");
  ASSERT_FALSE(bool(Bad));
  EXPECT_EQ(toString(Bad.takeError()), "--slurm-args: unterminated ' quote");
}

TEST(SlurmBackend, JobScriptWritesTheStatusBesideTheResult) {
  Task T;
  T.Name = "r1c1";
  T.Args = {"/opt/clang-astra", "run-job", "/jobs/it's.json"};
  EXPECT_EQ(SlurmBackend::jobScript(T, "/jobs/r.status"),
            "#!/bin/sh\n# clang-astra task: r1c1\n'/opt/clang-astra' "
            "'run-job' '/jobs/it'\\''s.json'\nrc=$?\necho $rc > "
            "'/jobs/r.status.tmp' && mv '/jobs/r.status.tmp' "
            "'/jobs/r.status'\nexit $rc\n");
  EXPECT_TRUE(SlurmBackend::activeState("PENDING"));
  EXPECT_TRUE(SlurmBackend::activeState("COMPLETING"));
  EXPECT_FALSE(SlurmBackend::activeState("CANCELLED"));
  EXPECT_FALSE(SlurmBackend::activeState("COMPLETED"));
}

} // namespace

namespace {
/// A backend whose first start on worker 0 fails outright (sbatch refused).
class RefusingBackend : public FakeBackend {
public:
  using FakeBackend::FakeBackend;
  Error start(unsigned W, const Task &T) override {
    if (W == 0 && !Refused++) {
      Starts.push_back(T.Name + "@" + std::to_string(W) + "!");
      return createStringError(inconvertibleErrorCode(), "sbatch: refused");
    }
    return FakeBackend::start(W, T);
  }
  unsigned Refused = 0;
};

TEST(Executor, AnAttemptThatCannotStartIsRetried) {
  auto *B = new RefusingBackend(2);
  BatchRun R = runOn(B, tasks({"a", "b", "c"}));
  EXPECT_EQ(R.Starts.front(), "a@0!");
  for (const TaskOutcome &O : R.Outcomes)
    EXPECT_EQ(O.S, TaskOutcome::Finished);
  EXPECT_EQ(R.Outcomes[0].Failures,
            (std::vector<std::string>{"w0: could not start: sbatch: refused"}));
}
} // namespace
