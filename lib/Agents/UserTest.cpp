//===- UserTest.cpp -------------------------------------------------------===//
#include "astra/Agents/UserTest.h"
#include "astra/Support/FileIO.h"
#include "astra/Support/InterruptGuard.h"
#include "astra/Support/ReversibleWrite.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

using namespace llvm;

namespace astra {

static std::string absolute(StringRef P) {
  SmallString<256> S(P);
  sys::fs::make_absolute(S);
  sys::path::remove_dots(S, true);
  return std::string(S);
}

static std::string outcome(const ShellCommandResult &R) {
  return formatv("{0}, {1:F1} s", R.describe(), R.Seconds).str();
}

std::string UserTestRecord::summary() const {
  std::string S = (passed() ? "passed (" : "failed (") + outcome(Run) + ")";
  if (Original)
    S += Original->passed()
             ? "; the original code passes it (" + outcome(*Original) + ")"
             : "; it fails on the original code too (" + outcome(*Original) +
                   ")";
  return S;
}

static void writeRunJson(JsonWriter &W, const ShellCommandResult &R) {
  W.objectBegin();
  W.field("passed", R.passed());
  if (R.ExitCode >= 0)
    W.field("exit_code", R.ExitCode);
  else
    W.field("exit_code", std::optional<int>());
  if (R.Signal)
    W.field("signal", R.Signal);
  W.field("timed_out", R.TimedOut);
  W.field("interrupted", R.Stopped);
  W.field("seconds", R.Seconds);
  W.field("outcome", R.describe());
  W.objectEnd();
}

void writeUserTestJson(JsonWriter &W, const UserTestRecord &R) {
  W.objectBegin();
  W.field("command", R.Command);
  W.field("directory", R.Directory);
  W.field("file", R.File);
  W.field("timeout_s", R.Run.TimeoutSeconds);
  W.field("passed", R.passed());
  W.field("kept", R.Kept);
  W.key("run");
  writeRunJson(W, R.Run);
  if (R.Original) {
    W.key("original_code_run");
    writeRunJson(W, *R.Original);
  }
  W.field("output_tail", R.OutputTail);
  if (!R.OutputFile.empty())
    W.field("output_file", R.OutputFile);
  W.objectEnd();
}

Expected<ShellCommandResult>
UserTest::runCommand(StringRef File, const volatile std::sig_atomic_t *Stop,
                     std::string &Output) {
  SmallString<128> Log;
  if (std::error_code EC =
          sys::fs::createTemporaryFile("astra-test", "log", Log))
    return createStringError(EC, "cannot create a temporary file for the "
                                 "--test command's output: %s",
                             EC.message().c_str());
  ShellCommandOptions SO;
  SO.Directory = Opts.Directory;
  SO.TimeoutSeconds = Opts.TimeoutSeconds;
  SO.OutputPath = std::string(Log);
  SO.Environment = {{"ASTRA_TEST_FILE", absolute(File)}};
  SO.Stop = Stop;
  auto R = runShellCommand(Opts.Command, SO);
  if (auto Text = readFile(Log))
    Output = std::move(*Text);
  else
    consumeError(Text.takeError());
  sys::fs::remove(Log);
  return R;
}

Expected<UserTestRecord>
UserTest::run(StringRef File, const std::map<std::string, std::string> &Changes,
              bool KeepOnPass, std::string *FullOutput) {
  UserTestRecord Rec;
  Rec.Command = Opts.Command;
  Rec.Directory = absolute(Opts.Directory.empty() ? "." : Opts.Directory);
  Rec.File = File.str();
  // From before the first byte is written until the originals are back, an
  // interrupt only sets the flag; the guard raises it again at the end.
  InterruptGuard Guard;
  auto W = ReversibleWrite::apply(reversibleWriteJournalFor(absolute(File)),
                                  Changes);
  if (!W)
    return W.takeError();
  std::string Output;
  auto R = Guard.signal() ? Expected<ShellCommandResult>(ShellCommandResult())
                          : runCommand(File, Guard.flag(), Output);
  if (!R) {
    if (Error E = (*W)->revert())
      return joinErrors(R.takeError(), std::move(E));
    return R.takeError();
  }
  Rec.Run = *R;
  Rec.Run.TimeoutSeconds = Opts.TimeoutSeconds;
  Rec.Run.Stopped |= Guard.signal() != 0;
  Rec.OutputTail = lastLines(Output, UserTestTailLines, 8192);
  if (FullOutput)
    *FullOutput = std::move(Output);
  Rec.Kept = KeepOnPass && Rec.passed();
  if (Error E = Rec.Kept ? (*W)->commit() : (*W)->revert())
    return E;
  if (!Rec.passed() && !Guard.signal()) {
    std::string Ignored;
    auto O = runCommand(File, Guard.flag(), Ignored);
    if (!O)
      return O.takeError();
    if (!O->Stopped)
      Rec.Original = *O;
  }
  return Rec;
}

} // namespace astra
