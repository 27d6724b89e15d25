//===- OfflinePlanner.cpp -------------------------------------------------===//
#include "astra/Agents/OfflinePlanner.h"
#include "astra/Spec/LaunchTuning.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <set>

using namespace llvm;

namespace astra {

namespace {

/// What the planner knows about each pass: where it pays off and which
/// parameter variants are worth a try once it helps.
struct PassTraits {
  const char *Name;
  int MemoryRank;  ///< Lower is tried first on memory-bound kernels.
  int ComputeRank; ///< Lower is tried first on compute-bound kernels.
  const char *Why;
  std::vector<std::map<std::string, std::string>> Variants;
};

const std::vector<PassTraits> &traits() {
  static const std::vector<PassTraits> T = {
      {"vectorize", 0, 6,
       "16-byte loads and stores cut memory instructions 4-8x on "
       "bandwidth-bound loops",
       {{{"vectorize.bytes", "8"}}}},
      {"flat-vectorize", 0, 6,
       "a flat index split into row and column (gathers, scatters): chunks "
       "of one row move with 16-byte accesses and one division per chunk",
       {}},
      {"smem-transpose", 0, 6,
       "a warp's strided stores (a transpose) become consecutive through a "
       "shared tile: one 32-byte sector per thread becomes one per 8 threads",
       {}},
      // Before the other memory-rank-0 passes (row-cooperative's tie goes
      // by name): where it applies, a thread-per-row launch leaves the GPU
      // idle, and its other rewrites cannot fix that.
      {"warp-per-row", -1, 1,
       "a thread-per-row kernel launched with a thread per row leaves most "
       "of the GPU idle and walks rows a row apart per warp: with a warp "
       "per row (the launch's grid 32 times the threads) the lanes stride "
       "over the row, loads are consecutive and reductions use shuffles",
       {}},
      {"row-cooperative", 0, 2,
       "a thread-per-row kernel walks rows a row apart per warp: with each "
       "warp taking its lanes' rows in turn and the lanes striding over the "
       "row, a warp's loads are consecutive and reductions use shuffles",
       {}},
      {"smem-tile", 0, 0,
       "a matrix product's k loop loads each operand element once per "
       "thread: the block's threads share a row (column) of it, so shared "
       "tiles load it once per block, and the output stays in a register",
       {{{"smem-tile.k", "16"}}}},
      {"grid-stride", 1, 7,
       "a grid-stride loop lets vectorize apply and amortizes index math",
       {}},
      {"grid-coarsen", 1, 7,
       "a grid-stride kernel launched with fewer blocks: no block without "
       "work after vectorize, each thread takes several elements",
       {{{"grid-coarsen.factor", "8"}}, {{"grid-coarsen.factor", "16"}}}},
      {"rows-per-block", 1, 7,
       "a row-per-block kernel takes several rows per block, each with as "
       "many threads as vectorize left it work for",
       // H100 (hand-written merge_attn_states, prefill):
       // 4 rows 2.20x, 16 rows 2.15x, 32 rows 2.11x.
       {{{"rows-per-block.rows", "16"}}}},
      {"thread-coarsen", 3, 0,
       "each thread does the work of several threads of a 2-D block: what "
       "they load in common (a tile's row or column in shared memory) is "
       "loaded once for several multiply-adds, a register tile",
       // H100 (sgemm, its pipeline): y4 1.21/2.00/2.04x on the
       // small/square/mlp sets; y8 0.81/2.15/2.10x; y4 x2 0.45/1.99/2.00x;
       // y4 x4 0.30/1.35/1.37x; y2 x2 0.68/1.72/1.74x. Fewer threads starve
       // a small grid, so the default is y4 and the variants stay near it.
       {{{"thread-coarsen.y", "2"}}, {{"thread-coarsen.y", "8"}}}},
      {"delinearize", 2, 1,
       "a flat index split by divisions becomes a 3-D grid, so that "
       "thread-coarsen can give each thread several output channels and "
       "positions whose common loads are made once",
       // H100 (conv1d, with thread-coarsen; small/kb/large):
       // y4 x4 of 256 x 4 blocks 0.97/4.49/4.92x, y8 x2 of 128 x 8
       // 0.93/3.59/4.49x: the 5.5 us set wants blocks of one row. 64 x 8
       // with y8 (what Add gives a plan with both passes) 1.03/2.95/3.30x,
       // the pass's defaults (128 x 4, y4) 1.03/2.72/2.77x.
       {{{"delinearize.x", "128"},
         {"delinearize.y", "4"},
         {"thread-coarsen.y", "4"}},
        {{"delinearize.x", "256"},
         {"delinearize.y", "4"},
         {"thread-coarsen.y", "4"},
         {"thread-coarsen.x", "4"}},
        {{"delinearize.y", "8"},
         {"thread-coarsen.y", "8"},
         {"thread-coarsen.x", "2"}}}},
      {"warp-reduce", 2, 2,
       "warp shuffles replace shared-memory tree steps and their barriers",
       {}},
      {"warp-scan", 2, 2,
       "warp shuffles replace the shared-memory steps of a block scan and "
       "their two barriers per step",
       {}},
      {"hoist", 3, 1, "loop-invariant math and divisions leave the loop", {}},
      {"restrict-const", 4, 5,
       "const and __restrict__ let loads use the read-only path and stay in "
       "registers",
       {}},
      {"fast-math", 5, 0,
       "hardware approximations (__expf, __fdividef, rsqrtf) replace "
       "libdevice calls",
       {}},
      {"ldg", 6, 8, "read-only loads through the non-coherent cache", {}},
      {"launch-bounds", 7, 3,
       "__launch_bounds__ lets the register allocator fit the real block size",
       {{{"launch-bounds.min-blocks", "2"}}}},
      {"unroll", 8, 4, "unrolled small loops expose independent work",
       {{{"unroll.factor", "4"}}, {{"unroll.factor", "8"}}}},
      {"index32", 9, 9, "32-bit index math where sizes allow", {}},
      {"block-size", 10, 10,
       "another block size changes occupancy, the work per thread and the "
       "cost of block-wide reductions",
       {}},
  };
  return T;
}

const PassTraits *traitsOf(StringRef Name) {
  for (const PassTraits &T : traits())
    if (Name == T.Name)
      return &T;
  return nullptr;
}

/// The canonical order passes are composed in: structure first (loops,
/// reductions), then access paths, then arithmetic, then annotations.
int pipelineOrder(StringRef Name) {
  // restrict-const first: its __restrict__ is what lets vectorize, ldg and
  // hoist prove that buffers do not overlap. block-size before launch-bounds,
  // whose bound must cover the block size finally launched.
  // smem-transpose before grid-stride: it needs the body a thread per
  // element, which grid-stride turns into a loop. grid-coarsen after
  // vectorize (or flat-vectorize), whose vector width is its default factor. thread-coarsen
  // late: its per-copy arrays hide the idioms other passes look for
  // (index32 cannot bound `r[astra_cy]`), so they run on the code before.
  // rows-per-block after the other launch changes (it wraps their launch in
  // its condition) and before launch-bounds, which must cover its blocks.
  // delinearize right after restrict-const: the passes after it see the
  // 3-D grid's coordinates (hoist, index32) and thread-coarsen its block.
  // row-cooperative right after restrict-const too (whose __restrict__ it
  // may need): it wants the thread-per-row body as written, which
  // grid-stride would turn into a loop, and the passes after it (hoist,
  // fast-math, unroll) work on its strided loops. warp-per-row, its form
  // with a warp per row, just before it: where both apply the pipeline
  // gets the one with more parallelism (the second refuses the first's
  // shuffles). smem-tile likewise: it wants the guard and the k loop as
  // written (__restrict__ proves its operands are not written), and
  // thread-coarsen, late, then gives each thread several rows of its tiles.
  static const char *Order[] = {"restrict-const", "warp-per-row",
                                "row-cooperative", "smem-tile",
                                "delinearize", "smem-transpose",
                                "grid-stride",    "warp-reduce",   "warp-scan",
                                "hoist",          "vectorize",   "flat-vectorize", "ldg",
                                "fast-math",      "unroll",      "index32",
                                "thread-coarsen",
                                "grid-coarsen",   "block-size",  "rows-per-block",
                                "launch-bounds"};
  for (unsigned I = 0; I < std::size(Order); ++I)
    if (Name == Order[I])
      return I;
  return 100;
}

/// \p P with the passes each one needs first (KernelFacts::Prerequisites).
std::vector<std::string> withPrerequisites(const KernelFacts &F,
                                           std::vector<std::string> P) {
  for (size_t I = 0; I < P.size(); ++I) {
    auto It = F.Prerequisites.find(P[I]);
    if (It != F.Prerequisites.end())
      for (const std::string &Q : It->second)
        if (!is_contained(P, Q))
          P.push_back(Q);
  }
  return P;
}

std::vector<std::string> canonical(std::vector<std::string> P) {
  std::stable_sort(P.begin(), P.end(), [](const std::string &A,
                                          const std::string &B) {
    return pipelineOrder(A) < pipelineOrder(B);
  });
  P.erase(std::unique(P.begin(), P.end()), P.end());
  return P;
}

} // namespace

bool looksMemoryBound(const KernelFacts &F, const Evaluation &Baseline) {
  // An H100 does ~60 fp32 flop per byte of HBM bandwidth; below ~10 the
  // kernel is bound by memory unless it is very inefficient.
  if (F.ArithmeticIntensity >= 0)
    return F.ArithmeticIntensity < 10;
  return true; // Most kernels without a flop count move data.
}

bool OfflinePlanner::allowed(StringRef Pass) const {
  return Allowed.empty() || is_contained(Allowed, Pass);
}

std::vector<std::string> OfflinePlanner::rank(const KernelFacts &F,
                                              bool MemoryBound) const {
  std::vector<std::string> Out;
  for (const auto &[Pass, Sites] : F.ApplicablePasses)
    if (allowed(Pass) && traitsOf(Pass))
      Out.push_back(Pass);
  std::stable_sort(Out.begin(), Out.end(), [&](const std::string &A,
                                               const std::string &B) {
    const PassTraits *TA = traitsOf(A), *TB = traitsOf(B);
    return MemoryBound ? TA->MemoryRank < TB->MemoryRank
                       : TA->ComputeRank < TB->ComputeRank;
  });
  return Out;
}

/// A shape set whose original runs faster than this is launch-bound: the
/// launch and the tail of the grid are most of its time (conv1d's 5.5 us
/// set, merge_attn_states' 4.5 us decode set on the H100).
static constexpr double LaunchBoundUs = 50;

std::vector<Plan> OfflinePlanner::propose(const PlanningState &S,
                                          unsigned MaxPlans) {
  const KernelFacts &F = *S.Facts;
  bool Memory = looksMemoryBound(F, *S.Baseline);
  std::vector<std::string> Ranked = rank(F, Memory);
  std::vector<Plan> Plans;
  std::set<std::string> Proposed;

  auto Tried = [&](const Plan &P) {
    std::string Key = P.ParentId + ":" + P.label();
    return S.TriedLabels.count(Key) || Proposed.count(Key);
  };
  // A shape set whose original runs in a few microseconds is launch-bound:
  // it loses when threads take more work (conv1d's 5.5 us set, H100 session
  // 12). Without one (a kernel's large half after shape-split, or a
  // workload of large sets only) the patch that is best on large sets is
  // tried first. Unknown without a baseline profile (static mode).
  bool LaunchBoundSet = S.Baseline == nullptr || S.Baseline->Timings.empty();
  if (S.Baseline)
    for (const ShapeTiming &T : S.Baseline->Timings)
      LaunchBoundSet |= T.BaselineUs < LaunchBoundUs;
  // A plan to try, with the launch defaults below unless \p AsIs (a known
  // winner, whose parameters are what won).
  auto Add = [&](Plan P, bool AsIs = false) {
    // delinearize's blocks are chosen for thread-coarsen to fold their
    // rows into each thread (blocks of one row: what small grids want),
    // so a plan with both gets delinearize's preferred shape and
    // thread-coarsen's y equal to its rows, unless a variant says otherwise;
    // without a launch-bound set, 256 x 4 blocks with 4 x 4 outputs per
    // thread (4.49x / 4.92x on conv1d's large sets, 0.97x on the small).
    bool Coarsens = !AsIs && is_contained(P.Passes, "thread-coarsen");
    if (Coarsens && is_contained(P.Passes, "delinearize")) {
      bool Large = !LaunchBoundSet;
      P.Params.emplace("delinearize.x", Large ? "256" : "64");
      P.Params.emplace("delinearize.y", Large ? "4" : "8");
      P.Params.emplace("thread-coarsen.y", P.Params["delinearize.y"]);
      if (Large)
        P.Params.emplace("thread-coarsen.x", "4");
    } else if (Coarsens && !LaunchBoundSet) {
      // thread-coarsen's default of 4 rows per thread keeps small grids
      // fed; without them 8 (sgemm's 4096^3 and MLP sets: 2.15x / 2.10x
      // against 2.00x / 2.04x on the H100).
      P.Params.emplace("thread-coarsen.y", "8");
    }
    if (Plans.size() >= MaxPlans || P.Passes.empty() || Tried(P))
      return;
    Proposed.insert(P.ParentId + ":" + P.label());
    Plans.push_back(std::move(P));
  };
  auto WhyOf = [&](StringRef Pass) {
    const PassTraits *T = traitsOf(Pass);
    return std::string(T ? T->Why : "");
  };
  // A pass on its own, with the passes it needs first.
  auto Single = [&](const std::string &Pass) {
    Plan P;
    P.Passes = canonical(withPrerequisites(F, {Pass}));
    P.Rationale = (Memory ? "memory-bound: " : "compute-bound: ") + WhyOf(Pass);
    return P;
  };

  // The block size is a dimension of its own: swept on top of the best
  // pipeline (or the original), whether or not the default size helped.
  auto SweepBlockSize = [&](bool Neighbours) {
    if (!is_contained(Ranked, "block-size") || F.BlockSize <= 0)
      return;
    const Candidate *Best = S.Beam.empty() ? nullptr : S.Beam.front().first;
    if (Best && Best->Origin == "llm")
      return;
    std::vector<std::string> Base = Best ? Best->Lineage
                                         : std::vector<std::string>();
    Base.push_back("block-size");
    int64_t Now = Best && Best->BlockThreads ? *Best->BlockThreads
                                             : F.BlockSize;
    // Half and double the current size first: the likeliest wins.
    std::vector<int64_t> Sizes = {Now / 2, Now * 2};
    if (!Neighbours)
      Sizes = {128, 256, 512, 1024};
    for (int64_t T : Sizes) {
      if (T < 64 || T > 1024)
        continue;
      // The size the code has, and the default the single pass tried.
      if (T == F.BlockSize ||
          (Best ? Best->BlockThreads && *Best->BlockThreads == T
                : T == defaultRetunedBlock(F.BlockSize)))
        continue;
      Plan P;
      P.Passes = canonical(withPrerequisites(F, Base));
      if (Best)
        P.Params = Best->Params;
      P.Params["block-size.threads"] = std::to_string(T);
      P.Rationale = "sweep the block size of " +
                    (Best ? Best->Id : std::string("the original")) + ": " +
                    WhyOf("block-size");
      Add(P);
    }
  };

  if (S.Round == 1 || S.Beam.empty()) {
    // A known winner first, as it is.
    for (const KnownWinner &K : F.KnownWinners)
      Add(K.P, /*AsIs=*/true);
    // Everything that applies, composed in the canonical order: often the
    // best single experiment.
    // The block size is not part of it: a size that suits one pipeline can
    // sink another (measured: 256 threads made the row kernels' combined
    // pipeline 0.66-0.75x on H100), so it is swept on top of the best
    // instead.
    std::vector<std::string> Structural;
    for (const std::string &P : Ranked)
      if (P != "block-size")
        Structural.push_back(P);
    if (Structural.size() > 1) {
      Plan All;
      All.Passes = canonical(Structural);
      All.Rationale = "every applicable pass together, in dependency order";
      Add(All);
      // rows-per-block's blocks of several rows leave a few-row launch
      // with fewer blocks than SMs: on launch-bound sets the pipeline with
      // it lost where the one without it won (H100: silu_and_mul's decode
      // 0.77x with it, 1.95x without; gelu_tanh_and_mul's 0.56x;
      // merge_attn_states' 0.96x). Both go first.
      if (LaunchBoundSet && is_contained(All.Passes, "rows-per-block")) {
        Plan NoRows;
        for (const std::string &P : All.Passes)
          if (P != "rows-per-block")
            NoRows.Passes.push_back(P);
        NoRows.Rationale = "every applicable pass but rows-per-block, which "
                           "costs launch-bound shape sets their parallelism";
        Add(NoRows);
      }
    }
    for (const std::string &Pass : Ranked)
      Add(Single(Pass));
    if (S.Round > 1) {
      SweepBlockSize(/*Neighbours=*/true);
      SweepBlockSize(/*Neighbours=*/false);
    }
    return Plans;
  }

  // Later rounds: the block size's neighbours, grow the best pipelines,
  // then vary what worked.
  SweepBlockSize(/*Neighbours=*/true);
  for (const auto &[C, E] : S.Beam) {
    std::vector<std::string> Base = C->Lineage;
    bool FromPasses = C->Origin != "llm";
    for (const std::string &Pass : Ranked) {
      if (is_contained(Base, Pass))
        continue;
      Plan P;
      if (FromPasses) {
        P.Passes = Base;
        P.Passes.push_back(Pass);
        P.Passes = canonical(withPrerequisites(F, P.Passes));
        P.Params = C->Params;
      } else {
        P.ParentId = C->Id;
        P.Passes = {Pass};
      }
      P.Rationale = "extend " + C->Id + " (" +
                    std::to_string(E->geomeanSpeedup()).substr(0, 4) +
                    "x) with " + Pass + ": " + WhyOf(Pass);
      Add(P);
    }
  }
  SweepBlockSize(/*Neighbours=*/false);
  for (const auto &[C, E] : S.Beam) {
    if (C->Origin == "llm")
      continue;
    // The passes that matter most for this kernel first (the ranking by
    // what limits it), then the rest of the lineage: with few candidates
    // per round, sgemm's thread-coarsen variants must not wait behind
    // unroll's.
    std::vector<std::string> ToVary;
    for (const std::string &Pass : Ranked)
      if (is_contained(C->Lineage, Pass))
        ToVary.push_back(Pass);
    for (const std::string &Pass : C->Lineage)
      if (!is_contained(ToVary, Pass))
        ToVary.push_back(Pass);
    for (const std::string &Pass : ToVary) {
      const PassTraits *T = traitsOf(Pass);
      if (!T)
        continue;
      for (const auto &V : T->Variants) {
        Plan P;
        P.Passes = C->Lineage;
        P.Params = C->Params;
        for (const auto &[K, Val] : V)
          P.Params[K] = Val;
        P.Rationale = "vary " + Pass + " in " + C->Id;
        Add(P);
      }
    }
    // Ablation: does every pass of the best pipeline pull its weight?
    if (C->Lineage.size() > 1)
      for (const std::string &Pass : C->Lineage) {
        Plan P;
        for (const std::string &Q : C->Lineage)
          if (Q != Pass)
            P.Passes.push_back(Q);
        // Dropping an enabler drops what depends on it, too.
        P.Passes.erase(
            std::remove_if(P.Passes.begin(), P.Passes.end(),
                           [&](const std::string &Q) {
                             auto It = F.Prerequisites.find(Q);
                             return It != F.Prerequisites.end() &&
                                    is_contained(It->second, Pass);
                           }),
            P.Passes.end());
        P.Params = C->Params;
        P.Rationale = "drop " + Pass + " from " + C->Id +
                      " to see whether it costs time";
        Add(P);
      }
  }
  // Nothing left to grow: the remaining single passes.
  for (const std::string &Pass : Ranked)
    Add(Single(Pass));
  return Plans;
}

} // namespace astra
