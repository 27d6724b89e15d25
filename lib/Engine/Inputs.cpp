//===- Inputs.cpp - Seeded input generation from specs --------------------===//
#include "astra/Engine/Inputs.h"
#include "astra/Engine/DeviceCompare.h"
#include "astra/Support/Parallel.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <type_traits>

using namespace llvm;

namespace astra {

uint64_t splitmix64(uint64_t &State) {
  uint64_t Z = (State += 0x9e3779b97f4a7c15ULL);
  Z = (Z ^ (Z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  Z = (Z ^ (Z >> 27)) * 0x94d049bb133111ebULL;
  return Z ^ (Z >> 31);
}

uint64_t fnv1a64(StringRef S) {
  uint64_t H = 0xcbf29ce484222325ULL;
  for (unsigned char C : S) {
    H ^= C;
    H *= 0x100000001b3ULL;
  }
  return H;
}

uint64_t deriveSeed(uint64_t Seed, StringRef Salt) {
  uint64_t St = Seed;
  uint64_t A = splitmix64(St);
  St = A ^ fnv1a64(Salt);
  return splitmix64(St);
}

static inline uint64_t rotl(uint64_t X, int K) {
  return (X << K) | (X >> (64 - K));
}

Rng::Rng(uint64_t Seed) {
  uint64_t St = Seed;
  for (uint64_t &W : S)
    W = splitmix64(St);
}

uint64_t Rng::next() {
  uint64_t Result = rotl(S[1] * 5, 7) * 9;
  uint64_t T = S[1] << 17;
  S[2] ^= S[0];
  S[3] ^= S[1];
  S[1] ^= S[2];
  S[0] ^= S[3];
  S[2] ^= T;
  S[3] = rotl(S[3], 45);
  return Result;
}

double Rng::uniform() { return double(next() >> 11) * 0x1.0p-53; }

int64_t Rng::range(int64_t Lo, int64_t Hi) {
  if (Hi <= Lo)
    return Lo;
  uint64_t Span = uint64_t(Hi) - uint64_t(Lo) + 1; // 0 means 2^64.
  if (Span == 0)
    return int64_t(next());
  // Rejection: draw below the largest multiple of Span.
  uint64_t Limit = UINT64_MAX - (UINT64_MAX % Span + 1) % Span;
  uint64_t X;
  do
    X = next();
  while (X > Limit);
  return int64_t(uint64_t(Lo) + X % Span);
}

double portableLog(double X) {
  if (!(X > 0))
    return X == 0 ? -HUGE_VAL : std::numeric_limits<double>::quiet_NaN();
  if (std::isinf(X))
    return X;
  // X = M * 2^E with M in [sqrt(1/2), sqrt(2)); log M = 2 atanh(z),
  // z = (M-1)/(M+1), |z| < 0.172: the series converges fast.
  // frexp by hand (the library call was a third of the time): M in
  // [0.5, 1) and X = M * 2^E, exactly; subnormals are scaled up first.
  int E = 0;
  uint64_t Bits;
  std::memcpy(&Bits, &X, 8);
  if ((Bits >> 52) == 0) {
    X *= 0x1.0p54;
    E = -54;
    std::memcpy(&Bits, &X, 8);
  }
  E += int(Bits >> 52) - 1022;
  Bits = (Bits & ((uint64_t(1) << 52) - 1)) | (uint64_t(1022) << 52);
  double M;
  std::memcpy(&M, &Bits, 8);
  if (M < 0.70710678118654752440) {
    M *= 2;
    --E;
  }
  double Z = (M - 1) / (M + 1);
  double Z2 = Z * Z;
  // atanh(z) / z = sum z^2n / (2n+1); with z^2 < 0.0295 the terms past
  // n = 10 are below 1e-18. A fixed Horner evaluation with constant
  // coefficients: no division and no data-dependent loop (input generation
  // spends most of its time here: 3.2 GB of normal values per seed on the
  // KernelBench shapes), and still only IEEE-exact operations in a fixed
  // order, so every machine draws the same values.
  static constexpr double C[] = {1.0,      1.0 / 3,  1.0 / 5,  1.0 / 7,
                                 1.0 / 9,  1.0 / 11, 1.0 / 13, 1.0 / 15,
                                 1.0 / 17, 1.0 / 19, 1.0 / 21};
  double P = C[10];
  for (int K = 9; K >= 0; --K)
    P = P * Z2 + C[K];
  double Sum = Z * P;
  return 2 * Sum + E * 0.69314718055994530942;
}

double Rng::normal() {
  if (HaveSpare) {
    HaveSpare = false;
    return Spare;
  }
  double U, V, S2;
  do {
    U = 2 * uniform() - 1;
    V = 2 * uniform() - 1;
    S2 = U * U + V * V;
  } while (S2 >= 1 || S2 == 0);
  double F = std::sqrt(-2 * portableLog(S2) / S2); // sqrt is exact (IEEE)
  Spare = V * F;
  HaveSpare = true;
  return U * F;
}

StringRef valueModeName(ValueMode M) {
  switch (M) {
  case ValueMode::Spec:
    return "spec";
  case ValueMode::Large:
    return "large";
  case ValueMode::Negative:
    return "negative";
  case ValueMode::Zeros:
    return "zeros";
  case ValueMode::Denormal:
    return "denormal";
  case ValueMode::Captured:
    return "captured";
  }
  return "spec";
}

std::string specContext(const KernelSpec &S) {
  return formatv("{0}: kernel '{1}': ", S.SpecPath, S.Kernel).str();
}

static Error genError(const KernelSpec &S, const ArgSpec &A, const Twine &Msg) {
  return createStringError(inconvertibleErrorCode(),
                           specContext(S) + "args." + A.Name + ".init: " +
                               A.Init.Text + ": " + Msg);
}

Expected<std::map<std::string, uint64_t>> bufferCounts(const KernelSpec &S,
                                                       const Env &Vars) {
  std::map<std::string, uint64_t> Out;
  for (const ArgSpec &A : S.Args) {
    if (!A.IsBuffer)
      continue;
    auto C = A.Count.evalInt(Vars);
    if (!C)
      return createStringError(inconvertibleErrorCode(),
                               specContext(S) + "args." + A.Name + ".count: " +
                                   toString(C.takeError()));
    if (*C < 0)
      return createStringError(inconvertibleErrorCode(),
                               "%sargs.%s.count: '%s' is negative (%lld)",
                               specContext(S).c_str(), A.Name.c_str(),
                               A.Count.text().c_str(), (long long)*C);
    Out[A.Name] = uint64_t(*C);
  }
  return Out;
}

namespace {

/// Evaluates generator argument \p I (or \p Default when absent).
Expected<Value> genArg(const KernelSpec &S, const ArgSpec &A, const Env &Vars,
                       size_t I, std::optional<double> Default) {
  if (I >= A.Init.Args.size()) {
    if (Default)
      return Value::ofReal(*Default);
    return genError(S, A, formatv("needs at least {0} argument(s)", I + 1));
  }
  auto V = A.Init.Args[I].eval(Vars);
  if (!V)
    return genError(S, A, toString(V.takeError()));
  return *V;
}

Expected<int64_t> genIntArg(const KernelSpec &S, const ArgSpec &A,
                            const Env &Vars, size_t I) {
  auto V = genArg(S, A, Vars, I, std::nullopt);
  if (!V)
    return V.takeError();
  if (!V->IsInt && V->D != std::floor(V->D))
    return genError(S, A,
                    formatv("argument {0} ('{1}') must be an integer, is {2}",
                            I + 1, A.Init.Args[I].text(), V->D));
  return V->IsInt ? V->I : int64_t(V->D);
}

/// Degrees for csr_rowptr: skewed (exponential around the mean, capped at
/// MaxDeg), then nudged at random rows until they sum to exactly Nnz.
std::vector<int64_t> csrDegrees(Rng &R, int64_t Rows, int64_t Nnz,
                                int64_t MaxDeg) {
  std::vector<int64_t> Deg(Rows, 0);
  if (Rows == 0)
    return Deg;
  double Avg = double(Nnz) / double(Rows);
  int64_t Sum = 0;
  for (int64_t &D : Deg) {
    double U = R.uniform();
    double X = -Avg * portableLog(1 - U); // Exponential with mean Avg.
    D = std::min<int64_t>(MaxDeg, int64_t(X + 0.5));
    Sum += D;
  }
  while (Sum != Nnz) {
    int64_t I = R.range(0, Rows - 1);
    if (Sum < Nnz && Deg[I] < MaxDeg) {
      int64_t Add = std::min<int64_t>(MaxDeg - Deg[I], Nnz - Sum);
      Add = std::max<int64_t>(1, Add / 2);
      Deg[I] += Add;
      Sum += Add;
    } else if (Sum > Nnz && Deg[I] > 0) {
      int64_t Sub = std::min<int64_t>(Deg[I], Sum - Nnz);
      Sub = std::max<int64_t>(1, Sub / 2);
      Deg[I] -= Sub;
      Sum -= Sub;
    }
  }
  return Deg;
}

double largeScale(DType T) {
  switch (T) {
  case DType::F16:
    return 1e3;
  case DType::FP8E4M3:
    return 100;
  default:
    return 1e4;
  }
}

} // namespace

/// Calls \p Fn(R, Begin, End) over [0, Count) in chunks, on all cores.
/// Chunk 0 draws from Rng(Seed) and chunk k from a stream derived from
/// (Seed, k), so the values depend on the seed alone, never on the number of
/// threads, and a buffer of one chunk is what a serial loop gives.
template <typename FnT>
static void forEachChunk(uint64_t Count, uint64_t Seed, FnT Fn,
                         uint64_t ChunkSize = uint64_t(1) << 20) {
  parallelChunks(Count, ChunkSize,
                 [&](uint64_t K, uint64_t Begin, uint64_t End) {
                   Rng R(K == 0 ? Seed
                                : deriveSeed(Seed, "chunk" + std::to_string(K)));
                   Fn(R, Begin, End);
                 });
}

/// generateOnHost's loop over [Lo, Hi) for elements of \p Size bytes: a
/// normal's pair is drawn once for both its elements.
template <unsigned Size>
static void generateRange(const crng::GenParams &P, uint8_t *D, uint64_t Lo,
                          uint64_t Hi) {
  auto Store = [&](uint64_t I, uint64_t Bits) {
    if constexpr (Size == 1) {
      D[I] = uint8_t(Bits);
    } else {
      using T = std::conditional_t<
          Size == 2, uint16_t, std::conditional_t<Size == 4, uint32_t, uint64_t>>;
      T V = T(Bits);
      std::memcpy(D + Size * I, &V, Size);
    }
  };
  for (uint64_t I = Lo; I < Hi;) {
    if (P.Kind == crng::GenNormal && !(I & 1) && I + 1 < Hi) {
      crng::Pair N = crng::normalPair(P.Key, I >> 1);
      Store(I, crng::finishBits(P, P.A + P.B * N.First));
      Store(I + 1, crng::finishBits(P, P.A + P.B * N.Second));
      I += 2;
      continue;
    }
    Store(I, crng::elementBits(P, I));
    ++I;
  }
}

void generateOnHost(const crng::GenParams &P, HostBuffer &B) {
  // A chunk per 2^20 elements; each element depends on its index alone.
  parallelChunks(P.Count, uint64_t(1) << 20,
                 [&](uint64_t, uint64_t Lo, uint64_t Hi) {
                   switch (crng::sizeOf(P.Type)) {
                   case 8:
                     return generateRange<8>(P, B.data(), Lo, Hi);
                   case 4:
                     return generateRange<4>(P, B.data(), Lo, Hi);
                   case 2:
                     return generateRange<2>(P, B.data(), Lo, Hi);
                   default:
                     return generateRange<1>(P, B.data(), Lo, Hi);
                   }
                 });
}

/// Whether value mode \p Mode replaces or changes the values of \p A: float
/// inputs whose generator is neither structural nor a constant.
static bool valueModeApplies(const ArgSpec &A, ValueMode Mode) {
  return Mode != ValueMode::Spec && Mode != ValueMode::Captured &&
         isFloating(A.Type) && !A.Init.isStructural() &&
         A.Init.Kind != "constant";
}

/// The real range [lo, hi) of uniform(lo, hi) and sorted(lo, hi) on floats.
static Expected<std::pair<double, double>>
realRange(const KernelSpec &S, const ArgSpec &A, const Env &Vars) {
  auto Lo = genArg(S, A, Vars, 0, 0.0);
  if (!Lo)
    return Lo.takeError();
  auto Hi = genArg(S, A, Vars, 1, 1.0);
  if (!Hi)
    return Hi.takeError();
  if (Hi->real() < Lo->real())
    return genError(S, A, formatv("empty range [{0}, {1})", Lo->real(),
                                  Hi->real()));
  return std::make_pair(Lo->real(), Hi->real());
}

/// The integer range [lo, hi] of randint(lo, hi) and sorted(lo, hi).
static Expected<std::pair<int64_t, int64_t>>
intRange(const KernelSpec &S, const ArgSpec &A, const Env &Vars) {
  auto Lo = genIntArg(S, A, Vars, 0);
  if (!Lo)
    return Lo.takeError();
  auto Hi = genIntArg(S, A, Vars, 1);
  if (!Hi)
    return Hi.takeError();
  if (*Hi < *Lo)
    return genError(S, A, formatv("empty range [{0}, {1}]", *Lo, *Hi));
  return std::make_pair(*Lo, *Hi);
}

/// The counter-based recipe of \p A's values under \p Mode, or nullopt when
/// they need host logic (sorted, permutation, CSR, arange, constant; a
/// negated one of those).
static Expected<std::optional<crng::GenParams>>
counterRecipe(const KernelSpec &S, const ArgSpec &A, const Env &Vars,
              uint64_t Count, uint64_t Seed, ValueMode Mode) {
  crng::GenParams P;
  P.Count = Count;
  P.Type = dtypeCode(A.Type);
  StringRef K = A.Init.Kind;
  bool Mode2 = valueModeApplies(A, Mode);
  if (Mode2 && Mode != ValueMode::Negative) {
    // The mode's values replace the spec's, from a stream of their own.
    P.Key = deriveSeed(Seed, (A.Name + "#" + valueModeName(Mode)).str());
    if (Mode == ValueMode::Large) {
      P.Kind = crng::GenNormal;
      P.A = 0;
      P.B = largeScale(A.Type);
    } else if (Mode == ValueMode::Denormal) {
      P.Kind = crng::GenDenormal;
      P.A = dtypeMinNormal(A.Type);
    } else {
      P.Kind = crng::GenZero;
    }
    return P;
  }
  P.Key = deriveSeed(Seed, A.Name);
  P.Negate = Mode2 && Mode == ValueMode::Negative;
  if (K == "normal") {
    auto Mean = genArg(S, A, Vars, 0, 0.0);
    if (!Mean)
      return Mean.takeError();
    auto Std = genArg(S, A, Vars, 1, 1.0);
    if (!Std)
      return Std.takeError();
    P.Kind = crng::GenNormal;
    P.A = Mean->real();
    P.B = Std->real();
    return P;
  }
  if (K == "uniform") {
    auto R = realRange(S, A, Vars);
    if (!R)
      return R.takeError();
    P.Kind = crng::GenUniform;
    P.A = R->first;
    P.B = R->second - R->first;
    return P;
  }
  if (K == "randint") {
    auto R = intRange(S, A, Vars);
    if (!R)
      return R.takeError();
    P.Kind = crng::GenRandInt;
    P.Lo = R->first;
    P.Hi = R->second;
    return P;
  }
  return std::nullopt;
}

/// Generates one buffer per its spec generator.
static Expected<HostBuffer>
generateOne(const KernelSpec &S, const ArgSpec &A, const Env &Vars,
            uint64_t Count, uint64_t Seed,
            const std::map<std::string, HostBuffer> &Done) {
  HostBuffer B(A.Type, Count);
  uint64_t BufferSeed = deriveSeed(Seed, A.Name);
  Rng R(BufferSeed);
  StringRef K = A.Init.Kind;
  bool Int = !isFloating(A.Type);

  if (K == "sorted" && !Int) {
    auto Range = realRange(S, A, Vars);
    if (!Range)
      return Range.takeError();
    double L = Range->first, W = Range->second - Range->first;
    std::vector<double> V(Count);
    for (double &X : V)
      X = L + W * R.uniform();
    std::sort(V.begin(), V.end());
    for (uint64_t I = 0; I < Count; ++I)
      B.set(I, V[I]);
    return B;
  }
  if (K == "sorted") {
    auto Range = intRange(S, A, Vars);
    if (!Range)
      return Range.takeError();
    std::vector<int64_t> V(Count);
    for (int64_t &X : V)
      X = R.range(Range->first, Range->second);
    std::sort(V.begin(), V.end());
    for (uint64_t I = 0; I < Count; ++I)
      B.setInt(I, V[I]);
    return B;
  }
  if (K == "arange") {
    auto Start = genArg(S, A, Vars, 0, 0.0);
    if (!Start)
      return Start.takeError();
    auto Step = genArg(S, A, Vars, 1, 1.0);
    if (!Step)
      return Step.takeError();
    for (uint64_t I = 0; I < Count; ++I) {
      if (Int && Start->IsInt && (Step->IsInt || Step->D == 1.0))
        B.setInt(I, Start->I + int64_t(I) * (Step->IsInt ? Step->I : 1));
      else
        B.set(I, Start->real() + double(I) * Step->real());
    }
    return B;
  }
  if (K == "constant") {
    auto V = genArg(S, A, Vars, 0, std::nullopt);
    if (!V)
      return V.takeError();
    for (uint64_t I = 0; I < Count; ++I) {
      if (Int && V->IsInt)
        B.setInt(I, V->I);
      else
        B.set(I, V->real());
    }
    return B;
  }
  if (K == "permutation") {
    auto N = genIntArg(S, A, Vars, 0);
    if (!N)
      return N.takeError();
    if (*N < 0 || uint64_t(*N) < Count)
      return genError(S, A,
                      formatv("the buffer has {0} elements but a permutation "
                              "of {1} values has only {1} distinct ones",
                              Count, *N));
    // Partial Fisher-Yates: the first Count entries of a random permutation.
    std::vector<int64_t> P(*N);
    std::iota(P.begin(), P.end(), 0);
    for (uint64_t I = 0; I < Count; ++I) {
      int64_t J = R.range(int64_t(I), *N - 1);
      std::swap(P[I], P[J]);
      B.setInt(I, P[I]);
    }
    return B;
  }
  if (K == "indices_into") {
    auto N = genIntArg(S, A, Vars, 0);
    if (!N)
      return N.takeError();
    if (*N <= 0 && Count > 0)
      return genError(S, A, formatv("no valid index into {0} elements", *N));
    for (uint64_t I = 0; I < Count; ++I)
      B.setInt(I, R.range(0, *N - 1));
    return B;
  }
  if (K == "csr_rowptr") {
    auto Rows = genIntArg(S, A, Vars, 0);
    if (!Rows)
      return Rows.takeError();
    auto Avg = genArg(S, A, Vars, 1, std::nullopt);
    if (!Avg)
      return Avg.takeError();
    auto Max = genIntArg(S, A, Vars, 2);
    if (!Max)
      return Max.takeError();
    if (*Rows < 0 || Count != uint64_t(*Rows) + 1)
      return genError(S, A,
                      formatv("a row pointer for {0} rows needs {1} elements, "
                              "the buffer has {2}",
                              *Rows, *Rows + 1, Count));
    if (Avg->real() < 0 || Avg->real() > double(*Max))
      return genError(S, A,
                      formatv("avg_degree {0} must lie in [0, max_degree={1}]",
                              Avg->real(), *Max));
    if (!Int)
      return genError(S, A, "a row pointer needs an integer dtype");
    int64_t Nnz = int64_t(std::floor(double(*Rows) * Avg->real()));
    std::vector<int64_t> Deg = csrDegrees(R, *Rows, Nnz, *Max);
    int64_t Acc = 0;
    B.setInt(0, 0);
    for (int64_t I = 0; I < *Rows; ++I) {
      Acc += Deg[I];
      B.setInt(I + 1, Acc);
    }
    return B;
  }
  if (K == "csr_colind") {
    // csr_colind(rowptr_arg, n): RefArg names the row pointer; the
    // remaining argument is n.
    StringRef Ref = A.Init.RefArg;
    auto It = Done.find(Ref.str());
    const ArgSpec *RA = S.arg(Ref);
    if (Ref.empty() || !RA || It == Done.end() ||
        RA->Init.Kind != "csr_rowptr")
      return genError(S, A,
                      "the first argument must name an input argument whose "
                      "init is csr_rowptr(...)" +
                          (Ref.empty() ? std::string()
                                       : " ('" + Ref.str() + "' is not one)"));
    size_t NIdx = A.Init.Args.size() >= 2 ? 1 : 0;
    auto N = genIntArg(S, A, Vars, NIdx);
    if (!N)
      return N.takeError();
    const HostBuffer &RP = It->second;
    if (RP.count() == 0)
      return genError(S, A, "the row pointer is empty");
    int64_t Nnz = RP.getInt(RP.count() - 1);
    if (uint64_t(Nnz) > Count)
      return genError(S, A,
                      formatv("the buffer has {0} elements but row pointer "
                              "'{1}' holds {2} edges",
                              Count, Ref, Nnz));
    uint64_t Rows = RP.count() - 1;
    for (uint64_t Row = 0; Row < Rows; ++Row) {
      int64_t Deg = RP.getInt(Row + 1) - RP.getInt(Row);
      if (Deg > *N)
        return genError(S, A,
                        formatv("row {0} has {1} neighbours but there are only "
                                "{2} distinct columns",
                                Row, Deg, *N));
    }
    // Rows in chunks of 32768 (about 800k edges at ogbn-products' average
    // degree) on all cores: on one core a 61M-edge graph's inputs took
    // 3.9 s per seed, three times the device's work on them (sample_neighbors
    // hop3 on an H100).
    forEachChunk(
        Rows, deriveSeed(BufferSeed, "rows"),
        [&](Rng &CR, uint64_t First, uint64_t Last) {
          std::vector<int64_t> Cols;
          for (uint64_t Row = First; Row < Last; ++Row) {
            int64_t Begin = RP.getInt(Row), Deg = RP.getInt(Row + 1) - Begin;
            // Floyd's algorithm: Deg distinct values in [0, N), then sorted.
            Cols.clear();
            for (int64_t J = *N - Deg; J < *N; ++J) {
              int64_t T = CR.range(0, J);
              if (std::find(Cols.begin(), Cols.end(), T) != Cols.end())
                Cols.push_back(J);
              else
                Cols.push_back(T);
            }
            std::sort(Cols.begin(), Cols.end());
            for (int64_t J = 0; J < Deg; ++J)
              B.setInt(Begin + J, Cols[J]);
          }
        },
        uint64_t(1) << 15);
    // Slack past the last edge still holds valid column indices.
    for (uint64_t I = Nnz; I < Count; ++I)
      B.setInt(I, *N > 0 ? R.range(0, *N - 1) : 0);
    return B;
  }
  return genError(S, A, "unknown generator '" + K.str() + "'");
}

/// values=negative on a float input made on the host (a counter-based
/// recipe negates its own values; the other modes always have one).
static void negateValues(HostBuffer &B) {
  parallelChunks(B.count(), uint64_t(1) << 20,
                 [&](uint64_t, uint64_t Lo, uint64_t Hi) {
                   for (uint64_t I = Lo; I < Hi; ++I)
                     B.set(I, -std::fabs(B.get(I)));
                 });
}

const ShapeSet *shapeSetWithVars(const KernelSpec &S, const Env &Vars) {
  for (const ShapeSet &Set : S.Shapes) {
    if (Set.Vars.size() != Vars.size())
      continue;
    bool Same = true;
    for (auto I = Set.Vars.begin(), J = Vars.begin(); Same && I != Set.Vars.end();
         ++I, ++J)
      Same = I->first == J->first && I->second.IsInt == J->second.IsInt &&
             I->second.I == J->second.I && I->second.D == J->second.D;
    if (Same)
      return &Set;
  }
  return nullptr;
}

/// The first \p Count elements of the blob at \p Path: the program's own
/// contents of \p A.
static Expected<HostBuffer> readCapturedBuffer(const KernelSpec &S,
                                               const ArgSpec &A,
                                               uint64_t Count,
                                               const std::string &Path) {
  auto Buf = MemoryBuffer::getFile(Path, /*IsText=*/false,
                                   /*RequiresNullTerminator=*/false);
  if (!Buf)
    return createStringError(Buf.getError(),
                             "%sargs.%s.init: the captured contents %s: %s",
                             specContext(S).c_str(), A.Name.c_str(),
                             Path.c_str(), Buf.getError().message().c_str());
  HostBuffer B(A.Type, Count);
  if ((*Buf)->getBufferSize() < B.byteSize())
    return createStringError(inconvertibleErrorCode(),
                             "%sargs.%s.init: the captured contents %s hold "
                             "%zu bytes, the buffer takes %zu (a truncated "
                             "capture)",
                             specContext(S).c_str(), A.Name.c_str(),
                             Path.c_str(), (*Buf)->getBufferSize(),
                             B.byteSize());
  std::memcpy(B.data(), (*Buf)->getBufferStart(), B.byteSize());
  return B;
}

Expected<InputSet> planInputs(const KernelSpec &S, const Env &Vars,
                              uint64_t Seed, ValueMode Mode, bool OnDevice) {
  auto Counts = bufferCounts(S, Vars);
  if (!Counts)
    return Counts.takeError();
  InputSet Out;
  std::map<std::string, std::string> Blobs;
  if (Mode == ValueMode::Captured)
    if (const ShapeSet *Set = shapeSetWithVars(S, Vars))
      Blobs = S.capturedBlobs(Set->Name);
  // Two passes: generators that refer to another argument (csr_colind) run
  // after everything they could refer to.
  for (int Pass = 0; Pass < 2; ++Pass)
    for (const ArgSpec &A : S.Args) {
      if (!A.IsBuffer || (A.R != Role::Input && A.R != Role::InOut))
        continue;
      bool Dependent = A.Init.Kind == "csr_colind";
      if (Dependent != (Pass == 1))
        continue;
      uint64_t Count = (*Counts)[A.Name];
      auto Blob = Blobs.find(A.Name);
      if (Blob != Blobs.end()) {
        auto B = readCapturedBuffer(S, A, Count, Blob->second);
        if (!B)
          return B.takeError();
        Out.Host[A.Name] = std::move(*B);
        continue;
      }
      auto Recipe = counterRecipe(S, A, Vars, Count, Seed, Mode);
      if (!Recipe)
        return Recipe.takeError();
      if (*Recipe) {
        if (OnDevice) {
          Out.Device[A.Name] = **Recipe;
        } else {
          HostBuffer B(A.Type, Count);
          generateOnHost(**Recipe, B);
          Out.Host[A.Name] = std::move(B);
        }
        continue;
      }
      auto B = generateOne(S, A, Vars, Count, Seed, Out.Host);
      if (!B)
        return B.takeError();
      if (valueModeApplies(A, Mode))
        negateValues(*B); // The only mode without a recipe of its own.
      Out.Host[A.Name] = std::move(*B);
    }
  return Out;
}

Expected<std::map<std::string, HostBuffer>>
generateInputs(const KernelSpec &S, const Env &Vars, uint64_t Seed,
               ValueMode Mode) {
  auto Set = planInputs(S, Vars, Seed, Mode, /*OnDevice=*/false);
  if (!Set)
    return Set.takeError();
  return std::move(Set->Host);
}

const HostBuffer *InputSet::host(const std::string &Name) {
  auto It = Host.find(Name);
  if (It != Host.end())
    return &It->second;
  auto R = Device.find(Name);
  if (R == Device.end())
    return nullptr;
  HostBuffer B(DType(R->second.Type), R->second.Count);
  generateOnHost(R->second, B);
  return &(Host[Name] = std::move(B));
}

const std::map<std::string, HostBuffer> &InputSet::allOnHost() {
  for (auto &[Name, Recipe] : Device)
    host(Name);
  return Host;
}

bool deviceVerifyEnabled() {
  const char *V = std::getenv("ASTRA_HOST_VERIFY");
  return !V || !*V || StringRef(V) == "0";
}

static std::vector<InputRequest> requestsOf(const Env &Vars,
                                            ArrayRef<uint64_t> Seeds,
                                            ValueMode Mode) {
  std::vector<InputRequest> R;
  for (uint64_t Seed : Seeds)
    R.push_back({Vars, Seed, Mode});
  return R;
}

InputPrefetcher::InputPrefetcher(const KernelSpec &S, const Env &Vars,
                                 std::vector<uint64_t> Seeds, ValueMode Mode,
                                 bool OnDevice)
    : InputPrefetcher(S, requestsOf(Vars, Seeds, Mode), OnDevice) {}

InputPrefetcher::InputPrefetcher(const KernelSpec &S,
                                 std::vector<InputRequest> Requests,
                                 bool OnDevice)
    : Spec(S), Requests(std::move(Requests)), OnDevice(OnDevice) {
  start();
}

InputPrefetcher::~InputPrefetcher() { drop(); }

void InputPrefetcher::drop() {
  if (Pending.valid()) {
    // An unconsumed Expected must be checked before it is destroyed.
    auto Unused = Pending.get();
    if (!Unused)
      consumeError(Unused.takeError());
  }
}

void InputPrefetcher::start() {
  if (Started >= Requests.size())
    return;
  const InputRequest *R = &Requests[Started++];
  // Spec outlives this object (the caller's); Requests is not resized.
  Pending = std::async(std::launch::async, [this, R] {
    return planInputs(Spec, R->Vars, R->Seed, R->Mode, OnDevice);
  });
}

void InputPrefetcher::skipTo(size_t Index) {
  if (Index <= position())
    return;
  drop();
  Started = std::min(Index, Requests.size());
  start();
}

Expected<InputSet> InputPrefetcher::next(double *WaitSeconds) {
  if (!Pending.valid())
    return createStringError(inconvertibleErrorCode(),
                             "internal error: inputs asked for past the "
                             "run's last seed");
  auto T0 = std::chrono::steady_clock::now();
  Expected<InputSet> R = Pending.get();
  if (WaitSeconds)
    *WaitSeconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - T0)
                       .count();
  start();
  return R;
}

} // namespace astra
