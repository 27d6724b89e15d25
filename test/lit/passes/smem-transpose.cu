// smem-transpose: a store strided along threadIdx.x (the transpose pattern)
// staged through a shared tile, on a path taken only by square blocks.
// RUN: rm -rf %t.dir && mkdir -p %t.dir
// RUN: cp %s %t.dir/st.cu
// RUN: %clang-astra rewrite --passes=smem-transpose -i %t.dir/st.cu -- -std=c++17
// RUN: FileCheck %s < %t.dir/st.cu
// RUN: %nvptx-compile %t.dir/st.cu | FileCheck %s --check-prefix=PTX
// RUN: %clang-astra rewrite --passes=smem-transpose --explain %s -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=EXPLAIN
// A second run changes nothing more (the staged body is no longer one store).
// RUN: %clang-astra rewrite --passes=smem-transpose %t.dir/st.cu -- -std=c++17 > %t.again.cu
// RUN: diff %t.dir/st.cu %t.again.cu
// The tile is the square block the code launches (transpose16, below); where
// the code does not show the launches, the option chooses it. A spec's launch
// is a workload, not a launch: it changes nothing.
// RUN: %clang-astra rewrite --passes=smem-transpose --kernel=transpose --pass-opt=smem-transpose.tile=16 %s -- -std=c++17 | FileCheck %s --check-prefix=TILE16
// RUN: %clang-astra rewrite --passes=smem-transpose --kernel=transpose --spec %S/Inputs/smem-transpose-16.astra.json %s -- -std=c++17 > %t.spec.cu
// RUN: %clang-astra rewrite --passes=smem-transpose --kernel=transpose %s -- -std=c++17 | diff - %t.spec.cu
// PTX: .visible .entry _Z9transposePKfPfii(
// PTX: .shared .align 4 .b8 {{.*}}astra_tile[4224]
// PTX: bar.sync 0

#include <cstdint>
#include <cuda_fp16.h>

// The pattern: reads coalesced, writes strided by rows.
// CHECK-LABEL: __global__ void transpose(const float *in, float *out, int rows, int cols) {
// CHECK-NEXT:   // smem-transpose: stores to 'out' go through a shared tile so that
// CHECK-NEXT:   // a warp writes consecutive elements; other blocks run the code below.
// CHECK-NEXT:   if (blockDim.x == 32 && blockDim.y == 32 && blockDim.z == 1) {
// CHECK-NEXT:     __shared__ float astra_tile[32][33];
// CHECK-NEXT:     {
// CHECK-NEXT:       const int c = blockIdx.x * blockDim.x + threadIdx.x;
// CHECK-NEXT:       const int r = blockIdx.y * blockDim.y + threadIdx.y;
// CHECK-NEXT:       if (r < rows && c < cols)
// CHECK-NEXT:         astra_tile[threadIdx.y][threadIdx.x] = in[(int64_t)r * cols + c];
// CHECK-NEXT:     }
// CHECK-NEXT:     __syncthreads();
// CHECK-NEXT:     {
// CHECK-NEXT:       const int c = blockIdx.x * blockDim.x + threadIdx.y;
// CHECK-NEXT:       const int r = blockIdx.y * blockDim.y + threadIdx.x;
// CHECK-NEXT:       if (r < rows && c < cols)
// CHECK-NEXT:         out[(int64_t)c * rows + r] = astra_tile[threadIdx.x][threadIdx.y];
// CHECK-NEXT:     }
// CHECK-NEXT:     return;
// CHECK-NEXT:   }
// CHECK-NEXT:   const int c = blockIdx.x * blockDim.x + threadIdx.x;
// TILE16: if (blockDim.x == 16 && blockDim.y == 16 && blockDim.z == 1) {
// TILE16-NEXT: __shared__ float astra_tile[16][17];
__global__ void transpose(const float *in, float *out, int rows, int cols) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols)
    out[(int64_t)c * rows + r] = in[(int64_t)r * cols + c];
}
// EXPLAIN: smem-transpose.cu:[[@LINE-2]]:5: smem-transpose: fired: stores to 'out' staged through a 32 x 32 shared tile (stride 1074 elements along threadIdx.x, 1 along threadIdx.y; blocks other than (32, 32, 1) run the original code; tile size: the default: the code does not show every launch's block (no launch of the kernel in this file))

// A template, an unguarded store and a computed value: the tile holds T, the
// value is computed before the barrier.
// CHECK-LABEL: __global__ void scale_t(const T *x, T *y, int n, float s) {
// CHECK-NEXT:   // smem-transpose: stores to 'y' go through
// CHECK:          __shared__ T astra_tile[32][33];
// CHECK:          y[(blockIdx.x * 32 + threadIdx.y) * n + blockIdx.y * 32 + threadIdx.x] = astra_tile[threadIdx.x][threadIdx.y];
template <typename T>
__global__ void scale_t(const T *x, T *y, int n, float s) {
  y[(blockIdx.x * 32 + threadIdx.x) * n + blockIdx.y * 32 + threadIdx.y] =
      T(s * float(x[(blockIdx.y * 32 + threadIdx.y) * n + blockIdx.x * 32 + threadIdx.x]));
}
template __global__ void scale_t<float>(const float *, float *, int, float);
template __global__ void scale_t<__half>(const __half *, __half *, int, float);
// EXPLAIN: smem-transpose.cu:[[@LINE-5]]:3: smem-transpose: fired: stores to 'y' staged through a 32 x 32 shared tile (stride 1074 elements along threadIdx.x

// Refused: the store is already coalesced (stride 1 along threadIdx.x).
// CHECK-LABEL: __global__ void copy2d(
// CHECK-NEXT: const int c =
__global__ void copy2d(const float *in, float *out, int rows, int cols) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols)
    out[(int64_t)r * cols + c] = in[(int64_t)c * rows + r];
}
// EXPLAIN: smem-transpose.cu:[[@LINE-2]]:5: smem-transpose: not applied: the store's stride is 1 element(s) along threadIdx.x and {{[0-9]+}} along threadIdx.y; staging pays off only for a stride of 1 along y and at least 2 along x

// Refused: a loop (each thread stores more than one element).
__global__ void transpose_loop(const float *in, float *out, int rows, int cols) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  for (int r = threadIdx.y; r < rows; r += blockDim.y)
    out[(int64_t)c * rows + r] = in[(int64_t)r * cols + c];
}
// EXPLAIN: smem-transpose.cu:[[@LINE-3]]:3: smem-transpose: not applied: the last statement is not a store `out[i] = value;`

// Refused: the value reads a buffer that is not const (the kernel might
// write it through another pointer).
__global__ void transpose_rw(float *in, float *out, int rows, int cols) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols)
    out[(int64_t)c * rows + r] = in[(int64_t)r * cols + c];
}
// EXPLAIN: smem-transpose.cu:[[@LINE-2]]:34: smem-transpose: not applied: the stored value has 'in' is read but not a pointer to const (the kernel might write it)

// Refused: an index variable changes after its declaration.
__global__ void transpose_mut(const float *in, float *out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int r = blockIdx.y * blockDim.y + threadIdx.y;
  c += 1;
  out[(int64_t)c * rows + r] = in[(int64_t)r * cols + c];
}
// EXPLAIN: smem-transpose.cu:[[@LINE-5]]:7: smem-transpose: not applied: local 'c' is assigned after its declaration

// Refused: more than declarations before the store.
__global__ void transpose_sync(const float *in, float *out, int rows, int cols) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int r = blockIdx.y * blockDim.y + threadIdx.y;
  __syncthreads();
  out[(int64_t)c * rows + r] = in[(int64_t)r * cols + c];
}
// EXPLAIN: smem-transpose.cu:[[@LINE-3]]:3: smem-transpose: not applied: the kernel does more than declare index variables and store one value (a CallExpr statement)

// The code launches 16 x 16 blocks: the tile follows.
// CHECK-LABEL: __global__ void transpose16(
// CHECK: if (blockDim.x == 16 && blockDim.y == 16 && blockDim.z == 1) {
__global__ void transpose16(const float *in, float *out, int rows, int cols) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols)
    out[(int64_t)c * rows + r] = in[(int64_t)r * cols + c];
}
// EXPLAIN: smem-transpose.cu:[[@LINE-2]]:5: smem-transpose: fired: stores to 'out' staged through a 16 x 16 shared tile {{.*}}; tile size: the block every launch passes)

// The code launches 32 x 8 blocks: the staged path would never run.
// CHECK-LABEL: __global__ void transpose_rect(
// CHECK-NEXT: const int c = blockIdx.x * blockDim.x + threadIdx.x;
__global__ void transpose_rect(const float *in, float *out, int rows, int cols) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols)
    out[(int64_t)c * rows + r] = in[(int64_t)r * cols + c];
}
// EXPLAIN: smem-transpose.cu:[[@LINE-2]]:5: smem-transpose: not applied: the code launches blocks of (32, 8, 1); the staged path runs only for one square block size

void launch_transposes(const float *in, float *out, int rows, int cols) {
  const dim3 block(16, 16);
  transpose16<<<dim3((cols + 15) / 16, (rows + 15) / 16), block>>>(in, out, rows, cols);
  transpose_rect<<<dim3((cols + 31) / 32, (rows + 7) / 8), dim3(32, 8)>>>(in, out, rows, cols);
}
