//===- LLMAgents.cpp ------------------------------------------------------===//
#include "astra/Agents/LLMAgents.h"
#include "astra/Agents/KernelSource.h"
#include "astra/LLM/CodeExtract.h"
#include "astra/Rewrite/Pass.h"
#include "astra/Support/Json.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace astra {

ToolSpec applyPassesTool() {
  ToolSpec T;
  T.Name = "apply_passes";
  std::string Names;
  for (const PassInfo &P : allPasses())
    Names += (Names.empty() ? "" : ", ") + P.Name;
  T.Description =
      "Apply deterministic, verified-safe source transforms from the "
      "clang-astra pass library to the kernel instead of writing code by "
      "hand. Passes: " +
      Names + ".";
  T.ParametersJson =
      R"({"type":"object","properties":{"passes":{"type":"array","items":{"type":"string"},"description":"pass names, applied in order"},"params":{"type":"object","additionalProperties":{"type":"string"},"description":"pass parameters such as vectorize.bytes=8 or unroll.factor=4"}},"required":["passes"]})";
  return T;
}

static std::string us(double V) {
  std::string S;
  raw_string_ostream(S) << format("%.2f us", V);
  return S;
}

std::string describeState(const PlanningState &S) {
  std::string Out;
  raw_string_ostream OS(Out);
  const KernelFacts &F = *S.Facts;
  if (S.Baseline) {
    OS << "Baseline profile (per shape set):\n";
    for (const ShapeTiming &T : S.Baseline->Timings) {
      OS << "- " << T.Shape << ": " << us(T.BaselineUs);
      if (T.BaselineRoofline >= 0)
        OS << format(", %.0f%% of the measured memory bandwidth",
                     T.BaselineRoofline * 100);
      OS << "\n";
    }
    if (S.Baseline->Registers)
      OS << "Registers per thread: " << *S.Baseline->Registers << "\n";
  }
  if (F.ArithmeticIntensity >= 0)
    OS << format("Arithmetic intensity: %.2f flop/byte\n", F.ArithmeticIntensity);
  if (!F.ApplicablePasses.empty()) {
    OS << "Library passes that would change this kernel:\n";
    for (const auto &[P, Sites] : F.ApplicablePasses) {
      OS << "- " << P;
      if (!Sites.empty())
        OS << ": " << Sites.front();
      OS << "\n";
    }
  }
  if (!F.RefusedPasses.empty()) {
    OS << "Passes that refused, and why:\n";
    for (const auto &[P, Why] : F.RefusedPasses)
      OS << "- " << P << ": " << (Why.empty() ? "" : Why.front()) << "\n";
  }
  if (S.History && !S.History->empty()) {
    OS << "Experiments so far (id, plan, outcome):\n";
    for (const Attempt &A : *S.History)
      if (A.Round)
        OS << "- " << A.C.Id << " [" << A.P.label() << "]: " << A.Outcome
           << "\n";
  }
  if (!S.Beam.empty()) {
    OS << "Best verified candidates: ";
    for (const auto &[C, E] : S.Beam)
      OS << C->Id << format(" (%.2fx) ", E->geomeanSpeedup());
    OS << "\n";
  }
  return Out;
}

static const char *CoderSystem =
    "You are an expert CUDA performance engineer. You rewrite one CUDA kernel "
    "to run faster on an NVIDIA H100 (sm_90) while computing exactly the same "
    "results for every input, every size (including sizes that are not a "
    "multiple of any vector width) and every pointer alignment the caller may "
    "pass. Keep the kernel's name, parameter list (you may add const or "
    "__restrict__), template parameters and launch contract: it will be "
    "launched with the same grid, block and dynamic shared memory as the "
    "original. Do not change host code. Answer with exactly one ```cuda code "
    "block holding the complete new kernel definition, preceded by any new "
    "__device__ helper functions it needs (give new helpers new names). "
    "Alternatively call the tool apply_passes to use the pass library. The "
    "result is compiled with clang's NVPTX backend and differentially tested "
    "against the original on the GPU with poisoned outputs, several random "
    "seeds and odd sizes: only a correct and faster kernel is kept.";

Expected<std::vector<ChatMessage>>
LLMCoder::rewritePrompt(const Plan &P, const Candidate &Parent,
                        const PlanningState &S) const {
  auto KT = findKernelText(Ctx.DeviceCommand, Parent.Files, Ctx.KernelName);
  if (!KT)
    return KT.takeError();
  std::string User;
  raw_string_ostream OS(User);
  OS << "Kernel to optimize: " << Ctx.KernelName << "\n\n```cuda\n";
  for (const std::string &H : KT->Helpers)
    OS << H << "\n\n";
  OS << KT->Definition << "\n```\n\n";
  if (!Ctx.SpecSummary.empty())
    OS << "Workload:\n" << Ctx.SpecSummary << "\n";
  OS << describeState(S) << "\n";
  // What went wrong before, so the model does not repeat it.
  if (S.History) {
    unsigned N = 0;
    for (auto It = S.History->rbegin(); It != S.History->rend() && N < 4; ++It)
      if (It->P.K == Plan::Kind::LLMRewrite && !It->E.verified() &&
          It->E.S != Evaluation::Status::NotRun) {
        OS << "An earlier rewrite (" << It->P.Idea << ") failed: "
           << It->Outcome << "\n";
        ++N;
      }
  }
  OS << "\nIdea to implement: " << (P.Idea.empty() ? "make it faster" : P.Idea)
     << "\n";
  return std::vector<ChatMessage>{ChatMessage::system(CoderSystem),
                                  ChatMessage::user(User)};
}

Expected<Candidate> LLMCoder::realize(const Plan &P, const Candidate &Parent,
                                      const PlanningState &S) {
  if (P.K == Plan::Kind::Passes)
    return Passes.realize(P, Parent, S);
  auto Msgs = rewritePrompt(P, Parent, S);
  if (!Msgs)
    return Msgs.takeError();
  ChatRequest Req;
  Req.Messages = std::move(*Msgs);
  Req.Tools = {applyPassesTool()};
  Req.Label = "rewrite-" + std::to_string(S.Round);
  Req.Sample = Sample++;
  auto Reply = Client.chat(Req);
  if (!Reply)
    return Reply.takeError();

  // The model chose the pass library.
  for (const ToolCall &Call : Reply->ToolCalls) {
    if (Call.Name != "apply_passes")
      return make_error<CandidateRejected>(
          Evaluation::Status::CoderFailed,
          "the model called an unknown tool '" + Call.Name + "'");
    rapidjson::Document D;
    if (Error E = Call.parseArguments(D))
      return make_error<CandidateRejected>(Evaluation::Status::CoderFailed,
                                           toString(std::move(E)));
    Plan PP;
    PP.ParentId = P.ParentId;
    PP.Rationale = "the model applied passes: " + P.Idea;
    if (!D.IsObject() || !D.HasMember("passes") || !D["passes"].IsArray())
      return make_error<CandidateRejected>(
          Evaluation::Status::CoderFailed,
          "apply_passes was called without a 'passes' array");
    for (const auto &V : D["passes"].GetArray()) {
      if (!V.IsString() || !createPass(V.GetString()))
        return make_error<CandidateRejected>(
            Evaluation::Status::CoderFailed,
            "apply_passes named an unknown pass");
      PP.Passes.push_back(V.GetString());
    }
    if (D.HasMember("params") && D["params"].IsObject())
      for (const auto &M : D["params"].GetObject())
        if (M.value.IsString())
          PP.Params[M.name.GetString()] = M.value.GetString();
    return Passes.realize(PP, Parent, S);
  }

  CodeExtractOptions XO;
  XO.MustContain = "__global__";
  auto Code = extractCode(Reply->Content, XO);
  if (!Code)
    return make_error<CandidateRejected>(Evaluation::Status::CoderFailed,
                                         toString(Code.takeError()));
  auto KT = findKernelText(Ctx.DeviceCommand, Parent.Files, Ctx.KernelName);
  if (!KT)
    return KT.takeError();
  auto Files = spliceKernel(*KT, Parent.Files, *Code);
  if (!Files)
    return Files.takeError();
  if (Error E = checkKernelContract(Ctx.DeviceCommand, *Files, Ctx.KernelName,
                                    Ctx.Original)) {
    std::string Msg = toString(std::move(E));
    return make_error<CandidateRejected>(
        StringRef(Msg).starts_with("the rewritten code does not compile")
            ? Evaluation::Status::CompileError
            : Evaluation::Status::ContractBroken,
        Msg);
  }
  Candidate C;
  C.Origin = "llm";
  C.Files = std::move(*Files);
  C.Lineage = Parent.isBaseline() ? std::vector<std::string>() : Parent.Lineage;
  C.Lineage.push_back("llm");
  C.Params = Parent.Params;
  // The launch sites are not rewritten.
  C.copyLaunch(Parent);
  C.Rationale = P.Idea;
  return C;
}

static const char *PlannerSystem =
    "You plan experiments that make one CUDA kernel faster on an NVIDIA H100. "
    "Each experiment is either a list of passes from the clang-astra pass "
    "library (deterministic source transforms) or a free-form rewrite "
    "described as an idea for a coder model. Every experiment is compiled, "
    "verified against the original on the GPU and timed; only correct and "
    "faster code is kept. Answer with one ```json block: {\"experiments\": "
    "[{\"kind\": \"passes\", \"passes\": [...], \"params\": {...}, "
    "\"parent\": \"baseline\", \"why\": \"...\"}, {\"kind\": \"rewrite\", "
    "\"idea\": \"...\", \"parent\": \"baseline\", \"why\": \"...\"}]}. "
    "\"parent\" is \"baseline\" or the id of an earlier verified candidate.";

Expected<std::vector<Plan>> LLMPlanner::parsePlans(StringRef Reply,
                                                   unsigned MaxPlans) const {
  std::string Json = Reply.str();
  for (const CodeBlock &B : findCodeBlocks(Reply))
    if (B.Language == "json" || StringRef(B.Code).ltrim().starts_with("{"))
      Json = B.Code;
  rapidjson::Document D;
  if (Error E = parseJsonWithComments(Json, "planner reply", D))
    return E;
  if (!D.IsObject() || !D.HasMember("experiments") ||
      !D["experiments"].IsArray())
    return createStringError(inconvertibleErrorCode(),
                             "the planner reply has no \"experiments\" array");
  std::vector<Plan> Plans;
  for (const auto &X : D["experiments"].GetArray()) {
    if (Plans.size() >= MaxPlans)
      break;
    if (!X.IsObject() || !X.HasMember("kind") || !X["kind"].IsString())
      continue;
    Plan P;
    std::string Kind = X["kind"].GetString();
    if (X.HasMember("parent") && X["parent"].IsString())
      P.ParentId = X["parent"].GetString();
    if (X.HasMember("why") && X["why"].IsString())
      P.Rationale = X["why"].GetString();
    if (Kind == "passes") {
      if (!X.HasMember("passes") || !X["passes"].IsArray())
        continue;
      bool Ok = true;
      for (const auto &V : X["passes"].GetArray()) {
        Ok &= V.IsString() && createPass(V.GetString()) &&
              (Allowed.empty() || is_contained(Allowed, V.GetString()));
        if (Ok)
          P.Passes.push_back(V.GetString());
      }
      if (!Ok || P.Passes.empty())
        continue;
      if (X.HasMember("params") && X["params"].IsObject())
        for (const auto &M : X["params"].GetObject())
          if (M.value.IsString())
            P.Params[M.name.GetString()] = M.value.GetString();
    } else if (Kind == "rewrite") {
      P.K = Plan::Kind::LLMRewrite;
      if (!X.HasMember("idea") || !X["idea"].IsString())
        continue;
      P.Idea = X["idea"].GetString();
    } else {
      continue;
    }
    Plans.push_back(std::move(P));
  }
  if (Plans.empty())
    return createStringError(inconvertibleErrorCode(),
                             "the planner reply names no usable experiment");
  return Plans;
}

std::vector<Plan> LLMPlanner::propose(const PlanningState &S,
                                      unsigned MaxPlans) {
  auto KT = findKernelText(Ctx.DeviceCommand, {}, Ctx.KernelName);
  std::string User;
  raw_string_ostream OS(User);
  OS << "Kernel: " << Ctx.KernelName << "\n";
  if (KT)
    OS << "\n```cuda\n" << KT->Definition << "\n```\n\n";
  else
    consumeError(KT.takeError());
  if (!Ctx.SpecSummary.empty())
    OS << "Workload:\n" << Ctx.SpecSummary << "\n";
  OS << describeState(S) << "\nRound " << S.Round << " of " << S.Rounds
     << ". Propose at most " << MaxPlans
     << " experiments, most promising first, none repeating one above.";
  ChatRequest Req;
  Req.Messages = {ChatMessage::system(PlannerSystem), ChatMessage::user(User)};
  Req.Label = "plan-" + std::to_string(S.Round);
  auto Reply = Client.chat(Req);
  Expected<std::vector<Plan>> Plans =
      Reply ? parsePlans(Reply->Content, MaxPlans)
            : Expected<std::vector<Plan>>(Reply.takeError());
  if (Plans)
    return std::move(*Plans);
  Notes.push_back("round " + std::to_string(S.Round) +
                  ": the planner model's answer could not be used (" +
                  toString(Plans.takeError()) +
                  "); the offline planner chose this round's experiments");
  return Fallback.propose(S, MaxPlans);
}

} // namespace astra
