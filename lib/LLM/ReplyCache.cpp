//===- ReplyCache.cpp - LLM replies cached on disk ------------------------===//
#include "astra/LLM/ReplyCache.h"

#include "astra/Support/FileIO.h"
#include "astra/Support/Hash.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cstdlib>

using namespace llvm;

namespace astra {

std::string defaultLLMCacheDir() {
  SmallString<256> Dir(cacheRootDirectory());
  if (Dir.empty()) {
    sys::path::system_temp_directory(/*ErasedOnReboot=*/false, Dir);
    sys::path::append(Dir, "clang-astra");
  }
  sys::path::append(Dir, "llm");
  return std::string(Dir);
}

std::string ReplyCache::key(StringRef Endpoint, StringRef RequestBody,
                            unsigned Sample) {
  KeyHasher H;
  H.add("clang-astra llm reply v2");
  H.add(Endpoint);
  H.add(RequestBody);
  H.add(std::to_string(Sample));
  return H.hex();
}

std::string ReplyCache::pathOf(StringRef Key) const {
  SmallString<256> P(Dir);
  sys::path::append(P, Key + ".json");
  return std::string(P);
}

std::optional<std::string> ReplyCache::lookup(StringRef Key) const {
  std::string Path = pathOf(Key);
  if (!sys::fs::exists(Path))
    return std::nullopt;
  Expected<std::string> Text = readFile(Path);
  if (!Text) {
    consumeError(Text.takeError());
    return std::nullopt;
  }
  return std::move(*Text);
}

Error ReplyCache::store(StringRef Key, StringRef ReplyJson) const {
  if (std::error_code EC = sys::fs::create_directories(Dir))
    return createStringError(EC,
                             "%s: cannot create the LLM reply cache directory: "
                             "%s (set ASTRA_CACHE_DIR to a writable directory "
                             "or pass --no-llm-cache)",
                             Dir.c_str(), EC.message().c_str());
  return writeFileAtomically(pathOf(Key), ReplyJson);
}

} // namespace astra
