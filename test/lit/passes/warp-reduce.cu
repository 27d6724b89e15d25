// warp-reduce: shared-memory tree reductions become warp-shuffle reductions.
// The file and its header are rewritten in place in a copy, so the header's
// kernel is checked too and the PTX is compiled from the rewritten code.
// RUN: rm -rf %t.d && mkdir -p %t.d/Inputs
// RUN: cp %s %t.d/wr.cu && cp %S/Inputs/warp-reduce-kernel.cuh %S/Inputs/warp-reduce-helper.cuh %t.d/Inputs/
// RUN: %clang-astra rewrite -i --passes=warp-reduce --explain %t.d/wr.cu -- -std=c++17 2> %t.explain
// RUN: FileCheck %s < %t.d/wr.cu
// RUN: FileCheck %s --check-prefix=HDR < %t.d/Inputs/warp-reduce-kernel.cuh
// RUN: FileCheck %s --check-prefix=HELPER < %t.d/Inputs/warp-reduce-helper.cuh
// RUN: FileCheck %s --check-prefix=EXPLAIN < %t.explain
// RUN: %nvptx-compile %t.d/wr.cu | FileCheck %s --check-prefix=PTX
// A helper that a kernel with a 2-D block calls too stays as it is.
// RUN: %clang-astra rewrite --passes=warp-reduce --explain %S/Inputs/warp-reduce-2d.cu -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=TWO-D
// TWO-D: warp-reduce-helper.cuh:21:3: warp-reduce: not applied: in block_reduce<AddOp>: called by the kernel: the kernel reads threadIdx.y (at {{.*}}warp-reduce-2d.cu:15:{{[0-9]+}}); a reduction over buf[threadIdx.x] in a multi-dimensional block is not handled
// TWO-D-NOT: fired
// A second run finds nothing left to rewrite.
// RUN: %clang-astra rewrite --passes=warp-reduce %t.d/wr.cu -- -std=c++17 | diff %t.d/wr.cu -

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include "Inputs/warp-reduce-kernel.cuh"
#include "Inputs/warp-reduce-helper.cuh"

// A helper called by kernels (block_reduce in a shared header, with a
// functor): rewritten in the header, through the functor, so that one text
// serves the sum and the max instantiation. Two kernels call it; the edit is
// made once. block_fold is instantiated with a subtraction, which is not
// associative: it keeps its tree.
// HELPER-LABEL: template <typename Op> __device__ inline float block_reduce(
// HELPER: {{^}}  { // warp-reduce: 'op' of buf with warp shuffles
// HELPER: {{^}}    float astra_wr_val = v;
// HELPER: {{^}}          astra_wr_val = op(astra_wr_val, __shfl_xor_sync(astra_wr_mask, astra_wr_val, astra_wr_off));
// HELPER: {{^}}            astra_wr_val = op(astra_wr_val, __shfl_xor_sync(0xffffffffu >> (32u - astra_wr_warps), astra_wr_val, astra_wr_off));
// HELPER: {{^}}  const float result = buf[0];
// HELPER-LABEL: template <typename Op> __device__ inline float block_fold(
// HELPER-NEXT: {{^}}  __shared__ float fbuf[1024];
// HELPER: {{^}}      fbuf[tid] = op(fbuf[tid], fbuf[tid + s]);
// EXPLAIN-DAG: warp-reduce-helper.cuh:21:3: warp-reduce: fired: in 'block_reduce' (called by the kernel): the 'op' (a sum, max or min in every instantiation) tree reduction of 'buf' over blockDim.x threads now reduces with warp shuffles and one shared-memory step; buf[0] holds the result after a barrier as before (floating-point sums are reassociated and may differ in the last bits)
// EXPLAIN-DAG: warp-reduce-helper.cuh:39:3: warp-reduce: not applied: in block_fold<SubOp>: called by the kernel: not a shared-memory tree reduction: the step 'fbuf[tid] = op(fbuf[tid], fbuf[tid + s])' is not s[tid] += s[tid + off]
// CHECK-LABEL: {{^}}__global__ void softmax_row(
__global__ void softmax_row(const float *x, float *y, int cols) {
  const float *xr = x + (long)blockIdx.x * cols;
  float m = -INFINITY;
  for (int j = threadIdx.x; j < cols; j += blockDim.x)
    m = fmaxf(m, xr[j]);
  m = block_max(m);
  float sum = 0.f;
  for (int j = threadIdx.x; j < cols; j += blockDim.x)
    sum += expf(xr[j] - m);
  sum = block_sum(sum);
  for (int j = threadIdx.x; j < cols; j += blockDim.x)
    y[(long)blockIdx.x * cols + j] = expf(xr[j] - m) / sum;
}
__global__ void row_sum(const float *x, float *y, int cols) {
  float sum = 0.f;
  for (int j = threadIdx.x; j < cols; j += blockDim.x)
    sum += x[(long)blockIdx.x * cols + j];
  sum = block_sum(sum);
  if (threadIdx.x == 0)
    y[blockIdx.x] = sum;
}
__global__ void row_fold(const float *x, float *y) {
  float r = block_fold(x[threadIdx.x], SubOp());
  if (threadIdx.x == 0)
    y[blockIdx.x] = r;
}

// A kernel in a header: any file that includes it may launch it, with any
// block, so its blockDim.x / 2 tree stays.
// HDR-LABEL: {{^}}__global__ void header_sum(
// HDR-NOT: warp-reduce:
// EXPLAIN-DAG: warp-reduce-kernel.cuh:10:3: warp-reduce: not applied: the tree starts at blockDim.x / 2, which reduces every value only when blockDim.x is a power of two, and the kernel is declared in {{.*}}warp-reduce-kernel.cuh:4:17, a file other translation units can include and launch it from

// The classic block sum: every thread stores, thread 0 publishes s[0].
// CHECK-LABEL: {{^}}__global__ void block_sum(
__global__ void block_sum(const float *in, float *out, int n) {
  __shared__ float s[1024];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + tid;
  s[tid] = (i < n) ? in[i] : 0.f;
  __syncthreads();
  for (int off = blockDim.x / 2; off > 0; off >>= 1) {
    if (tid < off)
      s[tid] += s[tid + off];
    __syncthreads();
  }
  if (tid == 0)
    out[blockIdx.x] = s[0];
}
// CHECK-NEXT: {{^}}  __shared__ float s[1024];
// CHECK-NEXT: {{^}}  int tid = threadIdx.x;
// CHECK-NEXT: {{^}}  int i = blockIdx.x * blockDim.x + tid;
// CHECK-NEXT: {{^}}  { // warp-reduce: sum of s with warp shuffles, one shared-memory step across warps
// CHECK-NEXT: {{^}}    float astra_wr_val = (i < n) ? in[i] : 0.f;
// CHECK-NEXT: {{^}}    const unsigned astra_wr_count = blockDim.x; // threads whose values are reduced
// CHECK-NEXT: {{^}}    if (threadIdx.x < astra_wr_count) {
// CHECK:      {{^}}      const unsigned astra_wr_lanes = astra_wr_count - (threadIdx.x & ~31u) < 32u ? astra_wr_count - (threadIdx.x & ~31u) : 32u;
// CHECK-NEXT: {{^}}      const unsigned astra_wr_mask = 0xffffffffu >> (32u - astra_wr_lanes);
// CHECK-NEXT: {{^}}      for (unsigned astra_wr_off = 16u; astra_wr_off > 0u; astra_wr_off >>= 1)
// CHECK-NEXT: {{^}}        if (astra_wr_off < astra_wr_lanes)
// CHECK-NEXT: {{^}}          astra_wr_val = astra_wr_val + __shfl_xor_sync(astra_wr_mask, astra_wr_val, astra_wr_off);
// CHECK-NEXT: {{^}}      if (astra_wr_count > 32u && (threadIdx.x & 31u) == 0u)
// CHECK-NEXT: {{^}}        s[threadIdx.x >> 5] = astra_wr_val;
// CHECK-NEXT: {{^}}    }
// CHECK-NEXT: {{^}}    if (astra_wr_count > 32u) {
// CHECK-NEXT: {{^}}      __syncthreads();
// CHECK-NEXT: {{^}}      const unsigned astra_wr_warps = (astra_wr_count + 31u) >> 5;
// CHECK-NEXT: {{^}}      if (threadIdx.x < astra_wr_warps) {
// CHECK-NEXT: {{^}}        astra_wr_val = s[threadIdx.x];
// CHECK-NEXT: {{^}}        for (unsigned astra_wr_off = 16u; astra_wr_off > 0u; astra_wr_off >>= 1)
// CHECK-NEXT: {{^}}          if (astra_wr_off < astra_wr_warps)
// CHECK-NEXT: {{^}}            astra_wr_val = astra_wr_val + __shfl_xor_sync(0xffffffffu >> (32u - astra_wr_warps), astra_wr_val, astra_wr_off);
// CHECK-NEXT: {{^}}      }
// CHECK-NEXT: {{^}}    }
// CHECK-NEXT: {{^}}    if (threadIdx.x == 0u)
// CHECK-NEXT: {{^}}      s[0] = astra_wr_val;
// CHECK-NEXT: {{^}}    __syncthreads();
// CHECK-NEXT: {{^}}  }
// CHECK-NEXT: {{^}}  if (tid == 0)
// CHECK-NEXT: {{^}}    out[blockIdx.x] = s[0];
// EXPLAIN-DAG: wr.cu:[[@LINE-39]]:3: warp-reduce: fired: the sum tree reduction of 's' over blockDim.x threads now reduces with warp shuffles

// Row max of a softmax: off /= 2, fmaxf, every thread reads the result.
// CHECK-LABEL: {{^}}__global__ void softmax_rows(
__global__ void softmax_rows(const __half *x, __half *y, int cols) {
  __shared__ float red[256];
  const int tid = threadIdx.x;
  const __half *row = x + (size_t)blockIdx.x * cols;
  float m = -INFINITY;
  for (int c = tid; c < cols; c += blockDim.x)
    m = fmaxf(m, __half2float(row[c]));
  red[tid] = m;
  __syncthreads();
  for (int off = blockDim.x / 2; off > 0; off /= 2) {
    if (tid < off) {
      red[tid] = fmaxf(red[tid], red[tid + off]);
    }
    __syncthreads();
  }
  const float rmax = red[0];
  for (int c = tid; c < cols; c += blockDim.x)
    y[(size_t)blockIdx.x * cols + c] = __float2half(__expf(__half2float(row[c]) - rmax));
}
// CHECK: {{^}}  { // warp-reduce: max of red with warp shuffles
// CHECK-NEXT: {{^}}    float astra_wr_val = m;
// CHECK: {{^}}          astra_wr_val = fmaxf(astra_wr_val, __shfl_xor_sync(astra_wr_mask, astra_wr_val, astra_wr_off));
// CHECK: {{^}}  const float rmax = red[0];
// EXPLAIN-DAG: wr.cu:[[@LINE-14]]:3: warp-reduce: fired: the max tree reduction of 'red' over blockDim.x threads now reduces with warp shuffles and one shared-memory step; red[0] holds the result after a barrier as before{{$}}

// A constant block size from a macro, int elements, a = a + b spelling,
// bf16 input.
#define BLOCK 128
// CHECK-LABEL: {{^}}__global__ void count_positive(
__global__ void count_positive(const __nv_bfloat16 *in, int *count, int n) {
  __shared__ int hits[BLOCK];
  int i = blockIdx.x * BLOCK + threadIdx.x;
  hits[threadIdx.x] = (i < n && __bfloat162float(in[i]) > 0.f) ? 1 : 0;
  __syncthreads();
  for (int off = BLOCK / 2; off > 0; off >>= 1) {
    if (threadIdx.x < off)
      hits[threadIdx.x] = hits[threadIdx.x] + hits[threadIdx.x + off];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    atomicAdd(count, hits[0]);
}
// CHECK: {{^}}    int astra_wr_val = (i < n && __bfloat162float(in[i]) > 0.f) ? 1 : 0;
// CHECK-NEXT: {{^}}    const unsigned astra_wr_count = (128u < blockDim.x ? 128u : blockDim.x);
// CHECK-NOT: int off = BLOCK / 2
// CHECK: {{^}}    atomicAdd(count, hits[0]);

// A template: the pattern is edited, the width stays an expression of the
// template parameter; min over __half and bf16 inputs.
// CHECK-LABEL: {{^}}__global__ void block_min(
template <int BLOCK_T, typename T>
__global__ void block_min(const T *in, float *out) {
  __shared__ float lo[BLOCK_T];
  int tid = threadIdx.x;
  lo[tid] = static_cast<float>(in[blockIdx.x * BLOCK_T + tid]);
  __syncthreads();
  for (int off = BLOCK_T / 2; off > 0; off >>= 1) {
    if (tid < off)
      lo[tid] = fminf(lo[tid + off], lo[tid]);
    __syncthreads();
  }
  if (tid == 0)
    out[blockIdx.x] = lo[0];
}
// CHECK: {{^}}    const unsigned astra_wr_count = (2u * (BLOCK_T / 2) < blockDim.x ? 2u * (BLOCK_T / 2) : blockDim.x);
// CHECK: {{^}}          astra_wr_val = fminf(astra_wr_val, __shfl_xor_sync(astra_wr_mask, astra_wr_val, astra_wr_off));
template __global__ void block_min<256, __half>(const __half *, float *);
template __global__ void block_min<64, __nv_bfloat16>(const __nv_bfloat16 *, float *);

// The old CUDA sample: the loop stops at 32 and warp 0 finishes through a
// volatile pointer with no __syncwarp (a race on Volta and later).
// CHECK-LABEL: {{^}}__global__ void sample_reduce(
__global__ void sample_reduce(const float *g_in, float *g_out, unsigned int n) {
  __shared__ float sdata[512];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
  float sum = (i < n) ? g_in[i] : 0;
  if (i + blockDim.x < n)
    sum += g_in[i + blockDim.x];
  sdata[tid] = sum;
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
    if (tid < s)
      sdata[tid] = sum = sum + sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0)
    g_out[blockIdx.x] = sdata[0];
}
// CHECK: {{^}}  for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
// EXPLAIN-DAG: wr.cu:[[@LINE-9]]:3: warp-reduce: not applied: not a shared-memory tree reduction: the step 'sdata[tid] = sum = sum + sdata[tid + s]' is not s[tid] += s[tid + off]

// CHECK-LABEL: {{^}}__global__ void sample_tail(
__global__ void sample_tail(const float *g_in, float *g_out) {
  __shared__ float sdata[256];
  unsigned int tid = threadIdx.x;
  sdata[tid] = g_in[blockIdx.x * blockDim.x + tid];
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
    if (tid < s)
      sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid < 32) {
    volatile float *vs = sdata;
    vs[tid] += vs[tid + 32];
    vs[tid] += vs[tid + 16];
    vs[tid] += vs[tid + 8];
    vs[tid] += vs[tid + 4];
    vs[tid] += vs[tid + 2];
    vs[tid] += vs[tid + 1];
  }
  if (tid == 0)
    g_out[blockIdx.x] = sdata[0];
}
// CHECK: {{^}}    float astra_wr_val = g_in[blockIdx.x * blockDim.x + tid];
// CHECK-NOT: volatile
// CHECK: {{^}}  if (tid == 0)
// CHECK-NEXT: {{^}}    g_out[blockIdx.x] = sdata[0];
// EXPLAIN-DAG: wr.cu:[[@LINE-21]]:3: warp-reduce: fired: the sum tree reduction of 'sdata' over blockDim.x threads (with its volatile warp tail, a race on Volta and later) now reduces

// The same with the sample's helper.
__device__ void warpReduce(volatile float *sdata, unsigned int tid) {
  sdata[tid] += sdata[tid + 32];
  sdata[tid] += sdata[tid + 16];
  sdata[tid] += sdata[tid + 8];
  sdata[tid] += sdata[tid + 4];
  sdata[tid] += sdata[tid + 2];
  sdata[tid] += sdata[tid + 1];
}
// CHECK-LABEL: {{^}}__global__ void sample_helper(
__global__ void sample_helper(const float *g_in, float *g_out) {
  __shared__ float sdata[256];
  unsigned int tid = threadIdx.x;
  sdata[tid] = g_in[blockIdx.x * blockDim.x + tid];
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
    if (tid < s)
      sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid < 32)
    warpReduce(sdata, tid);
  if (tid == 0)
    g_out[blockIdx.x] = sdata[0];
}
// CHECK-NOT: warpReduce(sdata, tid);
// CHECK: {{^}}    g_out[blockIdx.x] = sdata[0];

// Not fired: the helper's steps stop at offset 2.
__device__ void warpReduceShort(volatile float *sdata, unsigned int tid) {
  sdata[tid] += sdata[tid + 32];
  sdata[tid] += sdata[tid + 16];
  sdata[tid] += sdata[tid + 8];
  sdata[tid] += sdata[tid + 4];
  sdata[tid] += sdata[tid + 2];
}
// CHECK-LABEL: {{^}}__global__ void sample_short(
__global__ void sample_short(const float *g_in, float *g_out) {
  __shared__ float sdata[256];
  unsigned int tid = threadIdx.x;
  sdata[tid] = g_in[blockIdx.x * blockDim.x + tid];
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
    if (tid < s)
      sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid < 32)
    warpReduceShort(sdata, tid);
  if (tid == 0)
    g_out[blockIdx.x] = sdata[0];
}
// CHECK: {{^}}  for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
// CHECK: {{^}}    warpReduceShort(sdata, tid);
// EXPLAIN-DAG: wr.cu:[[@LINE-12]]:3: warp-reduce: not applied: not a shared-memory tree reduction: in the warp helper 'warpReduceShort': the warp tail has 5 steps, not the six steps with offsets 32, 16, 8, 4, 2, 1

// Not fired: partial sums s[1] are read after the loop.
// CHECK-LABEL: {{^}}__global__ void reads_partials(
__global__ void reads_partials(const float *in, float *out) {
  __shared__ float s[256];
  int tid = threadIdx.x;
  s[tid] = in[blockIdx.x * blockDim.x + tid];
  __syncthreads();
  for (int off = blockDim.x / 2; off > 0; off >>= 1) {
    if (tid < off)
      s[tid] += s[tid + off];
    __syncthreads();
  }
  if (tid == 0)
    out[blockIdx.x] = s[0] + s[1];
}
// CHECK: {{^}}  for (int off = blockDim.x / 2; off > 0; off >>= 1) {
// EXPLAIN-DAG: wr.cu:[[@LINE-9]]:3: warp-reduce: not applied: 's' is also used at {{.*}}wr.cu:[[@LINE-3]]:30, other than reading the result s[0]

// Not fired: s is read between the store and the loop.
// CHECK-LABEL: {{^}}__global__ void peeks(
__global__ void peeks(const float *in, float *out) {
  __shared__ float s[256];
  int tid = threadIdx.x;
  s[tid] = in[blockIdx.x * blockDim.x + tid];
  __syncthreads();
  out[blockIdx.x * blockDim.x + tid] = s[tid ^ 1];
  for (int off = blockDim.x / 2; off > 0; off >>= 1) {
    if (tid < off)
      s[tid] += s[tid + off];
    __syncthreads();
  }
}
// CHECK: {{^}}  for (int off = blockDim.x / 2; off > 0; off >>= 1) {
// EXPLAIN-DAG: wr.cu:[[@LINE-7]]:3: warp-reduce: not applied: not a shared-memory tree reduction: the loop is not directly preceded by 's[tid] = value; __syncthreads();'

// Not fired: a product is not one of the handled operators.
// CHECK-LABEL: {{^}}__global__ void block_prod(
__global__ void block_prod(const float *in, float *out) {
  __shared__ float s[256];
  int tid = threadIdx.x;
  s[tid] = in[blockIdx.x * blockDim.x + tid];
  __syncthreads();
  for (int off = blockDim.x / 2; off > 0; off >>= 1) {
    if (tid < off)
      s[tid] *= s[tid + off];
    __syncthreads();
  }
  if (tid == 0)
    out[blockIdx.x] = s[0];
}
// CHECK: {{^}}      s[tid] *= s[tid + off];
// EXPLAIN-DAG: wr.cu:[[@LINE-9]]:3: warp-reduce: not applied: not a shared-memory tree reduction: the step 's[tid] *= s[tid + off]' is not s[tid] += s[tid + off]

// Not fired: a constant start that is not a power of two drops values.
// CHECK-LABEL: {{^}}__global__ void odd_start(
__global__ void odd_start(const float *in, float *out) {
  __shared__ float s[200];
  int tid = threadIdx.x;
  s[tid] = in[blockIdx.x * blockDim.x + tid];
  __syncthreads();
  for (int off = 100; off > 0; off >>= 1) {
    if (tid < off)
      s[tid] += s[tid + off];
    __syncthreads();
  }
  if (tid == 0)
    out[blockIdx.x] = s[0];
}
// CHECK: {{^}}  for (int off = 100; off > 0; off >>= 1) {
// EXPLAIN-DAG: wr.cu:[[@LINE-9]]:3: warp-reduce: not applied: not a shared-memory tree reduction: the loop starts at 100, not a power of two

// Not fired: a 2-D block (one reduction per row would mix rows in a warp).
// CHECK-LABEL: {{^}}__global__ void rows_2d(
__global__ void rows_2d(const float *in, float *out) {
  __shared__ float s[256];
  int tid = threadIdx.x;
  s[tid] = in[(blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + tid];
  __syncthreads();
  for (int off = blockDim.x / 2; off > 0; off >>= 1) {
    if (tid < off)
      s[tid] += s[tid + off];
    __syncthreads();
  }
  if (tid == 0)
    out[blockIdx.x] = s[0];
}
// CHECK: {{^}}  for (int off = blockDim.x / 2; off > 0; off >>= 1) {
// EXPLAIN-DAG: wr.cu:[[@LINE-9]]:3: warp-reduce: not applied: the kernel reads threadIdx.y (at {{.*}}wr.cu:[[@LINE-11]]:42); a reduction over s[threadIdx.x] in a multi-dimensional block is not handled

// Not fired: a halving loop that is no reduction (a bitonic step).
// CHECK-LABEL: {{^}}__global__ void bitonic(
__global__ void bitonic(float *data) {
  __shared__ float s[256];
  int tid = threadIdx.x;
  s[tid] = data[tid];
  __syncthreads();
  for (int j = 128; j > 0; j >>= 1) {
    int p = tid ^ j;
    if (p > tid && s[tid] > s[p]) {
      float t = s[tid];
      s[tid] = s[p];
      s[p] = t;
    }
    __syncthreads();
  }
  data[tid] = s[tid];
}
// CHECK: {{^}}  for (int j = 128; j > 0; j >>= 1) {
// EXPLAIN-DAG: wr.cu:[[@LINE-12]]:3: warp-reduce: not applied: not a shared-memory tree reduction: the loop body is not '{ if (tid < off) <step>; __syncthreads(); }'

// An arg-max over two shared arrays (the step of block_reduce_argmax in
// kernels/common/reduce.cuh): value and index are shuffled together and the
// step's combine (larger value, then lower index) is applied to registers.
// CHECK-LABEL: {{^}}__global__ void block_argmax(
__global__ void block_argmax(const float *in, int *out) {
  __shared__ float vals[1024];
  __shared__ int idxs[1024];
  const int tid = threadIdx.x;
  vals[tid] = in[blockIdx.x * blockDim.x + tid];
  idxs[tid] = tid;
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
  if (tid == 0)
    out[blockIdx.x] = idxs[0];
}
// CHECK-NEXT: {{^}}  __shared__ float vals[1024];
// CHECK-NEXT: {{^}}  __shared__ int idxs[1024];
// CHECK-NEXT: {{^}}  const int tid = threadIdx.x;
// CHECK-NEXT: {{^}}  { // warp-reduce: arg-max of (vals, idxs) with warp shuffles, one shared-memory step across warps
// CHECK-NEXT: {{^}}    float astra_wr_val = in[blockIdx.x * blockDim.x + tid];
// CHECK-NEXT: {{^}}    int astra_wr_idx = tid;
// CHECK-NEXT: {{^}}    const unsigned astra_wr_count = blockDim.x; // threads whose values are reduced
// CHECK:      {{^}}      for (unsigned astra_wr_off = 16u; astra_wr_off > 0u; astra_wr_off >>= 1)
// CHECK-NEXT: {{^}}        if (astra_wr_off < astra_wr_lanes) {
// CHECK-NEXT: {{^}}          const float astra_wr_oval = __shfl_xor_sync(astra_wr_mask, astra_wr_val, astra_wr_off);
// CHECK-NEXT: {{^}}          const int astra_wr_oidx = __shfl_xor_sync(astra_wr_mask, astra_wr_idx, astra_wr_off);
// CHECK-NEXT: {{^}}          if (astra_wr_oval > astra_wr_val || (astra_wr_oval == astra_wr_val && astra_wr_oidx < astra_wr_idx)) {
// CHECK-NEXT: {{^}}            astra_wr_val = astra_wr_oval;
// CHECK-NEXT: {{^}}            astra_wr_idx = astra_wr_oidx;
// CHECK-NEXT: {{^}}          }
// CHECK-NEXT: {{^}}        }
// CHECK-NEXT: {{^}}      if (astra_wr_count > 32u && (threadIdx.x & 31u) == 0u) {
// CHECK-NEXT: {{^}}        vals[threadIdx.x >> 5] = astra_wr_val;
// CHECK-NEXT: {{^}}        idxs[threadIdx.x >> 5] = astra_wr_idx;
// CHECK-NEXT: {{^}}      }
// CHECK-NEXT: {{^}}    }
// CHECK-NEXT: {{^}}    if (astra_wr_count > 32u) {
// CHECK-NEXT: {{^}}      __syncthreads();
// CHECK-NEXT: {{^}}      const unsigned astra_wr_warps = (astra_wr_count + 31u) >> 5;
// CHECK-NEXT: {{^}}      if (threadIdx.x < astra_wr_warps) {
// CHECK-NEXT: {{^}}        astra_wr_val = vals[threadIdx.x];
// CHECK-NEXT: {{^}}        astra_wr_idx = idxs[threadIdx.x];
// CHECK-NEXT: {{^}}        for (unsigned astra_wr_off = 16u; astra_wr_off > 0u; astra_wr_off >>= 1)
// CHECK-NEXT: {{^}}          if (astra_wr_off < astra_wr_warps) {
// CHECK-NEXT: {{^}}            const float astra_wr_oval = __shfl_xor_sync(0xffffffffu >> (32u - astra_wr_warps), astra_wr_val, astra_wr_off);
// CHECK:      {{^}}    if (threadIdx.x == 0u) {
// CHECK-NEXT: {{^}}      vals[0] = astra_wr_val;
// CHECK-NEXT: {{^}}      idxs[0] = astra_wr_idx;
// CHECK-NEXT: {{^}}    }
// CHECK-NEXT: {{^}}    __syncthreads();
// CHECK-NEXT: {{^}}  }
// CHECK-NEXT: {{^}}  if (tid == 0)
// CHECK-NEXT: {{^}}    out[blockIdx.x] = idxs[0];
// EXPLAIN-DAG: wr.cu:[[@LINE-52]]:3: warp-reduce: fired: the arg-max tree reduction of (vals, idxs) over blockDim.x threads now reduces with warp shuffles and one shared-memory step; vals[0] and idxs[0] hold the result after a barrier as before (the combine keeps the larger value, then the lower index: the same pair in any order, unless a value is NaN){{$}}

// Ties to the higher index: a shuffle tree would pick the same value but
// possibly another index than this tree does, so the step stays.
// CHECK-LABEL: {{^}}__global__ void argmax_high_tie(
__global__ void argmax_high_tie(const float *in, int *out) {
  __shared__ float vals[1024];
  __shared__ int idxs[1024];
  const int tid = threadIdx.x;
  vals[tid] = in[blockIdx.x * blockDim.x + tid];
  idxs[tid] = tid;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) {
      const float v = vals[tid + s];
      const int i = idxs[tid + s];
      if (v > vals[tid] || (v == vals[tid] && i > idxs[tid])) {
        vals[tid] = v;
        idxs[tid] = i;
      }
    }
    __syncthreads();
  }
  if (tid == 0)
    out[blockIdx.x] = idxs[0];
}
// CHECK: {{^}}  vals[tid] = in[blockIdx.x * blockDim.x + tid];
// CHECK-NEXT: {{^}}  idxs[tid] = tid;
// CHECK-NEXT: {{^}}  __syncthreads();
// EXPLAIN-DAG: wr.cu:[[@LINE-17]]:3: warp-reduce: not applied: not a shared-memory tree reduction: the (value, index) step 'if (v > vals[tid] || (v == vals[tid] && i > idxs[tid])) ...' does not keep the larger (or smaller) value and, on equal values, the lower index; only that combine gives the same pair in any order

// Trees from blockDim.x / 2 reduce every value only for power-of-two
// blocks: the launches must show one. A block of 96 threads (the tree drops
// values there, the rewrite would not) and a block chosen at run time are
// refused; `1 << k` is a power of two whatever k is.
// CHECK-LABEL: {{^}}__global__ void sum96(
// CHECK-NOT: { // warp-reduce:
// CHECK-LABEL: {{^}}__global__ void sum_runtime(
// CHECK-NOT: { // warp-reduce:
// CHECK-LABEL: {{^}}__global__ void sum_shift(
// CHECK: {{^}}  { // warp-reduce: sum of s with warp shuffles
__global__ void sum96(const float *in, float *out) {
  __shared__ float s[1024];
  int tid = threadIdx.x;
  s[tid] = in[blockIdx.x * blockDim.x + tid];
  __syncthreads();
  for (int off = blockDim.x / 2; off > 0; off >>= 1) {
    if (tid < off)
      s[tid] += s[tid + off];
    __syncthreads();
  }
  if (tid == 0)
    out[blockIdx.x] = s[0];
}
// EXPLAIN-DAG: wr.cu:[[@LINE-8]]:3: warp-reduce: not applied: the tree starts at blockDim.x / 2, which reduces every value only when blockDim.x is a power of two, and the launch at {{.*}}wr.cu:{{[0-9]+}}:3 passes a block x size (96) that the code does not show to be a power of two
__global__ void sum_runtime(const float *in, float *out) {
  __shared__ float s[1024];
  int tid = threadIdx.x;
  s[tid] = in[blockIdx.x * blockDim.x + tid];
  __syncthreads();
  for (int off = blockDim.x / 2; off > 0; off >>= 1) {
    if (tid < off)
      s[tid] += s[tid + off];
    __syncthreads();
  }
  if (tid == 0)
    out[blockIdx.x] = s[0];
}
// EXPLAIN-DAG: wr.cu:[[@LINE-8]]:3: warp-reduce: not applied: the tree starts at blockDim.x / 2, which reduces every value only when blockDim.x is a power of two, and the launch at {{.*}}wr.cu:{{[0-9]+}}:3 passes a block x size ('threads', a parameter of 'launch_all') that the code does not show to be a power of two
__global__ void sum_shift(const float *in, float *out) {
  __shared__ float s[1024];
  int tid = threadIdx.x;
  s[tid] = in[blockIdx.x * blockDim.x + tid];
  __syncthreads();
  for (int off = blockDim.x / 2; off > 0; off >>= 1) {
    if (tid < off)
      s[tid] += s[tid + off];
    __syncthreads();
  }
  if (tid == 0)
    out[blockIdx.x] = s[0];
}
// EXPLAIN-DAG: wr.cu:[[@LINE-8]]:3: warp-reduce: fired: the sum tree reduction of 's' over blockDim.x threads

// The launches: 256 threads, a power of two, for the kernels above.
void launch_all(const float *x, float *y, const __half *h, __half *hy,
                const __nv_bfloat16 *b, int *cnt, int *idx, int n, int cols,
                int threads, int k) {
  softmax_row<<<n, 256>>>(x, y, cols);
  row_sum<<<n, 256>>>(x, y, cols);
  row_fold<<<n, 256>>>(x, y);
  block_sum<<<n, 256>>>(x, y, n);
  softmax_rows<<<n, 256>>>(h, hy, cols);
  count_positive<<<n, 128>>>(b, cnt, n);
  sample_reduce<<<n, 256>>>(x, y, n);
  sample_tail<<<n, 256>>>(x, y);
  sample_helper<<<n, 256>>>(x, y);
  sample_short<<<n, 256>>>(x, y);
  reads_partials<<<n, 256>>>(x, y);
  peeks<<<n, 256>>>(x, y);
  block_prod<<<n, 256>>>(x, y);
  odd_start<<<n, 256>>>(x, y);
  rows_2d<<<n, dim3(32, 8)>>>(x, y);
  bitonic<<<n, 256>>>(y);
  block_argmax<<<n, 256>>>(x, idx);
  argmax_high_tie<<<n, 256>>>(x, idx);
  sum96<<<n, 96>>>(x, y);
  sum_runtime<<<n, threads>>>(x, y);
  sum_shift<<<n, 1 << k>>>(x, y);
}

// PTX-DAG: .entry {{.*}}block_sum
// PTX-DAG: .entry {{.*}}header_sum
// PTX-DAG: .entry {{.*}}softmax_rows
// PTX-DAG: .entry {{.*}}count_positive
// PTX-DAG: .entry {{.*}}block_min
// PTX-DAG: .entry {{.*}}sample_tail
// PTX-DAG: .entry {{.*}}block_argmax
// PTX-DAG: shfl.sync.bfly.b32
