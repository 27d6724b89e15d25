// warp-per-row: a kernel with one thread per row, launched over the rows at
// launch sites in the file, gives each row its own warp: every launch's grid
// becomes cdiv(rows, block / 32) (tested at run time where the block size is
// not known to be a multiple of 32), the row index the global warp index,
// and the row loops, reductions and stores change as row-cooperative's do.
// Checked: the kernel and launch text of each form (runtime block, literal
// block, a ceil_div helper with dim3 arguments, two launches), the spec's
// launch, the PTX, a second run, and every refusal with its reason.
// RUN: rm -rf %t.dir && mkdir -p %t.dir
// RUN: cp %s %t.dir/wpr.cu && cp %S/Inputs/warp-per-row.astra.json %t.dir/wpr.cu.astra.json
// RUN: %clang-astra rewrite --passes=warp-per-row -i %t.dir/wpr.cu
// RUN: FileCheck %s < %t.dir/wpr.cu
// RUN: FileCheck %s --check-prefix=SPEC < %t.dir/wpr.cu.astra.json
// RUN: %nvptx-compile %t.dir/wpr.cu | FileCheck %s --check-prefix=PTX
// RUN: %cuda-syntax-check %t.dir/wpr.cu
// RUN: cp %s %t.dir/r.cu && cp %S/Inputs/warp-per-row.astra.json %t.dir/r.cu.astra.json
// RUN: %clang-astra rewrite --passes=warp-per-row --explain %t.dir/r.cu 2>&1 >/dev/null | FileCheck %s --check-prefix=EXPLAIN
// A second run leaves the rewritten kernels alone.
// RUN: %clang-astra rewrite --passes=warp-per-row --kernel=rms --explain %t.dir/wpr.cu 2>&1 >/dev/null | FileCheck %s --check-prefix=AGAIN
// Without a spec the launch cannot change.
// RUN: cp %s %t.dir/nospec.cu
// RUN: %clang-astra rewrite --passes=warp-per-row --kernel=rms --explain %t.dir/nospec.cu 2>&1 >/dev/null | FileCheck %s --check-prefix=NOSPEC
// After it, row-cooperative has nothing left to do.
// RUN: %clang-astra rewrite --passes=warp-per-row,row-cooperative --kernel=rms --explain %t.dir/r.cu 2>&1 >/dev/null | FileCheck %s --check-prefix=BOTH
// PTX: .visible .entry _Z3rms
// PTX: shfl.sync.bfly.b32
// PTX: .visible .entry _Z5quant
// SPEC: "rms": {
// SPEC: "launch": {"grid": ["cdiv((R), (256) / 32)", "1", "1"], "block": ["256", "1", "1"]},
// SPEC: "quant": {
// SPEC: "launch": {"grid": ["cdiv((R), (256) / 32)", "1", "1"], "block": ["256", "1", "1"]},
// SPEC: "dot": {
// SPEC-SAME: "launch": {"grid": ["cdiv((M), (128) / 32)", "1", "1"], "block": ["128", "1", "1"]},
// AGAIN: wpr.cu:{{.*}}: warp-per-row: not applied: reads blockIdx.x other than in the row index
// AGAIN-NOT: fired
// NOSPEC: nospec.cu:[[@LINE+31]]:17: warp-per-row: not applied: no workload spec: the grid to change is the spec's launch too
// BOTH: warp-per-row: fired
// BOTH: row-cooperative: not applied: the kernel calls __shfl_xor_sync

#include <cstdint>
#include <cuda_runtime.h>

// rmsnorm with the caller's block size: the kernel and the launch test
// whether it is a multiple of 32 and keep the original otherwise.
// EXPLAIN: r.cu:[[@LINE+23]]:3: warp-per-row: fired: each row of 'r' below 'rows' gets its own warp: the grid x of 1 launch site ({{.*}}r.cu:[[@LINE+37]]:3) becomes cdiv(rows, block / 32) where the block size is a multiple of 32 (tested at run time; otherwise the original grid and code); 2 row loop(s) strided over the 32 lanes; reductions 'ss' (+) combined by warp shuffles (floating-point sums are reassociated{{.*}})
// CHECK-LABEL: {{^}}__global__ void rms(
// CHECK-NEXT: {{^}}  if (blockDim.x % 32 == 0) {
// CHECK-NEXT: {{^}}    // warp-per-row: the launch gives each row a warp.
// CHECK-NEXT: {{^}}    const unsigned astra_lane = threadIdx.x % 32;
// CHECK-NEXT: {{^}}    int r = (blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32);
// CHECK-NEXT: {{^}}    if (r < rows) {
// CHECK-NEXT: {{^}}      float ss = 0.0f;
// CHECK-NEXT: {{^}}      for (int j = astra_lane; j < cols; j += 32)
// CHECK-NEXT: {{^}}        ss += x[r * cols + j] * x[r * cols + j];
// CHECK-NEXT: {{^}}      for (int astra_o = 16; astra_o > 0; astra_o /= 2)
// CHECK-NEXT: {{^}}        ss = ss + __shfl_xor_sync(0xffffffffu, ss, astra_o);
// CHECK-NEXT: {{^}}      ss = __shfl_sync(0xffffffffu, ss, 0);
// CHECK-NEXT: {{^}}      float inv = rsqrtf(ss / cols + 1e-6f);
// CHECK-NEXT: {{^}}      for (int j = astra_lane; j < cols; j += 32)
// CHECK-NEXT: {{^}}        y[r * cols + j] = x[r * cols + j] * inv;
// CHECK-NEXT: {{^}}    }
// CHECK-NEXT: {{^}}  } else {
// CHECK-NEXT: {{^}}    int r = blockIdx.x * blockDim.x + threadIdx.x;
// CHECK-NEXT: {{^}}    if (r < rows) {
// CHECK-NEXT: {{^}}      float ss = 0.0f;
// CHECK-NEXT: {{^}}      for (int j = 0; j < cols; j++)
__global__ void rms(const float *x, float *y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float ss = 0.0f;
    for (int j = 0; j < cols; j++)
      ss += x[r * cols + j] * x[r * cols + j];
    float inv = rsqrtf(ss / cols + 1e-6f);
    for (int j = 0; j < cols; j++)
      y[r * cols + j] = x[r * cols + j] * inv;
  }
}

// CHECK-LABEL: {{^}}void launch_rms(
// CHECK-NEXT: {{^}}  rms<<<(block % 32 == 0 ? (rows + block / 32 - 1) / (block / 32) : ((rows + block - 1) / block)), block>>>(x, y, rows, cols);
void launch_rms(const float *x, float *y, int rows, int cols, int block) {
  rms<<<(rows + block - 1) / block, block>>>(x, y, rows, cols);
}

// A literal block (a multiple of 32): no run-time test; an early return, a
// maximum and a per-row store made by lane 0.
// EXPLAIN: r.cu:[[@LINE+15]]:3: warp-per-row: fired: each row of 'r' below 'rows' gets its own warp: {{.*}} (every block size a multiple of 32); 2 row loop(s) strided over the 32 lanes; reductions 'amax' (max) combined by warp shuffles
// CHECK-LABEL: {{^}}__global__ void quant(
// CHECK-NEXT: {{^}}                      int cols) {
// CHECK-NEXT: {{^}}  // warp-per-row: every launch gives each row a warp.
// CHECK-NEXT: {{^}}  const unsigned astra_lane = threadIdx.x % 32;
// CHECK-NEXT: {{^}}  int r = (blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32);
// CHECK-NEXT: {{^}}  if (r >= rows)
// CHECK-NEXT: {{^}}    return;
// CHECK: {{^}}    amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, astra_o));
// CHECK-NEXT: {{^}}  amax = __shfl_sync(0xffffffffu, amax, 0);
// CHECK-NEXT: {{^}}  float scale = fmaxf(amax / 127.0f, 1e-10f);
// CHECK-NEXT: {{^}}  { __syncwarp(); if (astra_lane == 0) scales[r] = scale; __syncwarp(); }
// CHECK-NEXT: {{^}}  for (int j = astra_lane; j < cols; j += 32)
__global__ void quant(const float *x, int8_t *q, float *scales, int rows,
                      int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows)
    return;
  float amax = 0.0f;
  for (int j = 0; j < cols; j++)
    amax = fmaxf(amax, fabsf(x[r * cols + j]));
  float scale = fmaxf(amax / 127.0f, 1e-10f);
  scales[r] = scale;
  for (int j = 0; j < cols; j++)
    q[r * cols + j] = (int8_t)rintf(x[r * cols + j] / scale);
}

// CHECK-LABEL: {{^}}void launch_quant(
// CHECK-NEXT: {{^}}                  int cols) {
// CHECK-NEXT: {{^}}  quant<<<(rows + 256 / 32 - 1) / (256 / 32), 256>>>(x, q, scales, rows, cols);
void launch_quant(const float *x, int8_t *q, float *scales, int rows,
                  int cols) {
  quant<<<(rows + 255) / 256, 256>>>(x, q, scales, rows, cols);
}

// A ceil_div helper, dim3 arguments, a `const int` block, two launches; a
// sum into memory (PolyBench's matrix-vector form).
// EXPLAIN: r.cu:[[@LINE+14]]:3: warp-per-row: fired: each row of 'i' below 'm' gets its own warp: the grid x of 2 launch sites ({{.*}}r.cu:[[@LINE+28]]:3, {{.*}}r.cu:[[@LINE+29]]:3) becomes cdiv(rows, block / 32) (every block size a multiple of 32); 1 row loop(s) strided over the 32 lanes; reductions 'y[i]' (+)
// CHECK-LABEL: {{^}}__global__ void dot(
// CHECK-NEXT: {{^}}                    double *__restrict__ y, int m, int k) {
// CHECK-NEXT: {{^}}  // warp-per-row: every launch gives each row a warp.
// CHECK-NEXT: {{^}}  const unsigned astra_lane = threadIdx.x % 32;
// CHECK-NEXT: {{^}}  int i = (blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32);
// CHECK-NEXT: {{^}}  if (i < m) {
// CHECK-NEXT: {{^}}    int j;
// CHECK-NEXT: {{^}}    double astra_acc0 = 0;
// CHECK-NEXT: {{^}}    for (j = astra_lane; j < k; j += 32)
// CHECK-NEXT: {{^}}      astra_acc0 += A[i * k + j] * x[j];
static int ceil_div(int a, int b) { return (a + b - 1) / b; }
__global__ void dot(const double *__restrict__ A, const double *__restrict__ x,
                    double *__restrict__ y, int m, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < m) {
    int j;
    for (j = 0; j < k; j++)
      y[i] += A[i * k + j] * x[j];
  }
}

// CHECK-LABEL: {{^}}void launch_dot(
// CHECK-NEXT: {{^}}  const int threads = 128;
// CHECK-NEXT: {{^}}  dot<<<dim3((m + threads / 32 - 1) / (threads / 32)), dim3(threads)>>>(A, x, y, m, k);
// CHECK-NEXT: {{^}}  dot<<<(m + 128 / 32 - 1) / (128 / 32), 128>>>(A, x, y, m, k);
void launch_dot(const double *A, const double *x, double *y, int m, int k) {
  const int threads = 128;
  dot<<<dim3(ceil_div(m, threads)), dim3(threads)>>>(A, x, y, m, k);
  dot<<<(m + 127) / 128, 128>>>(A, x, y, m, k);
}

// Refusals.
// EXPLAIN: r.cu:[[@LINE+1]]:17: warp-per-row: not applied: {{.*}}kernel 'notown': launch: the spec does not mark the launch as the kernel's own ("launch_tunable": true)
__global__ void notown(const float *x, float *y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float s = 0.0f;
    for (int j = 0; j < cols; j++)
      s += x[r * cols + j];
    y[r] = s;
  }
}
void launch_notown(const float *x, float *y, int rows, int cols) {
  notown<<<(rows + 255) / 256, 256>>>(x, y, rows, cols);
}

// No launch in the file: the program may launch it anywhere.
// EXPLAIN: r.cu:[[@LINE+1]]:17: warp-per-row: not applied: {{.*}}no launch
__global__ void hidden(const float *__restrict__ x, float *__restrict__ y,
                       int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float s = 0.0f;
    for (int j = 0; j < cols; j++)
      s += x[r * cols + j];
    y[r] = s;
  }
}

// A grid that is not a rounded-up division.
// EXPLAIN: r.cu:[[@LINE+11]]:10: warp-per-row: not applied: the launch's grid `rows / 256 + 1` is not a rounded-up division `(n + b - 1) / b` (or a function returning one) of the row count by the block size
__global__ void flat(const float *x, float *y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float s = 0.0f;
    for (int j = 0; j < cols; j++)
      s += x[r * cols + j];
    y[r] = s;
  }
}
void launch_flat(const float *x, float *y, int rows, int cols) {
  flat<<<rows / 256 + 1, 256>>>(x, y, rows, cols);
}

// The grid covers other rows than the guard's.
// EXPLAIN: r.cu:[[@LINE+11]]:14: warp-per-row: not applied: the launch's grid covers `n` rows, but passes `n / 2` for 'rows', the row count of the kernel's guard
__global__ void mismatch(const float *x, float *y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float s = 0.0f;
    for (int j = 0; j < cols; j++)
      s += x[r * cols + j];
    y[r] = s;
  }
}
void launch_mismatch(const float *x, float *y, int n, int cols) {
  mismatch<<<(n + 255) / 256, 256>>>(x, y, n / 2, cols);
}

// The grid divides by another size than the block's.
// EXPLAIN: r.cu:[[@LINE+11]]:16: warp-per-row: not applied: the launch's grid divides by `128`, which is not its block size `256`
__global__ void otherblock(const float *x, float *y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float s = 0.0f;
    for (int j = 0; j < cols; j++)
      s += x[r * cols + j];
    y[r] = s;
  }
}
void launch_otherblock(const float *x, float *y, int rows, int cols) {
  otherblock<<<(rows + 127) / 128, 256>>>(x, y, rows, cols);
}

// A 2-D block (PolyBench's dim3(32, 8)).
// EXPLAIN: r.cu:[[@LINE+12]]:3: warp-per-row: not applied: the launch's block is not known to be 1-D
__global__ void twod(const float *x, float *y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float s = 0.0f;
    for (int j = 0; j < cols; j++)
      s += x[r * cols + j];
    y[r] = s;
  }
}
void launch_twod(const float *x, float *y, int rows, int cols) {
  dim3 block(32, 8);
  twod<<<(rows + block.x - 1) / block.x, block>>>(x, y, rows, cols);
}

// The kernel reads the launch's shape other than in the row index.
// EXPLAIN: r.cu:[[@LINE+6]]:30: warp-per-row: not applied: reads gridDim.x other than in the row index: the new launch changes it
__global__ void shape(const float *x, float *y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float s = 0.0f;
    for (int j = 0; j < cols; j++)
      s += x[r * cols + j] * gridDim.x;
    y[r] = s;
  }
}

// No guard: the rows the new grid adds would run.
// EXPLAIN: r.cu:[[@LINE+3]]:3: warp-per-row: not applied: no guard on the row index right after it
__global__ void unguarded(const float *__restrict__ x, float *__restrict__ y,
                          int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0.0f;
  for (int j = 0; j < cols; j++)
    s += x[r * cols + j];
  y[r] = s;
}

// A guard whose bound is not a parameter.
// EXPLAIN: r.cu:[[@LINE+4]]:11: warp-per-row: not applied: the guard's row count is not a parameter of the kernel
__global__ void halfrows(const float *__restrict__ x, float *__restrict__ y,
                         int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows / 2) {
    float s = 0.0f;
    for (int j = 0; j < cols; j++)
      s += x[r * cols + j];
    y[r] = s;
  }
}

// A barrier in the guard: threads of a block no longer run the same rows.
// EXPLAIN: r.cu:[[@LINE+1]]:17: warp-per-row: not applied: the kernel calls __syncthreads
__global__ void barrier(const float *x, float *y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float s = 0.0f;
    for (int j = 0; j < cols; j++)
      s += x[r * cols + j];
    __syncthreads();
    y[r] = s;
  }
}
