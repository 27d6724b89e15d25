//===- TestStep.cpp - optimize/bench --test: the user's own test ----------===//
//
// What the command line adds around UserTest: the notes a user reads, the
// report records, the winners a failed test drops, and the recovery of what
// an interrupted run left.
//
//===----------------------------------------------------------------------===//
#include "OptimizeOptions.h"
#include "astra/Agents/UserTest.h"
#include "astra/Frontend/KernelModel.h"
#include "astra/Support/FileIO.h"
#include "astra/Support/ReversibleWrite.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

using namespace llvm;

namespace astra {
namespace tool {

/// DIR/test-output/<file name>.<k>.log, the first k not taken.
static std::string freeLogPath(StringRef Dir, StringRef File) {
  SmallString<256> Base(Dir);
  sys::path::append(Base, "test-output");
  sys::fs::create_directories(Base);
  for (unsigned K = 1;; ++K) {
    SmallString<256> P(Base);
    sys::path::append(P, sys::path::filename(File) + "." + Twine(K) + ".log");
    if (!sys::fs::exists(P))
      return std::string(P);
  }
}

Expected<bool> testRewrite(const OptimizeOptions &O, FileOutcome &FO,
                           const std::map<std::string, std::string> &Final,
                           bool KeepOnPass, const std::vector<size_t> &Owners) {
  UserTestOptions TO;
  TO.Command = O.TestCommand;
  TO.Directory = O.TestDir;
  TO.TimeoutSeconds = O.TestTimeout;
  std::string Shown = displayPath(FO.File);
  note(Shown + ": running the --test command with the rewrite in place: " +
       TO.Command);
  // A rewrite the test did not pass is no winner: the report says why.
  auto Reject = [&](const std::string &Why) {
    for (size_t I : Owners) {
      KernelReport &R = FO.Kernels[I];
      std::string What = "its rewrite";
      if (R.Outcome.Winner)
        What = formatv("its winner ({0:F2}x with {1})",
                       R.Outcome.WinnerEval.geomeanSpeedup(),
                       join(R.Outcome.Winner->Lineage, " + "))
                   .str();
      R.Outcome.NoWinnerReason = What + " " + Why + ", so it was not written";
      R.Outcome.Winner.reset();
      R.Diff.clear();
    }
  };
  std::string Output;
  auto Rec = UserTest(TO).run(FO.File, Final, KeepOnPass, &Output);
  if (!Rec) {
    std::string Msg = toString(Rec.takeError());
    Reject("could not be tested (" + Msg + ")");
    return createStringError(inconvertibleErrorCode(), "%s", Msg.c_str());
  }
  if (!O.ReportDir.empty()) {
    std::string Log = freeLogPath(O.ReportDir, FO.File);
    if (Error E = writeFileAtomically(Log, Output))
      warning(toString(std::move(E)));
    else
      Rec->OutputFile = Log;
  }
  for (size_t I : Owners)
    FO.Kernels[I].Test = *Rec;
  if (Rec->passed()) {
    outcome(Shown + ": the --test command " + Rec->summary());
    return true;
  }
  Reject("failed the --test command (" + Rec->Run.describe() + ")");
  std::string Tail = Rec->OutputTail.empty()
                         ? std::string(" (no output)")
                         : "; its last lines of output:\n" + Rec->OutputTail;
  if (Rec->failsWithoutRewrite())
    return createStringError(
        inconvertibleErrorCode(),
        "%s: the --test command %s: the command itself fails, so no rewrite "
        "can be tested with it; nothing was written (check the command, the "
        "directory it runs in (--test-dir, now %s) and --test-timeout)%s",
        Shown.c_str(), Rec->summary().c_str(), Rec->Directory.c_str(),
        Tail.c_str());
  warning(Shown + ": the --test command " + Rec->summary() +
          ": the rewrite is not written; every file is as it was before the "
          "test" +
          Tail);
  return false;
}

Error recoverInterruptedTests(const std::vector<std::string> &Files) {
  for (const std::string &F : Files) {
    auto Notes = recoverInterruptedWrite(
        reversibleWriteJournalFor(absolutePath(F)));
    if (!Notes)
      return Notes.takeError();
    for (const std::string &N : *Notes)
      (StringRef(N).starts_with("kept") ? warning : note)(N);
  }
  return Error::success();
}

} // namespace tool
} // namespace astra
