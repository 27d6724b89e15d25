//===- LocalBackend.cpp ---------------------------------------------------===//
#include "astra/Exec/LocalBackend.h"
#include "astra/Support/FileIO.h"
#include "astra/Support/ShellCommand.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstring>
#include <signal.h>
#include <thread>

using namespace llvm;

namespace astra {
namespace exec {

AttemptEnd classifyEnd(const ChildStatus &S, bool HaveResult,
                       StringRef LastOutput) {
  AttemptEnd E;
  std::string Tail =
      LastOutput.trim().empty() ? "" : " (" + LastOutput.trim().str() + ")";
  if (S.ExitCode == WorkerLostExitCode) {
    E.K = AttemptEnd::WorkerLost;
    E.Why = "the worker cannot run jobs" + Tail;
    return E;
  }
  if (HaveResult) {
    E.K = AttemptEnd::Finished;
    return E;
  }
  E.K = AttemptEnd::Failed;
  if (S.Signal)
    E.Why = formatv("killed by signal {0} ({1})", S.Signal,
                    strsignal(S.Signal))
                .str();
  else
    E.Why = formatv("exited with code {0} without a result", S.ExitCode).str();
  E.Why += Tail;
  return E;
}

LocalBackend::~LocalBackend() { cancelAll(); }

Error LocalBackend::start(unsigned W, const Task &T) {
  sys::fs::remove(T.ResultPath);
  ChildProcessOptions O;
  O.OutputPath = T.LogPath;
  O.Environment = {{"CUDA_VISIBLE_DEVICES", Gpus[W]}, {WorkerEnvVar, "1"}};
  auto P = ChildProcess::start(T.Args, O);
  if (!P)
    return P.takeError();
  auto Deadline = T.TimeoutSeconds
                      ? std::chrono::steady_clock::now() +
                            std::chrono::seconds(T.TimeoutSeconds)
                      : std::chrono::steady_clock::time_point::max();
  Slots[W].emplace(Running{*P, T, Deadline});
  return Error::success();
}

/// The last line of a task's log, for a failure's reason.
static std::string lastLogLine(StringRef Path) {
  auto Text = readFile(Path);
  if (!Text) {
    consumeError(Text.takeError());
    return "";
  }
  return lastLines(*Text, 1, 300);
}

std::vector<std::pair<unsigned, AttemptEnd>>
LocalBackend::poll(double Seconds) {
  std::vector<std::pair<unsigned, AttemptEnd>> Ended;
  auto Until = std::chrono::steady_clock::now() +
               std::chrono::duration<double>(Seconds);
  while (true) {
    auto Now = std::chrono::steady_clock::now();
    for (unsigned W = 0; W < Slots.size(); ++W) {
      if (!Slots[W])
        continue;
      Running &R = *Slots[W];
      bool TimedOut = false;
      if (!R.P.exited()) {
        if (Now < R.Deadline)
          continue;
        // A hang: the whole group goes, and the attempt has no result
        // even when it wrote one at the last moment.
        R.P.terminateGroup(2);
        TimedOut = true;
      }
      ChildStatus S = R.P.finish();
      AttemptEnd E;
      if (TimedOut) {
        sys::fs::remove(R.T.ResultPath);
        E.K = AttemptEnd::Failed;
        E.Why = formatv("timed out after {0} s (--job-timeout)",
                        R.T.TimeoutSeconds)
                    .str();
      } else {
        E = classifyEnd(S, sys::fs::exists(R.T.ResultPath),
                        lastLogLine(R.T.LogPath));
      }
      Ended.push_back({W, E});
      Slots[W].reset();
    }
    if (!Ended.empty() || std::chrono::steady_clock::now() >= Until)
      return Ended;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void LocalBackend::cancelAll() {
  for (auto &S : Slots)
    if (S)
      killpg(S->P.pid(), SIGTERM);
  for (auto &S : Slots)
    if (S) {
      S->P.terminateGroup(2);
      S->P.finish();
      S.reset();
    }
}

} // namespace exec
} // namespace astra
