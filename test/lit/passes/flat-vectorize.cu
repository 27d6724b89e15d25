// flat-vectorize: grid-stride loops over a flat index split into a row
// (idx / cols) and a column (idx % cols) move chunks of one row with 16-byte
// accesses, behind a check that cols is a multiple of the chunk and the
// buffers are aligned; a scalar tail and the original loop stay.
// RUN: rm -rf %t.dir && mkdir -p %t.dir
// RUN: cp %s %t.dir/fv.cu
// RUN: %clang-astra rewrite --passes=flat-vectorize -i %t.dir/fv.cu -- -std=c++17
// RUN: FileCheck %s < %t.dir/fv.cu
// RUN: %nvptx-compile %t.dir/fv.cu | FileCheck %s --check-prefix=PTX
// RUN: %clang-astra rewrite --passes=flat-vectorize --explain %s -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=EXPLAIN
// A second run changes nothing more (the loops it wrote are not matched).
// RUN: %clang-astra rewrite --passes=flat-vectorize %t.dir/fv.cu -- -std=c++17 > %t.again.cu
// RUN: diff %t.dir/fv.cu %t.again.cu
// One element per thread: grid-stride first, then flat-vectorize, then
// grid-coarsen launches 1/4 of the blocks (the narrower path's chunk: its
// default factor is the smallest astra_vec in the kernel).
// RUN: cp %S/Inputs/flat-vectorize.astra.json %t.dir/fv.cu.astra.json
// RUN: cp %s %t.dir/fv.cu
// RUN: %clang-astra rewrite --passes=restrict-const,grid-stride,flat-vectorize,grid-coarsen --kernel=gather_once -i %t.dir/fv.cu -- -std=c++17
// RUN: FileCheck %s --check-prefix=COMPOSE < %t.dir/fv.cu
// RUN: FileCheck %s --check-prefix=COMPOSE-SPEC < %t.dir/fv.cu.astra.json
// RUN: %nvptx-compile %t.dir/fv.cu | FileCheck %s --check-prefix=COMPOSE-PTX
// The same for a scatter-add: grid-coarsen accepts the vector atomic's asm
// (any other inline asm it refuses).
// RUN: cp %s %t.dir/fv.cu
// RUN: %clang-astra rewrite --passes=restrict-const,grid-stride,flat-vectorize,grid-coarsen --kernel=scatter_once -i %t.dir/fv.cu -- -std=c++17
// RUN: FileCheck %s --check-prefix=SCATTER < %t.dir/fv.cu
// RUN: %nvptx-compile %t.dir/fv.cu | FileCheck %s --check-prefix=SCATTER-PTX

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

// The feature gather of a GNN mini-batch: the row comes through an index,
// the store is the flat index.
__global__ void gather(const __half *__restrict__ x,
                       const int64_t *__restrict__ index,
                       __half *__restrict__ out, int64_t n, int cols) {
  for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < n * cols; idx += (int64_t)blockDim.x * gridDim.x) {
    const int64_t i = idx / cols;
    const int c = idx % cols;
    out[idx] = x[index[i] * cols + c];
  }
}
// CHECK-LABEL: {{^}}__global__ void gather(
// CHECK:      {{^}}  if (cols % 8 == 0 &&
// CHECK-NEXT: {{^}}      reinterpret_cast<unsigned long long>(out) % 16 == 0 &&
// CHECK-NEXT: {{^}}      reinterpret_cast<unsigned long long>(x) % 16 == 0) {
// CHECK-NEXT: {{^}}    constexpr int astra_vec = 8;
// CHECK-NEXT: {{^}}    for (int64_t astra_v = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; astra_v < (n * cols) / astra_vec; astra_v += (int64_t)blockDim.x * gridDim.x) {
// CHECK-NEXT: {{^}}      const int64_t astra_idx0 = astra_v * astra_vec;
// CHECK-NEXT: {{^}}      const int64_t i = astra_idx0 / cols;
// CHECK-NEXT: {{^}}      const int astra_c0 = astra_idx0 % cols;
// CHECK-NEXT: {{^}}      alignas(16) __half astra_out[astra_vec];
// CHECK-NEXT: {{^}}      alignas(16) __half astra_x[astra_vec];
// CHECK-NEXT: {{^}}      *reinterpret_cast<uint4 *>(astra_x) = *reinterpret_cast<const uint4 *>(x + (index[i] * cols + astra_c0));
// CHECK-NEXT: {{^}}      #pragma unroll
// CHECK-NEXT: {{^}}      for (int astra_k = 0; astra_k < astra_vec; ++astra_k) {
// CHECK-NEXT: {{^}}        astra_out[astra_k] = astra_x[astra_k];
// CHECK-NEXT: {{^}}      }
// CHECK-NEXT: {{^}}      *reinterpret_cast<uint4 *>(out + astra_idx0) = *reinterpret_cast<const uint4 *>(astra_out);
// CHECK-NEXT: {{^}}    }
// CHECK-NEXT: {{^}}    for (int64_t idx = (n * cols) / astra_vec * astra_vec + ((int64_t)blockIdx.x * blockDim.x + threadIdx.x); idx < n * cols; idx += (int64_t)blockDim.x * gridDim.x) {
// CHECK-NEXT: {{^}}      const int64_t i = idx / cols;
// CHECK-NEXT: {{^}}      const int c = idx % cols;
// CHECK-NEXT: {{^}}      out[idx] = x[index[i] * cols + c];
// CHECK-NEXT: {{^}}    }
// Rows of 100 halves are a multiple of 4, not of 8: 8-byte accesses then.
// CHECK-NEXT: {{^}}  } else if (cols % 4 == 0 &&
// CHECK-NEXT: {{^}}      reinterpret_cast<unsigned long long>(out) % 8 == 0 &&
// CHECK-NEXT: {{^}}      reinterpret_cast<unsigned long long>(x) % 8 == 0) {
// CHECK-NEXT: {{^}}    constexpr int astra_vec = 4;
// CHECK:      {{^}}      alignas(8) __half astra_x[astra_vec];
// CHECK-NEXT: {{^}}      *reinterpret_cast<uint2 *>(astra_x) = *reinterpret_cast<const uint2 *>(x + (index[i] * cols + astra_c0));
// CHECK:      {{^}}      *reinterpret_cast<uint2 *>(out + astra_idx0) = *reinterpret_cast<const uint2 *>(astra_out);
// CHECK:      {{^}}  } else {
// CHECK-NEXT: {{^}}    for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < n * cols; idx += (int64_t)blockDim.x * gridDim.x) {
// CHECK-NEXT: {{^}}      const int64_t i = idx / cols;
// CHECK-NEXT: {{^}}      const int c = idx % cols;
// CHECK-NEXT: {{^}}      out[idx] = x[index[i] * cols + c];
// CHECK-NEXT: {{^}}    }
// CHECK-NEXT: {{^}}  }
// CHECK-NEXT: {{^}}}
// EXPLAIN: flat-vectorize.cu:[[@LINE-45]]:3: flat-vectorize: fired: chunks of 8 consecutive 'idx' (one row 'i', 8 columns) move with 16-byte accesses of out (store), x and one division per chunk, when cols is a multiple of 8 and the buffers are 16-byte aligned (chunks of 4 with 8-byte accesses when it is a multiple of 4 and they are 8-byte aligned); otherwise the original loop runs
// PTX-LABEL: .entry _Z6gatherPK6__halfPKlPS_li(
// PTX: ld.global.v4.b32
// PTX: st.global.v4.b32
// The 8-byte path: one 64-bit load and store per chunk of 4 halves.
// PTX: ld.global.b64
// PTX: st.global.b64

// Scatter-add with float atomics: the chunk's values are collected and
// added with one vector atomic (red.global.add.v4.f32 on sm_90; one
// atomicAdd per element before). Per-element atomics in chunks would go to
// elements 4 apart instead of 32 consecutive ones (measured on the H100:
// 0.42-0.49x), so only the vector form is written.
__global__ void scatter_add(const float *__restrict__ src,
                            const int64_t *__restrict__ index,
                            float *__restrict__ out, int64_t n, int f) {
  for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < n * f; idx += (int64_t)blockDim.x * gridDim.x) {
    const int64_t e = idx / f;
    const int j = idx % f;
    atomicAdd(&out[index[e] * f + j], src[idx]);
  }
}
// CHECK-LABEL: {{^}}__global__ void scatter_add(
// CHECK:      {{^}}  if (f % 4 == 0 &&
// CHECK-NEXT: {{^}}      reinterpret_cast<unsigned long long>(out) % 16 == 0 &&
// CHECK-NEXT: {{^}}      reinterpret_cast<unsigned long long>(src) % 16 == 0) {
// CHECK:      {{^}}      alignas(16) float astra_out[astra_vec];
// CHECK-NEXT: {{^}}      alignas(16) float astra_src[astra_vec];
// CHECK-NEXT: {{^}}      *reinterpret_cast<uint4 *>(astra_src) = *reinterpret_cast<const uint4 *>(src + astra_idx0);
// CHECK-NEXT: {{^}}      #pragma unroll
// CHECK-NEXT: {{^}}      for (int astra_k = 0; astra_k < astra_vec; ++astra_k) {
// CHECK-NEXT: {{^}}        astra_out[astra_k] = (astra_src[astra_k]);
// CHECK-NEXT: {{^}}      }
// CHECK-NEXT: {{^}}#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// CHECK-NEXT: {{^}}      asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" :: "l"(out + (index[e] * f + astra_c0)), "f"(astra_out[0]), "f"(astra_out[1]), "f"(astra_out[2]), "f"(astra_out[3]) : "memory");
// CHECK-NEXT: {{^}}#else
// CHECK-NEXT: {{^}}      for (int astra_k = 0; astra_k < astra_vec; ++astra_k)
// CHECK-NEXT: {{^}}        atomicAdd(out + (index[e] * f + astra_c0) + astra_k, astra_out[astra_k]);
// CHECK-NEXT: {{^}}#endif
// CHECK-NEXT: {{^}}    }
// CHECK:      {{^}}      atomicAdd(&out[index[e] * f + j], src[idx]);
// CHECK:      {{^}}      asm volatile("red.global.add.v2.f32 [%0], {%1, %2};" :: "l"(out + (index[e] * f + astra_c0)), "f"(astra_out[0]), "f"(astra_out[1]) : "memory");
// EXPLAIN: flat-vectorize.cu:[[@LINE-26]]:3: flat-vectorize: fired: chunks of 4 consecutive 'idx' (one row 'e', 4 columns) move with 16-byte accesses of out (atomic add), src and one division per chunk, when f is a multiple of 4 and the buffers are 16-byte aligned (chunks of 2 with 8-byte accesses when it is a multiple of 2 and they are 8-byte aligned); otherwise the original loop runs
// PTX-LABEL: .entry _Z11scatter_addPKfPKlPfli(
// PTX: red.global.add.v4.f32
// PTX: red.global.add.v2.f32

// Refused: integer atomics (no vector form), or an atomic whose old value
// is used, stay one per element: a warp's would go to elements 4 apart.
__global__ void scatter_count(const int *__restrict__ src,
                              const int64_t *__restrict__ index,
                              int *__restrict__ out, int64_t n, int f) {
  for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < n * f; idx += (int64_t)blockDim.x * gridDim.x) {
    const int64_t e = idx / f;
    const int j = idx % f;
    atomicAdd(&out[index[e] * f + j], src[idx]);
  }
}
// EXPLAIN: flat-vectorize.cu:[[@LINE-6]]:3: flat-vectorize: not applied: not vectorized: 'out[index[e] * f + j]' moves with the column but stays one store or atomic per element: a warp's would go to elements 4 apart instead of consecutive ones

// A bias over the columns and a per-row scale: bias[c] and y[i * cols + c]
// move with the column, s[i] is read once per element as before.
__global__ void bias_scale(const float *__restrict__ x,
                           const float *__restrict__ bias,
                           const float *__restrict__ s, float *__restrict__ y,
                           int rows, int cols) {
  for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < rows * cols; idx += blockDim.x * gridDim.x) {
    const int c = idx % cols;
    const int i = idx / cols;
    y[i * cols + c] = (x[idx] + bias[c]) * s[i];
  }
}
// CHECK-LABEL: {{^}}__global__ void bias_scale(
// CHECK:      {{^}}      const int i = astra_idx0 / cols;
// CHECK-NEXT: {{^}}      const int astra_c0 = astra_idx0 % cols;
// CHECK-NEXT: {{^}}      alignas(16) float astra_y[astra_vec];
// CHECK-NEXT: {{^}}      alignas(16) float astra_x[astra_vec];
// CHECK-NEXT: {{^}}      *reinterpret_cast<uint4 *>(astra_x) = *reinterpret_cast<const uint4 *>(x + astra_idx0);
// CHECK-NEXT: {{^}}      alignas(16) float astra_bias[astra_vec];
// CHECK-NEXT: {{^}}      *reinterpret_cast<uint4 *>(astra_bias) = *reinterpret_cast<const uint4 *>(bias + astra_c0);
// CHECK:      {{^}}        astra_y[astra_k] = (astra_x[astra_k] + astra_bias[astra_k]) * s[i];
// CHECK:      {{^}}      *reinterpret_cast<uint4 *>(y + (i * cols + astra_c0)) = *reinterpret_cast<const uint4 *>(astra_y);

// Refused: without __restrict__ a chunk's loads could see its own stores.
__global__ void no_restrict(const float *x, float *y, int rows, int cols) {
  for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < rows * cols; idx += blockDim.x * gridDim.x) {
    const int i = idx / cols;
    const int c = idx % cols;
    y[idx] = x[i * cols + c] * 2.0f;
  }
}
// CHECK-LABEL: {{^}}__global__ void no_restrict(
// CHECK-NEXT: {{^}}  for (int idx = blockIdx.x * blockDim.x + threadIdx.x;
// EXPLAIN: flat-vectorize.cu:[[@LINE-8]]:3: flat-vectorize: not applied: not vectorized: no access moves with the column: 'y' (not __restrict__), 'x' (not __restrict__) stay scalar

// Refused: row and column by different divisors.
__global__ void two_divisors(const float *__restrict__ x, float *__restrict__ y,
                             int rows, int a, int b) {
  for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < rows * a; idx += blockDim.x * gridDim.x) {
    const int i = idx / a;
    const int c = idx % b;
    y[idx] = x[i * a + c];
  }
}
// EXPLAIN: flat-vectorize.cu:[[@LINE-6]]:3: flat-vectorize: not applied: not vectorized: the body does not start with the row and the column of 'idx' by one divisor (`i = idx / cols; c = idx % cols;`)

// Refused: the body reads the thread's position itself.
__global__ void reads_lane(const float *__restrict__ x, float *__restrict__ y,
                           int rows, int cols) {
  for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < rows * cols; idx += blockDim.x * gridDim.x) {
    const int i = idx / cols;
    const int c = idx % cols;
    y[idx] = x[i * cols + c] + (threadIdx.x & 1);
  }
}
// EXPLAIN: flat-vectorize.cu:[[@LINE-6]]:3: flat-vectorize: not applied: not vectorized: the body reads the thread's position (threadIdx.x at {{.*}}flat-vectorize.cu:[[@LINE-3]]:33) other than through 'idx'; its elements would move to other threads

// Refused: a per-thread sum over the elements a thread takes.
__global__ void per_thread_sum(const float *__restrict__ x, float *__restrict__ sums,
                               int rows, int cols) {
  float acc = 0.0f;
  for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < rows * cols; idx += blockDim.x * gridDim.x) {
    const int i = idx / cols;
    const int c = idx % cols;
    acc += x[i * cols + c];
  }
  atomicAdd(sums, acc);
}
// EXPLAIN: flat-vectorize.cu:[[@LINE-7]]:3: flat-vectorize: not applied: not vectorized: the body may change or read a changing 'acc' declared outside it

// Stays scalar: a conditional store and load (the chunk's loads would be
// speculative), an offset that is not a multiple of cols (chunks would be
// misaligned), and an index without the column.
__global__ void stays_scalar(const float *__restrict__ x, const int *__restrict__ index,
                             float *__restrict__ y, int rows, int cols) {
  for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < rows * cols; idx += blockDim.x * gridDim.x) {
    const int i = idx / cols;
    const int c = idx % cols;
    if (index[i] >= 0)
      y[idx] = x[index[i] + c] + x[i * cols + c + 1];
  }
}
// EXPLAIN: flat-vectorize.cu:[[@LINE-7]]:3: flat-vectorize: not applied: not vectorized: no access moves with the column: 'index[i]', 'y' (written other than by plain accesses at the chunk's elements), 'x[index[i] + c]', 'x[i * cols + c + 1]' stay scalar

// A sum over an inner loop whose loads move with the column (SAGE mean
// aggregation): the chunk runs the neighbour loop once, with one 16-byte load
// of the neighbour's row per iteration and one sum per element; each element
// then reads its own sum. The sums are added in the same order as before.
__global__ void neighbour_mean(const int *__restrict__ rowptr, const int *__restrict__ col,
                               const float *__restrict__ x, float *__restrict__ out,
                               int rows, int f) {
  for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < rows * f; idx += blockDim.x * gridDim.x) {
    const int r = idx / f;
    const int j = idx % f;
    float sum = 0.0f;
    for (int e = rowptr[r]; e < rowptr[r + 1]; ++e)
      sum += x[col[e] * f + j];
    out[idx] = sum;
  }
}
// CHECK-LABEL: {{^}}__global__ void neighbour_mean(
// CHECK:      {{^}}      const int astra_c0 = astra_idx0 % f;
// CHECK-NEXT: {{^}}      float astra_sum[astra_vec];
// CHECK-NEXT: {{^}}      #pragma unroll
// CHECK-NEXT: {{^}}      for (int astra_k = 0; astra_k < astra_vec; ++astra_k)
// CHECK-NEXT: {{^}}        astra_sum[astra_k] = 0.0f;
// CHECK-NEXT: {{^}}      for (int e = rowptr[r]; e < rowptr[r + 1]; ++e) {
// CHECK-NEXT: {{^}}        alignas(16) float astra_x[astra_vec];
// CHECK-NEXT: {{^}}        *reinterpret_cast<uint4 *>(astra_x) = *reinterpret_cast<const uint4 *>(x + (col[e] * f + astra_c0));
// CHECK-NEXT: {{^}}        #pragma unroll
// CHECK-NEXT: {{^}}        for (int astra_k = 0; astra_k < astra_vec; ++astra_k)
// CHECK-NEXT: {{^}}          astra_sum[astra_k] += astra_x[astra_k];
// CHECK-NEXT: {{^}}      }
// CHECK-NEXT: {{^}}      alignas(16) float astra_out[astra_vec];
// CHECK-NEXT: {{^}}      #pragma unroll
// CHECK-NEXT: {{^}}      for (int astra_k = 0; astra_k < astra_vec; ++astra_k) {
// CHECK-NEXT: {{^}}        float sum = astra_sum[astra_k];
// CHECK-NEXT: {{^}}        astra_out[astra_k] = sum;
// CHECK-NEXT: {{^}}      }
// CHECK-NEXT: {{^}}      *reinterpret_cast<uint4 *>(out + astra_idx0) = *reinterpret_cast<const uint4 *>(astra_out);
// EXPLAIN: flat-vectorize.cu:[[@LINE-29]]:3: flat-vectorize: fired: chunks of 4 consecutive 'idx' (one row 'r', 4 columns) move with 16-byte accesses of x, out (store) ('sum' is summed over 'e' once per chunk, one load per iteration) and one division per chunk, when f is a multiple of 4 and the buffers are 16-byte aligned (chunks of 2 with 8-byte accesses when it is a multiple of 2 and they are 8-byte aligned); otherwise the original loop runs
// PTX-LABEL: .entry _Z14neighbour_meanPKiS0_PKfPfii(
// PTX: ld.global.v4.b32

// Refused: the inner loop keeps a maximum, not a sum (only `acc += term` is
// rewritten); its loads would stay scalar, and one thread would run the loop
// for each of its chunk's columns.
__global__ void neighbour_max(const int *__restrict__ rowptr, const int *__restrict__ col,
                              const float *__restrict__ x, float *__restrict__ out,
                              int rows, int f) {
  for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < rows * f; idx += blockDim.x * gridDim.x) {
    const int r = idx / f;
    const int j = idx % f;
    float m = -1e30f;
    for (int e = rowptr[r]; e < rowptr[r + 1]; ++e)
      m = fmaxf(m, x[col[e] * f + j]);
    out[idx] = m;
  }
}
// EXPLAIN: flat-vectorize.cu:[[@LINE-9]]:3: flat-vectorize: not applied: not vectorized: 'x[col[e] * f + j]' moves with the column but stays scalar in an inner loop (at {{.*}}flat-vectorize.cu:[[@LINE-5]]:5): one thread would run that loop for every element of its chunk

// NeoX rotary embedding: the loop is in a helper the kernel calls (a block
// of threads shares it; every thread calls it with the same arguments), a
// block-stride loop over (head, i) pairs. The row pointer h moves before the
// loads; h[i] and h[i + half] are two chunks, each loaded and stored, kept
// apart by half != 0; head_size and half must be multiples of the chunk.
// The helper's pointers are not __restrict__: each call passes parts of
// different __restrict__ parameters (h: q or k; cos_c, sin_c: cache).
template <typename T>
__device__ void rotate(T *heads, const T *cos_c, const T *sin_c,
                       int num_heads, int head_size, int rot) {
  const int half = rot / 2;
  for (int p = threadIdx.x; p < num_heads * half; p += blockDim.x) {
    const int head = p / half;
    const int i = p % half;
    T *h = heads + head * head_size;
    const float c = (float)cos_c[i];
    const float s = (float)sin_c[i];
    const float x1 = (float)h[i];
    const float x2 = (float)h[i + half];
    h[i] = T(x1 * c - x2 * s);
    h[i + half] = T(x2 * c + x1 * s);
  }
}

template <typename T>
__global__ void rotary(const int64_t *__restrict__ pos, T *__restrict__ q,
                       T *__restrict__ k, const T *__restrict__ cache,
                       int rot, int hq, int hk, int head_size) {
  const int64_t token = blockIdx.x;
  const T *cos_c = cache + pos[token] * rot;
  const T *sin_c = cos_c + rot / 2;
  rotate(q + token * hq * head_size, cos_c, sin_c, hq, head_size, rot);
  rotate(k + token * hk * head_size, cos_c, sin_c, hk, head_size, rot);
}
template __global__ void rotary<__half>(const int64_t *, __half *, __half *, const __half *, int, int, int, int);
template __global__ void rotary<__nv_bfloat16>(const int64_t *, __nv_bfloat16 *, __nv_bfloat16 *, const __nv_bfloat16 *, int, int, int, int);
// CHECK-LABEL: {{^}}__device__ void rotate(
// CHECK:      {{^}}  const int half = rot / 2;
// CHECK-NEXT: {{^}}  if (half % 8 == 0 &&
// CHECK-NEXT: {{^}}      reinterpret_cast<unsigned long long>(cos_c) % 16 == 0 &&
// CHECK-NEXT: {{^}}      reinterpret_cast<unsigned long long>(sin_c) % 16 == 0 &&
// CHECK-NEXT: {{^}}      reinterpret_cast<unsigned long long>(heads) % 16 == 0 &&
// CHECK-NEXT: {{^}}      head_size % 8 == 0 &&
// CHECK-NEXT: {{^}}      half != 0) {
// CHECK-NEXT: {{^}}    constexpr int astra_vec = 8;
// CHECK-NEXT: {{^}}    for (int astra_v = threadIdx.x; astra_v < (num_heads * half) / astra_vec; astra_v += blockDim.x) {
// CHECK-NEXT: {{^}}      const int astra_idx0 = astra_v * astra_vec;
// CHECK-NEXT: {{^}}      const int head = astra_idx0 / half;
// CHECK-NEXT: {{^}}      const int astra_c0 = astra_idx0 % half;
// CHECK-NEXT: {{^}}      T *h = heads + head * head_size;
// CHECK-NEXT: {{^}}      alignas(16) T astra_cos_c[astra_vec];
// CHECK-NEXT: {{^}}      *reinterpret_cast<uint4 *>(astra_cos_c) = *reinterpret_cast<const uint4 *>(cos_c + astra_c0);
// CHECK-NEXT: {{^}}      alignas(16) T astra_sin_c[astra_vec];
// CHECK-NEXT: {{^}}      *reinterpret_cast<uint4 *>(astra_sin_c) = *reinterpret_cast<const uint4 *>(sin_c + astra_c0);
// CHECK-NEXT: {{^}}      alignas(16) T astra_h[astra_vec];
// CHECK-NEXT: {{^}}      *reinterpret_cast<uint4 *>(astra_h) = *reinterpret_cast<const uint4 *>(h + astra_c0);
// CHECK-NEXT: {{^}}      alignas(16) T astra_h1[astra_vec];
// CHECK-NEXT: {{^}}      *reinterpret_cast<uint4 *>(astra_h1) = *reinterpret_cast<const uint4 *>(h + (half + astra_c0));
// CHECK-NEXT: {{^}}      #pragma unroll
// CHECK-NEXT: {{^}}      for (int astra_k = 0; astra_k < astra_vec; ++astra_k) {
// CHECK-NEXT: {{^}}        const float c = (float)astra_cos_c[astra_k];
// CHECK-NEXT: {{^}}        const float s = (float)astra_sin_c[astra_k];
// CHECK-NEXT: {{^}}        const float x1 = (float)astra_h[astra_k];
// CHECK-NEXT: {{^}}        const float x2 = (float)astra_h1[astra_k];
// CHECK-NEXT: {{^}}        astra_h[astra_k] = T(x1 * c - x2 * s);
// CHECK-NEXT: {{^}}        astra_h1[astra_k] = T(x2 * c + x1 * s);
// CHECK-NEXT: {{^}}      }
// CHECK-NEXT: {{^}}      *reinterpret_cast<uint4 *>(h + astra_c0) = *reinterpret_cast<const uint4 *>(astra_h);
// CHECK-NEXT: {{^}}      *reinterpret_cast<uint4 *>(h + (half + astra_c0)) = *reinterpret_cast<const uint4 *>(astra_h1);
// CHECK-NEXT: {{^}}    }
// CHECK-NEXT: {{^}}    for (int p = (num_heads * half) / astra_vec * astra_vec + threadIdx.x; p < num_heads * half; p += blockDim.x) {
// CHECK:      {{^}}  } else if (half % 4 == 0 &&
// CHECK:      {{^}}      head_size % 4 == 0 &&
// CHECK-NEXT: {{^}}      half != 0) {
// CHECK:      {{^}}  } else {
// CHECK-NEXT: {{^}}    for (int p = threadIdx.x; p < num_heads * half; p += blockDim.x) {
// EXPLAIN: flat-vectorize.cu:[[@LINE-65]]:3: flat-vectorize: fired: chunks of 8 consecutive 'p' (one row 'head', 8 columns) move with 16-byte accesses of cos_c, sin_c, h (load, store) and one division per chunk, when half is a multiple of 8 and the buffers are 16-byte aligned (chunks of 4 with 8-byte accesses when it is a multiple of 4 and they are 8-byte aligned), with head_size a multiple of the chunk and half != 0; otherwise the original loop runs
// PTX-LABEL: .entry _Z6rotaryI6__halfEvPKlPT_S4_PKS3_iiii(
// PTX: ld.global.v4.b32
// PTX: st.global.v4.b32
// PTX-LABEL: .entry _Z6rotaryI13__nv_bfloat16EvPKlPT_S4_PKS3_iiii(
// PTX: ld.global.v4.b32
// PTX: st.global.v4.b32

// Refused: a helper another kernel calls too (the rewrite would change that
// kernel unverified).
__device__ void scale_shared(float *x, const float *w, int n, int d) {
  for (int p = threadIdx.x; p < n * d; p += blockDim.x) {
    const int r = p / d;
    const int c = p % d;
    float *row = x + r * d;
    row[c] = row[c] * w[c];
  }
}
__global__ void scale_a(float *__restrict__ x, const float *__restrict__ w, int n, int d) {
  scale_shared(x + blockIdx.x * n * d, w, n, d);
}
__global__ void scale_b(float *__restrict__ x, const float *__restrict__ w, int n, int d) {
  scale_shared(x, w, n, d);
}
// CHECK-LABEL: {{^}}__device__ void scale_shared(
// CHECK-NEXT: {{^}}  for (int p = threadIdx.x; p < n * d; p += blockDim.x) {
// EXPLAIN: flat-vectorize.cu:[[@LINE-15]]:3: flat-vectorize: not applied: not vectorized: 'scale_shared' is also called from 'scale_b' (at {{.*}}flat-vectorize.cu:[[@LINE-4]]:3), which the rewrite would change unverified

// Refused: the threads of a block call the helper with different pointers,
// so they would not share one loop.
__device__ void scale_lane(float *x, const float *w, int n, int d) {
  for (int p = threadIdx.x; p < n * d; p += blockDim.x) {
    const int r = p / d;
    const int c = p % d;
    float *row = x + r * d;
    row[c] = row[c] * w[c];
  }
}
__global__ void lanes(float *__restrict__ x, const float *__restrict__ w, int n, int d) {
  scale_lane(x + threadIdx.x % 2 * n * d, w, n, d);
}
// CHECK-LABEL: {{^}}__device__ void scale_lane(
// CHECK-NEXT: {{^}}  for (int p = threadIdx.x; p < n * d; p += blockDim.x) {
// EXPLAIN: flat-vectorize.cu:[[@LINE-12]]:3: flat-vectorize: not applied: not vectorized: the argument 'x + threadIdx.x % 2 * n * d' at {{.*}}flat-vectorize.cu:[[@LINE-4]]:3 may differ between the threads of a block, which share the loop

// Refused: the weights are read from the buffer the helper writes.
__device__ void scale_alias(float *x, const float *w, int n, int d) {
  for (int p = threadIdx.x; p < n * d; p += blockDim.x) {
    const int r = p / d;
    const int c = p % d;
    float *row = x + r * d;
    row[c] = row[c] * w[c];
  }
}
__global__ void aliased(float *__restrict__ x, int n, int d) {
  scale_alias(x + d, x, n, d);
}
// CHECK-LABEL: {{^}}__device__ void scale_alias(
// CHECK-NEXT: {{^}}  for (int p = threadIdx.x; p < n * d; p += blockDim.x) {
// EXPLAIN: flat-vectorize.cu:[[@LINE-12]]:3: flat-vectorize: not applied: not vectorized: 'row' and 'w' may overlap (call at {{.*}}flat-vectorize.cu:[[@LINE-4]]:3) (both point into 'x'); the chunk's loads and stores would move past the other's accesses

// Refused: the kernel's pointers are not __restrict__, so nothing says what
// else may write the rows (restrict-const would add it).
__device__ void scale_plain(float *x, const float *w, int n, int d) {
  for (int p = threadIdx.x; p < n * d; p += blockDim.x) {
    const int r = p / d;
    const int c = p % d;
    float *row = x + r * d;
    row[c] = row[c] * w[c];
  }
}
__global__ void plain(float *x, const float *w, int n, int d) {
  scale_plain(x + blockIdx.x * n * d, w, n, d);
}
// EXPLAIN: flat-vectorize.cu:[[@LINE-10]]:3: flat-vectorize: not applied: not vectorized: 'row' does not point into a __restrict__ parameter at the call at {{.*}}flat-vectorize.cu:[[@LINE-2]]:3 ('x')

// Refused: a local the body reads differs between the threads that share
// the loop; after the rewrite another thread would take the element.
__global__ void lane_weight(const float *__restrict__ x, const float *__restrict__ w,
                            float *__restrict__ y, int rows, int cols) {
  const int lane = threadIdx.x % 32;
  for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < rows * cols; idx += blockDim.x * gridDim.x) {
    const int i = idx / cols;
    const int c = idx % cols;
    y[i * cols + c] = x[i * cols + c] * w[lane];
  }
}
// EXPLAIN: flat-vectorize.cu:[[@LINE-6]]:3: flat-vectorize: not applied: not vectorized: the body reads 'lane', which may differ between the threads of the grid that share the loop; its elements would move to other threads

// A grid-stride loop in a plain (not template) helper, called with the
// kernel's own parameters: every thread of the grid passes the same.
__device__ void add_bias(float *y, const float *b, int rows, int cols) {
  for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < rows * cols; idx += blockDim.x * gridDim.x) {
    const int i = idx / cols;
    const int c = idx % cols;
    y[i * cols + c] += b[c];
  }
}
__global__ void biased(float *__restrict__ y, const float *__restrict__ b, int rows, int cols) {
  add_bias(y, b, rows, cols);
}
// CHECK-LABEL: {{^}}__device__ void add_bias(
// CHECK-NEXT: {{^}}  if (cols % 4 == 0 &&
// CHECK-NEXT: {{^}}      reinterpret_cast<unsigned long long>(y) % 16 == 0 &&
// CHECK-NEXT: {{^}}      reinterpret_cast<unsigned long long>(b) % 16 == 0) {
// CHECK:      {{^}}      alignas(16) float astra_y[astra_vec];
// CHECK-NEXT: {{^}}      *reinterpret_cast<uint4 *>(astra_y) = *reinterpret_cast<const uint4 *>(y + (i * cols + astra_c0));
// CHECK:      {{^}}        astra_y[astra_k] += astra_b[astra_k];
// CHECK:      {{^}}      *reinterpret_cast<uint4 *>(y + (i * cols + astra_c0)) = *reinterpret_cast<const uint4 *>(astra_y);
// EXPLAIN: flat-vectorize.cu:[[@LINE-17]]:3: flat-vectorize: fired: chunks of 4 consecutive 'idx' (one row 'i', 4 columns) move with 16-byte accesses of y (load, store), b and one division per chunk, when cols is a multiple of 4 and the buffers are 16-byte aligned (chunks of 2 with 8-byte accesses when it is a multiple of 2 and they are 8-byte aligned); otherwise the original loop runs

// One element per thread, launched from the host: grid-stride makes the
// loop, flat-vectorize the chunks, grid-coarsen divides the grid by 4.
__global__ void gather_once(const __half *x, const int64_t *index, __half *out,
                            int64_t n, int cols) {
  const int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= n * cols)
    return;
  const int64_t i = idx / cols;
  const int c = idx % cols;
  out[idx] = x[index[i] * cols + c];
}

void launch_gather_once(const __half *x, const int64_t *index, __half *out,
                        int64_t n, int cols) {
  const int64_t blocks = (n * cols + 255) / 256;
  gather_once<<<blocks, 256>>>(x, index, out, n, cols);
}
// COMPOSE-LABEL: {{^}}__global__ void gather_once(
// COMPOSE:      {{^}}  if (cols % 8 == 0 &&
// COMPOSE:      {{^}}    constexpr int astra_vec = 8;
// COMPOSE:      {{^}}      *reinterpret_cast<uint4 *>(astra_x) = *reinterpret_cast<const uint4 *>(x + (index[i] * cols + astra_c0));
// COMPOSE:      {{^}}  gather_once<<<((blocks) + 3) / 4, 256>>>(x, index, out, n, cols);
// COMPOSE-SPEC: "grid": "cdiv(cdiv(n * cols, 256), 4)"
// COMPOSE-PTX-LABEL: .entry _Z11gather_oncePK6__halfPKlPS_li(
// COMPOSE-PTX: ld.global.v4.b32

// One source element per thread, scattered with atomics from the host's
// launch.
__global__ void scatter_once(const float *src, const int64_t *index, float *out,
                             int64_t n, int f) {
  const int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= n * f)
    return;
  const int64_t e = idx / f;
  const int j = idx % f;
  atomicAdd(&out[index[e] * f + j], src[idx]);
}

void launch_scatter_once(const float *src, const int64_t *index, float *out,
                         int64_t n, int f) {
  const int64_t blocks = (n * f + 255) / 256;
  scatter_once<<<blocks, 256>>>(src, index, out, n, f);
}
// SCATTER-LABEL: {{^}}__global__ void scatter_once(
// SCATTER:      {{^}}  if (f % 4 == 0 &&
// SCATTER:      {{^}}      asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};"
// SCATTER:      {{^}}  scatter_once<<<((blocks) + 1) / 2, 256>>>(src, index, out, n, f);
// SCATTER-PTX-LABEL: .entry _Z12scatter_oncePKfPKlPfli(
// SCATTER-PTX: red.global.add.v4.f32
