//===- FileIO.h - Reading inputs, writing outputs safely -------*- C++ -*-===//
//
// A user's source file must never be left half-written: every write goes to a
// temporary file in the same directory, then is renamed over the target.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_SUPPORT_FILEIO_H
#define ASTRA_SUPPORT_FILEIO_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <string>

namespace astra {

/// Reads a whole file; the error names the file and the reason.
llvm::Expected<std::string> readFile(llvm::StringRef Path);

/// Checks that \p Path exists, is a regular file and can be read, with a
/// message a user can act on.
llvm::Error checkReadableFile(llvm::StringRef Path);

/// Writes \p Contents to \p Path through a temporary file and a rename, so
/// readers see the old or the new file, never a mix. Keeps the permissions of
/// an existing file.
llvm::Error writeFileAtomically(llvm::StringRef Path, llvm::StringRef Contents);

/// The root of clang-astra's caches (PTX, LLM replies, optimize results):
/// $ASTRA_CACHE_DIR, else $XDG_CACHE_HOME/clang-astra (when absolute), else
/// ~/.cache/clang-astra; empty when none of them can be found.
std::string cacheRootDirectory();

} // namespace astra

#endif
