//===- astra-inputs-bench.cpp - Time the host's input generation ----------===//
//
// Verification makes every seed's inputs on the host; on the graph and
// KernelBench sets that took as long as the device's work (seconds a seed).
// This benchmark makes one shape set's inputs for a few seeds twice in the
// same run, on one core and then on all, prints both times and their ratio,
// and fails when the two differ in a single byte: the generators promise
// values that depend on the seed alone, never on the number of threads.
//
//   astra-inputs-bench <spec.astra.json> <kernel> <shape> [--seeds N]
//
//===----------------------------------------------------------------------===//

#include "astra/Engine/Inputs.h"
#include "astra/Engine/RunPlan.h"
#include "astra/Spec/Spec.h"
#include "astra/Support/Parallel.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <thread>

using namespace astra;
using namespace llvm;

static cl::opt<std::string> SpecPath(cl::Positional, cl::Required,
                                     cl::desc("<spec.astra.json>"));
static cl::opt<std::string> KernelName(cl::Positional, cl::Required,
                                       cl::desc("<kernel>"));
static cl::opt<std::string> ShapeName(cl::Positional, cl::Required,
                                      cl::desc("<shape>"));
static cl::opt<unsigned> Seeds("seeds", cl::init(3),
                               cl::desc("seeds to make (default 3)"));

using Inputs = std::map<std::string, HostBuffer>;

/// Makes seed \p Seed's inputs on at most \p Threads cores (0: all), adding
/// the seconds taken to \p Seconds.
static Expected<Inputs> timed(const KernelSpec &K, const Env &Vars,
                              uint64_t Seed, unsigned Threads,
                              double &Seconds) {
  ParallelThreadLimit = Threads;
  auto T0 = std::chrono::steady_clock::now();
  auto In = generateInputs(K, Vars, Seed);
  Seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                           T0)
                 .count();
  ParallelThreadLimit = 0;
  return In;
}

int main(int Argc, char **Argv) {
  cl::ParseCommandLineOptions(Argc, Argv,
                              "times a shape set's input generation on one "
                              "core and on all, in the same run\n");
  auto Fail = [](Error E) {
    errs() << "astra-inputs-bench: error: " << toString(std::move(E)) << "\n";
    return 1;
  };
  auto Specs = loadSpecFile(SpecPath);
  if (!Specs)
    return Fail(Specs.takeError());
  const KernelSpec *K = Specs->find(KernelName);
  if (!K)
    return Fail(createStringError(inconvertibleErrorCode(),
                                  "%s has no kernel '%s'", SpecPath.c_str(),
                                  KernelName.c_str()));
  std::vector<uint64_t> SeedList;
  for (unsigned I = 1; I <= Seeds; ++I)
    SeedList.push_back(I);
  auto Runs = planRuns(*K, {ShapeName.getValue()}, SeedList, false);
  if (!Runs)
    return Fail(Runs.takeError());
  const PlannedRun &Run = Runs->front();
  unsigned Cores = std::max(1u, std::thread::hardware_concurrency());
  outs() << "astra-inputs-bench: " << K->Kernel << " " << ShapeName << ", "
         << Run.Seeds.size() << " seeds, 1 core against " << Cores
         << " cores\n";
  double One = 0, All = 0;
  bool Same = true;
  for (uint64_t Seed : Run.Seeds) {
    double One0 = One, All0 = All;
    auto A = timed(*K, Run.Vars, Seed, 1, One);
    if (!A)
      return Fail(A.takeError());
    auto B = timed(*K, Run.Vars, Seed, 0, All);
    if (!B)
      return Fail(B.takeError());
    uint64_t Bytes = 0;
    for (auto &[Name, Buf] : *A) {
      Bytes += Buf.byteSize();
      if (B->at(Name) != Buf) {
        errs() << "astra-inputs-bench: error: seed " << Seed << ": buffer '"
               << Name << "' differs between 1 core and " << Cores
               << " cores\n";
        Same = false;
      }
    }
    outs() << formatv("seed {0}: {1} MB, 1 core {2:f3} s, {3} cores {4:f3} s\n",
                      Seed, Bytes / 1000000, One - One0, Cores, All - All0);
  }
  outs() << formatv("total: 1 core {0:f3} s, {1} cores {2:f3} s, ratio "
                    "{3:f2}x; bytes identical: {4}\n",
                    One, Cores, All, All > 0 ? One / All : 0.0,
                    Same ? "yes" : "no");
  return Same ? 0 : 1;
}
