//===- Candidate.cpp ------------------------------------------------------===//
#include "astra/Agents/Candidate.h"
#include "astra/Agents/Agents.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"

#include <algorithm>
#include <cmath>

using namespace llvm;

namespace astra {

char CandidateRejected::ID = 0;

Planner::~Planner() = default;
Coder::~Coder() = default;
Tester::~Tester() = default;
Profiler::~Profiler() = default;

std::string Plan::label() const {
  if (K == Kind::LLMRewrite)
    return "llm: " + Idea;
  std::string L = join(Passes, "+");
  if (!Params.empty()) {
    L += "(";
    bool First = true;
    for (const auto &[Key, V] : Params) {
      L += (First ? "" : ",") + Key + "=" + V;
      First = false;
    }
    L += ")";
  }
  return L.empty() ? "(nothing)" : L;
}

std::string Candidate::contentHash() const {
  SHA256 H;
  for (const auto &[Path, Text] : Files) {
    H.update(Path);
    H.update(StringRef("\0", 1));
    H.update(Text);
    H.update(StringRef("\0", 1));
  }
  return toHex(H.final(), /*LowerCase=*/true);
}

double Evaluation::geomeanSpeedup() const {
  if (Timings.empty())
    return 0;
  double LogSum = 0;
  for (const ShapeTiming &T : Timings)
    LogSum += std::log(std::max(T.speedup(), 1e-9));
  return std::exp(LogSum / Timings.size());
}

std::optional<double> Evaluation::weightedSpeedup(
    const std::map<std::string, double> &Weights) const {
  if (Weights.empty())
    return std::nullopt;
  double Before = 0, After = 0;
  for (auto &[Set, W] : Weights) {
    if (W <= 0)
      continue;
    const ShapeTiming *T = nullptr;
    for (const ShapeTiming &X : Timings)
      if (X.Shape == Set)
        T = &X;
    if (!T || T->CandidateUs <= 0)
      return std::nullopt;
    Before += W * T->BaselineUs;
    After += W * T->CandidateUs;
  }
  if (After <= 0)
    return std::nullopt;
  return Before / After;
}

double Evaluation::minSpeedup() const {
  if (Timings.empty())
    return 0;
  double M = Timings.front().speedup();
  for (const ShapeTiming &T : Timings)
    M = std::min(M, T.speedup());
  return M;
}

const char *Evaluation::statusName(Status S) {
  switch (S) {
  case Status::NotRun:
    return "not run";
  case Status::CoderFailed:
    return "no code";
  case Status::ContractBroken:
    return "contract broken";
  case Status::CompileError:
    return "compile error";
  case Status::WrongResult:
    return "wrong result";
  case Status::RunError:
    return "run error";
  case Status::Verified:
    return "verified";
  }
  return "?";
}

} // namespace astra
