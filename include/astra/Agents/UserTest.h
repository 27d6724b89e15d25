//===- UserTest.h - The user's own test of a rewrite -------------*- C++ -*-===//
//
// `optimize --test '<command>'`: the verifier runs a kernel the way its spec
// says; the user's program may launch it in ways the spec does not describe.
// So after a winner is chosen, the rewrite is put into the user's files (the
// kernel's file, headers it changed, a retuned spec), the user's own command
// runs with it, and the rewrite stays only when the command exits 0;
// otherwise every file is put back byte for byte (ReversibleWrite). When the
// command fails with the rewrite, it is run once more on the original code,
// to tell a rewrite that breaks the program from a command that fails
// anyway.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_AGENTS_USERTEST_H
#define ASTRA_AGENTS_USERTEST_H

#include "astra/Support/Json.h"
#include "astra/Support/ShellCommand.h"

#include "llvm/Support/Error.h"

#include <map>
#include <optional>
#include <string>

namespace astra {

struct UserTestOptions {
  std::string Command;
  /// Working directory; empty: the current one.
  std::string Directory;
  /// 0: no limit.
  unsigned TimeoutSeconds = 600;
};

/// One test of one file's rewrite, as the report shows it.
struct UserTestRecord {
  std::string Command;
  std::string Directory; ///< Absolute.
  std::string File;      ///< The file under test ($ASTRA_TEST_FILE), as given.
  ShellCommandResult Run;
  /// The last lines of the command's output.
  std::string OutputTail;
  /// Where its whole output was saved (the report directory), if anywhere.
  std::string OutputFile;
  /// Whether the rewrite is in the files now (passed, and the caller asked
  /// to keep it).
  bool Kept = false;
  /// The same command on the original code, run when it failed with the
  /// rewrite (not after an interrupt).
  std::optional<ShellCommandResult> Original;

  bool passed() const { return Run.passed(); }
  /// The command failed on the original code too: the command is broken,
  /// not the rewrite.
  bool failsWithoutRewrite() const {
    return !passed() && Original && !Original->passed();
  }
  /// One line: "passed (exit 0, 1.2 s)", "failed (exit 1, 0.3 s); the
  /// original code passes it (exit 0, 0.3 s)", ...
  std::string summary() const;
};

void writeUserTestJson(JsonWriter &W, const UserTestRecord &R);

/// Lines of output a record keeps.
constexpr unsigned UserTestTailLines = 30;

class UserTest {
public:
  explicit UserTest(UserTestOptions O) : Opts(std::move(O)) {}

  /// Puts \p Changes (absolute path -> new text) into the files, runs the
  /// command with $ASTRA_TEST_FILE naming \p File (absolute), and keeps the
  /// changes only when \p KeepOnPass and the command exits 0; otherwise
  /// every file is put back byte for byte. \p FullOutput, when given, gets
  /// the whole output (of the run with the rewrite). An interrupt (Ctrl-C,
  /// SIGTERM, SIGHUP) ends the command's process group, puts the files back
  /// and then ends this process with that signal. An error: the files
  /// could not be written or put back (the message names them).
  llvm::Expected<UserTestRecord>
  run(llvm::StringRef File, const std::map<std::string, std::string> &Changes,
      bool KeepOnPass, std::string *FullOutput = nullptr);

private:
  llvm::Expected<ShellCommandResult> runCommand(llvm::StringRef File,
                                                const volatile std::sig_atomic_t *Stop,
                                                std::string &Output);
  UserTestOptions Opts;
};

} // namespace astra

#endif
