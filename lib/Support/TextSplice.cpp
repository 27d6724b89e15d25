//===- TextSplice.cpp -----------------------------------------------------===//
#include "astra/Support/TextSplice.h"

#include <algorithm>

using namespace llvm;

namespace astra {

bool spliceBefore(const Splice &A, const Splice &B) {
  if (A.Offset != B.Offset)
    return A.Offset < B.Offset;
  return A.Length == 0 && B.Length != 0;
}

std::optional<std::string> spliceText(StringRef Buf, unsigned Begin,
                                      unsigned End,
                                      std::vector<Splice> Splices) {
  if (Begin > End || End > Buf.size())
    return std::nullopt;
  Splices.erase(std::remove_if(Splices.begin(), Splices.end(),
                               [&](const Splice &S) {
                                 return S.Offset < Begin || S.Offset > End ||
                                        S.Length > End - S.Offset;
                               }),
                Splices.end());
  std::stable_sort(Splices.begin(), Splices.end(), spliceBefore);
  std::string Out;
  unsigned At = Begin;
  for (const Splice &S : Splices) {
    if (S.Offset < At)
      return std::nullopt;
    Out += Buf.slice(At, S.Offset);
    Out += S.Text;
    At = S.Offset + S.Length;
  }
  Out += Buf.slice(At, End);
  return Out;
}

std::optional<std::string> spliceText(StringRef Buf,
                                      std::vector<Splice> Splices) {
  for (const Splice &S : Splices)
    if (S.Offset > Buf.size() || S.Length > Buf.size() - S.Offset)
      return std::nullopt;
  return spliceText(Buf, 0, Buf.size(), std::move(Splices));
}

} // namespace astra
