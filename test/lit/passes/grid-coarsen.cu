// grid-coarsen: a kernel whose work is all in grid-stride loops is launched
// with 1/factor of the blocks. Checked per kernel: the launch site, the
// refusals with their reasons, the factor (vectorize's width after vectorize,
// else only when given) and the PTX of the result.
// RUN: rm -rf %t.dir && mkdir -p %t.dir
// RUN: cp %s %t.dir/gc.cu && cp %S/Inputs/grid-coarsen.astra.json %t.dir/gc.cu.astra.json
// RUN: %clang-astra rewrite --passes=grid-coarsen --pass-opt=grid-coarsen.factor=4 -i %t.dir/gc.cu -- -std=c++17
// RUN: FileCheck %s < %t.dir/gc.cu
// RUN: FileCheck %s --check-prefix=SPEC < %t.dir/gc.cu.astra.json
// -i divides the spec's grid x the same way (kernels that refused keep theirs).
// SPEC: "launch": {"grid": "cdiv((n + 255) / 256, 4)", "block": 256},
// SPEC: "launch": {"grid": "cdiv(cdiv(n, 256), 4)", "block": 256},
// SPEC: "launch": {"grid": ["cdiv(cdiv(C, 256), 4)", "B", 1], "block": 256},
// SPEC: "launch": {"grid": "cdiv(n, 256)", "block": 256},
// RUN: %nvptx-compile %t.dir/gc.cu | FileCheck %s --check-prefix=PTX
// RUN: cp %s %t.dir/gc.cu && cp %S/Inputs/grid-coarsen.astra.json %t.dir/gc.cu.astra.json
// RUN: %clang-astra rewrite --passes=grid-coarsen --pass-opt=grid-coarsen.factor=4 --explain %t.dir/gc.cu -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=EXPLAIN
// Without vectorize and without a factor it waits: fewer blocks would only
// cut parallelism.
// RUN: %clang-astra rewrite --passes=grid-coarsen --kernel=axpy --explain %t.dir/gc.cu -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=DEFAULT
// DEFAULT: gc.cu:{{[0-9]+}}:17: grid-coarsen: not applied: no loop that vectorize wrote: fewer blocks would only cut parallelism (run vectorize first, or give --pass-opt=grid-coarsen.factor=F)
// DEFAULT-NOT: fired
// RUN: %clang-astra rewrite --passes=grid-coarsen --pass-opt=grid-coarsen.factor=8 %t.dir/gc.cu -- -std=c++17 | FileCheck %s --check-prefix=F8
// RUN: not %clang-astra rewrite --passes=grid-coarsen --pass-opt=grid-coarsen.factor=64 %t.dir/gc.cu -- -std=c++17 2>&1 | FileCheck %s --check-prefix=BADOPT
// RUN: %clang-astra rewrite --passes=vectorize,grid-coarsen --kernel=hscale --explain %t.dir/gc.cu -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=VEC
// RUN: cp %s %t.dir/nospec.cu
// RUN: %clang-astra rewrite --passes=grid-coarsen --kernel=axpy --explain %t.dir/nospec.cu -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=NOSPEC
// PTX: .visible .entry
// BADOPT: error: --pass-opt=grid-coarsen.factor=64: grid-coarsen.factor must be an integer from 2 to 16, not '64'
// BADOPT-NOT: rewrote
// NOSPEC: nospec.cu:[[@LINE+7]]:17: grid-coarsen: not applied: no workload spec

#include <cuda_fp16.h>
#include <cuda_runtime.h>

// A grid-stride loop and an integer grid: the grid's expression is divided,
// rounding up.
__global__ void axpy(float *y, const float *x, float a, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += blockDim.x * gridDim.x)
    y[i] = a * x[i] + y[i];
}
// EXPLAIN: gc.cu:[[@LINE-5]]:17: grid-coarsen: fired: grid x divided by 4 at 1 launch site ({{.*}}gc.cu:[[@LINE+3]]:3): each thread takes 4 times the elements of the grid-stride loops
// F8: gc.cu:{{.*}}axpy<<<(((n + 255) / 256) + 7) / 8, 256, 0, s>>>
void launch_axpy(float *y, const float *x, int n, cudaStream_t s) {
  axpy<<<(n + 255) / 256, 256, 0, s>>>(y, x, 2.f, n);
  // CHECK: {{^}}  axpy<<<(((n + 255) / 256) + 3) / 4, 256, 0, s>>>(y, x, 2.f, n);
}

// After vectorize the default factor is its vector width (8 halves), so
// each thread handles one vector.
__global__ void hscale(__half *__restrict__ out, const __half *__restrict__ in,
                       int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += blockDim.x * gridDim.x)
    out[i] = in[i] * __float2half(2.0f);
}
// VEC: gc.cu:[[@LINE-4]]:3: vectorize: fired: grid-stride loop over 'i': 16-byte vector accesses
// VEC: gc.cu:[[@LINE-7]]:17: grid-coarsen: fired: grid x divided by 8 at 1 launch site
// EXPLAIN: gc.cu:[[@LINE-8]]:17: grid-coarsen: fired: grid x divided by 4
void launch_hscale(__half *out, const __half *in, int n, cudaStream_t s) {
  const int threads = 256;
  const int blocks = (n + threads - 1) / threads;
  hscale<<<blocks, threads, 0, s>>>(out, in, n);
  // CHECK: {{^}}  hscale<<<((blocks) + 3) / 4, threads, 0, s>>>(out, in, n);
}

// A 2-D grid in a dim3 variable: x is divided, y and z are kept; blockIdx.y
// outside the loop is fine.
__global__ void colsum(float *out, const float *in, int R, int C) {
  const float *p = in + (size_t)blockIdx.y * R * C;
  for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < C;
       c += blockDim.x * gridDim.x) {
    float s = 0.f;
    for (int r = 0; r < R; ++r)
      s += p[(size_t)r * C + c];
    out[(size_t)blockIdx.y * C + c] = s;
  }
}
// EXPLAIN: gc.cu:[[@LINE-10]]:17: grid-coarsen: fired: grid x divided by 4
void launch_colsum(float *out, const float *in, int B, int R, int C,
                   cudaStream_t s) {
  const dim3 grid((C + 255) / 256, B);
  colsum<<<grid, 256, 0, s>>>(out, in, R, C);
  // CHECK: {{^}}  colsum<<<dim3((grid.x + 3) / 4, grid.y, grid.z), 256, 0, s>>>(out, in, R, C);
}

// Refused: a store outside the loop runs once per thread, so fewer blocks
// would store fewer times (here: the count would be the same, but an atomic
// or a sum would not).
__global__ void counted(float *y, int *count, int n) {
  if (threadIdx.x == 0)
    count[0] = n;
  // EXPLAIN: gc.cu:[[@LINE-1]]:5: grid-coarsen: not applied: a store outside the grid-stride loops: with fewer blocks it would run fewer times
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += blockDim.x * gridDim.x)
    y[i] = 1.f;
}
void launch_counted(float *y, int *c, int n) {
  counted<<<(n + 255) / 256, 256>>>(y, c, n);
  // CHECK: {{^}}  counted<<<(n + 255) / 256, 256>>>(y, c, n);
}

// Refused: the body reads blockIdx.x.
__global__ void blockid(float *y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += blockDim.x * gridDim.x)
    y[i] = blockIdx.x;
  // EXPLAIN: gc.cu:[[@LINE-1]]:12: grid-coarsen: not applied: blockIdx.x is read outside the start and step of a grid-stride loop: the code depends on the grid
}
void launch_blockid(float *y, int n) { blockid<<<(n + 255) / 256, 256>>>(y, n); }

// Refused: inline asm in the loop may synchronize or read the thread's
// position. Only flat-vectorize's vector atomic adds
// (red.global.add.v4.f32 / .v2.f32, exactly as it writes them) are
// accepted: flat-vectorize.cu's scatter_once.
__global__ void fenced(float *y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += blockDim.x * gridDim.x) {
    y[i] = 1.f;
    asm volatile("membar.gl;" ::: "memory");
  }
  // EXPLAIN: gc.cu:[[@LINE-5]]:3: grid-coarsen: not applied: the grid-stride loop's body contains inline asm at {{.*}} (it may synchronize): threads would run different iteration counts
}
void launch_fenced(float *y, int n) { fenced<<<(n + 255) / 256, 256>>>(y, n); }

// Refused: a barrier in the loop (threads of a block would run different
// iteration counts).
__global__ void synced(float *y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += blockDim.x * gridDim.x) {
    // EXPLAIN: gc.cu:[[@LINE-2]]:3: grid-coarsen: not applied: the grid-stride loop's body calls __syncthreads
    y[i] = 1.f;
    __syncthreads();
  }
}
void launch_synced(float *y, int n) { synced<<<(n + 255) / 256, 256>>>(y, n); }

// Refused: the loop is left early.
__global__ void early(float *y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += blockDim.x * gridDim.x) {
    if (y[i] < 0.f)
      break;
    // EXPLAIN: gc.cu:[[@LINE-1]]:7: grid-coarsen: not applied: this leaves the grid-stride loop early
    y[i] = 1.f;
  }
}
void launch_early(float *y, int n) { early<<<(n + 255) / 256, 256>>>(y, n); }

// Refused: one element per thread (grid-stride makes the loop first).
__global__ void single(float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  // EXPLAIN: gc.cu:[[@LINE-1]]:11: grid-coarsen: not applied: blockIdx.x is read outside the start and step of a grid-stride loop
  if (i < n)
    y[i] = 1.f;
}
void launch_single(float *y, int n) { single<<<(n + 255) / 256, 256>>>(y, n); }

// Refused: the spec does not mark the launch as the kernel's own.
__global__ void fixed(float *y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += blockDim.x * gridDim.x)
    y[i] = 1.f;
}
// EXPLAIN: gc.cu:[[@LINE-5]]:17: grid-coarsen: not applied: {{.*}}the spec does not mark the launch as the kernel's own ("launch_tunable": true)
void launch_fixed(float *y, int n) { fixed<<<(n + 255) / 256, 256>>>(y, n); }
