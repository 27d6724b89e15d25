//===- Hash.cpp -----------------------------------------------------------===//
#include "astra/Support/Hash.h"

#include "llvm/ADT/StringExtras.h"

#include <cstdint>

using namespace llvm;

namespace astra {

std::string sha256Hex(StringRef Data) {
  return toHex(SHA256::hash(arrayRefFromStringRef(Data)), /*LowerCase=*/true);
}

void KeyHasher::add(StringRef Field) {
  uint64_t N = Field.size();
  H.update(ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(&N), sizeof N));
  H.update(arrayRefFromStringRef(Field));
}

std::string KeyHasher::hex() { return toHex(H.final(), /*LowerCase=*/true); }

} // namespace astra
