//===- Parallel.h - Chunked loops over all cores ----------------*- C++ -*-===//
//
// The engine touches every element of buffers of hundreds of millions of
// elements (input generation, comparison) for every seed of every
// candidate; on one core that, not the GPU, sets the pace of a search.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_SUPPORT_PARALLEL_H
#define ASTRA_SUPPORT_PARALLEL_H

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace astra {

/// The most threads parallelChunks uses; 0 (the default) means all cores.
/// A benchmark sets 1 to time the same work on one core in the same run.
inline std::atomic<unsigned> ParallelThreadLimit{0};

/// Calls \p Fn(K, Begin, End) for each chunk K = [Begin, End) of [0, Count)
/// in chunks of \p ChunkSize, on all cores. The chunking depends on Count
/// and ChunkSize alone, so work that derives anything from K (a random
/// stream, a partial result merged in chunk order) is the same for any
/// number of threads.
template <typename FnT>
void parallelChunks(uint64_t Count, uint64_t ChunkSize, FnT Fn) {
  uint64_t Chunks = ChunkSize ? (Count + ChunkSize - 1) / ChunkSize : 0;
  auto Run = [&](uint64_t K) {
    Fn(K, K * ChunkSize, std::min(Count, (K + 1) * ChunkSize));
  };
  unsigned Threads = std::max(1u, std::thread::hardware_concurrency());
  if (unsigned Limit = ParallelThreadLimit.load())
    Threads = std::min(Threads, Limit);
  if (Chunks <= 1 || Threads == 1) {
    for (uint64_t K = 0; K < Chunks; ++K)
      Run(K);
    return;
  }
  std::atomic<uint64_t> Next{0};
  std::vector<std::thread> Pool;
  for (uint64_t T = 0; T < std::min<uint64_t>(Threads, Chunks); ++T)
    Pool.emplace_back([&] {
      for (uint64_t K; (K = Next.fetch_add(1)) < Chunks;)
        Run(K);
    });
  for (std::thread &T : Pool)
    T.join();
}

} // namespace astra

#endif
