//===- ChildProcess.cpp ---------------------------------------------------===//
#include "astra/Support/ChildProcess.h"

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

Expected<ChildProcess> ChildProcess::start(const std::vector<std::string> &Argv,
                                           const ChildProcessOptions &O) {
  if (Argv.empty())
    return createStringError(inconvertibleErrorCode(), "no program to start");
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
  std::vector<std::string> Args = Argv;
  std::vector<char *> ArgvP;
  for (std::string &A : Args)
    ArgvP.push_back(A.data());
  ArgvP.push_back(nullptr);
  std::string DirError =
      "clang-astra: cannot enter " + O.DirectoryRole + " '" + O.Directory + "'\n";
  std::string ExecError = "clang-astra: cannot execute " + Args[0] + "\n";

  int OutFD = ::open(O.OutputPath.c_str(),
                     O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (OutFD < 0)
    return createStringError(std::error_code(errno, std::generic_category()),
                             "%s: cannot create the output file: %s",
                             O.OutputPath.c_str(), std::strerror(errno));
  int NullFD = ::open("/dev/null", O_RDONLY | O_CLOEXEC);

  // The child starts with every signal blocked, so that none of this
  // process's handlers runs in it before exec resets them.
  sigset_t All, Old;
  sigfillset(&All);
  pthread_sigmask(SIG_SETMASK, &All, &Old);
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
    execve(ArgvP[0], ArgvP.data(), Envp.data());
    ssize_t W = write(2, ExecError.data(), ExecError.size());
    (void)W;
    _exit(127);
  }
  int ForkErrno = errno;
  pthread_sigmask(SIG_SETMASK, &Old, nullptr);
  ::close(OutFD);
  if (NullFD >= 0)
    ::close(NullFD);
  if (Pid < 0)
    return createStringError(std::error_code(ForkErrno, std::generic_category()),
                             "cannot start %s: %s", Args[0].c_str(),
                             std::strerror(ForkErrno));
  // Also here, so the group exists before the first killpg.
  setpgid(Pid, Pid);
  return ChildProcess(Pid);
}

bool ChildProcess::exited() const {
  siginfo_t Info;
  std::memset(&Info, 0, sizeof(Info));
  int R;
  do
    R = waitid(P_PID, Pid, &Info, WEXITED | WNOHANG | WNOWAIT);
  while (R < 0 && errno == EINTR);
  return R < 0 || Info.si_pid == Pid;
}

void ChildProcess::terminateGroup(double GraceSeconds) const {
  using Clock = std::chrono::steady_clock;
  killpg(Pid, SIGTERM);
  auto Until = Clock::now() + std::chrono::duration<double>(GraceSeconds);
  while (!exited() && Clock::now() < Until)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

ChildStatus ChildProcess::finish() const {
  killpg(Pid, SIGKILL);
  int Status = 0;
  while (waitpid(Pid, &Status, 0) < 0 && errno == EINTR)
    ;
  ChildStatus S;
  if (WIFEXITED(Status))
    S.ExitCode = WEXITSTATUS(Status);
  else if (WIFSIGNALED(Status))
    S.Signal = WTERMSIG(Status);
  return S;
}

} // namespace astra
