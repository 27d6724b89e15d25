// A library header nvcc accepts and clang rejects: a dependent member
// template called as a statement without `template`, as FlashInfer's
// vec_dtypes.cuh does in cast_from_impl. With <cuda_fp16.h> included,
// clang parses `VecCast<D, S>::cast < N > (d, s)` as two comparisons and
// reports the overloaded name at instantiation, not the missing keyword.
#pragma once
#include <cuda_fp16.h>
#include <cstddef>
template <typename D, typename S> struct VecCast {
  template <size_t N> __device__ static void cast(D *d, const S *s) {
    for (size_t i = 0; i < N; ++i)
      d[i] = (D)s[i];
  }
};
template <typename S, typename D, size_t N>
__device__ void castFrom(D *d, const S *s) {
  VecCast<D, S>::cast<N>(d, s);
}
// The scope a template's type parameter (SGLang's
// per_token_group_quant_8bit_v2.cu: `SCHEDULER::execute<...>(...)`).
template <typename Policy, size_t N, typename D, typename S>
__device__ void castWith(D *d, const S *s) {
  Policy::cast<N>(d, s);
}
