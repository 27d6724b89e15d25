//===- ChildProcess.h - A child in a process group of its own ---*- C++ -*-===//
//
// Starts a program in a process group of its own, with its output in a file
// and its stdin on /dev/null, and lets the caller poll it, end its whole
// group, and reap it. The group matters: a timeout or an interrupt then ends
// everything the child started, and the terminal's Ctrl-C reaches only this
// process, which decides what to end. The child is kept a zombie until
// finish() (waitid with WNOWAIT), so its group id cannot be reused while it
// is signalled.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_SUPPORT_CHILDPROCESS_H
#define ASTRA_SUPPORT_CHILDPROCESS_H

#include "llvm/Support/Error.h"

#include <string>
#include <sys/types.h>
#include <utility>
#include <vector>

namespace astra {

struct ChildProcessOptions {
  /// Working directory; empty: the current one.
  std::string Directory;
  /// Variables set on top of this process's environment.
  std::vector<std::pair<std::string, std::string>> Environment;
  /// stdout and stderr, interleaved, go here (created or truncated).
  std::string OutputPath;
  /// What the directory is called in the message when it cannot be entered
  /// ("the test directory").
  std::string DirectoryRole = "the directory";
};

/// How a reaped child ended.
struct ChildStatus {
  int ExitCode = -1; ///< When it exited.
  int Signal = 0;    ///< The signal that ended it, when one did.
};

class ChildProcess {
public:
  /// Starts \p Argv (Argv[0] is the program's path, executed as is) with
  /// \p O. An error only when it could not be started (the output file,
  /// fork); a program that cannot be executed exits 127 with the reason in
  /// its output.
  static llvm::Expected<ChildProcess> start(const std::vector<std::string> &Argv,
                                            const ChildProcessOptions &O);

  pid_t pid() const { return Pid; }
  /// Whether the child has exited, without reaping it.
  bool exited() const;
  /// SIGTERM to the group, then up to \p GraceSeconds for the child to go.
  void terminateGroup(double GraceSeconds) const;
  /// SIGKILL to whatever is left of the group, then reaps the child.
  ChildStatus finish() const;

private:
  explicit ChildProcess(pid_t Pid) : Pid(Pid) {}
  pid_t Pid;
};

} // namespace astra

#endif
