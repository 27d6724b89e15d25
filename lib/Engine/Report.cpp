//===- Report.cpp - Job results as text for people ------------------------===//
#include "astra/Engine/Report.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace astra {

static void printHeader(raw_ostream &OS, StringRef What, const VerifyJob &J,
                        const JobResult &R) {
  OS << What << " '" << J.Spec.Kernel << "'";
  if (!R.Device.Name.empty())
    OS << " on " << R.Device.Name << " (driver " << R.Device.Driver << ")";
  OS << "\n";
  auto Kernel = [&](StringRef Role, const KernelImage &K,
                    const std::optional<KernelResourceInfo> &Res) {
    OS << "  " << Role << ": " << K.Source << " (" << K.Entry << ")";
    if (Res)
      OS << formatv(", {0} registers, {1} B local, {2} B static shared",
                    Res->Registers, Res->LocalBytes, Res->SharedBytes);
    OS << "\n";
  };
  Kernel("baseline ", J.Baseline, R.BaselineResources);
  if (J.Candidate)
    Kernel("candidate", *J.Candidate, R.CandidateResources);
}

static std::string runLabel(const RunResult &Run) {
  std::string L = Run.Name;
  if (Run.Kind == "odd-sizes" || Run.Kind == "misaligned") {
    std::vector<std::string> Vs;
    for (auto &[K, V] : Run.Vars)
      Vs.push_back(K + "=" + V.str());
    L += " (" + join(Vs, ", ") + ")";
  }
  return L;
}

static void printFinal(raw_ostream &OS, const JobResult &R, StringRef PassMsg) {
  switch (R.V) {
  case Verdict::Pass:
    OS << "PASS: " << PassMsg << "\n";
    break;
  case Verdict::Fail:
    OS << "FAIL (" << (R.Kind.empty() ? "fail" : R.Kind) << "): " << R.Reason
       << "\n";
    break;
  case Verdict::Error:
    OS << "ERROR: " << R.Reason << "\n";
    break;
  }
}

void printVerifyReport(raw_ostream &OS, const VerifyJob &J, const JobResult &R) {
  printHeader(OS, "verify", J, R);
  if (!J.Seeds.empty()) {
    std::vector<std::string> S;
    for (uint64_t X : J.Seeds)
      S.push_back(std::to_string(X));
    OS << "  seeds: " << join(S, ", ") << "\n";
  }
  for (const RunResult &Run : R.Runs) {
    OS << "  " << (Run.V == Verdict::Pass   ? "PASS "
                   : Run.V == Verdict::Fail ? "FAIL "
                                            : "ERROR")
       << " " << runLabel(Run) << ": ";
    if (Run.V == Verdict::Pass)
      OS << formatv("{0} seed{1}, max abs error {2:e2}, max rel error {3:e2}",
                    Run.SeedsRun.size(), Run.SeedsRun.size() == 1 ? "" : "s",
                    Run.MaxAbsErr, Run.MaxRelErr);
    else if (Run.Failure)
      OS << Run.Failure->Message;
    OS << "\n";
    for (const std::string &W : Run.Warnings)
      OS << "        warning: " << W << "\n";
  }
  for (const std::string &W : R.Warnings)
    OS << "  warning: " << W << "\n";
  if (R.Kind == "crash" || R.Kind == "timeout")
    OS << "  (a crashed or hung kernel leaves the CUDA context unusable: the "
          "later runs were not made)\n";
  printFinal(OS, R,
             formatv("the candidate matches the baseline on all {0} runs",
                     R.Runs.size())
                 .str());
  // Replaying a failure needs its shape set and seed.
  for (const RunResult &Run : R.Runs)
    if (Run.V != Verdict::Pass && Run.Failure && Run.Failure->Seed) {
      OS << "replay: --shape " << Run.Shape << " --seed " << *Run.Failure->Seed
         << "\n";
      break;
    }
}

static void printStats(raw_ostream &OS, StringRef Who, const TimingStats &T,
                       double GBps, double Roofline, double CopyGBps) {
  OS << formatv("{0} {1:f2} us (p10 {2:f2}, p90 {3:f2}, MAD {4:f2}, {5} runs)",
                Who, T.MedianUs, T.P10Us, T.P90Us, T.MadUs, T.Runs);
  if (GBps > 0)
    OS << formatv(", {0:f1} GB/s", GBps);
  if (Roofline >= 0)
    OS << formatv(", {0:f1}% of the {1:f1} GB/s copy bandwidth",
                  Roofline * 100, CopyGBps);
}

void printProfileReport(raw_ostream &OS, const VerifyJob &J,
                        const JobResult &R) {
  printHeader(OS, "profile", J, R);
  if (R.CopyBandwidthGBps > 0)
    OS << formatv("  copy bandwidth: {0:f1} GB/s (device-to-device copy, read "
                  "+ write)\n",
                  R.CopyBandwidthGBps);
  for (const RunResult &Run : R.Runs) {
    if (!Run.Timing) {
      if (Run.Failure)
        OS << "  " << Run.Name << ": " << Run.Failure->Message << "\n";
      continue;
    }
    const TimingResult &T = *Run.Timing;
    OS << "  " << Run.Name << ": ";
    printStats(OS, "baseline", T.Baseline, T.BaselineGBps, T.BaselineRoofline,
               T.RooflineGBps);
    OS << "\n";
    if (T.Candidate) {
      OS << "  " << std::string(Run.Name.size(), ' ') << "  ";
      printStats(OS, "candidate", *T.Candidate, T.CandidateGBps,
                 T.CandidateRoofline, T.RooflineGBps);
      if (T.Speedup)
        OS << formatv(", speedup {0:f3}x", *T.Speedup);
      OS << "\n";
    }
    if (T.Flops && T.Baseline.MedianUs > 0)
      OS << formatv("  {0}  {1:f1} GFLOP/s (baseline)\n",
                    std::string(Run.Name.size(), ' '),
                    *T.Flops / (T.Baseline.MedianUs * 1e3));
    if (Run.Failure && Run.V != Verdict::Pass)
      OS << "  " << std::string(Run.Name.size(), ' ')
         << "  " << Run.Failure->Message << "\n";
    for (const std::string &W : Run.Warnings)
      OS << "        warning: " << W << "\n";
  }
  for (auto &[Kernel, M] : R.NcuMetrics) {
    OS << "  ncu " << Kernel << ":";
    for (auto &[K, V] : M)
      OS << " " << K << "=" << V << ";";
    OS << "\n";
  }
  for (const std::string &W : R.Warnings)
    OS << "  warning: " << W << "\n";
  printFinal(OS, R, "timed every shape set");
}

} // namespace astra
