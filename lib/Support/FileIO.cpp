//===- FileIO.cpp ---------------------------------------------------------===//
#include "astra/Support/FileIO.h"
#include "astra/Support/Hash.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <mutex>
#include <random>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

using namespace llvm;

namespace astra {

namespace {

Error fileError(StringRef Path, const Twine &What, int Errno = 0) {
  std::error_code EC = Errno ? std::error_code(Errno, std::generic_category())
                             : inconvertibleErrorCode();
  std::string Msg = (Path + ": " + What).str();
  if (Errno)
    Msg += std::string(": ") + std::strerror(Errno);
  return createStringError(EC, Msg);
}

/// What a stat says the path is, for messages ("a FIFO").
const char *kindOf(mode_t M) {
  if (S_ISDIR(M))
    return "a directory";
  if (S_ISCHR(M))
    return "a character device";
  if (S_ISBLK(M))
    return "a block device";
  if (S_ISFIFO(M))
    return "a FIFO";
  if (S_ISSOCK(M))
    return "a socket";
  if (S_ISLNK(M))
    return "a symbolic link";
  return "not a regular file";
}

std::string modeText(mode_t M) {
  // formatv has no octal style (it printed "mode 292" for 0444).
  char Buf[8];
  std::snprintf(Buf, sizeof Buf, "%04o", unsigned(M & 07777));
  return Buf;
}

/// The process's umask, read without changing it where /proc says it
/// (umask(2) can only be read by setting it, which races with threads that
/// create files meanwhile).
mode_t currentUmask() {
  std::ifstream Status("/proc/self/status");
  std::string Line;
  while (std::getline(Status, Line))
    if (StringRef(Line).starts_with("Umask:")) {
      unsigned M;
      if (!StringRef(Line).drop_front(6).trim().getAsInteger(8, M))
        return mode_t(M);
    }
  static std::mutex Mu;
  std::lock_guard<std::mutex> L(Mu);
  mode_t M = ::umask(022);
  ::umask(M);
  return M;
}

bool writeAll(int FD, StringRef Data) {
  while (!Data.empty()) {
    ssize_t N = ::write(FD, Data.data(), Data.size());
    if (N < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    Data = Data.drop_front(size_t(N));
  }
  return true;
}

/// The path a write must replace: \p Path, or the file a symlink at it
/// resolves to. Fills \p St with the target's status; \p Exists is false
/// for a path that names nothing yet.
Expected<std::string> resolveTarget(StringRef Path, struct stat &St,
                                    bool &Exists) {
  struct stat L;
  std::string P = Path.str();
  if (::lstat(P.c_str(), &L) != 0) {
    if (errno != ENOENT)
      return fileError(Path, "cannot inspect it", errno);
    Exists = false;
    return P;
  }
  Exists = true;
  if (!S_ISLNK(L.st_mode)) {
    St = L;
    return P;
  }
  if (::stat(P.c_str(), &St) != 0) {
    int Err = errno;
    char To[4096];
    ssize_t N = ::readlink(P.c_str(), To, sizeof To - 1);
    if (Err == ENOENT && N > 0)
      return fileError(Path, "is a symbolic link to '" +
                                 StringRef(To, size_t(N)) +
                                 "', which does not exist; nothing written");
    return fileError(Path, "is a symbolic link that cannot be followed",
                     Err);
  }
  char *Real = ::realpath(P.c_str(), nullptr);
  if (!Real)
    return fileError(Path, "cannot resolve the symbolic link", errno);
  std::string Out = Real;
  std::free(Real);
  return Out;
}

/// A temporary file in \p Dir: unnamed (O_TMPFILE) where the kernel and
/// the file system support it, so that nothing is ever left behind by a
/// kill -9 while the data is written; else a hidden named file, removed on
/// signals. Name is empty while the file is unnamed.
struct TempFile {
  int FD = -1;
  std::string Name;
  bool Unnamed = false;
  ~TempFile() { discard(); }
  void discard() {
    if (FD >= 0)
      ::close(FD);
    FD = -1;
    if (!Name.empty()) {
      ::unlink(Name.c_str());
      sys::DontRemoveFileOnSignal(Name);
      Name.clear();
    }
  }
};

std::string tempName(StringRef Dir, StringRef Base) {
  static std::mt19937_64 Rng(std::random_device{}() ^
                             uint64_t(::getpid()) << 20);
  static std::mutex Mu;
  std::lock_guard<std::mutex> L(Mu);
  SmallString<256> P(Dir);
  sys::path::append(P, "." + Base + ".astra-" +
                           utohexstr(Rng() & 0xffffffffffULL, true));
  return std::string(P);
}

/// Returns 0 or the errno of the failure.
int openTemp(TempFile &T, StringRef Dir, StringRef Base, mode_t Mode) {
#ifdef O_TMPFILE
  // Giving the unnamed file a name later goes through /proc/self/fd.
  if (::access("/proc/self/fd", X_OK) == 0) {
    std::string D = Dir.str();
    T.FD = ::open(D.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, Mode);
    if (T.FD >= 0) {
      T.Unnamed = true;
      return 0;
    }
  }
#endif
  for (int Try = 0; Try < 100; ++Try) {
    std::string Name = tempName(Dir, Base);
    T.FD = ::open(Name.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, Mode);
    if (T.FD >= 0) {
      T.Name = Name;
      sys::RemoveFileOnSignal(Name);
      return 0;
    }
    if (errno != EEXIST)
      return errno;
  }
  return EEXIST;
}

/// Gives an unnamed temporary file a name in \p Dir, for the rename.
/// Returns 0 or the errno of the failure.
int nameTemp(TempFile &T, StringRef Dir, StringRef Base) {
  if (!T.Unnamed)
    return 0;
  std::string Proc = "/proc/self/fd/" + std::to_string(T.FD);
  for (int Try = 0; Try < 100; ++Try) {
    std::string Name = tempName(Dir, Base);
    // Registered first: a signal between the link and the registration
    // would otherwise leave the name behind.
    sys::RemoveFileOnSignal(Name);
    if (::linkat(AT_FDCWD, Proc.c_str(), AT_FDCWD, Name.c_str(),
                 AT_SYMLINK_FOLLOW) == 0) {
      T.Name = Name;
      T.Unnamed = false;
      return 0;
    }
    int Err = errno;
    sys::DontRemoveFileOnSignal(Name);
    if (Err != EEXIST)
      return Err;
  }
  return EEXIST;
}

void syncFolder(StringRef Dir) {
  std::string D = Dir.str();
  int FD = ::open(D.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (FD < 0)
    return;
  (void)::fsync(FD);
  ::close(FD);
}

/// Runs the test-only hook (see FileIO.h) before the final check.
void runTestHook(StringRef Target) {
  const char *Cmd = std::getenv("ASTRA_TEST_BEFORE_RENAME");
  if (!Cmd || !*Cmd)
    return;
  std::string T = Target.str();
  ::setenv("ASTRA_TEST_TARGET", T.c_str(), 1);
  if (std::system(Cmd) != 0)
    errs() << "clang-astra: note: ASTRA_TEST_BEFORE_RENAME failed\n";
}

} // namespace

Error checkReadableFile(StringRef Path) {
  sys::fs::file_status St;
  if (std::error_code EC = sys::fs::status(Path, St))
    return createStringError(EC, "%s: cannot open: %s", Path.str().c_str(),
                             EC.message().c_str());
  if (sys::fs::is_directory(St))
    return createStringError(inconvertibleErrorCode(),
                             "%s: is a directory, not a source file",
                             Path.str().c_str());
  if (std::error_code EC = sys::fs::access(Path, sys::fs::AccessMode::Exist))
    return createStringError(EC, "%s: cannot open: %s", Path.str().c_str(),
                             EC.message().c_str());
  int FD;
  if (std::error_code EC = sys::fs::openFileForRead(Path, FD))
    return createStringError(EC, "%s: cannot read: %s", Path.str().c_str(),
                             EC.message().c_str());
  sys::Process::SafelyCloseFileDescriptor(FD);
  return Error::success();
}

Expected<std::string> readFile(StringRef Path, uint64_t MaxBytes) {
  std::string P = Path.str();
  int FD = ::open(P.c_str(), O_RDONLY | O_CLOEXEC);
  if (FD < 0)
    return fileError(Path, "cannot read", errno);
  auto Close = make_scope_exit([&] { ::close(FD); });
  struct stat St;
  if (::fstat(FD, &St) != 0)
    return fileError(Path, "cannot read", errno);
  if (S_ISDIR(St.st_mode))
    return fileError(Path, "cannot read: is a directory");
  auto TooLarge = [&] {
    return fileError(Path, "holds more than " + Twine(MaxBytes) +
                               " bytes, more than a file clang-astra reads "
                               "may hold");
  };
  std::string Out;
  if (S_ISREG(St.st_mode)) {
    if (uint64_t(St.st_size) > MaxBytes)
      return TooLarge();
    Out.reserve(size_t(St.st_size));
  }
  // A FIFO or a device is read in pieces up to the limit; /dev/zero ends
  // there, not in an allocation failure.
  char Buf[65536];
  for (;;) {
    ssize_t N = ::read(FD, Buf, sizeof Buf);
    if (N < 0) {
      if (errno == EINTR)
        continue;
      return fileError(Path, "cannot read", errno);
    }
    if (N == 0)
      break;
    if (Out.size() + uint64_t(N) > MaxBytes)
      return TooLarge();
    Out.append(Buf, size_t(N));
  }
  return Out;
}

Error writeFileAtomically(StringRef Path, StringRef Contents,
                          StringRef OriginalSha256) {
  // The names of standard output are standard output, not a file to
  // replace (a redirect's file, replaced by a rename, would keep the
  // shell's descriptor on the old one).
  if (Path == "-" || Path == "/dev/stdout" || Path == "/dev/fd/1" ||
      Path == "/proc/self/fd/1") {
    outs() << Contents;
    outs().flush();
    if (outs().has_error()) {
      std::error_code EC = outs().error();
      outs().clear_error();
      return createStringError(EC, "standard output: write failed: %s",
                               EC.message().c_str());
    }
    return Error::success();
  }

  struct stat St;
  bool Exists = false;
  auto Resolved = resolveTarget(Path, St, Exists);
  if (!Resolved)
    return Resolved.takeError();
  std::string Target = std::move(*Resolved);

  mode_t Mode = 0666 & ~currentUmask();
  if (Exists) {
    if (!S_ISREG(St.st_mode))
      return fileError(Path, Twine("is ") + kindOf(St.st_mode) +
                                 ", not a regular file; clang-astra only "
                                 "replaces regular files (`-` writes to "
                                 "standard output); nothing written");
    if (St.st_nlink > 1)
      return fileError(Path, "has " + Twine(uint64_t(St.st_nlink)) +
                                 " hard links; replacing it would leave the "
                                 "other names with the old text, and "
                                 "writing it in place is not atomic; "
                                 "nothing written (break the link first: "
                                 "cp --remove-destination)");
    bool Root = ::geteuid() == 0;
    if (::access(Target.c_str(), W_OK) != 0 ||
        (Root && !(St.st_mode & 0222)))
      return fileError(Path, "is read-only (mode " + modeText(St.st_mode) +
                                 "); nothing written");
    Mode = St.st_mode & 07777;
  } else if (!OriginalSha256.empty()) {
    return fileError(Path, "was removed while clang-astra ran; nothing "
                           "written");
  }

  SmallString<256> Dir(Target);
  sys::path::remove_filename(Dir);
  if (Dir.empty())
    Dir = ".";
  std::string Base = sys::path::filename(Target).str();

  TempFile T;
  if (int Err = openTemp(T, Dir, Base, Mode & 0777))
    return fileError(Path, "cannot create a temporary file in '" + Dir + "'",
                     Err);
  // Owner and group before the mode: chown clears set-id bits.
  if (Exists) {
    struct stat Tmp;
    if (::fstat(T.FD, &Tmp) != 0)
      return fileError(Path, "cannot inspect the temporary file", errno);
    if ((Tmp.st_uid != St.st_uid || Tmp.st_gid != St.st_gid) &&
        ::fchown(T.FD, St.st_uid, St.st_gid) != 0)
      return fileError(Path, "is owned by uid " + Twine(St.st_uid) +
                                 ", gid " + Twine(St.st_gid) +
                                 ", which a replacement cannot keep; "
                                 "nothing written",
                       errno);
  }
  if (::fchmod(T.FD, Mode) != 0)
    return fileError(Path, "cannot set the mode of the temporary file",
                     errno);
  if (!writeAll(T.FD, Contents))
    return fileError(Path, "write failed", errno);
  if (::fsync(T.FD) != 0)
    return fileError(Path, "write failed (fsync)", errno);

  runTestHook(Target);
  if (!OriginalSha256.empty()) {
    auto Now = readFile(Target);
    if (!Now)
      return fileError(Path, "cannot read it again before replacing it: " +
                                 toString(Now.takeError()));
    if (sha256Hex(*Now) != OriginalSha256)
      return fileError(Path, "changed on disk while clang-astra ran; its "
                             "new text was left alone and nothing was "
                             "written (run again on the new text)");
  }

  if (int Err = nameTemp(T, Dir, Base))
    return fileError(Path, "cannot name the temporary file in '" + Dir + "'",
                     Err);
  if (::rename(T.Name.c_str(), Target.c_str()) != 0)
    return fileError(Path, "cannot replace the file", errno);
  sys::DontRemoveFileOnSignal(T.Name);
  T.Name.clear(); // Renamed: nothing to remove.
  ::close(T.FD);
  T.FD = -1;
  syncFolder(Dir);
  return Error::success();
}

std::string cacheRootDirectory() {
  if (const char *E = std::getenv("ASTRA_CACHE_DIR"); E && *E)
    return E;
  // The XDG spec says a relative $XDG_CACHE_HOME is to be ignored.
  if (const char *E = std::getenv("XDG_CACHE_HOME");
      E && *E && sys::path::is_absolute(E))
    return (Twine(E) + "/clang-astra").str();
  SmallString<256> Home;
  if (sys::path::home_directory(Home)) {
    sys::path::append(Home, ".cache", "clang-astra");
    return std::string(Home);
  }
  return "";
}

} // namespace astra
