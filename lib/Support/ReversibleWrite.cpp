//===- ReversibleWrite.cpp ------------------------------------------------===//
#include "astra/Support/ReversibleWrite.h"
#include "astra/Support/FileIO.h"
#include "astra/Support/Hash.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <sys/stat.h>
#include <unistd.h>

using namespace llvm;

namespace astra {

static constexpr StringLiteral JournalHeader = "clang-astra reversible write 1";

std::string reversibleWriteJournalFor(StringRef File) {
  SmallString<256> P(File);
  sys::path::remove_filename(P);
  sys::path::append(P, "." + sys::path::filename(File) + ".astra-test");
  return std::string(P);
}

static Error errnoError(const Twine &What) {
  int E = errno;
  return createStringError(std::error_code(E, std::generic_category()), "%s: %s",
                           What.str().c_str(), std::strerror(E));
}

/// Writes \p Text to the new file \p FD (\p Path) and syncs it: a backup
/// must be on disk before the file it protects is changed.
static Error writeAndSync(int FD, StringRef Path, StringRef Text) {
  const char *P = Text.data();
  size_t Left = Text.size();
  while (Left) {
    ssize_t W = ::write(FD, P, Left);
    if (W < 0 && errno == EINTR)
      continue;
    if (W < 0) {
      Error E = errnoError(Path + ": write failed");
      ::close(FD);
      return E;
    }
    P += W;
    Left -= size_t(W);
  }
  if (::fsync(FD) != 0) {
    Error E = errnoError(Path + ": fsync failed");
    ::close(FD);
    return E;
  }
  ::close(FD);
  return Error::success();
}

/// Renames \p Backup over \p Path and gives it the current time.
static Error putBack(StringRef Backup, StringRef Path) {
  if (std::error_code EC = sys::fs::rename(Backup, Path))
    return createStringError(EC,
                             "%s: cannot put the original back from %s: %s",
                             Path.str().c_str(), Backup.str().c_str(),
                             EC.message().c_str());
  std::string P = Path.str();
  if (::utimensat(AT_FDCWD, P.c_str(), nullptr, 0) != 0)
    return errnoError(Path + ": restored, but its modification time could not "
                             "be set (a build made from the rewrite may not "
                             "be redone)");
  return Error::success();
}

static std::atomic<ReversibleWrite *> Armed{nullptr};

ReversibleWrite::ReversibleWrite(std::string Journal, std::vector<Entry> Entries)
    : Journal(std::move(Journal)), Entries(std::move(Entries)) {}

void ReversibleWrite::revertFromSignal(void *) {
  ReversibleWrite *W = Armed.exchange(nullptr);
  if (!W)
    return;
  for (const Entry &E : W->Entries)
    if (::rename(E.Backup.c_str(), E.Path.c_str()) == 0)
      ::utimensat(AT_FDCWD, E.Path.c_str(), nullptr, 0);
  ::unlink(W->Journal.c_str());
}

void ReversibleWrite::arm() {
  static std::once_flag Once;
  std::call_once(Once,
                 [] { sys::AddSignalHandler(&ReversibleWrite::revertFromSignal, nullptr); });
  Armed.store(this);
}

void ReversibleWrite::disarm() {
  ReversibleWrite *Me = this;
  Armed.compare_exchange_strong(Me, nullptr);
}

Expected<std::unique_ptr<ReversibleWrite>>
ReversibleWrite::apply(StringRef Journal,
                       const std::map<std::string, std::string> &Changes) {
  if (sys::fs::exists(Journal))
    return createStringError(inconvertibleErrorCode(),
                             "%s: an earlier `--test` run's journal is still "
                             "there (another run testing this file, or files "
                             "it could not put back: see its notes)",
                             Journal.str().c_str());
  std::vector<Entry> Entries;
  auto RemoveBackups = [&] {
    for (const Entry &E : Entries)
      sys::fs::remove(E.Backup);
  };
  std::string J = JournalHeader.str() + "\n";
  // A symlinked source stays a symlink: the file it names is the one
  // written, backed up and put back.
  std::vector<std::pair<std::string, const std::string *>> Targets;
  for (const auto &[Given, Text] : Changes) {
    SmallString<256> Real;
    if (sys::fs::real_path(Given, Real))
      Real = Given;
    Targets.push_back({std::string(Real), &Text});
  }
  for (const auto &[Path, TextPtr] : Targets) {
    const std::string &Text = *TextPtr;
    if (StringRef(Path).contains('\n')) {
      RemoveBackups();
      return createStringError(inconvertibleErrorCode(),
                               "%s: a file name with a newline cannot be "
                               "journaled",
                               Path.c_str());
    }
    auto Orig = readFile(Path);
    if (!Orig) {
      RemoveBackups();
      return Orig.takeError();
    }
    struct stat St;
    if (::stat(Path.c_str(), &St) != 0) {
      RemoveBackups();
      return errnoError(Path);
    }
    SmallString<256> Model(Path);
    sys::path::remove_filename(Model);
    sys::path::append(Model,
                      "." + sys::path::filename(Path) + ".astra-orig-%%%%%%");
    int FD;
    SmallString<256> Backup;
    if (std::error_code EC = sys::fs::createUniqueFile(
            Model, FD, Backup, sys::fs::OF_None,
            sys::fs::owner_read | sys::fs::owner_write)) {
      RemoveBackups();
      return createStringError(EC, "%s: cannot create a backup beside it: %s",
                               Path.c_str(), EC.message().c_str());
    }
    Entries.push_back({Path, std::string(Backup)});
    // The backup is what a revert renames over the file: it gets the
    // file's owner, group and mode first, as writeFileAtomically keeps them.
    if (((St.st_uid != ::geteuid() || St.st_gid != ::getegid()) &&
         ::fchown(FD, St.st_uid, St.st_gid) != 0) ||
        ::fchmod(FD, St.st_mode & 07777) != 0) {
      Error E = errnoError(Path + ": cannot give its backup the file's "
                                  "owner, group and mode");
      ::close(FD);
      RemoveBackups();
      return E;
    }
    if (Error E = writeAndSync(FD, Backup, *Orig)) {
      RemoveBackups();
      return E;
    }
    J += Path + "\n" + std::string(Backup) + "\n" + sha256Hex(Text) + "\n";
  }
  // The journal, then the new texts: a run killed at any point leaves
  // either no journal and untouched files, or a journal that covers them.
  // The journal is written as every file is (whole or not at all).
  if (Error E = writeFileAtomically(Journal, J)) {
    RemoveBackups();
    return E;
  }
  std::unique_ptr<ReversibleWrite> W(
      new ReversibleWrite(Journal.str(), std::move(Entries)));
  W->arm();
  for (const auto &[Path, Text] : Targets)
    if (Error E = writeFileAtomically(Path, *Text)) {
      if (Error R = W->revert())
        return joinErrors(std::move(E), std::move(R));
      return E;
    }
  return W;
}

Error ReversibleWrite::commit() {
  Done = true;
  disarm();
  // Backups first: a journal without backups recovers to nothing.
  for (const Entry &E : Entries)
    sys::fs::remove(E.Backup);
  if (std::error_code EC = sys::fs::remove(Journal))
    return createStringError(EC, "%s: cannot remove the journal: %s",
                             Journal.c_str(), EC.message().c_str());
  return Error::success();
}

Error ReversibleWrite::revert() {
  Done = true;
  disarm();
  Error Errs = Error::success();
  for (const Entry &E : Entries)
    if (Error R = putBack(E.Backup, E.Path))
      Errs = joinErrors(std::move(Errs), std::move(R));
  if (Errs) // The journal stays: a rerun tries again.
    return Errs;
  if (std::error_code EC = sys::fs::remove(Journal))
    return createStringError(EC, "%s: cannot remove the journal: %s",
                             Journal.c_str(), EC.message().c_str());
  return Error::success();
}

ReversibleWrite::~ReversibleWrite() {
  if (!Done)
    consumeError(revert());
}

Expected<std::vector<std::string>> recoverInterruptedWrite(StringRef Journal) {
  std::vector<std::string> Notes;
  if (!sys::fs::exists(Journal))
    return Notes;
  auto Text = readFile(Journal);
  if (!Text)
    return Text.takeError();
  SmallVector<StringRef, 16> Lines;
  StringRef(*Text).split(Lines, '\n', -1, /*KeepEmpty=*/false);
  if (Lines.empty() || Lines[0] != JournalHeader || (Lines.size() - 1) % 3)
    return createStringError(inconvertibleErrorCode(),
                             "%s: not a clang-astra journal (or a damaged "
                             "one); remove it once the files it names are "
                             "as they should be",
                             Journal.str().c_str());
  bool Kept = false;
  for (size_t I = 1; I + 2 < Lines.size(); I += 3) {
    StringRef Path = Lines[I], Backup = Lines[I + 1], Hash = Lines[I + 2];
    if (!sys::fs::exists(Backup))
      continue; // Already put back (or the new text was kept).
    auto Now = readFile(Path);
    auto Orig = readFile(Backup);
    if (!Orig)
      return Orig.takeError();
    if (Now && *Now == *Orig) {
      sys::fs::remove(Backup);
      continue;
    }
    if (Now && sha256Hex(*Now) != Hash) {
      Kept = true;
      Notes.push_back(("kept " + Path + " as it is: it changed after an "
                       "interrupted `--test` run wrote an untested rewrite "
                       "into it; the original from before that run is in " +
                       Backup + " (remove it once it is not needed)")
                          .str());
      continue;
    }
    if (!Now)
      consumeError(Now.takeError());
    if (Error E = putBack(Backup, Path))
      return E;
    Notes.push_back(("restored " + Path + ": an interrupted `--test` run had "
                     "left an untested rewrite in it")
                        .str());
  }
  if (!Kept)
    sys::fs::remove(Journal);
  return Notes;
}

} // namespace astra
