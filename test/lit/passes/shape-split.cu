// shape-split: a kernel whose shape sets span sizes far apart gets a copy,
// `<kernel>_astra_large`, that each launch site runs for launches of the
// threshold's threads or more; the spec's entries are split the same way.
// Checked: the clone and the launch sites (a plain kernel with launch
// locals, copied into each branch; a template launched from a template),
// the split spec, the PTX with both kernels, the host code compiling, a
// later block-size on either kernel changing only its own branch, a second
// run, and every refusal with its reason.
// RUN: rm -rf %t.dir && mkdir -p %t.dir
// RUN: cp %s %t.dir/ss.cu && cp %S/Inputs/shape-split.astra.json %t.dir/ss.cu.astra.json
// RUN: %clang-astra rewrite --passes=shape-split --kernel=scale -i %t.dir/ss.cu -- -std=c++17
// RUN: %clang-astra rewrite --passes=shape-split --kernel=mix -i %t.dir/ss.cu -- -std=c++17
// RUN: %clang-astra rewrite --passes=shape-split --kernel=tile -i %t.dir/ss.cu -- -std=c++17
// RUN: FileCheck %s < %t.dir/ss.cu
// RUN: FileCheck %s --check-prefix=SPEC < %t.dir/ss.cu.astra.json
// RUN: %clang-astra check-spec %t.dir/ss.cu -- -std=c++17 | FileCheck %s --check-prefix=CHECKSPEC
// RUN: %cuda-syntax-check %t.dir/ss.cu
// RUN: %nvptx-compile %t.dir/ss.cu | FileCheck %s --check-prefix=PTX
// block-size on either kernel afterwards changes its own branch only, and
// so does thread-coarsen on a dim3 block.
// RUN: cp %t.dir/ss.cu %t.dir/bs.cu && cp %t.dir/ss.cu.astra.json %t.dir/bs.cu.astra.json
// RUN: %clang-astra rewrite --passes=block-size --kernel=scale_astra_large -i %t.dir/bs.cu -- -std=c++17
// RUN: FileCheck %s --check-prefix=BLOCK < %t.dir/bs.cu
// RUN: FileCheck %s --check-prefix=BLOCKSPEC < %t.dir/bs.cu.astra.json
// RUN: %clang-astra rewrite --passes=thread-coarsen --pass-opt=thread-coarsen.y=4 --kernel=tile_astra_large -i %t.dir/bs.cu -- -std=c++17
// RUN: FileCheck %s --check-prefix=COARSE < %t.dir/bs.cu
// RUN: %clang-astra check-spec %t.dir/bs.cu -- -std=c++17 | FileCheck %s --check-prefix=CHECKSPEC
// A second run finds nothing left to split; asked to split again, the
// clone's name is taken.
// RUN: %clang-astra rewrite --passes=shape-split --kernel=scale --explain %t.dir/ss.cu -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=AGAIN
// RUN: %clang-astra rewrite --passes=shape-split --kernel=scale --pass-opt=shape-split.at=8192 --explain %t.dir/ss.cu -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=TAKEN
// The refusals.
// RUN: cp %s %t.dir/r.cu && cp %S/Inputs/shape-split.astra.json %t.dir/r.cu.astra.json
// RUN: %clang-astra rewrite --passes=shape-split --explain %t.dir/r.cu -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=EXPLAIN
// RUN: %clang-astra rewrite --passes=shape-split --kernel=scale --pass-opt=shape-split.at=16777216 --explain %t.dir/r.cu -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=BADAT
// RUN: cp %s %t.dir/nospec.cu
// RUN: %clang-astra rewrite --passes=shape-split --kernel=scale --explain %t.dir/nospec.cu -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=NOSPEC

// PTX-DAG: .visible .entry _Z5scalePfPKfl(
// PTX-DAG: .visible .entry _Z17scale_astra_largePfPKfl(
// PTX-DAG: .entry _Z3mixIfEvPT_PKS0_S3_i(
// PTX-DAG: .entry _Z15mix_astra_largeIdEvPT_PKS0_S3_i(

// SPEC-LABEL: "scale": {
// SPEC-NEXT:    "shapes": {
// SPEC-NEXT:      "tiny":  {"n": 4096},
// SPEC-NEXT:      "small": {"n": 8192},
// SPEC-NEXT:    },
// SPEC:         "launch": {"grid": "cdiv(n, 256)", "block": 256},
// SPEC-LABEL: "scale_astra_large": {
// SPEC-NEXT:    "shapes": {
// SPEC-NEXT:      "large": {"n": 4194304},
// SPEC-NEXT:    },
// SPEC-LABEL: "mix<float>": {
// SPEC-NEXT:    // Sets in any order: the split keeps each on its side.
// SPEC-NEXT:    "shapes": { "decode": {"T": 16, "D": 128}},
// SPEC-LABEL: "mix_astra_large<float>": {
// SPEC-NEXT:    // Sets in any order: the split keeps each on its side.
// SPEC-NEXT:    "shapes": {"prefill": {"T": 4096, "D": 128}, },
// SPEC-LABEL: "mix<double>": {
// SPEC-NEXT:    "shapes": {"decode": {"T": 16, "D": 128}, },
// SPEC-LABEL: "mix_astra_large<double>": {
// SPEC-NEXT:    "shapes": { "prefill": {"T": 4096, "D": 128}},
// SPEC-LABEL: "alike": {

// CHECKSPEC: kernel 'scale_astra_large' ({{.*}}): ok
// CHECKSPEC: kernel 'mix_astra_large<double>' ({{.*}}): ok
// CHECKSPEC: kernel 'tile_astra_large' ({{.*}}): ok

// AGAIN: ss.cu:[[@LINE+17]]:17: shape-split: not applied: the shape sets launch 4096 to 8192 threads, no two sizes 4x apart or more: nothing to split
// AGAIN-NOT: fired
// TAKEN: shape-split: not applied: 'scale_astra_large' is declared already (the kernel was split before)
// TAKEN-NOT: fired

#include <cuda_runtime.h>
#include <cstdint>

// CHECK-LABEL: {{^}}__global__ void scale(float *y, const float *x, int64_t n) {
// CHECK:       {{^}}}{{$}}
// CHECK-EMPTY:
// CHECK-NEXT:  // shape-split: scale for launches of 262144 threads or more (its own code and spec entry).
// CHECK-NEXT:  __global__ void scale_astra_large(float *y, const float *x, int64_t n) {
// CHECK-NEXT:    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
// CHECK-NEXT:    if (i < n)
// CHECK-NEXT:      y[i] = 2.0f * x[i];
// CHECK-NEXT:  }
__global__ void scale(float *y, const float *x, int64_t n) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = 2.0f * x[i];
}

// CHECK-LABEL: {{^}}void launch_scale(float *y, const float *x, int64_t n, cudaStream_t s) {
// CHECK-NEXT:    const int threads = 256;
// CHECK-NEXT:    const int64_t blocks = (n + threads - 1) / threads;
// CHECK-NEXT:    if ((unsigned long long)blocks * threads >= 262144ull) {
// CHECK-NEXT:      const int threads = 256;
// CHECK-NEXT:      const int64_t blocks = (n + threads - 1) / threads;
// CHECK-NEXT:      scale_astra_large<<<blocks, threads, 0, s>>>(y, x, n);
// CHECK-NEXT:    } else {
// CHECK-NEXT:      const int threads = 256;
// CHECK-NEXT:      const int64_t blocks = (n + threads - 1) / threads;
// CHECK-NEXT:      scale<<<blocks, threads, 0, s>>>(y, x, n);
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// BLOCK-LABEL: {{^}}void launch_scale(
// BLOCK-NEXT:    const int threads = 256;
// BLOCK-NEXT:    const int64_t blocks = (n + threads - 1) / threads;
// BLOCK-NEXT:    if ((unsigned long long)blocks * threads >= 262144ull) {
// BLOCK-NEXT:      const int threads = 128;
// BLOCK-NEXT:      const int64_t blocks = (n + threads - 1) / threads;
// BLOCK-NEXT:      scale_astra_large<<<blocks, threads, 0, s>>>(y, x, n);
// BLOCK-NEXT:    } else {
// BLOCK-NEXT:      const int threads = 256;
// BLOCKSPEC-LABEL: "scale": {
// BLOCKSPEC:         "launch": {"grid": "cdiv(n, 256)", "block": 256},
// BLOCKSPEC-LABEL: "scale_astra_large": {
// BLOCKSPEC:         "launch": {"grid": "cdiv(n, 128)", "block": 128},
void launch_scale(float *y, const float *x, int64_t n, cudaStream_t s) {
  const int threads = 256;
  const int64_t blocks = (n + threads - 1) / threads;
  scale<<<blocks, threads, 0, s>>>(y, x, n);
}

// CHECK-LABEL: {{^}}template <typename T>
// CHECK-NEXT:  __global__ void mix(T *out, const T *a, const T *b, int d) {
// CHECK:       // shape-split: mix for launches of 32768 threads or more (its own code and spec entry).
// CHECK-NEXT:  template <typename T>
// CHECK-NEXT:  __global__ void mix_astra_large(T *out, const T *a, const T *b, int d) {
template <typename T>
__global__ void mix(T *out, const T *a, const T *b, int d) {
  const int64_t i = (int64_t)blockIdx.x * d + threadIdx.x;
  out[i] = a[i] + b[i];
}

// CHECK-LABEL: {{^}}void launch_mix(T *out, const T *a, const T *b, int tokens, int d) {
// CHECK-NEXT:    if ((unsigned long long)tokens * d >= 32768ull) {
// CHECK-NEXT:      mix_astra_large<T><<<tokens, d>>>(out, a, b,
// CHECK-NEXT:                                 d);
// CHECK-NEXT:    } else {
// CHECK-NEXT:      mix<T><<<tokens, d>>>(out, a, b,
// CHECK-NEXT:                                 d);
// CHECK-NEXT:    }
template <typename T>
void launch_mix(T *out, const T *a, const T *b, int tokens, int d) {
  mix<T><<<tokens, d>>>(out, a, b,
                               d);
}
template void launch_mix<float>(float *, const float *, const float *, int, int);
template void launch_mix<double>(double *, const double *, const double *, int, int);

// A 2-D launch of dim3 locals: the size is x * y * z of grid and block.
// CHECK-LABEL: {{^}}void launch_tile(float *c, int m, int n) {
// CHECK-NEXT:    const dim3 block(16, 16);
// CHECK-NEXT:    const dim3 grid((n + 15) / 16, (m + 15) / 16);
// CHECK-NEXT:    if ((unsigned long long)grid.x * grid.y * grid.z * block.x * block.y * block.z >= 262144ull) {
// CHECK-NEXT:      const dim3 block(16, 16);
// CHECK-NEXT:      const dim3 grid((n + 15) / 16, (m + 15) / 16);
// CHECK-NEXT:      tile_astra_large<<<grid, block>>>(c, m, n);
// CHECK-NEXT:    } else {
// COARSE-LABEL: {{^}}void launch_tile(
// COARSE:          if ((unsigned long long)grid.x * grid.y * grid.z * block.x * block.y * block.z >= 262144ull) {
// COARSE-NEXT:       const dim3 block(16, (16) / 4);
// COARSE:          } else {
// COARSE-NEXT:       const dim3 block(16, 16);
__global__ void tile(float *c, int m, int n) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < m && col < n)
    c[row * n + col] = row - col;
}
void launch_tile(float *c, int m, int n) {
  const dim3 block(16, 16);
  const dim3 grid((n + 15) / 16, (m + 15) / 16);
  tile<<<grid, block>>>(c, m, n);
}

// EXPLAIN-DAG: r.cu:[[@LINE+1]]:17: shape-split: not applied: the shape sets launch 4096 to 8192 threads, no two sizes 4x apart or more: nothing to split
__global__ void alike(float *y, int64_t n) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = 1.0f;
}
void launch_alike(float *y, int64_t n) { alike<<<(n + 255) / 256, 256>>>(y, n); }

// EXPLAIN-DAG: r.cu:[[@LINE+1]]:17: shape-split: not applied: the kernel is declared before its definition
__global__ void early(float *y, int64_t n);
void launch_early(float *y, int64_t n) { early<<<(n + 255) / 256, 256>>>(y, n); }
__global__ void early(float *y, int64_t n) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = 1.0f;
}

__global__ void bare(float *y, int64_t n) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = 1.0f;
}
void launch_bare(float *y, int64_t n, bool go) {
  if (go)
    // EXPLAIN-DAG: r.cu:[[@LINE+1]]:5: shape-split: not applied: the launch is not a statement of its own in a block
    bare<<<(n + 255) / 256, 256>>>(y, n);
}

// EXPLAIN-DAG: shape-split: fired: launches of 262144 threads or more run the clone 'scale_astra_large' (1 launch site: {{.*}}r.cu:
// EXPLAIN-DAG: shape-split: fired: launches of 32768 threads or more run the clone 'mix_astra_large' (1 launch site: {{.*}}r.cu:
// BADAT: shape-split: not applied: kernel 'scale': no shape set launches as many or more than 2^24 threads, so one of the two kernels would have no shape set to be verified on
// NOSPEC: shape-split: not applied: no workload spec: the shape sets are split by the size of the spec's launch (--spec)
