//===- RunPlan.cpp - Which runs a verification makes ----------------------===//
#include "astra/Engine/RunPlan.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace astra {

StringRef runKindName(RunKind K) {
  switch (K) {
  case RunKind::Shape:
    return "shape";
  case RunKind::OddSizes:
    return "odd-sizes";
  case RunKind::Misaligned:
    return "misaligned";
  case RunKind::Values:
    return "values";
  case RunKind::LaunchSpace:
    return "launch-space";
  }
  return "shape";
}

int64_t oddSize(int64_t V) {
  if (V <= 1)
    return V;
  if (V < 8)
    return 5;
  return V - V % 8 + 5;
}

bool canMisalign(const ArgSpec &A) {
  return A.IsBuffer && A.alignment() <= dtypeSize(A.Type);
}

Expected<const ShapeSet *> smallestShapeSet(const KernelSpec &S) {
  if (S.Shapes.empty())
    return createStringError(inconvertibleErrorCode(),
                             specContext(S) + "the spec has no shape sets");
  const ShapeSet *Best = nullptr;
  uint64_t BestBytes = 0;
  for (const ShapeSet &Sh : S.Shapes) {
    auto Counts = bufferCounts(S, Sh.Vars);
    if (!Counts)
      return Counts.takeError();
    uint64_t Bytes = 0;
    for (const ArgSpec &A : S.Args)
      if (A.IsBuffer)
        Bytes += (*Counts)[A.Name] * dtypeSize(A.Type);
    if (!Best || Bytes < BestBytes) {
      Best = &Sh;
      BestBytes = Bytes;
    }
  }
  return Best;
}

/// The runs of \p Space's configurations, first seed each.
static void addLaunchSpace(std::vector<PlannedRun> &Runs,
                           ArrayRef<LaunchVariant> Space, uint64_t Seed) {
  for (const LaunchVariant &V : Space) {
    PlannedRun R;
    R.Name = V.Shape + "@" + V.Name;
    R.Shape = V.Shape;
    R.Kind = RunKind::LaunchSpace;
    R.Vars = V.Vars;
    R.Seeds = {Seed};
    R.Launch = V.Launch;
    R.CandidateLaunch = V.CandidateLaunch;
    Runs.push_back(std::move(R));
  }
}

Expected<std::vector<PlannedRun>> planRuns(const KernelSpec &S,
                                           ArrayRef<std::string> Shapes,
                                           ArrayRef<uint64_t> Seeds,
                                           bool Adversarial,
                                           ArrayRef<LaunchVariant> Space) {
  if (Seeds.empty())
    return createStringError(inconvertibleErrorCode(),
                             "no seeds to run (at least one is needed)");
  std::vector<PlannedRun> Runs;
  std::vector<const ShapeSet *> Chosen;
  if (Shapes.empty()) {
    for (const ShapeSet &Sh : S.Shapes)
      Chosen.push_back(&Sh);
  } else {
    for (const std::string &Name : Shapes) {
      const ShapeSet *Sh = S.shape(Name);
      if (!Sh) {
        std::vector<std::string> Known;
        for (const ShapeSet &K : S.Shapes)
          Known.push_back(K.Name);
        return createStringError(inconvertibleErrorCode(),
                                 specContext(S) + "no shape set '" + Name +
                                     "' (shape sets: " + join(Known, ", ") +
                                     ")");
      }
      Chosen.push_back(Sh);
    }
  }
  for (const ShapeSet *Sh : Chosen) {
    PlannedRun R;
    R.Name = Sh->Name;
    R.Shape = Sh->Name;
    R.Vars = Sh->Vars;
    R.Seeds.assign(Seeds.begin(), Seeds.end());
    Runs.push_back(std::move(R));
  }
  if (!Adversarial) {
    addLaunchSpace(Runs, Space, Seeds.front());
    return Runs;
  }

  auto Small = smallestShapeSet(S);
  if (!Small)
    return Small.takeError();
  const ShapeSet &Base = **Small;

  // Odd sizes.
  PlannedRun Odd;
  bool HaveOdd = false;
  if (!S.Adversarial.Vary.empty()) {
    Odd.Name = Base.Name + "+odd";
    Odd.Shape = Base.Name;
    Odd.Kind = RunKind::OddSizes;
    Odd.Vars = Base.Vars;
    Odd.Seeds.assign(Seeds.begin(), Seeds.end());
    for (const std::string &V : S.Adversarial.Vary) {
      auto It = Odd.Vars.find(V);
      if (It == Odd.Vars.end())
        return createStringError(inconvertibleErrorCode(),
                                 specContext(S) + "adversarial.vary names '" +
                                     V + "', which is not a variable of shape "
                                         "set '" +
                                     Base.Name + "'");
      if (!It->second.IsInt)
        return createStringError(inconvertibleErrorCode(),
                                 specContext(S) + "adversarial.vary: '" + V +
                                     "' is not an integer in shape set '" +
                                     Base.Name + "'");
      It->second = Value::ofInt(oddSize(It->second.I));
    }
    HaveOdd = true;
    Runs.push_back(Odd);
  }

  // Misaligned buffers.
  bool AnyMisalignable = false;
  for (const ArgSpec &A : S.Args)
    AnyMisalignable |= canMisalign(A);
  if (S.Adversarial.Misalign && AnyMisalignable) {
    PlannedRun M;
    M.Name = (HaveOdd ? Odd.Name : Base.Name) + "/misaligned";
    M.Shape = Base.Name;
    M.Kind = RunKind::Misaligned;
    M.Vars = HaveOdd ? Odd.Vars : Base.Vars;
    M.Seeds = {Seeds.front()};
    M.Misalign = true;
    Runs.push_back(std::move(M));
  }

  // Value ranges.
  bool AnyFloatInput = false;
  for (const ArgSpec &A : S.Args)
    AnyFloatInput |= A.IsBuffer && (A.R == Role::Input || A.R == Role::InOut) &&
                     isFloating(A.Type) && !A.Init.isStructural() &&
                     A.Init.Kind != "constant";
  if (S.Adversarial.Values && AnyFloatInput)
    for (ValueMode VM : {ValueMode::Large, ValueMode::Negative,
                         ValueMode::Zeros, ValueMode::Denormal}) {
      PlannedRun V;
      V.Name = Base.Name + "/values=" + valueModeName(VM).str();
      V.Shape = Base.Name;
      V.Kind = RunKind::Values;
      V.Vars = Base.Vars;
      V.Seeds = {Seeds.front()};
      V.Values = VM;
      Runs.push_back(std::move(V));
    }
  addLaunchSpace(Runs, Space, Seeds.front());
  return Runs;
}

void setAdversarialBase(VerifyJob &J, const ShapeSet &Base) {
  if (J.Spec.shape(Base.Name))
    return; // One of its own sets: planRuns weighs it already.
  if (J.Shapes.empty())
    for (const ShapeSet &S : J.Spec.Shapes)
      J.Shapes.push_back(S.Name);
  J.Spec.Shapes.push_back(Base);
}

} // namespace astra
