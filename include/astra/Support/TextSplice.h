//===- TextSplice.h - Applying edits to a text by offset -------*- C++ -*-===//
//
// Passes and spec edits build a new text from an old one and a list of
// changes by offset. This is the one way to apply them, so that every
// caller orders edits at one offset alike and none silently drops an
// overlap.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_SUPPORT_TEXTSPLICE_H
#define ASTRA_SUPPORT_TEXTSPLICE_H

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace astra {

/// One change of a text: \p Length bytes at \p Offset become \p Text
/// (Length 0: an insertion).
struct Splice {
  unsigned Offset = 0;
  unsigned Length = 0;
  std::string Text;
};

/// Whether \p A applies before \p B: by offset; at one offset an insertion
/// before the replacement that starts there. Splices this leaves unordered
/// keep the order they were given in (sort with std::stable_sort).
bool spliceBefore(const Splice &A, const Splice &B);

/// [Begin, End) of \p Buf with the splices that lie inside it applied (an
/// insertion at End counts); the others are left out, so that one list can
/// serve several windows of a file. Offsets are \p Buf's. Order: as
/// spliceBefore, insertions at one offset in the order given. nullopt when
/// two of the splices inside overlap (share a byte, or an insertion falls
/// strictly inside a replacement).
std::optional<std::string> spliceText(llvm::StringRef Buf, unsigned Begin,
                                      unsigned End,
                                      std::vector<Splice> Splices);

/// The whole of \p Buf with \p Splices applied; nullopt when one lies
/// outside it or two overlap.
std::optional<std::string> spliceText(llvm::StringRef Buf,
                                      std::vector<Splice> Splices);

} // namespace astra

#endif
