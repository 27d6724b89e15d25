// A library header nvcc accepts and clang rejects: a dependent member
// template called without `template` (as FlashInfer's vec_dtypes.cuh does).
#pragma once
template <typename T> struct Caster {
  template <int N> __device__ static T scale(T x) { return x * N; }
};
template <typename T> __device__ T scale4(T x) { return Caster<T>::scale<4>(x); }
