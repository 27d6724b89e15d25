//===- ShellCommand.h - A user's command line, bounded and killable -*- C++ -*-===//
//
// Runs a command line the way a user typed it (`/bin/sh -c`), in a process
// group of its own: a timeout or an interrupt then ends everything the
// command started (the compiler of a build, the test binary it runs), not
// just the shell, and nothing it started outlives it.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_SUPPORT_SHELLCOMMAND_H
#define ASTRA_SUPPORT_SHELLCOMMAND_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <csignal>
#include <string>
#include <utility>
#include <vector>

namespace astra {

struct ShellCommandOptions {
  /// Working directory; empty: the current one.
  std::string Directory;
  /// Variables set for the command on top of this process's environment.
  std::vector<std::pair<std::string, std::string>> Environment;
  /// Seconds after which the command's process group is ended (SIGTERM, and
  /// SIGKILL 2 s later); 0: no limit.
  unsigned TimeoutSeconds = 0;
  /// The command's stdout and stderr, interleaved as written, go here
  /// (created or truncated). Its stdin is /dev/null.
  std::string OutputPath;
  /// Polled while the command runs: once it is non-zero the command's
  /// process group is ended as on a timeout (an interrupt of this process;
  /// the command, in a group of its own, does not get the terminal's
  /// signals).
  const volatile std::sig_atomic_t *Stop = nullptr;
};

struct ShellCommandResult {
  int ExitCode = -1; ///< The shell's exit status, when it exited.
  int Signal = 0;    ///< The signal that ended the shell, when one did.
  bool TimedOut = false;
  bool Stopped = false; ///< Ended because *Stop turned non-zero.
  double Seconds = 0;
  unsigned TimeoutSeconds = 0;

  bool passed() const {
    return ExitCode == 0 && !Signal && !TimedOut && !Stopped;
  }
  /// "exit 0", "exit 2", "killed by signal 11 (Segmentation fault)",
  /// "timed out after 5 s (its process group was killed)", "interrupted".
  std::string describe() const;
};

/// Runs \p Command through `/bin/sh -c` with \p O. An error only when the
/// command could not be started (the output file cannot be created, fork
/// failed); a command that fails, or a working directory that does not
/// exist (exit 127 with the reason in the output), is a result.
llvm::Expected<ShellCommandResult>
runShellCommand(llvm::StringRef Command, const ShellCommandOptions &O);

/// The last \p Lines lines of \p Text (trailing blank lines dropped), and
/// at most \p MaxBytes of them (cut at a line start where possible).
std::string lastLines(llvm::StringRef Text, unsigned Lines,
                      size_t MaxBytes = std::string::npos);

} // namespace astra

#endif
