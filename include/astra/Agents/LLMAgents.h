//===- LLMAgents.h - Planner and coder backed by a chat model --*- C++ -*-===//
//
// LLM mode: the planner asks a model which experiments to run next (passes
// from the library, or a free-form rewrite with an idea), the coder asks a
// model to write the rewrite. The model may call the pass library as a tool
// instead of writing code. Whatever comes back is extracted, spliced into
// the file, parsed by Clang and checked against the kernel's contract before
// the Tester ever sees it. A planner reply that cannot be used falls back to
// the offline planner for that round, and says so.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_AGENTS_LLMAGENTS_H
#define ASTRA_AGENTS_LLMAGENTS_H

#include "astra/Agents/Agents.h"
#include "astra/Agents/OfflinePlanner.h"
#include "astra/Agents/PassCoder.h"
#include "astra/Frontend/KernelModel.h"
#include "astra/LLM/LLMClient.h"

#include <string>
#include <vector>

namespace astra {

/// What both LLM agents need to know about the kernel.
struct LLMKernelContext {
  std::vector<std::string> DeviceCommand;
  std::string KernelName;
  /// The original kernel's model (its Decl is not used: the AST is gone).
  KernelInfo Original;
  /// Shapes, launch configuration and buffers of the spec, in words.
  std::string SpecSummary;
};

/// The tool the models may call: apply_passes(passes, params).
ToolSpec applyPassesTool();

class LLMCoder : public Coder {
public:
  LLMCoder(LLMClient &Client, LLMKernelContext Ctx, PassCoder &Passes)
      : Client(Client), Ctx(std::move(Ctx)), Passes(Passes) {}
  llvm::StringRef name() const override { return "llm"; }
  llvm::Expected<Candidate> realize(const Plan &P, const Candidate &Parent,
                                    const PlanningState &S) override;
  bool readsHistory() const override { return true; }

  /// The messages sent for a rewrite (exposed for tests).
  llvm::Expected<std::vector<ChatMessage>>
  rewritePrompt(const Plan &P, const Candidate &Parent,
                const PlanningState &S) const;

private:
  LLMClient &Client;
  LLMKernelContext Ctx;
  PassCoder &Passes;
  unsigned Sample = 0;
};

class LLMPlanner : public Planner {
public:
  LLMPlanner(LLMClient &Client, LLMKernelContext Ctx,
             std::vector<std::string> AllowedPasses = {})
      : Client(Client), Ctx(std::move(Ctx)), Fallback(AllowedPasses),
        Allowed(std::move(AllowedPasses)) {}
  llvm::StringRef name() const override { return "llm"; }
  std::vector<Plan> propose(const PlanningState &S, unsigned MaxPlans) override;

  /// Parses the planner model's JSON answer into plans (exposed for tests).
  llvm::Expected<std::vector<Plan>> parsePlans(llvm::StringRef Reply,
                                               unsigned MaxPlans) const;
  /// Notes about fallbacks, for the report.
  const std::vector<std::string> &notes() const { return Notes; }

private:
  LLMClient &Client;
  LLMKernelContext Ctx;
  OfflinePlanner Fallback;
  std::vector<std::string> Allowed;
  std::vector<std::string> Notes;
};

/// A short text of the profile and history that prompts share.
std::string describeState(const PlanningState &S);

} // namespace astra

#endif
