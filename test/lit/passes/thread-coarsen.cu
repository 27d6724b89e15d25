// thread-coarsen: each thread runs several copies of a thread of the original
// block along y (and x when asked), the block shrinks by the same factor.
// Checked per kernel: the per-copy code and the privatized locals, what stays
// once per thread, the launch site, the spec after -i, the refusals with
// their reasons, and the PTX of the result.
// RUN: rm -rf %t.dir && mkdir -p %t.dir
// RUN: cp %s %t.dir/tc.cu && cp %S/Inputs/thread-coarsen.astra.json %t.dir/tc.cu.astra.json
// RUN: %clang-astra rewrite --passes=thread-coarsen -i %t.dir/tc.cu -- -std=c++17
// RUN: FileCheck %s < %t.dir/tc.cu
// RUN: FileCheck %s --check-prefix=SPEC < %t.dir/tc.cu.astra.json
// The launch sites it rewrites are host code: the whole file still compiles.
// RUN: %cuda-syntax-check %t.dir/tc.cu
// -i divides the spec's block y the same way (kernels that refused keep theirs).
// SPEC: "mm": {
// SPEC: "launch": {"grid": ["cdiv(n, 16)", "cdiv(n, 16)", 1], "block": [16, 4, 1]},
// SPEC: "rows2d": {
// SPEC: "launch": {"grid": ["cdiv(c, 32)", "cdiv(r, 8)", 1], "block": [32, 2, 1]},
// SPEC: "odd": {
// SPEC: "launch": {"grid": [1, 1, 1], "block": [32, 6, 1]},
// RUN: %nvptx-compile %t.dir/tc.cu | FileCheck %s --check-prefix=PTX
// PTX: .visible .entry _Z2mmPKfS0_Pfif(
// PTX: bar.sync
// RUN: cp %s %t.dir/tc.cu && cp %S/Inputs/thread-coarsen.astra.json %t.dir/tc.cu.astra.json
// RUN: %clang-astra rewrite --passes=thread-coarsen --explain %t.dir/tc.cu -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=EXPLAIN
// Two dimensions: a 2 x 2 patch per thread, the arrays indexed [cy][cx].
// RUN: %clang-astra rewrite --passes=thread-coarsen --pass-opt=thread-coarsen.y=2 --pass-opt=thread-coarsen.x=2 --kernel=rows2d %t.dir/tc.cu -- -std=c++17 | FileCheck %s --check-prefix=XY
// RUN: not %clang-astra rewrite --passes=thread-coarsen --pass-opt=thread-coarsen.y=64 --kernel=mm %t.dir/tc.cu -- -std=c++17 2>&1 | FileCheck %s --check-prefix=BADOPT
// BADOPT: error: --pass-opt=thread-coarsen.y=64: thread-coarsen.y must be an integer from 1 to 16, not '64'
// BADOPT-NOT: rewrote
// launch-bounds after it bounds the block the code now launches (16 x 4),
// not the spec's original 16 x 16.
// RUN: %clang-astra rewrite --passes=thread-coarsen,launch-bounds --kernel=mm %t.dir/tc.cu -- -std=c++17 2>&1 | FileCheck %s --check-prefix=BOUNDS
// BOUNDS: __global__ void __launch_bounds__(64) mm(
// RUN: cp %s %t.dir/nospec.cu
// RUN: %clang-astra rewrite --passes=thread-coarsen --kernel=mm --explain %t.dir/nospec.cu -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=NOSPEC
// NOSPEC: nospec.cu:[[@LINE+10]]:17: thread-coarsen: not applied: no workload spec

#include <cuda_runtime.h>

constexpr int kT = 16;

// A shared-memory tiled product: the barriers stay once per thread in the
// uniform tile loop; the loads, the multiply-adds and the store run per
// copy; 'ty', 'row' and 'acc' get one element per copy, 'tx', 'col' and
// 'scale' stay scalars.
__global__ void mm(const float *A, const float *B, float *C, int n, float alpha) {
  __shared__ float As[kT][kT];
  __shared__ float Bs[kT][kT];
  const int tx = threadIdx.x, ty = threadIdx.y;
  // CHECK: {{^}}  const int tx = threadIdx.x; int ty[4]; { _Pragma("unroll") for (int astra_cy = 0; astra_cy < 4; ++astra_cy) { ty[astra_cy] = (threadIdx.y + astra_cy * blockDim.y); } }
  const int row = blockIdx.y * kT + ty;
  // CHECK: {{^}}  int row[4]; { _Pragma("unroll") for (int astra_cy = 0; astra_cy < 4; ++astra_cy) { row[astra_cy] = blockIdx.y * kT + ty[astra_cy]; } }
  const int col = blockIdx.x * kT + tx;
  // CHECK: {{^}}  const int col = blockIdx.x * kT + tx;
  const float scale = alpha * 2.0f;
  // CHECK: {{^}}  const float scale = alpha * 2.0f;
  float acc = 0.0f;
  // CHECK: {{^}}  float acc[4]; { _Pragma("unroll") for (int astra_cy = 0; astra_cy < 4; ++astra_cy) { acc[astra_cy] = 0.0f; } }
  for (int t = 0; t < n; t += kT) {
    // CHECK: {{^}}  for (int t = 0; t < n; t += kT) {
    As[ty][tx] = A[row * n + t + tx];
    // CHECK: {{^}}    { _Pragma("unroll") for (int astra_cy = 0; astra_cy < 4; ++astra_cy) { As[ty[astra_cy]][tx] = A[row[astra_cy] * n + t + tx]; } }
    Bs[ty][tx] = B[(t + ty) * n + col];
    __syncthreads();
    // CHECK: {{^}}    __syncthreads();
    for (int k = 0; k < kT; ++k)
      acc += As[ty][k] * Bs[k][tx];
    // CHECK: {{^}}    for (int k = 0; k < kT; ++k)
    // CHECK-NEXT: {{^}}      { _Pragma("unroll") for (int astra_cy = 0; astra_cy < 4; ++astra_cy) { acc[astra_cy] += As[ty[astra_cy]][k] * Bs[k][tx]; } }
    __syncthreads();
  }
  C[row * n + col] = scale * acc;
  // CHECK: {{^}}  { _Pragma("unroll") for (int astra_cy = 0; astra_cy < 4; ++astra_cy) { C[row[astra_cy] * n + col] = scale * acc[astra_cy]; } }
}
// EXPLAIN: tc.cu:[[@LINE-29]]:17: thread-coarsen: fired: block divided (y by 4) at 1 launch site ({{.*}}tc.cu:[[@LINE+4]]:3): each thread runs 4 copies of 4 statements, 3 locals per copy
void launch_mm(const float *A, const float *B, float *C, int n, cudaStream_t s) {
  const dim3 block(kT, kT);
  // CHECK: {{^}}  const dim3 block(kT, (kT) / 4);
  mm<<<dim3(n / kT, n / kT), block, 0, s>>>(A, B, C, n, 1.0f);
}

// No shared memory; blockDim.y reads the original block's size.
__global__ void rows2d(float *y, const float *x, int r, int c) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  const int i = blockIdx.y * blockDim.y + threadIdx.y;
  // CHECK: {{^}}  int i[4]; { _Pragma("unroll") for (int astra_cy = 0; astra_cy < 4; ++astra_cy) { i[astra_cy] = blockIdx.y * (blockDim.y * 4) + (threadIdx.y + astra_cy * blockDim.y); } }
  // XY: {{^}}  int j[2][2]; { _Pragma("unroll") for (int astra_cy = 0; astra_cy < 2; ++astra_cy) _Pragma("unroll") for (int astra_cx = 0; astra_cx < 2; ++astra_cx) { j[astra_cy][astra_cx] = blockIdx.x * (blockDim.x * 2) + (threadIdx.x + astra_cx * blockDim.x); } }
  if (i < r && j < c)
    y[i * c + j] = 2.0f * x[i * c + j];
  // XY: { y[i[astra_cy][astra_cx] * c + j[astra_cy][astra_cx]] = 2.0f * x[i[astra_cy][astra_cx] * c + j[astra_cy][astra_cx]]; } }
}
// EXPLAIN: tc.cu:[[@LINE-9]]:17: thread-coarsen: fired: block divided (y by 4)
void launch_rows2d(float *y, const float *x, int r, int c) {
  rows2d<<<dim3((c + 31) / 32, (r + 7) / 8), dim3(32, 8)>>>(y, x, r, c);
  // CHECK: {{^}}  rows2d<<<dim3((c + 31) / 32, (r + 7) / 8), dim3(32, (8) / 4)>>>(y, x, r, c);
  // XY: {{^}}  rows2d<<<dim3((c + 31) / 32, (r + 7) / 8), dim3((32) / 2, (8) / 2)>>>(y, x, r, c);
}

// Two launches share one block variable: it is edited once, both count.
__global__ void twolaunch(float *y) { y[threadIdx.y * 32 + threadIdx.x] = 1.0f; }
// EXPLAIN: tc.cu:[[@LINE-1]]:17: thread-coarsen: fired: block divided (y by 4) at 2 launch sites ({{.*}}tc.cu:[[@LINE+4]]:3, {{.*}}tc.cu:[[@LINE+6]]:5)
void launch_twolaunch(float *y, bool twice) {
  const dim3 block(32, 8);
  // CHECK: {{^}}  const dim3 block(32, (8) / 4);
  twolaunch<<<1, block>>>(y);
  if (twice)
    twolaunch<<<1, block>>>(y);
}

// A block variable spelled by macros (PolyBench's `dim3 block(DIM_X, DIM_Y)`)
// that also serves another kernel and the grid's arithmetic: the variable
// stays, this kernel's launch takes the divided block as its own argument.
#define DIM_X 32
#define DIM_Y 8
__global__ void macroblk(float *y, int n) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  const int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < n && j < n)
    y[i * n + j] = 1.0f;
}
// EXPLAIN: tc.cu:[[@LINE-6]]:17: thread-coarsen: fired: block divided (y by 4) at 2 launch sites ({{.*}}tc.cu:[[@LINE+6]]:3, {{.*}}tc.cu:[[@LINE+12]]:5)
__global__ void other(float *y) { y[threadIdx.y * 32 + threadIdx.x] = 2.0f; }
void launch_macroblk(float *y, int n, bool twice) {
  dim3 block(DIM_X, DIM_Y);
  // CHECK: {{^}}  dim3 block(DIM_X, DIM_Y);
  dim3 grid((n + block.x - 1) / block.x, (n + block.y - 1) / block.y);
  macroblk<<<grid, block>>>(y, n);
  // CHECK: {{^}}  macroblk<<<grid, dim3(block.x, block.y / 4, block.z)>>>(y, n);
  other<<<1, block>>>(y);
  // CHECK: {{^}}  other<<<1, block>>>(y);
  // Every launch of this kernel with the variable, not only the first.
  if (twice)
    macroblk<<<grid, block>>>(y, n);
  // CHECK: {{^}}    macroblk<<<grid, dim3(block.x, block.y / 4, block.z)>>>(y, n);
}
// A macro-spelled block variable for two launches of one kernel and nothing
// else: both launches take the divided block.
__global__ void macrotwo(float *y, int n) {
  y[(blockIdx.y * blockDim.y + threadIdx.y) * n + threadIdx.x] = 1.0f;
}
// EXPLAIN: tc.cu:[[@LINE-3]]:17: thread-coarsen: fired: block divided (y by 4) at 2 launch sites
void launch_macrotwo(float *y, int n) {
  dim3 b(DIM_X, DIM_Y);
  macrotwo<<<dim3(1, n / 8), b>>>(y, n);
  // CHECK: {{^}}  macrotwo<<<dim3(1, n / 8), dim3(b.x, b.y / 4, b.z)>>>(y, n);
  macrotwo<<<dim3(1, n / 8), b>>>(y + n * n, n);
  // CHECK: {{^}}  macrotwo<<<dim3(1, n / 8), dim3(b.x, b.y / 4, b.z)>>>(y + n * n, n);
}
// Refused: the macro-spelled block changes after its declaration.
__global__ void macrochg(float *y, int n) {
  y[(blockIdx.y * blockDim.y + threadIdx.y) * n + threadIdx.x] = 1.0f;
}
void launch_macrochg(float *y, int n, bool big) {
  dim3 block(DIM_X, DIM_Y);
  if (big)
    block.x = 64;
  macrochg<<<dim3(1, n / 8), block>>>(y, n);
  // EXPLAIN: tc.cu:[[@LINE-1]]:3: thread-coarsen: not applied: the launch's block is not a compile-time constant
}

// Refused: a warp shuffle relies on the hardware's grouping of threads.
__global__ void shfl(float *y) {
  float v = y[threadIdx.y * 32 + threadIdx.x];
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  // EXPLAIN: tc.cu:[[@LINE-1]]:8: thread-coarsen: not applied: '__shfl_xor_sync' works on threads as the hardware groups them
  y[threadIdx.y * 32 + threadIdx.x] = v;
}
void launch_shfl(float *y) { shfl<<<1, dim3(32, 8)>>>(y); }

// Refused: a barrier that only some copies reach.
__global__ void ybarrier(float *y) {
  __shared__ float s[8];
  if (threadIdx.y < 4) {
    // EXPLAIN: tc.cu:[[@LINE-1]]:3: thread-coarsen: not applied: a barrier under control flow that depends on threadIdx.y
    s[threadIdx.y] = y[threadIdx.y];
    __syncthreads();
  }
  y[threadIdx.y] = s[0];
}
void launch_ybarrier(float *y) { ybarrier<<<1, dim3(1, 8)>>>(y); }

// A guard that returns: from it to the end of the kernel, one block per
// copy, in which the return ends the copy (continue), not the thread.
__global__ void early(float *y, int n) {
  const int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= n)
    return;
  y[i] = 1.0f;
  // CHECK: {{^}}  { _Pragma("unroll") for (int astra_cy = 0; astra_cy < 4; ++astra_cy) { if (i[astra_cy] >= n)
  // CHECK-NEXT: {{^}}    continue;
  // CHECK-NEXT: {{^}}  y[i[astra_cy]] = 1.0f; } }
}
// EXPLAIN: tc.cu:[[@LINE-9]]:17: thread-coarsen: fired: block divided (y by 4)
void launch_early(float *y, int n) { early<<<dim3(1, (n + 7) / 8), dim3(1, 8)>>>(y, n); }

// Refused: a return from inside a loop of per-copy code (continue would
// mean the loop's next iteration).
__global__ void loopret(float *y, int n) {
  for (int k = threadIdx.y; k < n; k += 8) {
    if (y[k] < 0.0f)
      return;
    // EXPLAIN: tc.cu:[[@LINE-1]]:7: thread-coarsen: not applied: a return inside a loop or switch of code that each copy runs separately
    y[k] = 1.0f;
  }
}
void launch_loopret(float *y, int n) { loopret<<<1, dim3(1, 8)>>>(y, n); }

// Refused: a barrier after a return that only some copies take.
__global__ void retbar(float *y, int n) {
  __shared__ float s[8];
  if (threadIdx.y >= n)
    return;
  s[threadIdx.y] = 1.0f;
  __syncthreads();
  // EXPLAIN: tc.cu:[[@LINE-1]]:3: thread-coarsen: not applied: a barrier after a return that only some copies take
  y[threadIdx.y] = s[0];
}
void launch_retbar(float *y, int n) { retbar<<<1, dim3(1, 8)>>>(y, n); }

// Refused: a copy would change the parameter the others read.
__global__ void parmwrite(float *y, int n) {
  n -= threadIdx.y;
  // EXPLAIN: tc.cu:[[@LINE-1]]:3: thread-coarsen: not applied: code that each copy runs separately changes the parameter 'n'
  y[threadIdx.y] = n;
}
void launch_parmwrite(float *y, int n) { parmwrite<<<1, dim3(1, 8)>>>(y, n); }

// Refused: 6 rows per block do not split in 4 copies.
__global__ void odd(float *y) { y[threadIdx.y * 32 + threadIdx.x] = 1.0f; }
// EXPLAIN: tc.cu:[[@LINE-1]]:17: thread-coarsen: not applied: {{.*}}launch.block y 6 is not a multiple of 4
void launch_odd(float *y) { odd<<<1, dim3(32, 6)>>>(y); }

// Refused: the spec does not mark the launch as the kernel's own.
__global__ void fixedlaunch(float *y) { y[threadIdx.y] = 1.0f; }
// EXPLAIN: tc.cu:[[@LINE-1]]:17: thread-coarsen: not applied: {{.*}}the spec does not mark the launch as the kernel's own ("launch_tunable": true)
void launch_fixedlaunch(float *y) { fixedlaunch<<<1, dim3(1, 8)>>>(y); }

// Refused: nothing to coarsen along y.
__global__ void oned(float *y) { y[threadIdx.x] = 1.0f; }
// EXPLAIN: tc.cu:[[@LINE-1]]:17: thread-coarsen: not applied: the kernel does not read threadIdx.y
void launch_oned(float *y) { oned<<<1, 256>>>(y); }

// Refused: template kernels are not analyzed yet.
template <typename T> __global__ void tmpl(T *y) { y[threadIdx.y] = T(1); }
// EXPLAIN: tc.cu:[[@LINE-1]]:39: thread-coarsen: not applied: a template kernel (not analyzed yet)
void launch_tmpl(float *y) { tmpl<float><<<1, dim3(1, 8)>>>(y); }
