//===- Job.h - The self-contained verify/profile job -----------*- C++ -*-===//
//
// A VerifyJob holds everything needed to test and time one candidate on one
// GPU with no access to the user's sources: the PTX and entry names of the
// baseline and the candidate, the kernel's spec, the shape sets and seeds,
// and the options. A JobResult holds the verdict with its evidence. Both
// serialize to JSON and back, so a job can run in a child process
// (runJobIsolated), on another machine, or later under a batch scheduler;
// docs/engine.md describes the format.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_ENGINE_JOB_H
#define ASTRA_ENGINE_JOB_H

#include "astra/Spec/LaunchSpace.h"
#include "astra/Spec/Spec.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace astra {

/// One kernel to run: PTX text and the .entry to launch.
struct KernelImage {
  std::string Ptx;
  std::string Entry;
  /// Where it came from, for messages ("silu.cu", "candidate 3").
  std::string Source;
  /// The same code as built by the toolkit's ptxas with the build's own
  /// flags (-Xptxas, -maxrregcount): what an nvcc build ships. Loaded in
  /// place of the PTX when set; the PTX still names entries and parameters.
  std::string Cubin;
  /// What the driver loads.
  const std::string &code() const { return Cubin.empty() ? Ptx : Cubin; }
};

struct JobOptions {
  /// Run the differential test (baseline vs candidate on every seed).
  bool Verify = true;
  /// Add the adversarial runs (odd sizes, misaligned buffers, value ranges)
  /// the spec allows.
  bool Adversarial = true;
  /// Time the kernels (baseline alone when there is no candidate).
  bool Profile = false;
  unsigned Runs = 50;  ///< Timed runs per kernel and shape set.
  unsigned Warmup = 5; ///< Untimed runs before them.
  /// The untimed runs go on until they have taken at least this long: a GPU
  /// that sat idle while the host worked runs at idle clocks, and a few
  /// launches of a microsecond kernel do not raise them.
  unsigned WarmupMs = 50;
  /// Flush L2 before every timed run (a memset of twice the L2 size).
  bool FlushL2 = true;
  /// Also run the candidate under compute-sanitizer memcheck and racecheck.
  bool Sanitize = false;
  /// Also collect a few Nsight Compute metrics.
  bool Ncu = false;
  /// A kernel that has not finished after this many seconds is a hang.
  double KernelTimeout = 10;
  int Device = 0;
  /// Cache directory for the measured copy bandwidth (empty: the default
  /// cache directory, as for the PTX cache).
  std::string CacheDir;
  /// Internal, for the child runs of --sanitize and --ncu: run only the
  /// candidate (the baseline when there is none), once per run, no checks.
  bool CandidateOnly = false;
};

struct VerifyJob {
  KernelImage Baseline;
  std::optional<KernelImage> Candidate;
  /// A launch configuration for the candidate when it differs from the
  /// spec's (a rewrite that changed the block size).
  std::optional<LaunchSpec> CandidateLaunch;
  KernelSpec Spec;
  /// The other launches the program can make (astra/Spec/LaunchSpace.h),
  /// each verified on its own run; each carries the candidate's launch
  /// there when CandidateLaunch is set.
  std::vector<LaunchVariant> LaunchSpace;
  /// What the job knowingly leaves unchecked (launches it cannot
  /// reproduce), passed on to the result's warnings.
  std::vector<std::string> Notes;
  /// Shape sets to run, by name; empty: all of the spec's.
  std::vector<std::string> Shapes;
  /// Seeds of the input generators; every shape set runs each of them.
  std::vector<uint64_t> Seeds;
  JobOptions Options;
};

enum class Verdict { Pass, Fail, Error };
llvm::StringRef verdictName(Verdict V);

/// The evidence of a failure.
struct FailureInfo {
  /// mismatch, unwritten, input-modified, out-of-bounds, nondeterministic,
  /// validity, crash, timeout, launch-error, sanitizer, changed-when-timed,
  /// device-launch.
  std::string Kind;
  std::string Buffer;
  uint64_t Index = 0;
  std::string Expected, Actual;
  std::optional<uint64_t> Seed;
  /// One line that says it all, e.g. "out[1023]: expected 0.5, got nan
  /// (0x7fffdead): not written (still holds the poison pattern); ...".
  std::string Message;
};

struct TimingStats {
  unsigned Runs = 0;
  double MedianUs = 0, P10Us = 0, P90Us = 0, MadUs = 0, MinUs = 0, MeanUs = 0;
};

/// Computes the statistics of \p SamplesUs (percentiles interpolate
/// linearly between order statistics, as numpy does).
TimingStats computeStats(std::vector<double> SamplesUs);

struct TimingResult {
  TimingStats Baseline;
  std::optional<TimingStats> Candidate;
  int64_t Bytes = 0;
  std::optional<double> Flops;
  double BaselineGBps = 0, CandidateGBps = 0;
  /// The device's measured copy bandwidth (read + write), GB/s; 0 unknown.
  double RooflineGBps = 0;
  /// GB/s over RooflineGBps; negative when unknown.
  double BaselineRoofline = -1, CandidateRoofline = -1;
  /// Baseline median over candidate median.
  std::optional<double> Speedup;
};

/// One planned run (a shape set or an adversarial variant).
struct RunResult {
  std::string Name, Shape, Kind;
  Env Vars; ///< The shape variables the run used.
  std::vector<uint64_t> SeedsRun;
  Verdict V = Verdict::Pass;
  double MaxAbsErr = 0, MaxRelErr = 0;
  std::optional<FailureInfo> Failure;
  std::vector<std::string> Warnings;
  std::optional<TimingResult> Timing;
  /// The error is the baseline's own (not serialized: the verifier decides
  /// with it whether a launch-space run was a launch the program can make).
  bool BaselineError = false;
};

struct DeviceSummary {
  std::string Name, Driver;
  int SmCount = 0, CcMajor = 0, CcMinor = 0;
  uint64_t L2Bytes = 0, MemoryBytes = 0;
};

struct KernelResourceInfo {
  int Registers = 0, LocalBytes = 0, SharedBytes = 0, ConstBytes = 0,
      MaxThreadsPerBlock = 0;
};

struct JobResult {
  Verdict V = Verdict::Error;
  /// Why the verdict is what it is (the first failure's message, or the
  /// error), empty on pass.
  std::string Reason;
  /// The failure kind of the first failure (FailureInfo::Kind) or "error".
  std::string Kind;
  DeviceSummary Device;
  std::optional<KernelResourceInfo> BaselineResources, CandidateResources;
  std::vector<RunResult> Runs;
  std::vector<std::string> Warnings;
  std::vector<uint64_t> Seeds;
  double CopyBandwidthGBps = 0;
  /// Where the job's own time went, in wall seconds from runJob's start:
  /// the CUDA context, the modules' loads (the driver's JIT of the PTX and
  /// the verifier's kernels), the differential test's runs and the timing
  /// runs (with the copy bandwidth). What a caller measures beyond their
  /// sum is the process's start and exit.
  struct Phases {
    double Context = 0, Load = 0, Verify = 0, Profile = 0;
    double total() const { return Context + Load + Verify + Profile; }
  } Seconds;
  /// Nsight Compute metrics per kernel ("baseline"/"candidate") and name.
  std::map<std::string, std::map<std::string, std::string>> NcuMetrics;
  /// Not serialized: the CUDA context can no longer be used (a kernel
  /// crashed it or is still running); the process should exit.
  bool ContextLost = false;

  bool passed() const { return V == Verdict::Pass; }
};

std::string writeJobJson(const VerifyJob &J);
/// Parses a job; errors name \p Path and the field ("job.json: options.runs:
/// expected a positive integer").
llvm::Expected<VerifyJob> parseJobJson(llvm::StringRef Text,
                                       llvm::StringRef Path);

std::string writeResultJson(const JobResult &R);
llvm::Expected<JobResult> parseResultJson(llvm::StringRef Text,
                                          llvm::StringRef Path);

/// A result with verdict Error and \p Reason (for failures before or
/// outside the run).
JobResult errorResult(llvm::StringRef Reason);

} // namespace astra

#endif
