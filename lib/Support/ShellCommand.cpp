//===- ShellCommand.cpp ---------------------------------------------------===//
#include "astra/Support/ShellCommand.h"

#include "llvm/Support/FormatVariadic.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <signal.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char **environ;

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

namespace {
using Clock = std::chrono::steady_clock;

/// The shell's process, kept a zombie (waitid with WNOWAIT) until the end so
/// that its process group id cannot be reused while it is signalled.
class Shell {
public:
  explicit Shell(pid_t Pid) : Pid(Pid) {}

  /// Whether the shell has exited, without reaping it.
  bool exited() {
    siginfo_t Info;
    std::memset(&Info, 0, sizeof(Info));
    int R;
    do
      R = waitid(P_PID, Pid, &Info, WEXITED | WNOHANG | WNOWAIT);
    while (R < 0 && errno == EINTR);
    return R < 0 || Info.si_pid == Pid;
  }

  /// SIGTERM to the group, then up to \p GraceSeconds for the shell to go.
  void terminateGroup(double GraceSeconds) {
    killpg(Pid, SIGTERM);
    auto Until = Clock::now() + std::chrono::duration<double>(GraceSeconds);
    while (!exited() && Clock::now() < Until)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }

  /// SIGKILL to whatever is left of the group, then reaps the shell.
  int finish() {
    killpg(Pid, SIGKILL);
    int Status = 0;
    while (waitpid(Pid, &Status, 0) < 0 && errno == EINTR)
      ;
    return Status;
  }

private:
  pid_t Pid;
};
} // namespace

Expected<ShellCommandResult> runShellCommand(StringRef Command,
                                             const ShellCommandOptions &O) {
  // Everything the child needs is made before fork: after it, only
  // async-signal-safe calls.
  std::map<std::string, std::string> Env;
  for (char **E = environ; E && *E; ++E) {
    StringRef KV(*E);
    auto [K, V] = KV.split('=');
    Env[K.str()] = V.str();
  }
  for (const auto &[K, V] : O.Environment)
    Env[K] = V;
  std::vector<std::string> EnvStrings;
  for (const auto &[K, V] : Env)
    EnvStrings.push_back(K + "=" + V);
  std::vector<char *> Envp;
  for (std::string &S : EnvStrings)
    Envp.push_back(S.data());
  Envp.push_back(nullptr);
  std::string Cmd = Command.str();
  char Sh[] = "/bin/sh", ShName[] = "sh", DashC[] = "-c";
  char *Argv[] = {ShName, DashC, Cmd.data(), nullptr};
  std::string DirError =
      "clang-astra: cannot enter the test directory '" + O.Directory + "'\n";

  int OutFD = ::open(O.OutputPath.c_str(),
                     O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (OutFD < 0)
    return createStringError(std::error_code(errno, std::generic_category()),
                             "%s: cannot create the command's output file: %s",
                             O.OutputPath.c_str(), std::strerror(errno));
  int NullFD = ::open("/dev/null", O_RDONLY | O_CLOEXEC);

  // The child starts with every signal blocked, so that none of this
  // process's handlers runs in it before exec resets them.
  sigset_t All, Old;
  sigfillset(&All);
  pthread_sigmask(SIG_SETMASK, &All, &Old);
  auto Start = Clock::now();
  pid_t Pid = fork();
  if (Pid == 0) {
    setpgid(0, 0);
    // Handlers are reset by exec; ignored signals are not.
    for (int S = 1; S < NSIG; ++S)
      if (S != SIGKILL && S != SIGSTOP)
        signal(S, SIG_DFL);
    sigset_t None;
    sigemptyset(&None);
    sigprocmask(SIG_SETMASK, &None, nullptr);
    if (NullFD >= 0)
      dup2(NullFD, 0);
    dup2(OutFD, 1);
    dup2(OutFD, 2);
    if (!O.Directory.empty() && chdir(O.Directory.c_str()) != 0) {
      ssize_t W = write(2, DirError.data(), DirError.size());
      (void)W;
      _exit(127);
    }
    execve(Sh, Argv, Envp.data());
    _exit(127);
  }
  int ForkErrno = errno;
  pthread_sigmask(SIG_SETMASK, &Old, nullptr);
  ::close(OutFD);
  if (NullFD >= 0)
    ::close(NullFD);
  if (Pid < 0)
    return createStringError(std::error_code(ForkErrno, std::generic_category()),
                             "cannot start /bin/sh: %s",
                             std::strerror(ForkErrno));
  // Also here, so the group exists before the first killpg.
  setpgid(Pid, Pid);

  ShellCommandResult R;
  R.TimeoutSeconds = O.TimeoutSeconds;
  Shell S(Pid);
  auto Deadline = Start + std::chrono::seconds(O.TimeoutSeconds);
  while (!S.exited()) {
    if (O.TimeoutSeconds && Clock::now() >= Deadline) {
      R.TimedOut = true;
      S.terminateGroup(2);
      break;
    }
    if (O.Stop && *O.Stop) {
      R.Stopped = true;
      S.terminateGroup(2);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // The shell is done: anything it left running in its group goes too.
  int Status = S.finish();
  R.Seconds = std::chrono::duration<double>(Clock::now() - Start).count();
  if (WIFEXITED(Status))
    R.ExitCode = WEXITSTATUS(Status);
  else if (WIFSIGNALED(Status))
    R.Signal = WTERMSIG(Status);
  return R;
}

} // namespace astra
