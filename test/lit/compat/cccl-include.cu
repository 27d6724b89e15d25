// CUDA 13 keeps CCCL (cuda/std, cub, thrust, cuda/pipeline, and what
// cooperative_groups.h includes) under <cuda>/include/cccl, which nvcc adds
// as a system folder and clang does not.
// REQUIRES: cuda, nvcc
// RUN: %nvcc -arch=sm_90 -c %s -o %t.o
// RUN: not %cuda-syntax-check %s 2>&1 | FileCheck %s --check-prefix=CLANG
// RUN: %clang-astra list %s | FileCheck %s
// RUN: %clang-astra compile --no-cache --kernel block_sum %s > /dev/null

// CLANG: fatal error: 'cuda/std/{{.*}}' file not found
// CHECK: kernel block_sum

#include <cooperative_groups.h>
#include <cub/block/block_reduce.cuh>
#include <cuda/std/type_traits>

namespace cg = cooperative_groups;

__global__ void block_sum(const float *x, float *out) {
  using Reduce = cub::BlockReduce<float, 128>;
  __shared__ typename Reduce::TempStorage tmp;
  cg::thread_block b = cg::this_thread_block();
  static_assert(cuda::std::is_same_v<float, float>);
  float s = Reduce(tmp).Sum(x[b.thread_rank()]);
  if (b.thread_rank() == 0)
    *out = s;
}
