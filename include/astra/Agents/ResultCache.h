//===- ResultCache.h - optimize's results, kept across runs ----*- C++ -*-===//
//
// An optimize run costs minutes of GPU time; its outcome depends only on its
// inputs. So each file's outcome is stored under a content hash of those
// inputs (the file, the local headers it includes, the spec, the compile
// command with its GPU architecture, the optimize options that change the
// outcome, the tool version) and the GPU it was verified on. A rerun on
// unchanged inputs answers from the cache in milliseconds, and a machine
// without a GPU (a pre-commit hook on a laptop) can still apply a result a
// GPU machine verified. The command line, the CMake target and the
// pre-commit hook share it: it is a directory of JSON files written through a
// temporary file and a rename, so concurrent runs never read half an entry.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_AGENTS_RESULTCACHE_H
#define ASTRA_AGENTS_RESULTCACHE_H

#include "astra/Agents/OptimizeDriver.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace astra {

/// A cached outcome, with where it came from.
struct CachedOutcome {
  FileOutcome Outcome;
  std::string Gpu;  ///< The GPU that verified it.
  std::string Date; ///< When (ISO 8601, UTC).
};

class ResultCache {
public:
  /// \p Dir holds the entries; empty: cacheRootDirectory()/results.
  explicit ResultCache(std::string Dir = "");

  /// The key of \p File's outcome: a hash of the texts of the file and of
  /// the local headers it includes (quote includes, found beside the
  /// including file or in the command's -I directories), the spec, the
  /// device command and \p Options (the request's outcome-relevant options
  /// and the tool version, as text).
  static std::string key(llvm::StringRef File, llvm::StringRef SpecPath,
                         llvm::ArrayRef<std::string> Command,
                         llvm::StringRef Options);

  /// The entry for \p Key verified on \p Gpu; with \p Gpu empty (no GPU
  /// here), the newest entry of any GPU. None when absent or unreadable, or
  /// when a file it would change no longer has the text it was made from.
  std::optional<CachedOutcome> lookup(llvm::StringRef Key,
                                      llvm::StringRef Gpu) const;

  /// Stores \p O (a finished, error-free GPU run) for \p Key and \p Gpu.
  llvm::Error store(llvm::StringRef Key, llvm::StringRef Gpu,
                    const FileOutcome &O, llvm::StringRef Date) const;

  const std::string &directory() const { return Dir; }

private:
  std::string Dir;
};

} // namespace astra

#endif
