//===- LaunchSpace.cpp ----------------------------------------------------===//
#include "astra/Spec/LaunchSpace.h"
#include "astra/Frontend/LaunchFacts.h"
#include "astra/Spec/LaunchTuning.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <map>

using namespace llvm;

namespace astra {

std::vector<int64_t> defaultSweepBlocks() {
  return {32, 64, 100, 128, 256, 512, 1024};
}

namespace {

/// A launch site's expression (over the kernel's parameter names and `$B`)
/// as a spec expression: `$B` becomes \p Block, each parameter its value
/// in the spec.
std::optional<SpecExpr> specExprOf(StringRef SiteText, const KernelSpec &S,
                                   std::optional<int64_t> Block) {
  if (SiteText.empty())
    return std::nullopt;
  std::string T = SiteText.str();
  if (T.find("$B") != std::string::npos) {
    if (!Block)
      return std::nullopt;
    std::string R;
    for (size_t I = 0; I < T.size(); ++I) {
      if (T.compare(I, 2, "$B") == 0) {
        R += std::to_string(*Block);
        ++I;
        continue;
      }
      R += T[I];
    }
    T = std::move(R);
  }
  std::map<std::string, std::string> Subst;
  for (const ArgSpec &A : S.Args)
    // A pointer in a launch expression is not a size: no value to give.
    Subst[A.Name] = A.IsBuffer ? std::string("$pointer")
                               : "(" + A.ScalarValue.text() + ")";
  T = substituteNames(T, Subst);
  if (T.find('$') != std::string::npos)
    return std::nullopt;
  auto E = SpecExpr::parse(T);
  if (!E) {
    consumeError(E.takeError());
    return std::nullopt;
  }
  return std::move(*E);
}

/// The shape variables \p Text mentions once the parameters are replaced
/// by their spec values.
std::vector<std::string> shapeVariables(StringRef SiteText,
                                        const KernelSpec &S) {
  auto E = specExprOf(SiteText, S, int64_t(1));
  return E ? E->variables() : std::vector<std::string>{};
}

class Planner {
public:
  Planner(const KernelSpec &S, const KernelLaunchFacts &Facts,
          const ShapeSet &Base)
      : S(S), Facts(Facts), Base(Base) {}

  Expected<LaunchSpacePlan> run() {
    auto Own = S.Launch.resolve(Base.Vars);
    if (!Own)
      return Own.takeError();
    SpecOwn = *Own;
    for (const LaunchSiteFacts &L : Facts.Sites)
      site(L);
    if (!Facts.Hidden.empty()) {
      Plan.Complete = false;
      if (!S.LaunchSpaceBlocks.empty()) {
        hiddenFromSpec();
      } else {
        Plan.Notes.push_back("launches this file does not show are not "
                             "verified (" + Facts.Hidden +
                             "); \"launch_space\" in the spec names the "
                             "block sizes they use");
      }
    }
    return std::move(Plan);
  }

private:
  /// The block sizes a run-time block of \p L may take.
  std::vector<int64_t> sweep(const LaunchSiteFacts &L) const {
    std::vector<int64_t> Out;
    const IntFacts &X = L.Block.Dim[0];
    bool FromSpec = !S.LaunchSpaceBlocks.empty();
    for (int64_t B : FromSpec ? S.LaunchSpaceBlocks : defaultSweepBlocks()) {
      if (B > X.Max || B > MaxBlockThreads)
        continue;
      if (Facts.LaunchBoundsMax && B > Facts.LaunchBoundsMax)
        continue;
      if (B % X.MultipleOf != 0 || (X.PowerOfTwo && !isPowerOf2_64(B)))
        continue;
      Out.push_back(B);
    }
    return Out;
  }

  void site(const LaunchSiteFacts &L) {
    if (!L.Block.Readable) {
      Plan.Complete = false;
      Plan.Notes.push_back(L.where() + ": its block is in a configuration "
                                       "struct; verified at the spec's "
                                       "launch only");
      return;
    }
    if (auto C = L.Block.constant()) {
      variant(L, std::nullopt, {}, formatBlock(*C));
      return;
    }
    if (!L.FreeBlockVar.empty() &&
        StringRef(L.Exprs.Block[0]).contains("$B")) {
      // The caller may pick any size: the sweep samples them.
      Plan.Complete = false;
      for (int64_t B : sweep(L))
        variant(L, B, {}, "block=" + std::to_string(B));
      return;
    }
    // A block that follows the shape: vary the variable it follows.
    std::vector<std::string> Vars = shapeVariables(L.Exprs.Block[0], S);
    if (Vars.empty()) {
      Plan.Complete = false;
      Plan.Notes.push_back(
          L.where() + ": its block size (" + L.Block.unknown() +
          ") cannot be reproduced" +
          (L.Exprs.Why.empty() ? "" : " (" + L.Exprs.Why + ")") +
          "; verified at the spec's launch only");
      return;
    }
    // Each size is reached by making one variable smaller than the base
    // set's (a shorter row, fewer heads): shapes the program runs too, more
    // plausibly than larger ones, whose other variables may not allow them
    // (a rotary dimension over the head size). The base set's own block is
    // covered by the base run.
    auto BlockX = specExprOf(L.Exprs.Block[0], S, std::nullopt);
    auto Own = BlockX->evalInt(Base.Vars);
    if (!Own)
      consumeError(Own.takeError());
    for (int64_t B : sweep(L)) {
      if (Own && *Own == B)
        continue;
      for (const std::string &V : Vars) {
        auto It = Base.Vars.find(V);
        if (It == Base.Vars.end() || !It->second.IsInt)
          continue;
        std::optional<int64_t> At = valueGiving(*BlockX, V, B, It->second.I);
        if (!At)
          continue;
        if (variant(L, std::nullopt, {{V, *At}},
                    "block=" + std::to_string(B) + " (" + V + "=" +
                        std::to_string(*At) + ")") != Added::No)
          break;
      }
    }
  }

  /// The value of shape variable \p V from 1 to \p Max (B itself first) at
  /// which \p Block evaluates to \p B, the other variables as in the base
  /// set.
  std::optional<int64_t> valueGiving(const SpecExpr &Block, StringRef V,
                                     int64_t B, int64_t Max) const {
    auto Gives = [&](int64_t X) {
      Env E = Base.Vars;
      E[V.str()] = Value::ofInt(X);
      auto R = Block.evalInt(E);
      if (!R) {
        consumeError(R.takeError());
        return false;
      }
      return *R == B;
    };
    if (B <= Max && Gives(B))
      return B;
    for (int64_t X = 1; X <= std::min<int64_t>(Max, 1 << 16); ++X)
      if (Gives(X))
        return X;
    return std::nullopt;
  }

  static std::string formatBlock(const std::array<int64_t, 3> &D) {
    if (D[1] == 1 && D[2] == 1)
      return "block=" + std::to_string(D[0]);
    return "block=(" + std::to_string(D[0]) + ", " + std::to_string(D[1]) +
           ", " + std::to_string(D[2]) + ")";
  }

  /// The spec's expression for one field, made to follow a block size of
  /// \p B where it mentions the spec's own block size literal.
  std::optional<SpecExpr> specFallback(const SpecExpr &Field,
                                       std::optional<int64_t> B) const {
    if (!B || Field.empty())
      return Field;
    auto Lit = tunableLiteral();
    if (!Lit || !mentionsLiteral(Field.text(), *Lit))
      return Field;
    auto E = SpecExpr::parse(replaceLiterals(Field.text(), gridLiterals(*Lit, *B)));
    if (!E) {
      consumeError(E.takeError());
      return Field;
    }
    return std::move(*E);
  }

  /// The spec's block size literal, tunable or not: the one literal of
  /// launch.block x from 1 to 1024.
  std::optional<int64_t> tunableLiteral() const {
    KernelSpec T = S;
    T.LaunchIsTunable = true;
    auto L = tunableBlockLiteral(T);
    if (!L) {
      consumeError(L.takeError());
      return std::nullopt;
    }
    return *L;
  }

  /// What variant() did: added the configuration, found it covered already
  /// (the base run or another variant), or found it no launch at all.
  enum class Added { Yes, Covered, No };

  /// Adds the configuration of site \p L with run-time block \p B and the
  /// shape variables \p Set changed.
  Added variant(const LaunchSiteFacts &L, std::optional<int64_t> B,
                std::map<std::string, int64_t> Set, std::string Name) {
    LaunchVariant V;
    V.Shape = Base.Name;
    V.Vars = Base.Vars;
    for (auto &[K, X] : Set)
      V.Vars[K] = Value::ofInt(X);
    std::vector<std::string> Approx;
    for (unsigned I = 0; I < 3; ++I) {
      auto G = specExprOf(L.Exprs.Grid[I], S, B);
      if (!G) {
        G = specFallback(S.Launch.Grid[I], B);
        Approx.push_back("grid");
      }
      V.Launch.Grid[I] = *G;
      auto Bl = specExprOf(L.Exprs.Block[I], S, B);
      if (!Bl) {
        if (I == 0 && B)
          Bl = SpecExpr::constant(*B);
        else
          Bl = S.Launch.Block[I];
        Approx.push_back("block");
      }
      V.Launch.Block[I] = *Bl;
    }
    auto Sh = specExprOf(L.Exprs.Shmem, S, B);
    if (!Sh) {
      Sh = specFallback(S.Launch.Shmem, B);
      Approx.push_back("shared memory");
    }
    V.Launch.Shmem = *Sh;
    Approx.erase(std::unique(Approx.begin(), Approx.end()), Approx.end());
    if (!Approx.empty())
      V.Note = join(Approx, ", ") + " as in the spec (" + L.where() + ": " +
               (L.Exprs.Why.empty() ? std::string("not reproducible")
                                    : L.Exprs.Why) +
               ")";

    std::string Bad;
    auto R = V.Launch.resolve(V.Vars, &Bad);
    if (!R) {
      Plan.Notes.push_back(Name + " at " + L.where() + ": not run: " +
                           toString(R.takeError()));
      return Added::No;
    }
    // Every buffer of the spec must still have a size there.
    for (const ArgSpec &A : S.Args)
      if (A.IsBuffer) {
        auto C = A.Count.evalInt(V.Vars);
        if (!C || *C < 1) {
          if (!C)
            consumeError(C.takeError());
          Plan.Notes.push_back(Name + " at " + L.where() +
                               ": not run: buffer '" + A.Name +
                               "' has no elements there");
          return Added::No;
        }
      }
    if (Set.empty() && same(*R, SpecOwn))
      return Added::Covered; // The base run covers it.
    for (const auto &[Launch, Vars] : Seen)
      if (same(Launch, *R) && sameVars(Vars, V.Vars))
        return Added::Covered;
    Seen.push_back({*R, V.Vars});
    V.Name = std::move(Name);
    Plan.Variants.push_back(std::move(V));
    return Added::Yes;
  }

  /// Launches the file does not show, with the block sizes the spec names.
  void hiddenFromSpec() {
    LaunchSiteFacts L;
    L.Block.Readable = true;
    L.FreeBlockVar = "the block size";
    L.Exprs.Block[0] = "$B";
    L.Exprs.Why = "a launch this file does not show";
    for (int64_t B : S.LaunchSpaceBlocks)
      variant(L, B, {}, "block=" + std::to_string(B));
  }

  static bool sameVars(const Env &A, const Env &B) {
    if (A.size() != B.size())
      return false;
    for (auto I = A.begin(), J = B.begin(); I != A.end(); ++I, ++J)
      if (I->first != J->first || I->second.IsInt != J->second.IsInt ||
          I->second.I != J->second.I || I->second.D != J->second.D)
        return false;
    return true;
  }

  static bool same(const ResolvedLaunch &A, const ResolvedLaunch &B) {
    for (unsigned I = 0; I < 3; ++I)
      if (A.Grid[I] != B.Grid[I] || A.Block[I] != B.Block[I])
        return false;
    return A.Shmem == B.Shmem;
  }

  const KernelSpec &S;
  const KernelLaunchFacts &Facts;
  const ShapeSet &Base;
  ResolvedLaunch SpecOwn;
  LaunchSpacePlan Plan;
  std::vector<std::pair<ResolvedLaunch, Env>> Seen;
};

} // namespace

Error applyLaunchChange(std::vector<LaunchVariant> &Variants,
                        const KernelSpec &S, const LaunchChange &C) {
  for (LaunchVariant &V : Variants) {
    KernelSpec At = S;
    At.Launch = V.Launch;
    auto L = changedLaunch(At, C);
    if (!L)
      return createStringError(inconvertibleErrorCode(),
                               "the candidate's launch at " + V.Name + ": " +
                                   toString(L.takeError()));
    V.CandidateLaunch = std::move(*L);
  }
  return Error::success();
}

Expected<LaunchSpacePlan> jobLaunchSpace(const KernelSpec &S,
                                         const KernelLaunchFacts &Facts,
                                         const ShapeSet *Base,
                                         const LaunchChange *Change) {
  if (!Base)
    return LaunchSpacePlan();
  auto P = planLaunchSpace(S, Facts, *Base);
  if (!P)
    return P.takeError();
  if (Change)
    if (Error E = applyLaunchChange(P->Variants, S, *Change))
      return std::move(E);
  return P;
}

Expected<LaunchSpacePlan> planLaunchSpace(const KernelSpec &S,
                                          const KernelLaunchFacts &Facts,
                                          const ShapeSet &Base) {
  return Planner(S, Facts, Base).run();
}

} // namespace astra
