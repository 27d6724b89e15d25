//===- ReversibleWrite.h - New file texts that can be taken back -*- C++ -*-===//
//
// `optimize --test` puts a rewrite into the user's files, runs the user's
// command, and keeps the rewrite only when the command passes. Until it is
// decided, every original must be able to come back byte for byte, whatever
// happens to this process:
//
// - each original is first copied to a backup beside it (same directory, so
//   the backup is renamed over the file: the file is the original or the new
//   text, never half of either), with the original's owner, group and mode (a
//   revert keeps them, as writeFileAtomically does);
// - a journal beside the file under test names every file and its backup, so
//   a run that was killed (SIGKILL, power loss) leaves what the next run
//   needs to put the originals back (recoverInterruptedWrite);
// - a crash of this process (SIGSEGV, SIGABRT, ...) puts them back from its
//   signal handler (rename and utimensat are async-signal-safe).
//
// A restored file gets the current time as its modification time, so a build
// the command made from the new text is made again from the original.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_SUPPORT_REVERSIBLEWRITE_H
#define ASTRA_SUPPORT_REVERSIBLEWRITE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace astra {

class ReversibleWrite {
public:
  /// Writes every text of \p Changes (absolute path -> new text) into its
  /// file, recording the originals in a journal at \p Journal. On an error
  /// every file is as it was.
  static llvm::Expected<std::unique_ptr<ReversibleWrite>>
  apply(llvm::StringRef Journal,
        const std::map<std::string, std::string> &Changes);

  ReversibleWrite(const ReversibleWrite &) = delete;
  ReversibleWrite &operator=(const ReversibleWrite &) = delete;
  /// Reverts unless commit() or revert() was called.
  ~ReversibleWrite();

  /// Keeps the new texts; the backups and the journal are removed.
  llvm::Error commit();
  /// Puts every original back; the backups and the journal are removed.
  llvm::Error revert();

private:
  struct Entry {
    std::string Path, Backup;
  };
  ReversibleWrite(std::string Journal, std::vector<Entry> Entries);
  /// For the crash handler: the paths as C strings, made in advance.
  void arm();
  void disarm();
  static void revertFromSignal(void *);

  std::string Journal;
  std::vector<Entry> Entries;
  bool Done = false;
};

/// The journal of a test of \p File's rewrite: `.<name>.astra-test` beside it.
std::string reversibleWriteJournalFor(llvm::StringRef File);

/// Puts back what an interrupted ReversibleWrite with journal \p Journal
/// left: every file that still holds the text written then gets its
/// original back. A file changed since keeps its text, and its backup is
/// kept and named (a note starting with "kept"). Returns one note per file
/// (none when there is no journal).
llvm::Expected<std::vector<std::string>>
recoverInterruptedWrite(llvm::StringRef Journal);

} // namespace astra

#endif
