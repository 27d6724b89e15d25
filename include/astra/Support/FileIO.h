//===- FileIO.h - Reading inputs, writing outputs safely -------*- C++ -*-===//
//
// A user's file must never be left half-written, turned into something it
// was not (a device node into a regular file, a symlink into a copy, another
// user's file into root's), or overwritten with edits computed from text it
// no longer holds. Every write goes through writeFileAtomically, whose rules
// are documented there and in docs/user-guide.md ("How files are written").
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_SUPPORT_FILEIO_H
#define ASTRA_SUPPORT_FILEIO_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <string>

namespace astra {

/// The most readFile reads unless told otherwise: far more than any source,
/// spec, job or cache file, and a bound on what a device such as /dev/zero
/// can make the tool allocate.
constexpr uint64_t DefaultReadLimit = uint64_t(1) << 30;

/// Reads a whole file; the error names the file and the reason. A file (or
/// a FIFO, a device) that holds more than \p MaxBytes is an error, read no
/// further than that.
llvm::Expected<std::string> readFile(llvm::StringRef Path,
                                     uint64_t MaxBytes = DefaultReadLimit);

/// Checks that \p Path exists, is a regular file and can be read, with a
/// message a user can act on.
llvm::Error checkReadableFile(llvm::StringRef Path);

/// Writes \p Contents to \p Path so that readers see the old or the new
/// file, never a mix, and the file stays what it was:
///  - `-` (and /dev/stdout, /dev/fd/1) is standard output;
///  - a symlink is followed and its target replaced, in the target's
///    folder; a dangling symlink is an error;
///  - an existing path that is not a regular file (a device, a FIFO, a
///    socket, a folder) is an error: nothing is written to it;
///  - a file with several hard links is an error (a rename would leave the
///    other names with the old text, and writing in place is not atomic);
///  - a read-only file (no write permission for us, or none for anyone when
///    we are root) is an error;
///  - the new file gets the old one's owner, group and mode (an error when
///    they cannot be kept, e.g. another user's file when we are not root);
///    a new file gets 0666 less the umask, as any file a program creates;
///  - the data goes to a temporary file in the same folder, made with the
///    final mode (unnamed until complete where the kernel supports
///    O_TMPFILE), fsync'ed before the rename, the folder fsync'ed after;
///    the temporary is removed on every error path and on SIGINT, SIGTERM
///    and the other signals LLVM's RemoveFileOnSignal covers;
///  - with \p OriginalSha256 (sha256Hex of the text the new contents were
///    computed from), the file is read again just before the rename, and
///    one that changed since is left alone with an error saying so.
/// The environment variable ASTRA_TEST_BEFORE_RENAME, a shell command, runs
/// at that last point (with ASTRA_TEST_TARGET naming the file); it exists
/// for tests that edit a file during a run, and nothing else sets it.
llvm::Error writeFileAtomically(llvm::StringRef Path, llvm::StringRef Contents,
                                llvm::StringRef OriginalSha256 = "");

/// The root of clang-astra's caches (PTX, LLM replies, optimize results):
/// $ASTRA_CACHE_DIR, else $XDG_CACHE_HOME/clang-astra (when absolute), else
/// ~/.cache/clang-astra; empty when none of them can be found.
std::string cacheRootDirectory();

} // namespace astra

#endif
