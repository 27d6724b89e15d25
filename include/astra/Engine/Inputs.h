//===- Inputs.h - Seeded input generation from specs -----------*- C++ -*-===//
//
// Every input byte is a pure function of (seed, shape set, argument name,
// spec): `--seed S` replays a failure exactly, on any machine. The PRNGs are
// fixed and documented (docs/engine.md):
//
//   stream seed = splitmix64 chain over (seed, FNV-1a-64(argument name))
//
// The value distributions (normal, uniform, randint and the adversarial
// value modes) are counter-based (CounterRng.h: Philox-4x32-10 keyed by the
// stream seed, counted by the element index), so they can be made on the
// GPU, in place, with the bytes the host would make. The generators that
// need host logic (sorted, permutation, indices_into, CSR structure, arange,
// constant) use:
//
//   generator   = xoshiro256** seeded from the stream seed by splitmix64
//   uniform     = (next() >> 11) * 2^-53                     in [0, 1)
//   normal      = Marsaglia's polar method, with our own log() so the bits
//                 do not depend on the host's libm
//   randint     = rejection sampling (no modulo bias)
//
// Values are computed in double and then rounded to the argument's dtype
// (round-to-nearest-even).
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_ENGINE_INPUTS_H
#define ASTRA_ENGINE_INPUTS_H

#include "astra/Engine/CounterRng.h"
#include "astra/Engine/HostBuffer.h"
#include "astra/Spec/Spec.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <future>
#include <map>
#include <string>
#include <vector>

namespace astra {

uint64_t splitmix64(uint64_t &State);
/// FNV-1a 64-bit hash of \p S (stable across machines and builds).
uint64_t fnv1a64(llvm::StringRef S);
/// The seed of the stream for \p Salt under \p Seed.
uint64_t deriveSeed(uint64_t Seed, llvm::StringRef Salt);

/// xoshiro256** (Blackman and Vigna), seeded by splitmix64.
class Rng {
public:
  explicit Rng(uint64_t Seed);
  uint64_t next();
  /// Uniform in [0, 1) with 53 random bits.
  double uniform();
  /// Uniform integer in [Lo, Hi] (inclusive), unbiased.
  int64_t range(int64_t Lo, int64_t Hi);
  /// Standard normal (Marsaglia polar method).
  double normal();

private:
  uint64_t S[4];
  bool HaveSpare = false;
  double Spare = 0;
};

/// Natural logarithm in plain double arithmetic (no libm), so generated
/// values are bit-identical across hosts; accurate to a few ulp.
double portableLog(double X);

/// Extra value ranges the adversarial runs substitute for floating-point
/// inputs whose generator is neither structural (Generator::isStructural:
/// indices, CSR structure) nor a constant (a constant is a deliberate value,
/// such as a weight of one).
enum class ValueMode {
  Spec,     ///< What the spec says.
  Large,    ///< normal(0, L) with L large for the dtype (see docs).
  Negative, ///< -|spec value|.
  Zeros,    ///< All zeros.
  Denormal, ///< Values in the dtype's subnormal range, both signs.
  /// The program's own bytes (the spec's "capture") for the buffers whose
  /// init is captured(...) and whose shape set has them (the set whose
  /// variables are the run's); the spec's generators for the rest.
  Captured,
};
llvm::StringRef valueModeName(ValueMode M);

/// Generates the initial values of every input and in-out buffer of \p S
/// for the shape variables \p Vars. Buffers are keyed by argument name;
/// outputs and scratch buffers are not generated (they are poisoned).
/// Errors name the spec file, the kernel, the argument and the problem, e.g.
///   "k.astra.json: kernel 'gather': args.idx.init: csr_colind: ..."
llvm::Expected<std::map<std::string, HostBuffer>>
generateInputs(const KernelSpec &S, const Env &Vars, uint64_t Seed,
               ValueMode Mode = ValueMode::Spec);

/// Fills \p B (of P.Count elements) with the values recipe \p P gives, on
/// all cores: the bytes the device's astra_generate makes, whatever the
/// number of cores.
void generateOnHost(const crng::GenParams &P, HostBuffer &B);

/// One seed's inputs: the buffers made on the host, and the recipes of
/// those whose values the GPU makes in place (planInputs).
class InputSet {
public:
  std::map<std::string, HostBuffer> Host;
  std::map<std::string, crng::GenParams> Device;

  /// Input \p Name on the host; one the device makes is made here from its
  /// recipe on first use (the same bytes). Null when there is no such input.
  const HostBuffer *host(const std::string &Name);
  /// Every input on the host.
  const std::map<std::string, HostBuffer> &allOnHost();
};

/// The inputs of generateInputs, with the buffers whose values a
/// counter-based recipe gives left to the device when \p OnDevice (else
/// all made here).
llvm::Expected<InputSet> planInputs(const KernelSpec &S, const Env &Vars,
                                    uint64_t Seed, ValueMode Mode,
                                    bool OnDevice);

/// Whether verification makes inputs and compares outputs on the GPU: yes
/// unless $ASTRA_HOST_VERIFY is set to a value other than 0 (the host path,
/// kept to measure against and to fall back on).
bool deviceVerifyEnabled();

/// One seed's inputs to make: the shape variables, the seed, the value mode.
struct InputRequest {
  Env Vars;
  uint64_t Seed = 0;
  ValueMode Mode = ValueMode::Spec;
};

/// The inputs of a sequence of seeds, in order, each made while the caller
/// works on the one before: on big shape sets a seed's inputs take as long
/// to make on the host as the baseline's runs and transfers take on the
/// device (about 1.8 s and 1.5 s a seed at 1.6 GB a buffer on an H100), so
/// a verification that overlaps the two spends about half the time. Given a
/// job's runs one after another, the next run's first seed is made while the
/// current run's last one runs. The values are planInputs' for each
/// request: only when they are made changes. With inputs made on the
/// device, only the structural buffers (indices, CSR) are made here.
class InputPrefetcher {
public:
  /// One run's seeds.
  InputPrefetcher(const KernelSpec &S, const Env &Vars,
                  std::vector<uint64_t> Seeds, ValueMode Mode,
                  bool OnDevice = false);
  /// Any sequence of requests (\p S outlives the prefetcher); \p OnDevice
  /// as planInputs.
  InputPrefetcher(const KernelSpec &S, std::vector<InputRequest> Requests,
                  bool OnDevice = false);
  /// Waits for a seed still being made (an abandoned run's last one).
  ~InputPrefetcher();
  InputPrefetcher(const InputPrefetcher &) = delete;
  InputPrefetcher &operator=(const InputPrefetcher &) = delete;

  /// The inputs of the next request (an error after the last), and starts
  /// making the one after it. \p WaitSeconds, when given, is how long the
  /// call waited for them.
  llvm::Expected<InputSet> next(double *WaitSeconds = nullptr);

  /// Goes on at request \p Index, at or after the next one (a run that
  /// stopped early leaves its remaining seeds to skip): inputs being made
  /// for a request before it are waited for and dropped.
  void skipTo(size_t Index);

  /// The index of the request that next() returns.
  size_t position() const { return Pending.valid() ? Started - 1 : Started; }
  /// The request that next() returns; null after the last.
  const InputRequest *upcoming() const {
    return position() < Requests.size() ? &Requests[position()] : nullptr;
  }

private:
  void start();
  void drop();

  const KernelSpec &Spec;
  std::vector<InputRequest> Requests;
  bool OnDevice = false;
  size_t Started = 0; ///< Requests whose making has begun.
  std::future<llvm::Expected<InputSet>> Pending;
};

/// The shape set of \p S whose variables are exactly \p Vars, or null.
const ShapeSet *shapeSetWithVars(const KernelSpec &S, const Env &Vars);

/// Element counts of every buffer argument under \p Vars.
llvm::Expected<std::map<std::string, uint64_t>>
bufferCounts(const KernelSpec &S, const Env &Vars);

/// "<spec path>: kernel '<name>': " for messages.
std::string specContext(const KernelSpec &S);

} // namespace astra

#endif
