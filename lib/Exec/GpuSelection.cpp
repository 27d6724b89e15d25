//===- GpuSelection.cpp ---------------------------------------------------===//
#include "astra/Exec/GpuSelection.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

#include <set>

using namespace llvm;

namespace astra {
namespace exec {

Expected<std::vector<std::string>>
selectGpus(StringRef Spec, unsigned Visible, StringRef ParentVisible) {
  auto Err = [&](const Twine &Why) {
    return createStringError(inconvertibleErrorCode(),
                             "--gpus %s: %s", Spec.str().c_str(),
                             Why.str().c_str());
  };
  SmallVector<StringRef, 8> Parent;
  if (!ParentVisible.trim().empty())
    ParentVisible.split(Parent, ',', -1, false);
  auto Name = [&](unsigned I) {
    return I < Parent.size() ? Parent[I].trim().str() : std::to_string(I);
  };
  std::vector<std::string> Out;
  Spec = Spec.trim();
  std::string Have = Visible == 1 ? "this machine shows 1 GPU"
                                  : "this machine shows " +
                                        std::to_string(Visible) + " GPUs";
  if (Spec == "all") {
    for (unsigned I = 0; I < Visible; ++I)
      Out.push_back(Name(I));
    return Out;
  }
  if (Spec.empty())
    return Err("expected all, a count or a list of GPU numbers (0,2)");
  if (!Spec.contains(',')) {
    unsigned N;
    if (Spec.getAsInteger(10, N))
      return Err("expected all, a count or a list of GPU numbers (0,2)");
    if (N == 0)
      return Err("at least one GPU");
    if (N > Visible)
      return Err(Have);
    for (unsigned I = 0; I < N; ++I)
      Out.push_back(Name(I));
    return Out;
  }
  SmallVector<StringRef, 8> Items;
  Spec.split(Items, ',');
  std::set<unsigned> Seen;
  for (StringRef It : Items) {
    unsigned I;
    if (It.trim().getAsInteger(10, I))
      return Err("'" + It + "' is not a GPU number");
    if (I >= Visible)
      return Err("there is no GPU " + Twine(I) + " (" + Have + ")");
    if (!Seen.insert(I).second)
      return Err("GPU " + Twine(I) + " is named twice");
    Out.push_back(Name(I));
  }
  return Out;
}

} // namespace exec
} // namespace astra
