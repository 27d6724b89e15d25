// sample_neighbors: one hop of uniform neighbour sampling without replacement
// over a CSR graph (the sampler of GraphSAGE mini-batch training, SALIENT):
//   rowptr [N + 1], col [E] (int64): the neighbours of v are
//   col[rowptr[v] .. rowptr[v + 1]), distinct within a row.
//   nodes [num_nodes] (int64): the nodes to sample around.
//   out [num_nodes, fanout] (int64): row i holds min(deg(nodes[i]), fanout)
//   distinct neighbours of nodes[i] in its first slots, in no particular
//   order, and -1 in the slots after them. A node with deg <= fanout gets all
//   its neighbours in CSR order.
// One thread per node. Above the fanout, Floyd's algorithm draws fanout
// distinct edge offsets (rejections resolved in one step, no retries) with a
// splitmix64 stream per node derived from seed; the offsets are kept in the
// node's output row and replaced by the neighbours at the end.
#include <cstdint>
#include <cuda_runtime.h>

__device__ inline uint64_t splitmix64(uint64_t &state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

__global__ void sample_neighbors(const int64_t *rowptr, const int64_t *col,
                                 const int64_t *nodes, int64_t *out,
                                 int num_nodes, int fanout, uint64_t seed) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= num_nodes)
    return;
  const int64_t node = nodes[i];
  const int64_t start = rowptr[node];
  const int64_t deg = rowptr[node + 1] - start;
  int64_t *o = out + (int64_t)i * fanout;

  if (deg <= fanout) {
    for (int j = 0; j < fanout; ++j)
      o[j] = j < deg ? col[start + j] : -1;
    return;
  }

  uint64_t state = seed ^ ((uint64_t)i * 0xD1B54A32D192ED03ull);
  int picked = 0;
  for (int64_t j = deg - fanout; j < deg; ++j) {
    int64_t t = (int64_t)(splitmix64(state) % (uint64_t)(j + 1));
    for (int m = 0; m < picked; ++m) {
      if (o[m] == t) {
        t = j;
        break;
      }
    }
    o[picked++] = t;
  }
  for (int m = 0; m < fanout; ++m)
    o[m] = col[start + o[m]];
}

void launch_sample_neighbors(const int64_t *rowptr, const int64_t *col,
                             const int64_t *nodes, int64_t *out, int num_nodes,
                             int fanout, uint64_t seed, cudaStream_t stream) {
  const int threads = 256;
  const int blocks = (num_nodes + threads - 1) / threads;
  sample_neighbors<<<blocks, threads, 0, stream>>>(rowptr, col, nodes, out, num_nodes, fanout, seed);
}
