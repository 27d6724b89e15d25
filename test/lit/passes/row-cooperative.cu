// row-cooperative: a kernel with one thread per row and loops over the row
// keeps its launch; each full warp takes its 32 lanes' rows in turn, the
// lanes striding over the row, reductions (local sums and maxima, sums into
// memory) combined by warp shuffles, stores outside the loops made by lane 0.
// Checked: the rewritten text of each form, its PTX, a second run, every
// refusal with its reason, and the option that keeps float sums in order.
// RUN: rm -rf %t.dir && mkdir -p %t.dir
// RUN: %clang-astra rewrite --passes=row-cooperative %s > %t.dir/out.cu
// RUN: FileCheck %s < %t.dir/out.cu
// RUN: %nvptx-compile %t.dir/out.cu | FileCheck %s --check-prefix=PTX
// RUN: %cuda-syntax-check %t.dir/out.cu
// RUN: %clang-astra rewrite --passes=row-cooperative --explain %s 2>&1 >/dev/null | FileCheck %s --check-prefix=EXPLAIN
// A second run leaves the rewritten kernels alone.
// RUN: %clang-astra rewrite --passes=row-cooperative --kernel=rms --explain %t.dir/out.cu 2>&1 >/dev/null | FileCheck %s --check-prefix=AGAIN
// RUN: %clang-astra rewrite --passes=row-cooperative --pass-opt=row-cooperative.reductions=0 --kernel=rms --explain %s 2>&1 >/dev/null | FileCheck %s --check-prefix=ORDER
// RUN: %clang-astra rewrite --passes=row-cooperative --pass-opt=row-cooperative.reductions=0 --kernel=quant --explain %s 2>&1 >/dev/null | FileCheck %s --check-prefix=ORDERQ
// PTX: .visible .entry _Z3rms
// PTX: shfl.sync.bfly.b32
// PTX: shfl.sync.idx.b32
// AGAIN: row-cooperative: not applied: the kernel calls __shfl_xor_sync
// AGAIN-NOT: fired
// ORDER: row-cooperative.cu:[[@LINE+30]]:7: row-cooperative: not applied: the row loop changes 'ss', declared outside it, a floating-point sum, and row-cooperative.reductions=0 keeps sums in their order
// ORDERQ: row-cooperative: fired: each warp takes its lanes' rows of 'r' in turn; 2 row loop(s) strided over the 32 lanes; reductions 'amax' (max)

#include <cstdint>
#include <cuda_runtime.h>

// rmsnorm, one thread per row: a sum, then a loop that writes the row.
// EXPLAIN: row-cooperative.cu:[[@LINE+19]]:3: row-cooperative: fired: each warp takes its lanes' rows of 'r' in turn; 2 row loop(s) strided over the 32 lanes; reductions 'ss' (+) combined by warp shuffles (floating-point sums are reassociated{{.*}}); a block whose x is not a multiple of 32 runs its last, partial warp with the original code
// CHECK-LABEL: {{^}}__global__ void rms(
// CHECK-NEXT: {{^}}  if ((blockDim.x % 32 == 0 || blockDim.y * blockDim.z == 1) &&
// CHECK-NEXT: {{^}}      threadIdx.x / 32 * 32 + 32 <= blockDim.x) {
// CHECK-NEXT: {{^}}    // row-cooperative: the warp takes its 32 lanes' rows in turn.
// CHECK-NEXT: {{^}}    const unsigned astra_lane = threadIdx.x % 32;
// CHECK-NEXT: {{^}}    for (unsigned astra_row = 0; astra_row < 32; ++astra_row) {
// CHECK-NEXT: {{^}}      int r = blockIdx.x * blockDim.x + (threadIdx.x - astra_lane + astra_row);
// CHECK-NEXT: {{^}}      if (r < rows) {
// CHECK-NEXT: {{^}}        float ss = 0.0f;
// CHECK-NEXT: {{^}}        for (int j = astra_lane; j < cols; j += 32)
// CHECK-NEXT: {{^}}          ss += x[r * cols + j] * x[r * cols + j];
// CHECK-NEXT: {{^}}        for (int astra_o = 16; astra_o > 0; astra_o /= 2)
// CHECK-NEXT: {{^}}          ss = ss + __shfl_xor_sync(0xffffffffu, ss, astra_o);
// CHECK-NEXT: {{^}}        ss = __shfl_sync(0xffffffffu, ss, 0);
// CHECK-NEXT: {{^}}        float inv = rsqrtf(ss / cols + 1e-6f);
// CHECK-NEXT: {{^}}        for (int j = astra_lane; j < cols; j += 32)
// CHECK-NEXT: {{^}}          y[r * cols + j] = x[r * cols + j] * inv;
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
// The other threads (a partial last warp) run the original code.
// CHECK: {{^}}  } else {
// CHECK-NEXT: {{^}}    int r = blockIdx.x * blockDim.x + threadIdx.x;
// CHECK-NEXT: {{^}}    if (r < rows) {
// CHECK-NEXT: {{^}}      float ss = 0.0f;
// CHECK-NEXT: {{^}}      for (int j = 0; j < cols; j++)

// Early return, a maximum, a per-row store outside the loops (lane 0 makes
// it), a literal block that is a multiple of 32.
// EXPLAIN: row-cooperative.cu:[[@LINE+12]]:3: row-cooperative: fired: {{.*}}reductions 'amax' (max) combined by warp shuffles; every launch's block x is a multiple of 32
// CHECK-LABEL: {{^}}__global__ void quant(
// CHECK: {{^}}      int r = blockIdx.x * blockDim.x + (threadIdx.x - astra_lane + astra_row);
// CHECK-NEXT: {{^}}      if (r >= rows)
// CHECK-NEXT: {{^}}        continue;
// CHECK: {{^}}        amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, astra_o));
// CHECK-NEXT: {{^}}      amax = __shfl_sync(0xffffffffu, amax, 0);
// CHECK-NEXT: {{^}}      float scale = fmaxf(amax / 127.0f, 1e-10f);
// CHECK-NEXT: {{^}}      { __syncwarp(); if (astra_lane == 0) scales[r] = scale; __syncwarp(); }
// CHECK-NEXT: {{^}}      for (int j = astra_lane; j < cols; j += 32)
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

// PolyBench's matrix-vector form: `int j; for (j = 0; ...)` and a sum into
// memory, kept in a local over the loop and added by lane 0.
// EXPLAIN: row-cooperative.cu:[[@LINE+15]]:3: row-cooperative: fired: {{.*}}reductions 'tmp[i]' (+)
// CHECK-LABEL: {{^}}__global__ void atax(
// CHECK: {{^}}        { __syncwarp(); if (astra_lane == 0) tmp[i] = 0; __syncwarp(); }
// CHECK-NEXT: {{^}}        int j;
// CHECK-NEXT: {{^}}        double astra_acc0 = 0;
// CHECK-NEXT: {{^}}        for (j = astra_lane; j < ny; j += 32)
// CHECK-NEXT: {{^}}          astra_acc0 += A[i * ny + j] * x[j];
// CHECK-NEXT: {{^}}        for (int astra_o = 16; astra_o > 0; astra_o /= 2)
// CHECK-NEXT: {{^}}          astra_acc0 = astra_acc0 + __shfl_xor_sync(0xffffffffu, astra_acc0, astra_o);
// CHECK-NEXT: {{^}}        astra_acc0 = __shfl_sync(0xffffffffu, astra_acc0, 0);
// CHECK-NEXT: {{^}}        __syncwarp();
// CHECK-NEXT: {{^}}        if (astra_lane == 0)
// CHECK-NEXT: {{^}}          tmp[i] += astra_acc0;
// CHECK-NEXT: {{^}}        __syncwarp();
__global__ void atax(int nx, int ny, double *A, double *x, double *tmp) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < nx) {
    tmp[i] = 0;
    int j;
    for (j = 0; j < ny; j++)
      tmp[i] += A[i * ny + j] * x[j];
  }
}

// Local row pointers (the buffers they point into are the parameters), a
// double sum, `++j`.
// EXPLAIN: row-cooperative.cu:[[@LINE+7]]:3: row-cooperative: fired: {{.*}}reductions 's' (+)
// CHECK-LABEL: {{^}}__global__ void rowptr(
// CHECK: {{^}}        for (int j = astra_lane; j < cols; j += 32)
// CHECK-NEXT: {{^}}          s += xr[j];
// CHECK-NEXT: {{^}}        for (int astra_o = 16; astra_o > 0; astra_o /= 2)
// CHECK-NEXT: {{^}}          s = s + __shfl_xor_sync(0xffffffffu, s, astra_o);
__global__ void rowptr(const float *x, float *y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    const float *xr = x + (size_t)r * cols;
    float *yr = y + (size_t)r * cols;
    double s = 0;
    for (int j = 0; j < cols; ++j)
      s += xr[j];
    for (int j = 0; j < cols; ++j)
      yr[j] = xr[j] - (float)(s / cols);
  }
}

// Refusals.
// EXPLAIN: row-cooperative.cu:[[@LINE+4]]:5: row-cooperative: not applied: no access in the row loops walks along the row
__global__ void columns(const float *A, float *y, int n) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c < n) {
    for (int k = 0; k < n; k++)
      y[c] += A[k * n + c];
  }
}

// EXPLAIN: row-cooperative.cu:[[@LINE+7]]:7: row-cooperative: not applied: the row loop changes 's', declared outside it, other than as a reduction `s += e`, `s = s + e` or `m = fmaxf(m, e)`
__global__ void online(const float *x, float *out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float m = -INFINITY, s = 0.0f;
    for (int j = 0; j < cols; j++) {
      float v = x[r * cols + j];
      s = s * expf(m - fmaxf(m, v)) + expf(v - fmaxf(m, v));
      m = fmaxf(m, v);
    }
    out[r] = s;
  }
}

// EXPLAIN: row-cooperative.cu:[[@LINE+4]]:11: row-cooperative: not applied: the row loop changes 's', declared outside it, a sum whose declaration does not start it at 0
__global__ void biased(const float *x, float *out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float s = 1.0f;
    for (int j = 0; j < cols; j++)
      s += x[r * cols + j];
    out[r] = s;
  }
}

// EXPLAIN: row-cooperative.cu:[[@LINE+7]]:9: row-cooperative: not applied: leaves the row loop early (return, break or goto)
__global__ void first_neg(const float *x, int *out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    int at = 0;
    for (int j = 0; j < cols; j++) {
      if (x[r * cols + j] < 0.0f)
        break;
      at = at + 1;
    }
    out[r] = at;
  }
}

// EXPLAIN: row-cooperative.cu:[[@LINE+5]]:7: row-cooperative: not applied: the kernel writes 'y', and this index is not `e + j` with j the row loop's variable
__global__ void shifted(const float *x, float *y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    for (int j = 0; j < cols - 1; j++)
      y[r * cols + j + 1] = x[r * cols + j];
  }
}

// EXPLAIN: row-cooperative.cu:[[@LINE+1]]:48: row-cooperative: not applied: 'y' is written and 'x' read: neither is `__restrict__` and the launch at {{.*}}row-cooperative.cu:[[@LINE+60]]:3 may pass overlapping buffers (restrict-const may prove it)
__global__ void inplace(const float *x, float *y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows)
    for (int j = 0; j < cols; j++)
      y[r * cols + j] = 2.0f * x[r * cols + j];
}

// EXPLAIN: row-cooperative.cu:[[@LINE+7]]:14: row-cooperative: not applied: the loop variable 'j' is used outside the row loops
__global__ void last_j(const float *x, int *out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    int j;
    for (j = 0; j < cols; j++)
      out[r] = (int)x[r * cols + j];
    out[r] = j;
  }
}

// EXPLAIN: row-cooperative.cu:[[@LINE+5]]:7: row-cooperative: not applied: calls atomicAdd, which has an effect beyond its result
__global__ void atomics(const float *x, float *total, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows)
    for (int j = 0; j < cols; j++)
      atomicAdd(total, x[r * cols + j]);
}

// EXPLAIN: row-cooperative.cu:[[@LINE+2]]:9: row-cooperative: not applied: 'total' is declared before the row index and changed after it: a warp's rows would share it
__global__ void carried(const float *x, float *out, int rows, int cols) {
  float total = 0.0f;
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    for (int j = 0; j < cols; j++)
      total += x[r * cols + j];
    out[r] = total;
  }
}

// EXPLAIN: row-cooperative.cu:[[@LINE+7]]:5: row-cooperative: not applied: changes the parameter 'cols': a warp's rows, now run one after another, would share it
__global__ void param(const float *x, float *out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float s = 0.0f;
    for (int j = 0; j < cols; j++)
      s += x[r * cols + j];
    cols = cols - 1;
    out[r] = s;
  }
}

void launch(const float *x, float *y, int8_t *q, float *s, double *A,
            double *dx, double *tmp, int *iout, int rows, int cols, int block) {
  rms<<<(rows + block - 1) / block, block>>>(x, y, rows, cols);
  quant<<<(rows + 255) / 256, 256>>>(x, q, s, rows, cols);
  atax<<<(rows + block - 1) / block, block>>>(rows, cols, A, dx, tmp);
  columns<<<(cols + block - 1) / block, block>>>(x, y, cols);
  online<<<(rows + block - 1) / block, block>>>(x, y, rows, cols);
  biased<<<(rows + block - 1) / block, block>>>(x, y, rows, cols);
  first_neg<<<(rows + block - 1) / block, block>>>(x, iout, rows, cols);
  shifted<<<(rows + block - 1) / block, block>>>(x, y, rows, cols);
  inplace<<<(rows + block - 1) / block, block>>>(y, y, rows, cols);
  last_j<<<(rows + block - 1) / block, block>>>(x, iout, rows, cols);
  atomics<<<(rows + block - 1) / block, block>>>(x, y, rows, cols);
  carried<<<(rows + block - 1) / block, block>>>(x, y, rows, cols);
  param<<<(rows + block - 1) / block, block>>>(x, y, rows, cols);
  rowptr<<<(rows + block - 1) / block, block>>>(x, y, rows, cols);
}
