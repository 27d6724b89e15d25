//===- OfflinePlanner.h - Rule-based planner over the pass library -*- C++ -*-===//
//
// The planner that needs no LLM. It ranks the passes that apply to the
// kernel by what the profile says limits it (memory- or compute-bound),
// proposes a strong combined pipeline and the best single passes first, then
// grows the best verified pipelines one pass at a time, tries parameter
// variants of what worked, and drops passes from a winning pipeline to see
// whether one of them costs time. Deterministic: the same facts and history
// give the same plans.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_AGENTS_OFFLINEPLANNER_H
#define ASTRA_AGENTS_OFFLINEPLANNER_H

#include "astra/Agents/Agents.h"

namespace astra {

class OfflinePlanner : public Planner {
public:
  /// \p Allowed restricts the passes the planner may use (empty: all).
  explicit OfflinePlanner(std::vector<std::string> Allowed = {})
      : Allowed(std::move(Allowed)) {}
  llvm::StringRef name() const override { return "offline"; }
  std::vector<Plan> propose(const PlanningState &S, unsigned MaxPlans) override;

  /// Applicable passes in the order this planner prefers them for a kernel
  /// that is \p MemoryBound (exposed for tests and the report).
  std::vector<std::string> rank(const KernelFacts &F, bool MemoryBound) const;

private:
  bool allowed(llvm::StringRef Pass) const;
  std::vector<std::string> Allowed;
};

/// Whether the baseline looks limited by memory traffic: far from the
/// roofline share a compute-bound kernel would show, or low arithmetic
/// intensity.
bool looksMemoryBound(const KernelFacts &F, const Evaluation &Baseline);

} // namespace astra

#endif
