//===- ReplyCache.h - LLM replies cached on disk ----------------*- C++ -*-===//
//
// A rerun of the optimizer with the same inputs must cost nothing: every
// successful reply is stored under a hash of everything that decides it (the
// endpoint, the whole request body: model, messages, tools, temperature, max
// tokens, and the caller's sample number). The API key is never part of the
// key or of the stored value.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_LLM_REPLYCACHE_H
#define ASTRA_LLM_REPLYCACHE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>

namespace astra {

/// $ASTRA_CACHE_DIR/llm, else $XDG_CACHE_HOME/clang-astra/llm, else
/// ~/.cache/clang-astra/llm (the PTX cache's root, as PtxCompiler.h says).
std::string defaultLLMCacheDir();

class ReplyCache {
public:
  /// \p Dir holds one <key>.json per reply; created on the first store.
  explicit ReplyCache(std::string Dir) : Dir(std::move(Dir)) {}

  /// Hex SHA-256 of the endpoint URL, the request body and the sample
  /// number, with a format version so a change of the stored value never
  /// reads old entries.
  static std::string key(llvm::StringRef Endpoint, llvm::StringRef RequestBody,
                         unsigned Sample);

  /// The stored reply body, or none when absent or unreadable.
  std::optional<std::string> lookup(llvm::StringRef Key) const;

  /// Stores \p ReplyJson atomically (temporary file + rename), so a
  /// concurrent reader sees the whole entry or none.
  llvm::Error store(llvm::StringRef Key, llvm::StringRef ReplyJson) const;

  /// The file of \p Key.
  std::string pathOf(llvm::StringRef Key) const;
  const std::string &dir() const { return Dir; }

private:
  std::string Dir;
};

} // namespace astra

#endif
