//===- Hash.h - SHA-256 for cache keys and checksums ------------*- C++ -*-===//
#ifndef ASTRA_SUPPORT_HASH_H
#define ASTRA_SUPPORT_HASH_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SHA256.h"

#include <string>

namespace astra {

/// Hex SHA-256 of \p Data.
std::string sha256Hex(llvm::StringRef Data);

/// SHA-256 of a list of fields, each length-prefixed, so that no two
/// different lists hash the same bytes. The key of every on-disk cache (PTX,
/// LLM replies, optimize results).
class KeyHasher {
public:
  void add(llvm::StringRef Field);
  /// Lowercase hex digest; call once.
  std::string hex();

private:
  llvm::SHA256 H;
};

} // namespace astra

#endif
