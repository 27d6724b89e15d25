//===- PtxCache.h - On-disk PTX cache in ccache's direct mode --*- C++ -*-===//
//
// A compile is looked up before anything is parsed, the way ccache's direct
// mode does it: the key hashes what is known up front (tool, toolchain,
// command, working directory, optimization level, main file contents); the
// entry lists every non-system file the compile read, with its hash, and
// holds only while each of those still hashes the same (overlay contents
// taken over the disk). One entry per key: a later compile with different
// headers replaces it.
//
// Entries are written to a temporary file and renamed, so concurrent runs
// never see half an entry; an entry that does not parse or whose PTX does not
// match its checksum is treated as a miss and rewritten.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_LIB_COMPILE_PTXCACHE_H
#define ASTRA_LIB_COMPILE_PTXCACHE_H

#include "astra/Frontend/CudaToolchain.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/VirtualFileSystem.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace astra {

/// What makes the same command give different code outside the user's files:
/// this tool's version, the LLVM it links, the arch, and the size and time of
/// the CUDA and clang files that system-header hashing would otherwise cover
/// (cuda.h, libdevice, version.json, the runtime wrapper).
std::string toolchainFingerprint(const CudaToolchain &TC);

/// Hex key of one compile, from everything known before parsing.
std::string compileKey(llvm::StringRef Fingerprint,
                       llvm::ArrayRef<std::string> Command, unsigned OptLevel,
                       llvm::StringRef MainContents);

/// A non-system file a compile read and the hash of what it read.
struct CacheDep {
  std::string Path;
  std::string Hash;
};

/// A cache entry's PTX with the warnings its compile gave.
struct CachedPtx {
  std::string Ptx;
  std::vector<std::string> Warnings;
};

class PtxCache {
public:
  explicit PtxCache(std::string Dir) : Dir(std::move(Dir)) {}

  /// Where the entry for \p Key lives.
  std::string entryPath(llvm::StringRef Key) const;

  /// The cached PTX, if the entry exists, is intact, and every file it lists
  /// still hashes the same through \p FS. A corrupt entry adds a line to
  /// \p Notes.
  std::optional<CachedPtx> lookup(llvm::StringRef Key,
                                  llvm::vfs::FileSystem &FS,
                                  std::vector<std::string> &Notes) const;

  /// Writes the entry for \p Key atomically, with \p Warnings (one line
  /// each) to show again on every hit.
  llvm::Error store(llvm::StringRef Key, llvm::ArrayRef<CacheDep> Deps,
                    llvm::StringRef Ptx,
                    llvm::ArrayRef<std::string> Warnings = {}) const;

private:
  std::string Dir;
};

} // namespace astra

#endif
