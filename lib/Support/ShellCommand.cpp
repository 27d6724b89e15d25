//===- ShellCommand.cpp ---------------------------------------------------===//
#include "astra/Support/ShellCommand.h"
#include "astra/Support/ChildProcess.h"

#include "llvm/Support/FormatVariadic.h"

#include <chrono>
#include <cstring>
#include <thread>

using namespace llvm;

namespace astra {

std::string ShellCommandResult::describe() const {
  if (Stopped)
    return "interrupted";
  if (TimedOut)
    return formatv("timed out after {0} s (its process group was killed)",
                   TimeoutSeconds)
        .str();
  if (Signal)
    return formatv("killed by signal {0} ({1})", Signal, strsignal(Signal))
        .str();
  return "exit " + std::to_string(ExitCode);
}

std::string lastLines(StringRef Text, unsigned Lines, size_t MaxBytes) {
  Text = Text.rtrim();
  size_t Pos = Text.size();
  for (unsigned I = 0; I < Lines && Pos != StringRef::npos && Pos > 0; ++I)
    Pos = Text.rfind('\n', Pos - 1);
  StringRef Tail = Pos == StringRef::npos ? Text : Text.drop_front(Pos + 1);
  if (Tail.size() > MaxBytes) {
    Tail = Tail.take_back(MaxBytes);
    size_t NL = Tail.find('\n');
    if (NL != StringRef::npos && NL + 1 < Tail.size())
      Tail = Tail.drop_front(NL + 1);
  }
  return Tail.str();
}

using Clock = std::chrono::steady_clock;

Expected<ShellCommandResult> runShellCommand(StringRef Command,
                                             const ShellCommandOptions &O) {
  ChildProcessOptions CO;
  CO.Directory = O.Directory;
  CO.Environment = O.Environment;
  CO.OutputPath = O.OutputPath;
  CO.DirectoryRole = "the test directory";
  auto Start = Clock::now();
  auto S = ChildProcess::start({"/bin/sh", "-c", Command.str()}, CO);
  if (!S)
    return S.takeError();

  ShellCommandResult R;
  R.TimeoutSeconds = O.TimeoutSeconds;
  auto Deadline = Start + std::chrono::seconds(O.TimeoutSeconds);
  while (!S->exited()) {
    if (O.TimeoutSeconds && Clock::now() >= Deadline) {
      R.TimedOut = true;
      S->terminateGroup(2);
      break;
    }
    if (O.Stop && *O.Stop) {
      R.Stopped = true;
      S->terminateGroup(2);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // The shell is done: anything it left running in its group goes too.
  ChildStatus Status = S->finish();
  R.Seconds = std::chrono::duration<double>(Clock::now() - Start).count();
  R.ExitCode = Status.ExitCode;
  R.Signal = Status.Signal;
  return R;
}

} // namespace astra
