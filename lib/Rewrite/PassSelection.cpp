//===- PassSelection.cpp - Which passes, with which parameters -----------===//
//
// The one place that turns what a user typed (`--passes=*,-fast-math`,
// `--pass-opt=unroll.factor=4`, or the same in a config file) into a pass
// list and checked parameters, for rewrite and the optimizer alike.
//
//===----------------------------------------------------------------------===//
#include "astra/Rewrite/Pass.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/GlobPattern.h"

using namespace llvm;

namespace astra {

namespace {

Error fail(const Twine &Msg) {
  return createStringError(inconvertibleErrorCode(), Msg);
}

/// The registered name nearest to \p Name, for "did you mean".
template <typename Range, typename Proj>
std::string nearest(StringRef Name, const Range &Names, Proj P) {
  std::string Best;
  unsigned BestDist = std::max<size_t>(3, Name.size() / 3);
  for (const auto &N : Names) {
    StringRef S = P(N);
    unsigned D = Name.edit_distance(S);
    if (D < BestDist) {
      BestDist = D;
      Best = S.str();
    }
  }
  return Best;
}

std::string passNames() {
  std::vector<StringRef> Names;
  for (const PassInfo &PI : allPasses())
    Names.push_back(PI.Name);
  return join(Names, ", ");
}

const PassInfo *findPass(StringRef Name) {
  for (const PassInfo &PI : allPasses())
    if (PI.Name == Name)
      return &PI;
  return nullptr;
}

bool isGlob(StringRef S) { return S.find_first_of("*?[") != StringRef::npos; }

} // namespace

std::string PassParam::accepted() const {
  switch (K) {
  case Bool:
    return "0 or 1";
  case Choice: {
    std::string S;
    for (size_t I = 0; I < Values.size(); ++I)
      S += (I == 0 ? "" : I + 1 == Values.size() ? " or " : ", ") + Values[I];
    return S;
  }
  case Int:
    break;
  }
  std::string S = "an integer from " + std::to_string(Min) + " to " +
                  std::to_string(Max);
  if (Step > 1)
    S = "a multiple of " + std::to_string(Step) + " from " +
        std::to_string(Min) + " to " + std::to_string(Max);
  return S;
}

Expected<std::vector<std::string>> selectPasses(ArrayRef<std::string> Items) {
  std::vector<std::string> Out;
  for (const std::string &Raw : Items) {
    StringRef Item = StringRef(Raw).trim();
    if (Item.empty())
      continue;
    bool Remove = Item.consume_front("-");
    Item = Item.trim();
    if (Item.empty())
      return fail("--passes: '-' names no pass");
    if (!Remove && !isGlob(Item)) {
      if (!findPass(Item)) {
        std::string Msg = "--passes: unknown pass '" + Item.str() + "'";
        std::string Best = nearest(Item, allPasses(),
                                   [](const PassInfo &P) -> StringRef {
                                     return P.Name;
                                   });
        if (!Best.empty())
          Msg += "; did you mean '" + Best + "'?";
        return fail(Msg + " (--list-passes lists them)");
      }
      Out.push_back(Item.str());
      continue;
    }
    auto Pat = GlobPattern::create(Item);
    if (!Pat)
      return fail("--passes: '" + Raw + "': " + toString(Pat.takeError()));
    if (Remove) {
      erase_if(Out, [&](const std::string &N) { return Pat->match(N); });
      // One that removes nothing is a typo more often than not.
      bool Exists = any_of(allPasses(), [&](const PassInfo &P) {
        return Pat->match(P.Name);
      });
      if (!Exists)
        return fail("--passes: '-" + Item.str() +
                    "' matches no pass (--list-passes lists them)");
      continue;
    }
    size_t Matched = 0;
    for (const PassInfo &PI : allPasses())
      if (Pat->match(PI.Name)) {
        ++Matched;
        if (!is_contained(Out, PI.Name))
          Out.push_back(PI.Name);
      }
    if (!Matched)
      return fail("--passes: '" + Item.str() +
                  "' matches no pass (--list-passes lists them)");
  }
  if (Out.empty())
    return fail("--passes selects no pass");
  return Out;
}

Error checkPassParams(const std::map<std::string, std::string> &Params) {
  for (const auto &[Name, Value] : Params) {
    std::string Arg = Name + "=" + Value;
    auto [PassName, Key] = StringRef(Name).split('.');
    if (Key.empty())
      return fail(Arg + ": not of the form <pass>.<key>=<value>");
    const PassInfo *PI = findPass(PassName);
    if (!PI)
      return fail(Arg + ": no pass named '" + PassName +
                  "' (passes: " + passNames() + ")");
    auto It = find_if(PI->Params,
                      [&, K = Key](const PassParam &P) { return P.Key == K; });
    if (It == PI->Params.end()) {
      if (PI->Params.empty())
        return fail(Arg + ": pass '" + PassName + "' takes no parameters");
      std::vector<StringRef> Keys;
      for (const PassParam &P : PI->Params)
        Keys.push_back(P.Key);
      std::string Msg = Arg + ": pass '" + PassName.str() +
                        "' has no parameter '" + Key.str() + "'";
      std::string Best = nearest(Key, Keys, [](StringRef S) { return S; });
      if (!Best.empty())
        Msg += "; did you mean '" + Best + "'?";
      return fail(Msg + " (its parameters: " + join(Keys, ", ") + ")");
    }
    const PassParam &P = *It;
    StringRef V = StringRef(Value).trim();
    bool OK;
    if (P.K == PassParam::Choice) {
      OK = is_contained(P.Values, V);
    } else {
      int64_t I;
      OK = !V.getAsInteger(10, I) && I >= P.Min && I <= P.Max &&
           (P.Step <= 1 || I % P.Step == 0);
    }
    if (!OK)
      return fail(Arg + ": " + PassName + "." + Key + " must be " +
                  P.accepted() + ", not '" + Value + "'");
  }
  return Error::success();
}

Error addPassParam(StringRef Arg, std::map<std::string, std::string> &Params) {
  auto [K, V] = Arg.split('=');
  K = K.trim();
  if (!K.contains('.') || !Arg.contains('=') || V.trim().empty())
    return fail("--pass-opt=" + Arg +
                ": not of the form <pass>.<key>=<value> (rewrite "
                "--list-pass-options lists them)");
  std::map<std::string, std::string> One = {{K.str(), V.trim().str()}};
  if (Error E = checkPassParams(One))
    return fail("--pass-opt=" + toString(std::move(E)));
  Params[K.str()] = V.trim().str();
  return Error::success();
}

} // namespace astra
