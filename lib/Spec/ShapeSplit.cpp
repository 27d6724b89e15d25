//===- ShapeSplit.cpp -----------------------------------------------------===//
#include "astra/Spec/ShapeSplit.h"
#include "SpecText.h"

#include "astra/Spec/LaunchTuning.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

using namespace llvm;

namespace astra {

Expected<int64_t> launchThreads(const KernelSpec &K, const ShapeSet &S) {
  auto L = K.Launch.resolve(S.Vars);
  if (!L)
    return L.takeError();
  int64_t N = 1;
  for (int64_t D : L->Grid)
    N *= D;
  return N * L->threadsPerBlock();
}

static std::string powerText(int64_t V) {
  if (V > 0 && (V & (V - 1)) == 0)
    return "2^" + std::to_string(Log2_64(uint64_t(V)));
  return std::to_string(V);
}

Expected<int64_t> defaultSplitThreshold(ArrayRef<const KernelSpec *> Specs) {
  std::set<int64_t> Sizes;
  for (const KernelSpec *K : Specs)
    for (const ShapeSet &S : K->Shapes) {
      auto N = launchThreads(*K, S);
      if (!N)
        return createStringError(inconvertibleErrorCode(),
                                 "kernel '%s', shape set '%s': %s",
                                 K->Kernel.c_str(), S.Name.c_str(),
                                 toString(N.takeError()).c_str());
      Sizes.insert(*N);
    }
  if (Sizes.size() < 2)
    return createStringError(inconvertibleErrorCode(),
                             "every shape set launches the same number of "
                             "threads: there is nothing to split");
  int64_t Lo = 0, Hi = 0;
  double Best = 0;
  for (auto I = Sizes.begin(), J = std::next(I); J != Sizes.end(); ++I, ++J)
    if (double R = double(*J) / double(*I); R > Best) {
      Best = R;
      Lo = *I;
      Hi = *J;
    }
  if (Best < double(MinSplitGap))
    return createStringError(
        inconvertibleErrorCode(),
        "the shape sets launch %s to %s threads, no two sizes %lldx apart or "
        "more: nothing to split (give shape-split.at to split anyway)",
        std::to_string(*Sizes.begin()).c_str(),
        std::to_string(*Sizes.rbegin()).c_str(), (long long)MinSplitGap);
  double Mid = std::sqrt(double(Lo) * double(Hi));
  int64_t T = 1;
  while (double(T) < Mid)
    T <<= 1;
  return T;
}

std::string splitCloneName(StringRef SpecName) {
  size_t Lt = SpecName.find('<');
  StringRef Base = SpecName.take_front(Lt);
  return (Base.rtrim() + SplitCloneSuffix +
          (Lt == StringRef::npos ? StringRef() : SpecName.substr(Lt)))
      .str();
}

std::string splitOriginName(StringRef SpecName) {
  size_t Lt = SpecName.find('<');
  StringRef Base = SpecName.take_front(Lt).rtrim();
  if (!Base.consume_back(SplitCloneSuffix))
    return SpecName.str();
  return (Base + (Lt == StringRef::npos ? StringRef() : SpecName.substr(Lt)))
      .str();
}

/// Which sets of \p K go to the clone (launching \p Threshold threads or
/// more), by index.
static Expected<std::vector<bool>> largeSets(const KernelSpec &K,
                                             int64_t Threshold) {
  std::vector<bool> Large;
  for (const ShapeSet &S : K.Shapes) {
    auto N = launchThreads(K, S);
    if (!N)
      return createStringError(inconvertibleErrorCode(),
                               "kernel '%s', shape set '%s': %s",
                               K.Kernel.c_str(), S.Name.c_str(),
                               toString(N.takeError()).c_str());
    Large.push_back(*N >= Threshold);
  }
  unsigned NLarge = std::count(Large.begin(), Large.end(), true);
  if (NLarge == 0 || NLarge == Large.size())
    return createStringError(
        inconvertibleErrorCode(),
        "kernel '%s': %s shape set launches %s than %s threads, so one of the "
        "two kernels would have no shape set to be verified on",
        K.Kernel.c_str(), NLarge ? "every" : "no",
        NLarge ? "no fewer" : "as many or more", powerText(Threshold).c_str());
  return Large;
}

Expected<KernelSpec> splitSpec(KernelSpec &K, int64_t Threshold) {
  auto Large = largeSets(K, Threshold);
  if (!Large)
    return Large.takeError();
  KernelSpec Clone = K;
  Clone.Kernel = splitCloneName(K.Kernel);
  Clone.Shapes.clear();
  std::vector<ShapeSet> Keep;
  for (size_t I = 0; I < K.Shapes.size(); ++I)
    ((*Large)[I] ? Clone.Shapes : Keep).push_back(K.Shapes[I]);
  K.Shapes = std::move(Keep);
  return Clone;
}

/// The text range of member \p Field ("shapes.decode" or "" for the entry)
/// of \p K: from its key to the end of its object value, then past a comma
/// and the rest of its line when that is blank; from the start of the key's
/// line when only blanks precede it.
static std::optional<std::pair<size_t, size_t>>
memberRange(StringRef Text, const KernelSpec &K, StringRef Field) {
  auto It = K.FieldLocations.find(Field.str());
  if (It == K.FieldLocations.end())
    return std::nullopt;
  size_t Key = offsetOf(Text, It->second.first, It->second.second);
  if (Key == StringRef::npos || Key >= Text.size() || Text[Key] != '"')
    return std::nullopt;
  size_t Open = Text.find('{', Key);
  size_t End = Open == StringRef::npos ? Open : endOfObject(Text, Open);
  if (End == StringRef::npos)
    return std::nullopt;
  size_t Begin = Key;
  size_t LineStart = Text.rfind('\n', Key);
  LineStart = LineStart == StringRef::npos ? 0 : LineStart + 1;
  if (Text.slice(LineStart, Key).trim().empty())
    Begin = LineStart;
  size_t After = End;
  while (After < Text.size() && (Text[After] == ' ' || Text[After] == '\t'))
    ++After;
  if (After < Text.size() && Text[After] == ',') {
    End = After + 1;
    After = End;
    while (After < Text.size() && (Text[After] == ' ' || Text[After] == '\t'))
      ++After;
  }
  if (Begin == LineStart && After < Text.size() && Text[After] == '\n')
    End = After + 1;
  return std::make_pair(Begin, End);
}

Expected<std::string> splitSpecText(StringRef Text, StringRef Path,
                                    ArrayRef<std::string> Kernels,
                                    int64_t Threshold) {
  auto Old = parseSpec(Text, Path);
  if (!Old)
    return Old.takeError();
  auto Fail = [&](const Twine &Why) {
    return createStringError(
        inconvertibleErrorCode(), "%s",
        (Path + ": cannot split the spec: " + Why).str().c_str());
  };
  // Edits as (begin, end, new text), applied back to front.
  std::vector<std::tuple<size_t, size_t, std::string>> Edits;
  SpecFile Want = *Old;
  for (const std::string &Name : Kernels) {
    const KernelSpec *K = Old->find(Name);
    if (!K)
      return Fail("no entry for kernel '" + Name + "'");
    if (Old->find(splitCloneName(K->Kernel)))
      return Fail("kernel '" + K->Kernel + "' is split already ('" +
                  splitCloneName(K->Kernel) + "' has an entry)");
    auto Large = largeSets(*K, Threshold);
    if (!Large)
      return Large.takeError();
    auto Entry = memberRange(Text, *K, "");
    if (!Entry)
      return Fail("kernel '" + K->Kernel + "': its entry is not found");
    // The clone: the entry's text less its small sets, renamed.
    std::vector<std::pair<size_t, size_t>> Small, Big;
    for (size_t I = 0; I < K->Shapes.size(); ++I) {
      auto R = memberRange(Text, *K, "shapes." + K->Shapes[I].Name);
      if (!R || R->first < Entry->first || R->second > Entry->second)
        return Fail("kernel '" + K->Kernel + "': shape set '" +
                    K->Shapes[I].Name + "' is not found");
      ((*Large)[I] ? Big : Small).push_back(*R);
    }
    std::sort(Small.begin(), Small.end());
    std::string Copy;
    size_t At = Entry->first;
    for (auto &[B, E] : Small) {
      Copy += Text.slice(At, B);
      At = E;
    }
    Copy += Text.slice(At, Entry->second);
    size_t Quote = Copy.find('"');
    size_t Close = Copy.find('"', Quote + 1);
    if (Quote == std::string::npos || Close == std::string::npos)
      return Fail("kernel '" + K->Kernel + "': its name is not found");
    Copy = Copy.substr(0, Quote + 1) + splitCloneName(K->Kernel) +
           Copy.substr(Close);
    // An entry without a trailing comma (the last one) gets one.
    StringRef Tail = StringRef(Copy).rtrim();
    if (!Tail.ends_with(",")) {
      size_t End = Tail.size();
      Copy = Copy.substr(0, End) + "," + Copy.substr(End);
    }
    StringRef Orig = Text.slice(Entry->first, Entry->second);
    std::string Sep;
    if (!Orig.rtrim(" \t").ends_with("\n"))
      Sep = "\n";
    if (!StringRef(Orig).rtrim().ends_with(","))
      Edits.push_back({Entry->first + Orig.rtrim().size(),
                       Entry->first + Orig.rtrim().size(), ","});
    Edits.push_back({Entry->second, Entry->second, Sep + Copy});
    for (auto &[B, E] : Big)
      Edits.push_back({B, E, ""});
    KernelSpec *W = Want.find(Name);
    auto Clone = splitSpec(*W, Threshold);
    if (!Clone)
      return Clone.takeError();
    Want.Kernels.push_back(std::move(*Clone));
  }
  std::sort(Edits.begin(), Edits.end(), [](const auto &A, const auto &B) {
    return std::get<0>(A) > std::get<0>(B);
  });
  std::string New = Text.str();
  for (auto &[B, E, T] : Edits)
    New.replace(B, E - B, T);
  auto Check = parseSpec(New, Path);
  if (!Check)
    return Fail("the split text does not parse: " +
                toString(Check.takeError()));
  auto Sets = [](const KernelSpec &K) {
    std::vector<std::string> N;
    for (const ShapeSet &S : K.Shapes)
      N.push_back(S.Name);
    return N;
  };
  if (Check->Kernels.size() != Want.Kernels.size())
    return Fail("the split text has " + Twine(Check->Kernels.size()) +
                " entries, expected " + Twine(Want.Kernels.size()));
  for (const KernelSpec &W : Want.Kernels) {
    const KernelSpec *C = Check->find(W.Kernel);
    if (!C || Sets(*C) != Sets(W))
      return Fail("the split text does not give kernel '" + W.Kernel +
                  "' the shape sets " + join(Sets(W), ", "));
  }
  return New;
}

Expected<std::string> followSplits(StringRef Text, StringRef Path,
                                   const std::map<std::string, int64_t> &Splits) {
  std::string New = Text.str();
  for (const auto &[Kernel, At] : Splits) {
    auto Specs = parseSpec(New, Path);
    if (!Specs)
      return Specs.takeError();
    auto Names = entriesDescribing(*Specs, Kernel);
    if (!Names)
      return Names.takeError();
    auto Next = splitSpecText(New, Path, *Names, At);
    if (!Next)
      return Next.takeError();
    New = std::move(*Next);
  }
  return New;
}

} // namespace astra
