// vectorize: 16-byte loads and stores in block- and grid-stride loops, with an
// alignment check, a scalar tail and a scalar path for misaligned pointers.
// RUN: rm -rf %t.dir && mkdir -p %t.dir/Inputs
// RUN: cp %s %t.dir/vectorize.cu && cp %S/Inputs/vectorize.cuh %t.dir/Inputs/
// RUN: %clang-astra rewrite --passes=vectorize -i %t.dir/vectorize.cu -- -std=c++17
// RUN: FileCheck %s < %t.dir/vectorize.cu
// RUN: FileCheck %s --check-prefix=HEADER < %t.dir/Inputs/vectorize.cuh
// RUN: %nvptx-compile %t.dir/vectorize.cu | FileCheck %s --check-prefix=PTX
// RUN: %clang-astra rewrite --passes=vectorize --explain %s -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=EXPLAIN
// A second run changes nothing more.
// RUN: %clang-astra rewrite --passes=vectorize %t.dir/vectorize.cu -- -std=c++17 > %t.again.cu
// RUN: diff %t.dir/vectorize.cu %t.again.cu
// After grid-stride, a one-element-per-thread kernel is vectorized too.
// RUN: %clang-astra rewrite --passes=grid-stride,vectorize --kernel=scale_once %s -- -std=c++17 > %t.compose.cu
// RUN: FileCheck %s --check-prefix=COMPOSE < %t.compose.cu
// RUN: %nvptx-compile -I %S %t.compose.cu | FileCheck %s --check-prefix=COMPOSE-PTX
// Options: 8-byte accesses; reductions refused; pointers asserted distinct;
// a bad value.
// RUN: %clang-astra rewrite --passes=vectorize --pass-opt=vectorize.bytes=8 --kernel=scale_add %s -- -std=c++17 > %t.b8.cu
// RUN: FileCheck %s --check-prefix=BYTES8 < %t.b8.cu
// RUN: %nvptx-compile -I %S %t.b8.cu | FileCheck %s --check-prefix=BYTES8-PTX
// RUN: %clang-astra rewrite --passes=vectorize --pass-opt=vectorize.reductions=0 --explain --kernel=fused_add_rmsnorm %s -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=NORED
// RUN: %clang-astra rewrite --passes=vectorize --pass-opt=vectorize.assume-noalias=1 --explain --kernel=axpy_alias %s -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=NOALIAS
// The index through a local of the body (`i = row * d + j`): its
// initializer's terms are the index's.
// RUN: %clang-astra rewrite --passes=vectorize --kernel=merge_local %s -- -std=c++17 | FileCheck %s --check-prefix=LOCAL
// RUN: not %clang-astra rewrite --passes=vectorize --pass-opt=vectorize.bytes=32 --kernel=scale_add %s -- -std=c++17 2>&1 | FileCheck %s --check-prefix=BADOPT
// NORED: vectorize: not applied: the loop reduces into 'sum' (refused: vectorize.reductions=0)
// NORED: vectorize: fired: block-stride loop over 'j'
// NOALIAS: vectorize: fired: block-stride loop over 'j': 16-byte vector accesses to y, x (4 elements
// BADOPT: error: --pass-opt=vectorize.bytes=32: vectorize.bytes must be 8 or 16, not '32'

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

// A template in a header (__half): a read-modify-write of y.
#include "Inputs/vectorize.cuh"
// HEADER-LABEL: {{^}}__global__ void add_bias(
// HEADER: {{^}}  if (16 % sizeof(T) == 0 &&
// HEADER-NEXT: {{^}}      reinterpret_cast<unsigned long long>(y + (row * cols)) % 16 == 0 &&
// HEADER-NEXT: {{^}}      reinterpret_cast<unsigned long long>(bias) % 16 == 0) {
// HEADER: {{^}}        reinterpret_cast<uint4 *>(astra_y)[astra_q] = reinterpret_cast<const uint4 *>(y + (row * cols + astra_jv * astra_vec))[astra_q];
// HEADER: {{^}}        astra_y[astra_k] = astra_y[astra_k] + astra_bias[astra_k];
// HEADER: {{^}}        reinterpret_cast<uint4 *>(y + (row * cols + astra_jv * astra_vec))[astra_q] = reinterpret_cast<const uint4 *>(astra_y)[astra_q];
// HEADER: {{^}}    for (int c = cols / astra_vec * astra_vec + threadIdx.x; c < cols; c += blockDim.x)
// HEADER-NEXT: {{^}}      y[row * cols + c] = y[row * cols + c] + bias[c];
// HEADER-NEXT: {{^}}  } else {
// HEADER-NEXT: {{^}}    for (int c = threadIdx.x; c < cols; c += blockDim.x)
// HEADER-NEXT: {{^}}      y[row * cols + c] = y[row * cols + c] + bias[c];
// HEADER-NEXT: {{^}}  }
// EXPLAIN: vectorize.cuh:9:3: vectorize: fired: block-stride loop over 'c': 16-byte vector accesses to y, bias (16 bytes of the smallest element type per thread and step)

// silu_and_mul (bf16 and fp16): one block per token, two reads of input at
// different offsets. The whole rewrite, since it shows the scheme.
// CHECK-LABEL: {{^}}__global__ void silu_and_mul(
// CHECK:      {{^}}  const int64_t token = blockIdx.x;
// CHECK-NEXT: {{^}}  if (16 % sizeof(T) == 0 &&
// CHECK-NEXT: {{^}}      reinterpret_cast<unsigned long long>(input + (token * 2 * d)) % 16 == 0 &&
// CHECK-NEXT: {{^}}      reinterpret_cast<unsigned long long>(input + (token * 2 * d + d)) % 16 == 0 &&
// CHECK-NEXT: {{^}}      reinterpret_cast<unsigned long long>(out + (token * d)) % 16 == 0) {
// CHECK-NEXT: {{^}}    constexpr int astra_vec = sizeof(T) <= 16 ? 16 / sizeof(T) : 1;
// CHECK-NEXT: {{^}}    for (int64_t astra_jv = threadIdx.x; astra_jv < d / astra_vec; astra_jv += blockDim.x) {
// CHECK-NEXT: {{^}}      alignas(16) T astra_input_0[astra_vec];
// CHECK-NEXT: {{^}}      #pragma unroll
// CHECK-NEXT: {{^}}      for (int astra_q = 0; astra_q < (int)(astra_vec * sizeof(T) / 16); ++astra_q)
// CHECK-NEXT: {{^}}        reinterpret_cast<uint4 *>(astra_input_0)[astra_q] = reinterpret_cast<const uint4 *>(input + (token * 2 * d + astra_jv * astra_vec))[astra_q];
// CHECK-NEXT: {{^}}      alignas(16) T astra_input_1[astra_vec];
// CHECK-NEXT: {{^}}      #pragma unroll
// CHECK-NEXT: {{^}}      for (int astra_q = 0; astra_q < (int)(astra_vec * sizeof(T) / 16); ++astra_q)
// CHECK-NEXT: {{^}}        reinterpret_cast<uint4 *>(astra_input_1)[astra_q] = reinterpret_cast<const uint4 *>(input + (token * 2 * d + d + astra_jv * astra_vec))[astra_q];
// CHECK-NEXT: {{^}}      alignas(16) T astra_out[astra_vec];
// CHECK-NEXT: {{^}}      #pragma unroll
// CHECK-NEXT: {{^}}      for (int astra_k = 0; astra_k < astra_vec; ++astra_k) {
// CHECK-NEXT: {{^}}        const float x = (float)astra_input_0[astra_k];
// CHECK-NEXT: {{^}}        const float y = (float)astra_input_1[astra_k];
// CHECK-NEXT: {{^}}        astra_out[astra_k] = (T)(x / (1.f + expf(-x)) * y);
// CHECK-NEXT: {{^}}      }
// CHECK-NEXT: {{^}}      #pragma unroll
// CHECK-NEXT: {{^}}      for (int astra_q = 0; astra_q < (int)(astra_vec * sizeof(T) / 16); ++astra_q)
// CHECK-NEXT: {{^}}        reinterpret_cast<uint4 *>(out + (token * d + astra_jv * astra_vec))[astra_q] = reinterpret_cast<const uint4 *>(astra_out)[astra_q];
// CHECK-NEXT: {{^}}    }
// CHECK-NEXT: {{^}}    for (int64_t idx = d / astra_vec * astra_vec + threadIdx.x; idx < d; idx += blockDim.x) {
// CHECK-NEXT: {{^}}      const float x = (float)input[token * 2 * d + idx];
// CHECK-NEXT: {{^}}      const float y = (float)input[token * 2 * d + d + idx];
// CHECK-NEXT: {{^}}      out[token * d + idx] = (T)(x / (1.f + expf(-x)) * y);
// CHECK-NEXT: {{^}}    }
// CHECK-NEXT: {{^}}  } else {
// CHECK-NEXT: {{^}}    for (int64_t idx = threadIdx.x; idx < d; idx += blockDim.x) {
// CHECK-NEXT: {{^}}      const float x = (float)input[token * 2 * d + idx];
// CHECK-NEXT: {{^}}      const float y = (float)input[token * 2 * d + d + idx];
// CHECK-NEXT: {{^}}      out[token * d + idx] = (T)(x / (1.f + expf(-x)) * y);
// CHECK-NEXT: {{^}}    }
// CHECK-NEXT: {{^}}  }
// CHECK-NEXT: {{^}}}
template <typename T>
__global__ void silu_and_mul(T *__restrict__ out, const T *__restrict__ input,
                             const int d) {
  const int64_t token = blockIdx.x;
  for (int64_t idx = threadIdx.x; idx < d; idx += blockDim.x) {
    const float x = (float)input[token * 2 * d + idx];
    const float y = (float)input[token * 2 * d + d + idx];
    out[token * d + idx] = (T)(x / (1.f + expf(-x)) * y);
  }
}
// EXPLAIN: vectorize.cu:[[@LINE-6]]:3: vectorize: fired: block-stride loop over 'idx': 16-byte vector accesses to input, out

// fused_add_rmsnorm (bf16): the first loop updates residual in place and
// reduces into a per-thread sum that a warp shuffle and shared memory then
// combine; the second reads a __shared__ scale.
// CHECK-LABEL: {{^}}__global__ void fused_add_rmsnorm(
// CHECK:      {{^}}  float sum = 0.f;
// CHECK-NEXT: {{^}}  if (16 % sizeof(T) == 0 &&
// CHECK-NEXT: {{^}}      reinterpret_cast<unsigned long long>(input + (row * d)) % 16 == 0 &&
// CHECK-NEXT: {{^}}      reinterpret_cast<unsigned long long>(residual + (row * d)) % 16 == 0) {
// CHECK:      {{^}}        const float r = (float)astra_input[astra_k] + (float)astra_residual[astra_k];
// CHECK-NEXT: {{^}}        astra_residual[astra_k] = (T)r;
// CHECK-NEXT: {{^}}        sum += r * r;
// CHECK:      {{^}}        reinterpret_cast<uint4 *>(residual + (row * d + astra_jv * astra_vec))[astra_q] = reinterpret_cast<const uint4 *>(astra_residual)[astra_q];
// CHECK:      {{^}}  for (int o = 16; o > 0; o >>= 1)
// CHECK:      {{^}}      reinterpret_cast<unsigned long long>(weight) % 16 == 0) {
// CHECK:      {{^}}      alignas(16) T astra_input[astra_vec];
// CHECK-NEXT: {{^}}      alignas(16) T astra_weight[astra_vec];
// CHECK:      {{^}}        astra_input[astra_k] = (T)(r * s_inv_rms * (float)astra_weight[astra_k]);
template <typename T>
__global__ void fused_add_rmsnorm(T *__restrict__ input, T *__restrict__ residual,
                                  const T *__restrict__ weight, const int d,
                                  const float eps) {
  __shared__ float s_inv_rms;
  __shared__ float s_part[32];
  const int64_t row = blockIdx.x;
  float sum = 0.f;
  for (int j = threadIdx.x; j < d; j += blockDim.x) {
    const float r = (float)input[row * d + j] + (float)residual[row * d + j];
    residual[row * d + j] = (T)r;
    sum += r * r;
  }
  // EXPLAIN: vectorize.cu:[[@LINE-5]]:3: vectorize: fired: block-stride loop over 'j': 16-byte vector accesses to input, residual ({{.*}}; the reduction into 'sum' now combines a different subset of elements per thread (float rounding changes; vectorize.reductions=0 refuses)
  for (int o = 16; o > 0; o >>= 1)
    sum += __shfl_xor_sync(0xffffffffu, sum, o);
  if (threadIdx.x % 32 == 0)
    s_part[threadIdx.x / 32] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0.f;
    for (int w = 0; w < (blockDim.x + 31) / 32; ++w)
      t += s_part[w];
    s_inv_rms = rsqrtf(t / d + eps);
  }
  __syncthreads();
  for (int j = threadIdx.x; j < d; j += blockDim.x) {
    const float r = (float)residual[row * d + j];
    input[row * d + j] = (T)(r * s_inv_rms * (float)weight[j]);
  }
  // EXPLAIN: vectorize.cu:[[@LINE-4]]:3: vectorize: fired: block-stride loop over 'j': 16-byte vector accesses to residual, input, weight
}

// A block reduction helper's result is the same in every thread of the
// block (it returns shared memory read at index 0 after a barrier), so a
// block-stride loop that reads it is vectorized: the second loop of a
// per-row quantization. The output pointer is named q, like the loop's own
// chunk counter astra_q: its buffer gets another name.
__device__ float row_max(float v) {
  __shared__ float red[1024];
  red[threadIdx.x] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s)
      red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
    __syncthreads();
  }
  const float result = red[0];
  __syncthreads();
  return result;
}
__device__ float row_max_of(float v) { return row_max(v); }
// Not the same in every thread: each adds its own v.
__device__ float own_plus_max(float v) { return v + row_max(v); }
// CHECK-LABEL: {{^}}__global__ void quant_row(
// CHECK: {{^}}      alignas(16) signed char astra_q_elems[astra_vec];
// CHECK: {{^}}        astra_q_elems[astra_k] = (signed char)(astra_x[astra_k] * scale);
// CHECK: {{^}}      *reinterpret_cast<uint4 *>(q + (row * n + astra_jv * astra_vec)) = *reinterpret_cast<const uint4 *>(astra_q_elems);
__global__ void quant_row(const float *__restrict__ x, signed char *__restrict__ q, int n) {
  const long row = blockIdx.x;
  float m = 0.f;
  for (int j = threadIdx.x; j < n; j += blockDim.x)
    m = fmaxf(m, fabsf(x[row * n + j]));
  const float scale = 127.f / row_max_of(m);
  for (int j = threadIdx.x; j < n; j += blockDim.x)
    q[row * n + j] = (signed char)(x[row * n + j] * scale);
  // EXPLAIN: vectorize.cu:[[@LINE-2]]:3: vectorize: fired: block-stride loop over 'j': 16-byte vector accesses to q, x (16 elements per thread and step)
}
// CHECK-LABEL: {{^}}__global__ void own_scale(
// CHECK: {{^}}  for (int j = threadIdx.x; j < n; j += blockDim.x)
// CHECK-NEXT: {{^}}    q[row * n + j] = (signed char)(x[row * n + j] * scale);
__global__ void own_scale(const float *__restrict__ x, signed char *__restrict__ q, int n) {
  const long row = blockIdx.x;
  const float scale = own_plus_max(x[row * n + threadIdx.x]);
  for (int j = threadIdx.x; j < n; j += blockDim.x)
    q[row * n + j] = (signed char)(x[row * n + j] * scale);
  // EXPLAIN: vectorize.cu:[[@LINE-1]]:53: vectorize: not applied: the body reads 'scale', which is not provably the same for every thread that shares the loop
}
// A grid-stride loop is shared by the threads of every block: one block's
// reduction is not the same in the others.
// CHECK-LABEL: {{^}}__global__ void grid_scale(
// CHECK: {{^}}  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
// CHECK-NEXT: {{^}}    y[i] = x[i] * s;
__global__ void grid_scale(const float *__restrict__ x, float *__restrict__ y, int n) {
  const float s = row_max(x[threadIdx.x]);
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    y[i] = x[i] * s;
  // EXPLAIN: vectorize.cu:[[@LINE-1]]:19: vectorize: not applied: the body reads 's', which is not provably the same for every thread that shares the loop
}

// The loop may start at a copy of threadIdx.x (never changed); a copy that
// changes is not the thread index.
// CHECK-LABEL: {{^}}__global__ void tid_copy(
// CHECK: {{^}}    for (int astra_jv = tid; astra_jv < n / astra_vec; astra_jv += blockDim.x) {
__global__ void tid_copy(const float *__restrict__ x, float *__restrict__ y, int n) {
  const int tid = threadIdx.x;
  for (int j = tid; j < n; j += blockDim.x)
    y[j] = 2.f * x[j];
  // EXPLAIN: vectorize.cu:[[@LINE-2]]:3: vectorize: fired: block-stride loop over 'j'
}
// CHECK-LABEL: {{^}}__global__ void tid_moved(
// CHECK: {{^}}  for (int j = tid; j < n; j += blockDim.x)
__global__ void tid_moved(const float *__restrict__ x, float *__restrict__ y, int n) {
  int tid = threadIdx.x;
  tid += 1;
  for (int j = tid; j < n; j += blockDim.x)
    y[j] = 2.f * x[j];
  // EXPLAIN: vectorize.cu:[[@LINE-2]]:3: vectorize: not applied: the loop steps by blockDim.x but does not start at threadIdx.x
}

// An elementwise float kernel already in grid-stride form: 4 floats per
// access, the start and step of the grid kept.
// CHECK-LABEL: {{^}}__global__ void scale_add(
// CHECK-NEXT: {{^}}                          const float *__restrict__ b, float alpha, int n) {
// CHECK-NEXT: {{^}}  if (reinterpret_cast<unsigned long long>(out) % 16 == 0 &&
// CHECK-NEXT: {{^}}      reinterpret_cast<unsigned long long>(a) % 16 == 0 &&
// CHECK-NEXT: {{^}}      reinterpret_cast<unsigned long long>(b) % 16 == 0) {
// CHECK-NEXT: {{^}}    constexpr int astra_vec = 4;
// CHECK-NEXT: {{^}}    for (int astra_jv = blockIdx.x * blockDim.x + threadIdx.x; astra_jv < n / astra_vec; astra_jv += blockDim.x * gridDim.x) {
// CHECK-NEXT: {{^}}      alignas(16) float astra_out[astra_vec];
// CHECK-NEXT: {{^}}      alignas(16) float astra_a[astra_vec];
// CHECK-NEXT: {{^}}      *reinterpret_cast<uint4 *>(astra_a) = *reinterpret_cast<const uint4 *>(a + astra_jv * astra_vec);
// CHECK-NEXT: {{^}}      alignas(16) float astra_b[astra_vec];
// CHECK-NEXT: {{^}}      *reinterpret_cast<uint4 *>(astra_b) = *reinterpret_cast<const uint4 *>(b + astra_jv * astra_vec);
// CHECK-NEXT: {{^}}      #pragma unroll
// CHECK-NEXT: {{^}}      for (int astra_k = 0; astra_k < astra_vec; ++astra_k) {
// CHECK-NEXT: {{^}}        astra_out[astra_k] = alpha * astra_a[astra_k] + astra_b[astra_k];
// CHECK-NEXT: {{^}}      }
// CHECK-NEXT: {{^}}      *reinterpret_cast<uint4 *>(out + astra_jv * astra_vec) = *reinterpret_cast<const uint4 *>(astra_out);
// CHECK-NEXT: {{^}}    }
// CHECK-NEXT: {{^}}    for (int i = n / astra_vec * astra_vec + (blockIdx.x * blockDim.x + threadIdx.x); i < n; i += blockDim.x * gridDim.x)
// CHECK-NEXT: {{^}}      out[i] = alpha * a[i] + b[i];
// CHECK-NEXT: {{^}}  } else {
// CHECK-NEXT: {{^}}    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
// CHECK-NEXT: {{^}}      out[i] = alpha * a[i] + b[i];
// CHECK-NEXT: {{^}}  }
// CHECK-NEXT: {{^}}}
__global__ void scale_add(float *__restrict__ out, const float *__restrict__ a,
                          const float *__restrict__ b, float alpha, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    out[i] = alpha * a[i] + b[i];
}
// EXPLAIN: vectorize.cu:[[@LINE-3]]:3: vectorize: fired: grid-stride loop over 'i': 16-byte vector accesses to out, a, b (4 elements per thread and step), scalar tail and a scalar path for misaligned pointers
// PTX-LABEL: .entry _Z9scale_addPfPKfS1_fi(
// PTX: ld.global{{(.nc)?}}.v4.{{[bu]}}32
// PTX: ld.global{{(.nc)?}}.v4.{{[bu]}}32
// PTX: st.global.v4.{{[bu]}}32
// BYTES8: {{^}}  if (reinterpret_cast<unsigned long long>(out) % 8 == 0 &&
// BYTES8: {{^}}    constexpr int astra_vec = 2;
// BYTES8: {{^}}      alignas(8) float astra_a[astra_vec];
// BYTES8-NEXT: {{^}}      *reinterpret_cast<uint2 *>(astra_a) = *reinterpret_cast<const uint2 *>(a + astra_jv * astra_vec);
// BYTES8-PTX: ld.global{{(.nc)?}}.v2.{{[bu]}}32
// BYTES8-PTX: st.global.v2.{{[bu]}}32

// Mixed widths (bf16 in, float out) through a macro: 8 elements per step, one
// 16-byte load of bf16 and two 16-byte stores of float.
#define BF2F(v) __bfloat162float(v)
// CHECK-LABEL: {{^}}__global__ void widen(
// CHECK:      {{^}}    constexpr int astra_vec = 8;
// CHECK:      {{^}}      for (int astra_q = 0; astra_q < 2; ++astra_q)
// CHECK-NEXT: {{^}}        reinterpret_cast<uint4 *>(out + (blockIdx.x * n + astra_jv * astra_vec))[astra_q] = reinterpret_cast<const uint4 *>(astra_out)[astra_q];
__global__ void widen(float *__restrict__ out, const __nv_bfloat16 *__restrict__ in, int n) {
  for (int j = threadIdx.x; j < n; j += blockDim.x)
    out[blockIdx.x * n + j] = BF2F(in[blockIdx.x * n + j]);
}
// EXPLAIN: vectorize.cu:[[@LINE-3]]:3: vectorize: fired: block-stride loop over 'j': 16-byte vector accesses to out, in (8 elements per thread and step)
// PTX-LABEL: .entry _Z5widenPfPK13__nv_bfloat16i(
// PTX: ld.global{{(.nc)?}}.v4.{{[bu]}}32
// PTX: st.global.v4.{{[bu]}}32

// int: a conditional write (continue) loads the buffer first; an integer
// reduction that an atomic combines.
// CHECK-LABEL: {{^}}__global__ void clamp_count(
// CHECK:      {{^}}      *reinterpret_cast<uint4 *>(astra_data) = *reinterpret_cast<const uint4 *>(data + (blockIdx.x * n + astra_jv * astra_vec));
// CHECK:      {{^}}        if (v >= lo && v <= hi)
// CHECK-NEXT: {{^}}          continue;
// CHECK-NEXT: {{^}}        astra_data[astra_k] = v < lo ? lo : hi;
// CHECK-NEXT: {{^}}        clipped += 1;
__global__ void clamp_count(int *__restrict__ data, int *__restrict__ counts,
                            int lo, int hi, int n) {
  int clipped = 0;
  for (int j = threadIdx.x; j < n; j += blockDim.x) {
    const int v = data[blockIdx.x * n + j];
    if (v >= lo && v <= hi)
      continue;
    data[blockIdx.x * n + j] = v < lo ? lo : hi;
    clipped += 1;
  }
  atomicAdd(&counts[blockIdx.x], clipped);
}
// EXPLAIN: vectorize.cu:[[@LINE-9]]:3: vectorize: fired: block-stride loop over 'j': 16-byte vector accesses to data (4 elements per thread and step), scalar tail and a scalar path for misaligned pointers; the reduction into 'clipped' now combines a different subset of elements per thread{{$}}
// PTX-LABEL: .entry _Z11clamp_countPiS_iii(
// PTX: ld.global{{(.nc)?}}.v4.{{[bu]}}32
// PTX: st.global.v4.{{[bu]}}32

// The loop variable used in the body keeps its value per element.
// CHECK-LABEL: {{^}}__global__ void ramp(
// CHECK:      {{^}}      for (int astra_k = 0; astra_k < astra_vec; ++astra_k) {
// CHECK-NEXT: {{^}}        int j = astra_jv * astra_vec + astra_k;
// CHECK-NEXT: {{^}}        astra_y[astra_k] = (float)j * step;
__global__ void ramp(float *__restrict__ y, float step, int n) {
  for (int j = threadIdx.x; j < n; j += blockDim.x)
    y[j] = (float)j * step;
}
// PTX-LABEL: .entry _Z4rampPffi(
// PTX: st.global.v4.{{[bu]}}32

// One element per thread: vectorize alone says to run grid-stride first.
// CHECK-LABEL: {{^}}__global__ void scale_once(
// CHECK-NEXT: {{^}}  int i = blockIdx.x * blockDim.x + threadIdx.x;
__global__ void scale_once(float *__restrict__ y, const float *__restrict__ x, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = s * x[i];
}
// EXPLAIN: vectorize.cu:[[@LINE-5]]:17: vectorize: not applied: no block-stride loop (j = threadIdx.x; j < n; j += blockDim.x) or grid-stride loop in the kernel; it processes one element per thread: run grid-stride first (--passes=grid-stride,vectorize)
// COMPOSE-LABEL: {{^}}__global__ void scale_once(
// COMPOSE-NEXT: {{^}}  if (reinterpret_cast<unsigned long long>(y) % 16 == 0 &&
// COMPOSE-NEXT: {{^}}      reinterpret_cast<unsigned long long>(x) % 16 == 0) {
// COMPOSE-NEXT: {{^}}    constexpr int astra_vec = 4;
// COMPOSE-NEXT: {{^}}    for (int astra_jv = blockIdx.x * blockDim.x + threadIdx.x; astra_jv < n / astra_vec; astra_jv += blockDim.x * gridDim.x) {
// COMPOSE:      {{^}}    for (int i = n / astra_vec * astra_vec + (blockIdx.x * blockDim.x + threadIdx.x); i < n; i += blockDim.x * gridDim.x)
// COMPOSE-NEXT: {{^}}      y[i] = s * x[i];
// COMPOSE-NEXT: {{^}}  } else {
// COMPOSE-NEXT: {{^}}    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
// COMPOSE-NEXT: {{^}}      y[i] = s * x[i];
// COMPOSE-NEXT: {{^}}  }
// COMPOSE-NEXT: {{^}}}
// COMPOSE-PTX-LABEL: .entry _Z10scale_oncePfPKffi(
// COMPOSE-PTX: ld.global{{(.nc)?}}.v4.{{[bu]}}32
// COMPOSE-PTX: st.global.v4.{{[bu]}}32

//===--- Refusals: the text stays as it is --------------------------------===//

// Pointers that may overlap (an in-place caller could pass y == x + 1).
// CHECK-LABEL: {{^}}__global__ void axpy_alias(
// CHECK-NEXT: {{^}}  for (int j = threadIdx.x; j < n; j += blockDim.x)
__global__ void axpy_alias(float *y, const float *x, float a, int n) {
  for (int j = threadIdx.x; j < n; j += blockDim.x)
    y[j] = a * x[j] + y[j];
}
// EXPLAIN: vectorize.cu:[[@LINE-3]]:3: vectorize: not applied: 'y' and 'x' may overlap (one is written, and they are not both __restrict__ kernel parameters): mark them __restrict__ (the restrict-const pass does where every launch allows) or pass --pass-opt=vectorize.assume-noalias=1

// Strided and indirect accesses; one pointer written and read shifted.
// CHECK-LABEL: {{^}}__global__ void strided(
// CHECK-NEXT: {{^}}  for (int j = threadIdx.x; j < n; j += blockDim.x)
__global__ void strided(float *__restrict__ y, const float *__restrict__ x, int n) {
  for (int j = threadIdx.x; j < n; j += blockDim.x)
    y[j] = x[2 * j];
}
// EXPLAIN: vectorize.cu:[[@LINE-2]]:12: vectorize: not applied: 'x[2 * j]' is not x[base + j]: strided, indirect or scaled accesses are not vectorized
// CHECK-LABEL: {{^}}__global__ void gather(
// CHECK: {{^}}  for (int j = threadIdx.x; j < n; j += blockDim.x)
__global__ void gather(float *__restrict__ y, const float *__restrict__ x,
                       const int *__restrict__ idx, int n) {
  for (int j = threadIdx.x; j < n; j += blockDim.x)
    y[j] = x[idx[j]];
}
// EXPLAIN: vectorize.cu:[[@LINE-2]]:12: vectorize: not applied: 'x[idx[j]]' is not x[base + j]
// CHECK-LABEL: {{^}}__global__ void shifted(
// CHECK-NEXT: {{^}}  for (int j = threadIdx.x; j < n; j += blockDim.x)
__global__ void shifted(float *__restrict__ x, int n) {
  for (int j = threadIdx.x; j < n; j += blockDim.x)
    x[j] = x[j + 1];
}
// EXPLAIN: vectorize.cu:[[@LINE-3]]:3: vectorize: not applied: 'x' is written at one offset and accessed at another ('x[j]', 'x[j + 1]'); the ranges may overlap, so the order of reads and writes would change

// The thread index read in the body, or in an offset; a barrier.
// CHECK-LABEL: {{^}}__global__ void reads_tid(
// CHECK-NEXT: {{^}}  for (int j = threadIdx.x; j < n; j += blockDim.x)
__global__ void reads_tid(float *__restrict__ y, const float *__restrict__ x, int n) {
  for (int j = threadIdx.x; j < n; j += blockDim.x)
    y[j] = x[j] + threadIdx.x;
}
// EXPLAIN: vectorize.cu:[[@LINE-2]]:19: vectorize: not applied: the body reads threadIdx.x other than through 'j'; vector chunks go to different threads
// CHECK-LABEL: {{^}}__global__ void thread_base(
// CHECK-NEXT: {{^}}  const int base = threadIdx.x * n;
// CHECK-NEXT: {{^}}  for (int j = threadIdx.x; j < n; j += blockDim.x)
__global__ void thread_base(float *__restrict__ y, const float *__restrict__ x, int n) {
  const int base = threadIdx.x * n;
  for (int j = threadIdx.x; j < n; j += blockDim.x)
    y[base + j] = x[j];
}
// EXPLAIN: vectorize.cu:[[@LINE-2]]:7: vectorize: not applied: the offset of 'y[base + j]' is not the same for every iteration and thread
// CHECK-LABEL: {{^}}__global__ void barrier(
// CHECK-NEXT: {{^}}  for (int j = threadIdx.x; j < n; j += blockDim.x) {
__global__ void barrier(float *__restrict__ y, const float *__restrict__ x, int n) {
  for (int j = threadIdx.x; j < n; j += blockDim.x) {
    y[j] = x[j];
    __syncthreads();
  }
}
// EXPLAIN: vectorize.cu:[[@LINE-5]]:3: vectorize: not applied: the body calls __syncthreads at {{.*}}vectorize.cu:[[@LINE-3]]:5

// Only some threads reach the loop.
// CHECK-LABEL: {{^}}__global__ void some_threads(
// CHECK-NEXT: {{^}}  if (threadIdx.x < 64)
// CHECK-NEXT: {{^}}    for (int j = threadIdx.x; j < n; j += blockDim.x)
__global__ void some_threads(float *__restrict__ y, const float *__restrict__ x, int n) {
  if (threadIdx.x < 64)
    for (int j = threadIdx.x; j < n; j += blockDim.x)
      y[j] = x[j];
}
// EXPLAIN: vectorize.cu:[[@LINE-4]]:7: vectorize: not applied: the loop depends on a condition that differs between threads ('threadIdx.x < 64'), so not every thread of the block runs the loop

// A value carried from one element to the next; a per-thread result that is
// stored, not combined across threads.
// CHECK-LABEL: {{^}}__global__ void carried(
// CHECK-NEXT: {{^}}  float prev = 0.f;
// CHECK-NEXT: {{^}}  for (int j = threadIdx.x; j < n; j += blockDim.x) {
__global__ void carried(float *__restrict__ y, const float *__restrict__ x, int n) {
  float prev = 0.f;
  for (int j = threadIdx.x; j < n; j += blockDim.x) {
    y[j] = x[j] + prev;
    prev = x[j];
  }
}
// EXPLAIN: vectorize.cu:[[@LINE-4]]:19: vectorize: not applied: 'prev' is assigned in the loop and used other than as a reduction (v += e, v = max(v, e), ...); its value would carry between elements
// CHECK-LABEL: {{^}}__global__ void thread_max(
// CHECK-NEXT: {{^}}  float m = -1e30f;
// CHECK-NEXT: {{^}}  for (int j = threadIdx.x; j < n; j += blockDim.x)
__global__ void thread_max(const float *__restrict__ x, float *__restrict__ out, int n) {
  float m = -1e30f;
  for (int j = threadIdx.x; j < n; j += blockDim.x)
    m = fmaxf(m, x[j]);
  out[threadIdx.x] = m;
}
// EXPLAIN: vectorize.cu:[[@LINE-2]]:22: vectorize: not applied: the loop reduces into 'm', whose per-thread value is used here other than combined across threads

// Arg-max and arg-min: `if (e > best) { best = e; best_index = j; }` is a
// per-thread reduction of a (value, index) pair when the pair then goes to a
// helper that keeps the larger value and, on equal values, the lower index:
// each thread keeps the first maximum of its elements, so the block's result
// is the lowest index of the maximum however the elements are split.
__device__ void argmax_combine(float &value, int &index) {
  __shared__ float vals[1024];
  __shared__ int idxs[1024];
  const int tid = threadIdx.x;
  vals[tid] = value;
  idxs[tid] = index;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) {
      const float v = vals[tid + s];
      const int i = idxs[tid + s];
      if (v > vals[tid] || (v == vals[tid] && i < idxs[tid])) {
        vals[tid] = v;
        idxs[tid] = i;
      }
    }
    __syncthreads();
  }
  value = vals[0];
  index = idxs[0];
  __syncthreads();
}
// The same for the minimum, its comparisons written the other way round.
__device__ void argmin_combine(float &value, int &index) {
  __shared__ float vals[1024];
  __shared__ int idxs[1024];
  const int tid = threadIdx.x;
  vals[tid] = value;
  idxs[tid] = index;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) {
      const float v = vals[tid + s];
      const int i = idxs[tid + s];
      if ((vals[tid] == v && idxs[tid] > i) || vals[tid] > v) {
        idxs[tid] = i;
        vals[tid] = v;
      }
    }
    __syncthreads();
  }
  value = vals[0];
  index = idxs[0];
  __syncthreads();
}
// Keeps the larger value, but on equal values whichever thread it meets.
__device__ void argmax_any_tie(float &value, int &index) {
  __shared__ float vals[1024];
  __shared__ int idxs[1024];
  const int tid = threadIdx.x;
  vals[tid] = value;
  idxs[tid] = index;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) {
      const float v = vals[tid + s];
      const int i = idxs[tid + s];
      if (v > vals[tid]) {
        vals[tid] = v;
        idxs[tid] = i;
      }
    }
    __syncthreads();
  }
  value = vals[0];
  index = idxs[0];
  __syncthreads();
}
// The element read twice, as in kernels/kernelbench/argmax.cu.
// CHECK-LABEL: {{^}}__global__ void row_argmax(
// CHECK:      {{^}}      for (int astra_k = 0; astra_k < astra_vec; ++astra_k) {
// CHECK-NEXT: {{^}}        int j = astra_jv * astra_vec + astra_k;
// CHECK-NEXT: {{^}}        if (astra_xr[astra_k] > best) {
// CHECK-NEXT: {{^}}          best = astra_xr[astra_k];
// CHECK-NEXT: {{^}}          best_index = j;
// CHECK:      {{^}}  argmax_combine(best, best_index);
__global__ void row_argmax(const float *__restrict__ x, int *__restrict__ out, int cols) {
  const float *xr = x + blockIdx.x * cols;
  float best = -INFINITY;
  int best_index = 0x7fffffff;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
    if (xr[j] > best) {
      best = xr[j];
      best_index = j;
    }
  }
  // EXPLAIN: vectorize.cu:[[@LINE-6]]:3: vectorize: fired: block-stride loop over 'j': 16-byte vector accesses to xr (4 elements per thread and step), scalar tail and a scalar path for misaligned pointers; the arg-max into (best, best_index) keeps the lowest index of the extremum: each thread keeps the first one of its elements and the combine breaks ties by the lower index
  argmax_combine(best, best_index);
  if (threadIdx.x == 0)
    out[blockIdx.x] = best_index;
}
// A local holding the element; `best > v`; the index plus a uniform offset.
// CHECK-LABEL: {{^}}__global__ void row_argmin(
// CHECK:      {{^}}        const float v = astra_x[astra_k];
// CHECK-NEXT: {{^}}        if (best > v) {
// CHECK-NEXT: {{^}}          best = v;
// CHECK-NEXT: {{^}}          best_index = j + first;
__global__ void row_argmin(const float *__restrict__ x, int *__restrict__ out, int cols, int first) {
  float best = INFINITY;
  int best_index = 0x7fffffff;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
    const float v = x[blockIdx.x * cols + j];
    if (best > v) {
      best = v;
      best_index = j + first;
    }
  }
  // EXPLAIN: vectorize.cu:[[@LINE-7]]:3: vectorize: fired: block-stride loop over 'j': {{.*}}; the arg-min into (best, best_index) keeps the lowest index
  argmin_combine(best, best_index);
  if (threadIdx.x == 0)
    out[blockIdx.x] = best_index;
}
// '>=' keeps the last maximum of a thread's elements.
// CHECK-LABEL: {{^}}__global__ void argmax_last(
// CHECK-NEXT: {{^}}  float best = -INFINITY;
// CHECK-NEXT: {{^}}  int best_index = 0x7fffffff;
// CHECK-NEXT: {{^}}  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
__global__ void argmax_last(const float *__restrict__ x, int *__restrict__ out, int cols) {
  float best = -INFINITY;
  int best_index = 0x7fffffff;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
    if (x[blockIdx.x * cols + j] >= best) {
      best = x[blockIdx.x * cols + j];
      best_index = j;
    }
  }
  // EXPLAIN: vectorize.cu:[[@LINE-5]]:34: vectorize: not applied: 'best' and 'best_index' take an element equal to 'best' ('>='), so each thread keeps the last maximum of its elements; which one that is depends on how the elements are split between threads (with '>' the first one is kept)
  argmax_combine(best, best_index);
  if (threadIdx.x == 0)
    out[blockIdx.x] = best_index;
}
// A combine that does not break ties by the index.
// CHECK-LABEL: {{^}}__global__ void argmax_tie(
// CHECK-NEXT: {{^}}  float best = -INFINITY;
// CHECK-NEXT: {{^}}  int best_index = 0x7fffffff;
// CHECK-NEXT: {{^}}  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
__global__ void argmax_tie(const float *__restrict__ x, int *__restrict__ out, int cols) {
  float best = -INFINITY;
  int best_index = 0x7fffffff;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
    if (x[blockIdx.x * cols + j] > best) {
      best = x[blockIdx.x * cols + j];
      best_index = j;
    }
  }
  argmax_any_tie(best, best_index);
  // EXPLAIN: vectorize.cu:[[@LINE-1]]:3: vectorize: not applied: 'argmax_any_tie' combines the arg-reduction pair (best, best_index) but its body has no step keeping the larger value and, on equal values, the lower index (if (v > cur || (v == cur && i < cur_i)) { cur = v; cur_i = i; }); without it the result depends on which thread saw which elements
  if (threadIdx.x == 0)
    out[blockIdx.x] = best_index;
}
// An arg-max combined by the arg-min helper; an index that falls as j grows.
// CHECK-LABEL: {{^}}__global__ void argmax_by_min(
// CHECK-NEXT: {{^}}  float best = -INFINITY;
// CHECK-NEXT: {{^}}  int best_index = 0x7fffffff;
// CHECK-NEXT: {{^}}  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
__global__ void argmax_by_min(const float *__restrict__ x, int *__restrict__ out, int cols) {
  float best = -INFINITY;
  int best_index = 0x7fffffff;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
    if (x[blockIdx.x * cols + j] > best) {
      best = x[blockIdx.x * cols + j];
      best_index = j;
    }
  }
  argmin_combine(best, best_index);
  // EXPLAIN: vectorize.cu:[[@LINE-1]]:3: vectorize: not applied: 'argmin_combine' combines the arg-reduction pair (best, best_index) but its body has no step keeping the larger value
  if (threadIdx.x == 0)
    out[blockIdx.x] = best_index;
}
// CHECK-LABEL: {{^}}__global__ void argmax_reversed(
// CHECK-NEXT: {{^}}  float best = -INFINITY;
// CHECK-NEXT: {{^}}  int best_index = 0x7fffffff;
// CHECK-NEXT: {{^}}  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
__global__ void argmax_reversed(const float *__restrict__ x, int *__restrict__ out, int cols) {
  float best = -INFINITY;
  int best_index = 0x7fffffff;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
    if (x[blockIdx.x * cols + j] > best) {
      best = x[blockIdx.x * cols + j];
      best_index = cols - j;
    }
  }
  // EXPLAIN: vectorize.cu:[[@LINE-3]]:20: vectorize: not applied: 'best_index' is set to 'cols - j', not the loop index 'j' plus a value that is the same for every thread and iteration; the first maximum a thread sees would not be the one of lowest index
  argmax_combine(best, best_index);
  if (threadIdx.x == 0)
    out[blockIdx.x] = best_index;
}

// Elements that do not divide 16 bytes, or are 16 bytes already; break.
struct rgb { float r, g, b; };
// CHECK-LABEL: {{^}}__global__ void copy_rgb(
// CHECK-NEXT: {{^}}  for (int j = threadIdx.x; j < n; j += blockDim.x)
__global__ void copy_rgb(rgb *__restrict__ y, const rgb *__restrict__ x, int n) {
  for (int j = threadIdx.x; j < n; j += blockDim.x)
    y[j] = x[j];
}
// EXPLAIN: vectorize.cu:[[@LINE-3]]:3: vectorize: not applied: the elements of 'y' are 12 bytes, which does not divide 16
// CHECK-LABEL: {{^}}__global__ void copy_float4(
// CHECK-NEXT: {{^}}  for (int j = threadIdx.x; j < n; j += blockDim.x)
__global__ void copy_float4(float4 *__restrict__ y, const float4 *__restrict__ x, int n) {
  for (int j = threadIdx.x; j < n; j += blockDim.x)
    y[j] = x[j];
}
// EXPLAIN: vectorize.cu:[[@LINE-3]]:3: vectorize: not applied: every element is already 16 bytes wide
// CHECK-LABEL: {{^}}__global__ void until_negative(
// CHECK-NEXT: {{^}}  for (int j = threadIdx.x; j < n; j += blockDim.x) {
__global__ void until_negative(float *__restrict__ y, const float *__restrict__ x, int n) {
  for (int j = threadIdx.x; j < n; j += blockDim.x) {
    if (x[j] < 0.f)
      break;
    y[j] = x[j];
  }
}
// EXPLAIN: vectorize.cu:[[@LINE-4]]:7: vectorize: not applied: the body leaves the loop with break

// A grid-stride loop reading shared memory; a helper that reads threadIdx.
// CHECK-LABEL: {{^}}__global__ void grid_shared(
__global__ void grid_shared(float *__restrict__ y, int n) {
  __shared__ float s;
  if (threadIdx.x == 0)
    s = 2.f;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    y[i] = s;
}
// EXPLAIN: vectorize.cu:[[@LINE-2]]:12: vectorize: not applied: the body uses __shared__ 's'; in a grid-stride loop an element may move to another block
__device__ float add_lane(float v) { return v + threadIdx.x % 32; }
// CHECK-LABEL: {{^}}__global__ void calls_add_lane(
// CHECK-NEXT: {{^}}  for (int j = threadIdx.x; j < n; j += blockDim.x)
__global__ void calls_add_lane(float *__restrict__ y, const float *__restrict__ x, int n) {
  for (int j = threadIdx.x; j < n; j += blockDim.x)
    y[j] = add_lane(x[j]);
}
// EXPLAIN: vectorize.cu:[[@LINE-2]]:12: vectorize: not applied: the body calls 'add_lane', which may have side effects or depend on the thread

// A loop that does not start at threadIdx.x.
// CHECK-LABEL: {{^}}__global__ void offset_start(
// CHECK-NEXT: {{^}}  for (int j = threadIdx.x + 1; j < n; j += blockDim.x)
__global__ void offset_start(float *__restrict__ y, const float *__restrict__ x, int n) {
  for (int j = threadIdx.x + 1; j < n; j += blockDim.x)
    y[j] = x[j];
}
// EXPLAIN: vectorize.cu:[[@LINE-3]]:3: vectorize: not applied: the loop steps by blockDim.x but does not start at threadIdx.x

// A row per block whose index is a local of the body.
__global__ void merge_local(__half *__restrict__ out,
                            const __half *__restrict__ a, float w, int d) {
  const long row = blockIdx.x;
  for (int j = threadIdx.x; j < d; j += blockDim.x) {
    const long i = row * d + j;
    out[i] = __float2half(w * __half2float(a[i]));
  }
}
// LOCAL-LABEL: __global__ void merge_local(
// LOCAL: {{^}}  if (reinterpret_cast<unsigned long long>(out + (row * d)) % 16 == 0 &&
// LOCAL-NEXT: {{^}}      reinterpret_cast<unsigned long long>(a + (row * d)) % 16 == 0) {
// LOCAL: {{^}}      *reinterpret_cast<uint4 *>(astra_a) = *reinterpret_cast<const uint4 *>(a + (row * d + astra_jv * astra_vec));
// LOCAL: {{^}}        const long i = row * d + j;
// LOCAL-NEXT: {{^}}        astra_out[astra_k] = __float2half(w * __half2float(astra_a[astra_k]));
// LOCAL: {{^}}      *reinterpret_cast<uint4 *>(out + (row * d + astra_jv * astra_vec)) = *reinterpret_cast<const uint4 *>(astra_out);
// EXPLAIN: vectorize.cu:[[@LINE-12]]:3: vectorize: fired: block-stride loop over 'j': 16-byte vector accesses to out, a (8 elements per thread and step)

void launch(__nv_bfloat16 *ob, const __nv_bfloat16 *ib, __half *oh,
            const __half *ih, __nv_bfloat16 *rb, __nv_bfloat16 *wb, int T,
            int d) {
  silu_and_mul<<<T, 1024>>>(ob, ib, d);
  silu_and_mul<<<T, 1024>>>(oh, ih, d);
  fused_add_rmsnorm<<<T, 1024>>>(ob, rb, wb, d, 1e-6f);
  add_bias<<<T, 256>>>(oh, ih, d);
}

// Template instantiations come last in the PTX, in the order of their use.
// PTX-LABEL: .entry _Z12silu_and_mulI13__nv_bfloat16EvPT_PKS1_i(
// PTX: ld.global{{(.nc)?}}.v4.{{[bu]}}32
// PTX: ld.global{{(.nc)?}}.v4.{{[bu]}}32
// PTX: st.global.v4.{{[bu]}}32
// PTX-LABEL: .entry _Z12silu_and_mulI6__halfEvPT_PKS1_i(
// PTX: ld.global{{(.nc)?}}.v4.{{[bu]}}32
// PTX: st.global.v4.{{[bu]}}32
// PTX-LABEL: .entry _Z17fused_add_rmsnormI13__nv_bfloat16EvPT_S2_PKS1_if(
// PTX: ld.global{{(.nc)?}}.v4.{{[bu]}}32
// PTX: st.global.v4.{{[bu]}}32
// PTX: ld.global{{(.nc)?}}.v4.{{[bu]}}32
// PTX: st.global.v4.{{[bu]}}32
// PTX-LABEL: .entry _Z8add_biasI6__halfEvPT_PKS1_i(
// PTX: ld.global{{(.nc)?}}.v4.{{[bu]}}32
// PTX: st.global.v4.{{[bu]}}32
