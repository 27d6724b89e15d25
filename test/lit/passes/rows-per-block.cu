// rows-per-block: a kernel with one row per block and block-stride loops
// over it takes several rows per block, each with the block's x divided by
// vectorize's width; the launch (and the spec's) applies only where the rows
// divide the grid and the block fits. Checked: the kernel and launch text
// after vectorize (merge, the merge_attn_states pattern), dim3 launch locals
// and a helper with its own loop (scale_rows, rows given), the spec's
// launch, the PTX, a second run, and every refusal with its reason.
// RUN: rm -rf %t.dir && mkdir -p %t.dir
// RUN: cp %s %t.dir/rpb.cu && cp %S/Inputs/rows-per-block.astra.json %t.dir/rpb.cu.astra.json
// RUN: %clang-astra rewrite --passes=vectorize,rows-per-block -i %t.dir/rpb.cu -- -std=c++17
// RUN: FileCheck %s < %t.dir/rpb.cu
// RUN: FileCheck %s --check-prefix=SPEC < %t.dir/rpb.cu.astra.json
// RUN: %nvptx-compile %t.dir/rpb.cu | FileCheck %s --check-prefix=PTX
// A second run refuses: the launch now has rows (and the kernel reads threadIdx.y).
// RUN: %clang-astra rewrite --passes=vectorize,rows-per-block --kernel=merge --explain %t.dir/rpb.cu -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=AGAIN
// RUN: cp %s %t.dir/r.cu && cp %S/Inputs/rows-per-block.astra.json %t.dir/r.cu.astra.json
// RUN: %clang-astra rewrite --passes=vectorize,rows-per-block --kernel=merge --explain %t.dir/r.cu -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=FIRED
// Without vectorize it waits (merge, scale_rows); the refusals.
// RUN: %clang-astra rewrite --passes=rows-per-block --explain %t.dir/r.cu -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=EXPLAIN
// RUN: %clang-astra rewrite --passes=rows-per-block --pass-opt=rows-per-block.rows=8 %t.dir/r.cu -- -std=c++17 | FileCheck %s --check-prefix=ROWS8
// RUN: not %clang-astra rewrite --passes=rows-per-block --pass-opt=rows-per-block.rows=128 --kernel=merge %t.dir/r.cu -- -std=c++17 2>&1 | FileCheck %s --check-prefix=BADOPT
// RUN: cp %s %t.dir/nospec.cu
// RUN: %clang-astra rewrite --passes=vectorize,rows-per-block --kernel=merge --explain %t.dir/nospec.cu -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=NOSPEC
// PTX: .visible .entry _Z5merge
// PTX: mov.u32 {{.*}}%tid.y
// PTX: ld.global{{(.nc)?}}.v4
// PTX: st.global.v4
// SPEC: "launch": {"grid": ["(R) % 4 == 0 && (D) % 8 == 0 && (D) / 8 * 4 <= 1024 ? (R) / 4 : (R)", "1", "1"], "block": ["(R) % 4 == 0 && (D) % 8 == 0 && (D) / 8 * 4 <= 1024 ? (D) / 8 : (D)", "(R) % 4 == 0 && (D) % 8 == 0 && (D) / 8 * 4 <= 1024 ? 4 : 1", "1"]},
// SPEC: "launch": {"grid": "R", "block": "min(N, 512)"},
// AGAIN: rows-per-block: not applied: {{.*}}kernel 'merge': launch: the spec's block is not 1-D
// AGAIN-NOT: fired
// BADOPT: error: --pass-opt=rows-per-block.rows=128: rows-per-block.rows must be an integer from 2 to 64, not '128'
// NOSPEC: nospec.cu:[[@LINE+7]]:17: rows-per-block: not applied: no workload spec

#include <cuda_fp16.h>
#include <cuda_runtime.h>

// A row per block, a block-stride loop over the row, one thread writing the
// row's own value: the merge_attn_states pattern.
__global__ void merge(__half *__restrict__ out, float *__restrict__ lse,
                      const __half *__restrict__ a, const __half *__restrict__ b,
                      const float *__restrict__ sa, int d) {
  const long row = blockIdx.x;
  // CHECK-LABEL: __global__ void merge(
  // CHECK: {{^}}  const long row = (blockIdx.x * blockDim.y + threadIdx.y);
  // CHECK: {{^}}    constexpr int astra_vec = 8;
  // CHECK: {{^}}    for (int astra_jv = threadIdx.x; astra_jv < d / astra_vec; astra_jv += blockDim.x) {
  const float w = expf(sa[row]);
  for (int j = threadIdx.x; j < d; j += blockDim.x) {
    const long i = row * d + j;
    out[i] = __float2half(w * __half2float(a[i]) + __half2float(b[i]));
  }
  if (threadIdx.x == 0)
    lse[row] = logf(w);
}

void launch_merge(__half *out, float *lse, const __half *a, const __half *b,
                  const float *sa, int rows, int d, cudaStream_t s) {
  merge<<<rows, d, 0, s>>>(out, lse, a, b, sa, d);
  // CHECK: {{^}}  merge<<<((rows) % 4 == 0 && (d) % 8 == 0 && (d) / 8 * 4 <= 1024 ? (rows) / 4 : (rows)), ((rows) % 4 == 0 && (d) % 8 == 0 && (d) / 8 * 4 <= 1024 ? dim3((d) / 8, 4) : dim3(d)), 0, s>>>(out, lse, a, b, sa, d);
}
// FIRED: r.cu:{{[0-9]+}}:17: rows-per-block: fired: 4 rows per block at 1 launch site ({{.*}}r.cu:{{[0-9]+}}:3), each row with the block's x / 8 threads, where 4 divides the grid and the block fits
// EXPLAIN: r.cu:[[@LINE-23]]:17: rows-per-block: not applied: no loop that vectorize wrote

// The row's work in a helper with its own block-stride loop, launched with
// dim3 locals (the rotary_embedding pattern).
__device__ void scale_row(float *row, const float *c, int n) {
  for (int k = threadIdx.x; k < n; k += blockDim.x)
    row[k] *= c[k];
}

__global__ void scale_rows(float *x, const float *c, int n) {
  scale_row(x + blockIdx.x * (long)n, c, n);
  // ROWS8: {{^}}  scale_row(x + (blockIdx.x * blockDim.y + threadIdx.y) * (long)n, c, n);
}
// EXPLAIN: r.cu:[[@LINE-4]]:17: rows-per-block: not applied: no loop that vectorize wrote: rows of the original width would only make blocks larger (run vectorize first, or give --pass-opt=rows-per-block.rows=R)

void launch_scale_rows(float *x, const float *c, int rows, int n,
                       cudaStream_t s) {
  const dim3 grid(rows);
  const dim3 block(n < 512 ? n : 512);
  scale_rows<<<grid, block, 0, s>>>(x, c, n);
  // ROWS8: {{^}}  scale_rows<<<((grid.x) % 8 == 0 && (block.x) * 8 <= 1024 ? dim3((grid.x) / 8, grid.y, grid.z) : dim3(grid)), ((grid.x) % 8 == 0 && (block.x) * 8 <= 1024 ? dim3((block.x), 8) : dim3(block)), 0, s>>>(x, c, n);
}

// Refused: a per-thread partial sum written by every thread.
__global__ void partial(float *out, const float *x, int n) {
  float sum = 0.f;
  for (int j = threadIdx.x; j < n; j += blockDim.x)
    sum += x[blockIdx.x * n + j];
// EXPLAIN: r.cu:[[@LINE-1]]:5: rows-per-block: not applied: the block-stride loop changes 'sum', declared outside it: a per-thread value that depends on which thread takes which element
  out[blockIdx.x] = sum;
}

// Refused: threadIdx.x used as an element index.
__global__ void perthread(float *out, const float *x) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = 2.f * x[threadIdx.x];
// EXPLAIN: r.cu:[[@LINE-1]]:20: rows-per-block: not applied: blockDim.x is read other than in a block-stride loop's start and step or in `threadIdx.x == 0`: the code depends on the number of threads of a row
}

// Refused: a shared-memory reduction.
__global__ void blocksum(float *out, const float *x, int n) {
  __shared__ float buf[256];
  float v = 0.f;
  for (int j = threadIdx.x; j < n; j += blockDim.x)
    v = fmaxf(v, x[blockIdx.x * n + j]);
  buf[threadIdx.x] = v;
  __syncthreads();
// EXPLAIN: r.cu:{{[0-9]+}}:17: rows-per-block: not applied: the kernel calls __syncthreads at {{.*}}r.cu:[[@LINE-1]]:3: a block would hold several rows, a warp may span two
  if (threadIdx.x == 0)
    out[blockIdx.x] = buf[0];
}

// Refused: an atomic that every thread of the row runs.
__global__ void count(int *hits, const float *x, int n) {
  atomicAdd(hits, 1);
// EXPLAIN: r.cu:[[@LINE-1]]:3: rows-per-block: not applied: 'atomicAdd' outside the block-stride loops and not under `threadIdx.x == 0`: it would run once per thread of the row, as many times as a row has threads
  for (int j = threadIdx.x; j < n; j += blockDim.x)
    if (x[blockIdx.x * n + j] > 0.f)
      atomicAdd(hits + 1, 1);
}

// Refused: a 2-D grid.
__global__ void grid2d(float *x, int n) {
  for (int j = threadIdx.x; j < n; j += blockDim.x)
    x[(blockIdx.y * gridDim.x + blockIdx.x) * n + j] = 0.f;
// EXPLAIN: r.cu:[[@LINE-1]]:8: rows-per-block: not applied: blockIdx.y is read: the kernel must use a 1-D block and grid (the new launch changes blockIdx.y)
}

// Refused: the launch's block is 2-D.
__global__ void twod(float *x, int n) {
// EXPLAIN: r.cu:[[@LINE-1]]:17: rows-per-block: not applied: {{.*}}r.cu.astra.json:{{[0-9]+}}:{{[0-9]+}}: kernel 'twod': launch: the spec's block is not 1-D (4)
  for (int j = threadIdx.x; j < n; j += blockDim.x)
    x[blockIdx.x * n + j] = 1.f;
}

// Refused: a block-stride loop only thread 0 runs (it would take every
// blockDim.x-th element), and an exit of thread 0 before the loop.
__global__ void lonely(float *x, int n) {
  if (threadIdx.x == 0)
    for (int j = threadIdx.x; j < n; j += blockDim.x)
      x[blockIdx.x * n + j] = 1.f;
}
// EXPLAIN: r.cu:[[@LINE-3]]:5: rows-per-block: not applied: a block-stride loop in a branch on `threadIdx.x == 0`: only some threads of the row reach it

__global__ void quitter(float *x, int n) {
  if (threadIdx.x == 0)
    return;
  for (int j = threadIdx.x; j < n; j += blockDim.x)
    x[blockIdx.x * n + j] = 1.f;
}
// EXPLAIN: r.cu:[[@LINE-4]]:5: rows-per-block: not applied: this leaves early in a branch on `threadIdx.x == 0`: the threads left to the loops that follow depend on the number of threads of a row

void launch_rest(float *out, float *x, int *hits, int rows, int n,
                 cudaStream_t s) {
  partial<<<rows, 256, 0, s>>>(out, x, n);
  perthread<<<rows, 256, 0, s>>>(out, x);
  blocksum<<<rows, 256, 0, s>>>(out, x, n);
  count<<<rows, 256, 0, s>>>(hits, x, n);
  grid2d<<<dim3(rows, 2), 256, 0, s>>>(x, n);
  twod<<<rows, dim3(32, 4), 0, s>>>(x, n);
  lonely<<<rows, 256, 0, s>>>(x, n);
  quitter<<<rows, 256, 0, s>>>(x, n);
}
