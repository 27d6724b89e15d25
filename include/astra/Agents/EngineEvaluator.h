//===- EngineEvaluator.h - Tester and Profiler on the real engine -*- C++ -*-===//
//
// The Tester and the Profiler of the optimization loop, backed by the
// engine: the NVPTX compile gate, then one self-contained verify/profile job
// (PTX, spec, seeds in; verdict and timings out) run in a child process, so
// a candidate that crashes or hangs the GPU cannot take the optimizer down.
// One job both verifies and times a candidate; the Profiler reads the timing
// of the Tester's last job for the same code, so each candidate costs one
// GPU process. Every call to test() draws fresh seeds from a sequence fixed
// by the run's seed, so a confirmation never reuses the seeds that let a
// candidate through the first time.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_AGENTS_ENGINEEVALUATOR_H
#define ASTRA_AGENTS_ENGINEEVALUATOR_H

#include "astra/Agents/Agents.h"
#include "astra/Compile/PtxCompiler.h"
#include "astra/Engine/Job.h"
#include "astra/Exec/Executor.h"
#include "astra/Frontend/CudaToolchain.h"
#include "astra/Frontend/LaunchFacts.h"
#include "astra/Spec/LaunchSpace.h"
#include "astra/Spec/LaunchTuning.h"
#include "astra/Spec/Spec.h"

#include "llvm/Support/ThreadPool.h"

#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace astra {

struct EngineOptions {
  uint64_t Seed = 1;
  unsigned SeedsPerShape = 5;
  unsigned Runs = 50;
  bool Adversarial = true;
  bool Sanitize = false;
  unsigned JobTimeoutSeconds = 600;
  bool UseCache = true;
  /// The PTX and PCH cache directory; empty: the default
  /// (ptxCacheDirectory). `optimize --no-cache` points it at a folder of
  /// the run's own, so the parses and compiles still share their PCHs.
  std::string CacheDir;
  /// The runtime-wrapper PCH of the kernel's parses (ParseOptions::RuntimePch)
  /// with the preamble PCH on top; empty: parses read the headers.
  std::string ParsePch;
  /// Time candidates and the baseline as nvcc compiles them, with these
  /// flags (the build's, CompileCommands::nvccFlags), after clang's compile
  /// gate: what is timed is what the build ships (docs/compile.md).
  std::optional<std::vector<std::string>> NvccTiming;
  /// Where each job's log lines go (null: nowhere).
  llvm::raw_ostream *Log = nullptr;
  /// Runs the jobs on workers (several GPUs, Slurm); null: one child
  /// process at a time on this machine (runJobIsolated).
  exec::Executor *Exec = nullptr;
  /// Candidates compiled at once by prepare() (0: one per core): a round's
  /// compiles run on the CPU while the GPU works on the candidates before
  /// them.
  unsigned CompileThreads = 0;
};

/// The label of shape set \p Shape of spec entry \p Kernel in timings:
/// "<__half> decode" when \p Several instantiations are tested together,
/// else "decode".
std::string shapeLabel(llvm::StringRef Kernel, llvm::StringRef Shape,
                       bool Several);
/// The same for \p S, one of the entries \p Specs tested together.
inline std::string shapeLabel(const std::vector<KernelSpec> &Specs,
                              const KernelSpec &S, llvm::StringRef Shape) {
  return shapeLabel(S.Kernel, Shape, Specs.size() > 1);
}

/// Tests one source kernel. A template kernel may have several spec entries
/// (one per instantiation, e.g. bf16 and fp16): a rewrite of the template
/// must be correct and faster for each, so every entry gets its own job and
/// the evaluation holds all of their shape sets ("<__half> decode").
class EngineEvaluator : public Tester, public Profiler {
public:
  EngineEvaluator(const CudaToolchain &TC, std::vector<std::string> Command,
                  std::vector<KernelSpec> Specs, EngineOptions Opts)
      : TC(TC), Command(std::move(Command)), Specs(std::move(Specs)),
        Opts(std::move(Opts)) {}

  ~EngineEvaluator() override;
  Evaluation test(const Candidate &C) override;
  /// Starts compiling \p Cs on CompileThreads threads. With an executor of
  /// several workers, waits for them, makes their jobs (seeds drawn in this
  /// order, as test() would draw them) and runs them all at once; else each
  /// job is made and run when test() asks for it (seeds drawn then, in the
  /// same order), so the GPU verifies one candidate while the next ones
  /// compile. test() reads their results in order.
  void prepare(llvm::ArrayRef<const Candidate *> Cs) override;
  void profile(const Candidate &C, Evaluation &E) override;
  void retime(const Candidate &C, Evaluation &E) override;
  Evaluation profileBaseline() override;

  /// The baseline's code when it is not the files on disk (the file after
  /// shape-split): every candidate is compared against it.
  void setBaseFiles(FileOverlay Files) { BaseFiles = std::move(Files); }
  /// Per spec entry, the shape set its adversarial runs start from when
  /// not its own smallest (setAdversarialBase): a shape-split clone's are
  /// the original's smallest set.
  void setAdversarialBases(std::vector<std::optional<ShapeSet>> Sets) {
    AdversarialBases = std::move(Sets);
  }

  /// The measured copy bandwidth of the device (0 until a job reported it).
  double copyBandwidthGBps() const { return CopyGBps; }
  const DeviceSummary &device() const { return Device; }

  /// The PTX entries of each spec entry's kernel in \p Files' version of the
  /// code: the candidate's mangled names may differ from the original's (a
  /// const added to a parameter changes them).
  llvm::Expected<std::vector<std::string>>
  entriesFor(const FileOverlay &Files,
             std::vector<KernelLaunchFacts> *Facts = nullptr) const;

private:
  /// A candidate's PTX, one image per spec entry, or why there is none.
  struct Compiled {
    std::vector<KernelImage> Images;
    std::optional<std::string> Error;
    double Seconds = 0;
  };
  /// The jobs of one evaluation, one per spec entry, with the results of
  /// those that ran; or the evaluation decided before any job could run.
  struct JobSet {
    std::optional<Evaluation> Decided;
    std::vector<VerifyJob> Jobs;
    std::vector<std::optional<JobResult>> Results;
    StageTimes Stages;
  };
  /// One job per spec entry for \p C against the original, combined:
  /// verified and timed (test), or only timed (retime).
  Evaluation runJobs(const Candidate &C, bool Verify);
  /// The jobs of \p C, from \p Done's PTX when given (else compiled now).
  JobSet makeJobs(const Candidate &C, bool Verify,
                  const Compiled *Done = nullptr);
  /// Runs what has not run yet, in order, and combines the results; stops
  /// at the first entry that fails.
  Evaluation finishJobs(JobSet &Set, bool WithCandidate);
  /// Runs \p Jobs at once on the executor, or one after another; their
  /// time goes into \p Into.
  std::vector<JobResult> execute(llvm::ArrayRef<VerifyJob> Jobs,
                                 StageTimes &Into);
  /// PTX of \p C with one entry per spec entry. For a candidate (not the
  /// baseline) it touches no member, so several may run at once.
  llvm::Expected<std::vector<KernelImage>> images(const Candidate &C);
  Compiled compile(const Candidate &C);
  std::vector<uint64_t> nextSeeds();
  /// The launch space of spec entry \p I (from the baseline's code), with
  /// the candidate's launch change applied.
  llvm::Expected<LaunchSpacePlan> launchSpace(size_t I,
                                              const LaunchChange &Change);
  std::string label(const KernelSpec &S, llvm::StringRef Shape) const {
    return shapeLabel(Specs, S, Shape);
  }

  const CudaToolchain &TC;
  std::vector<std::string> Command;
  std::vector<KernelSpec> Specs;
  EngineOptions Opts;
  std::optional<std::vector<KernelImage>> Baseline;
  FileOverlay BaseFiles;
  std::vector<std::optional<ShapeSet>> AdversarialBases;
  /// What the baseline's code shows of each spec entry's launches.
  std::vector<KernelLaunchFacts> BaseFacts;
  uint64_t Calls = 0;
  double CopyGBps = 0;
  DeviceSummary Device;
  /// Timings of the last job per candidate content hash.
  std::map<std::string, std::vector<ShapeTiming>> LastTimings;
  std::map<std::string, std::optional<unsigned>> LastRegisters;
  /// prepare()'s jobs per candidate content hash, until test() takes them.
  std::map<std::string, JobSet> Prepared;
  /// prepare()'s compiles per candidate content hash, until test() takes
  /// them (one GPU: the jobs are made then).
  std::map<std::string, std::shared_future<Compiled>> Compiling;
  /// Last: destroyed first, waiting for the compiles that use the members.
  std::unique_ptr<llvm::ThreadPoolInterface> Pool;
};

/// Maps a job's result onto the optimizer's Evaluation (exposed for tests).
Evaluation evaluationFromJob(const JobResult &R, bool WithCandidate);

} // namespace astra

#endif
