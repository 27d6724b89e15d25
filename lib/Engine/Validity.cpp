//===- Validity.cpp - Checks for outputs that have many right answers -----===//
#include "astra/Engine/Validity.h"
#include "astra/Engine/Inputs.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <unordered_map>

using namespace llvm;

namespace astra {

std::vector<std::string> validityCheckedBuffers(const ValidityCheck &C) {
  if (C.Name == "neighbor_sample")
    return {C.param("out").str()};
  return {};
}

namespace {

Error checkError(const KernelSpec &S, const ValidityCheck &C,
                 const Twine &Msg) {
  return createStringError(inconvertibleErrorCode(),
                           specContext(S) + "check '" + C.Name + "': " + Msg);
}

Expected<const HostBuffer *>
bufferParam(const KernelSpec &S, const ValidityCheck &C, StringRef Param,
            const std::map<std::string, const HostBuffer *> &Buffers) {
  StringRef Name = C.param(Param);
  if (Name.empty())
    return checkError(S, C, "params." + Param + " is missing");
  auto It = Buffers.find(Name.str());
  if (It == Buffers.end() || !It->second)
    return checkError(S, C,
                      "params." + Param + " names '" + Name +
                          "', which is not a buffer argument of the kernel");
  if (isFloating(It->second->type()))
    return checkError(S, C,
                      "params." + Param + " ('" + Name +
                          "') must be an integer buffer, is " +
                          dtypeName(It->second->type()));
  return It->second;
}

/// An expression parameter: a scalar argument's name or an expression over
/// the shape variables.
Expected<int64_t> intParam(const KernelSpec &S, const ValidityCheck &C,
                           StringRef Param, const Env &Vars) {
  StringRef Text = C.param(Param);
  if (Text.empty())
    return checkError(S, C, "params." + Param + " is missing");
  if (const ArgSpec *A = S.arg(Text); A && !A->IsBuffer) {
    auto V = A->ScalarValue.evalInt(Vars);
    if (!V)
      return checkError(S, C, "params." + Param + ": " + toString(V.takeError()));
    return *V;
  }
  auto E = SpecExpr::parse(Text);
  if (!E)
    return checkError(S, C, "params." + Param + ": " + toString(E.takeError()));
  auto V = E->evalInt(Vars);
  if (!V)
    return checkError(S, C, "params." + Param + ": " + toString(V.takeError()));
  return *V;
}

Expected<ValidityResult>
neighborSample(const ValidityCheck &C, const KernelSpec &S, const Env &Vars,
               const std::map<std::string, const HostBuffer *> &Buffers) {
  auto RowPtr = bufferParam(S, C, "rowptr", Buffers);
  if (!RowPtr)
    return RowPtr.takeError();
  auto Col = bufferParam(S, C, "col", Buffers);
  if (!Col)
    return Col.takeError();
  auto Nodes = bufferParam(S, C, "nodes", Buffers);
  if (!Nodes)
    return Nodes.takeError();
  auto Out = bufferParam(S, C, "out", Buffers);
  if (!Out)
    return Out.takeError();
  auto Fanout = intParam(S, C, "fanout", Vars);
  if (!Fanout)
    return Fanout.takeError();
  const HostBuffer &RP = **RowPtr, &CB = **Col, &NB = **Nodes, &OB = **Out;
  std::string OutName = C.param("out").str();
  int64_t F = *Fanout;
  uint64_t N = NB.count();
  if (F < 0)
    return checkError(S, C, formatv("fanout is {0}", F));
  if (OB.count() < N * uint64_t(F))
    return checkError(S, C,
                      formatv("'{0}' holds {1} elements; {2} nodes x fanout "
                              "{3} need {4}",
                              OutName, OB.count(), N, F, N * uint64_t(F)));
  if (RP.count() == 0)
    return checkError(S, C, "the row pointer is empty");
  int64_t Rows = int64_t(RP.count()) - 1;

  ValidityResult R;
  auto Fail = [&](uint64_t Index, const Twine &Msg) {
    R.Ok = false;
    R.Buffer = OutName;
    R.Index = Index;
    R.Message = Msg.str();
    return R;
  };
  auto RowText = [&](uint64_t I) {
    std::string T = "[";
    for (int64_t J = 0; J < F; ++J) {
      if (J >= 16) {
        T += ", ...";
        break;
      }
      T += (J ? ", " : "") + std::to_string(OB.getInt(I * F + J));
    }
    return T + "]";
  };

  double PosSum = 0;
  uint64_t PosCount = 0;
  for (uint64_t I = 0; I < N; ++I) {
    int64_t V = NB.getInt(I);
    if (V < 0 || V >= Rows)
      return checkError(S, C,
                        formatv("nodes[{0}] = {1} is not a node of the graph "
                                "(0..{2})",
                                I, V, Rows - 1));
    int64_t Begin = RP.getInt(V), End = RP.getInt(V + 1);
    if (Begin < 0 || End < Begin || uint64_t(End) > CB.count())
      return checkError(S, C,
                        formatv("the row pointer is not a valid CSR at node {0}",
                                V));
    int64_t Deg = End - Begin;
    int64_t K = std::min(Deg, F);
    // Remaining multiplicity of each neighbour, and its first position.
    std::unordered_map<int64_t, std::pair<int64_t, int64_t>> Avail;
    for (int64_t E = Begin; E < End; ++E) {
      auto &Slot = Avail[CB.getInt(E)];
      if (Slot.first == 0 && Slot.second == 0)
        Slot.second = E - Begin;
      ++Slot.first;
    }
    std::string Where = formatv("{0} row {1} (node {2}, degree {3})", OutName,
                                I, V, Deg)
                            .str();
    for (int64_t J = 0; J < F; ++J) {
      uint64_t Idx = I * F + J;
      int64_t X = OB.getInt(Idx);
      if (J >= K) {
        if (X != -1)
          return Fail(Idx, formatv("{0}: slot {1} holds {2}, expected -1 after "
                                   "the {3} sampled neighbours; row is {4}",
                                   Where, J, X, K, RowText(I)));
        continue;
      }
      auto It = Avail.find(X);
      if (It == Avail.end())
        return Fail(Idx, formatv("{0}: slot {1} holds {2}, which is not a "
                                 "neighbour; row is {3}",
                                 Where, J, X, RowText(I)));
      if (It->second.first == 0)
        return Fail(Idx, formatv("{0}: neighbour {1} is sampled twice; row "
                                 "is {2}",
                                 Where, X, RowText(I)));
      --It->second.first;
      if (Deg > F) {
        PosSum += (double(It->second.second) + 0.5) / double(Deg);
        ++PosCount;
      }
    }
  }
  if (PosCount >= 200) {
    double Mean = PosSum / double(PosCount);
    double StdErr = std::sqrt(1.0 / 12.0 / double(PosCount));
    if (std::fabs(Mean - 0.5) > 6 * StdErr)
      return Fail(0, formatv("{0}: not uniform: the mean relative position of "
                             "the {1} neighbours sampled from rows with more "
                             "than fanout={2} neighbours is {3:f4}, expected "
                             "0.5 +- {4:f4}",
                             OutName, PosCount, F, Mean, 6 * StdErr));
  }
  return R;
}

} // namespace

Expected<ValidityResult>
runValidityCheck(const ValidityCheck &C, const KernelSpec &S, const Env &Vars,
                 const std::map<std::string, const HostBuffer *> &Buffers) {
  if (C.Name == "neighbor_sample")
    return neighborSample(C, S, Vars, Buffers);
  return checkError(S, C, "unknown validity check (known: neighbor_sample)");
}

} // namespace astra
