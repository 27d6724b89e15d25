// smem-tile: a 2-D kernel's k loop reads its operands from shared-memory
// tiles, on a path taken only by the block every launch passes.
// RUN: rm -rf %t.dir && mkdir -p %t.dir
// RUN: cp %s %t.dir/tile.cu
// RUN: %clang-astra rewrite --passes=smem-tile -i %t.dir/tile.cu -- -std=c++17
// RUN: FileCheck %s < %t.dir/tile.cu
// RUN: %nvptx-compile %t.dir/tile.cu | FileCheck %s --check-prefix=PTX
// RUN: %cuda-syntax-check %t.dir/tile.cu
// RUN: %clang-astra rewrite --passes=smem-tile --explain %s -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=EXPLAIN
// A second run changes nothing more (the kernel uses shared memory now).
// RUN: %clang-astra rewrite --passes=smem-tile %t.dir/tile.cu -- -std=c++17 > %t.again.cu
// RUN: diff %t.dir/tile.cu %t.again.cu
// The chunk of k is an option.
// RUN: %clang-astra rewrite --passes=smem-tile --kernel=gemm --pass-opt=smem-tile.k=16 %s -- -std=c++17 | FileCheck %s --check-prefix=K16
// thread-coarsen on top: each thread takes four rows of the block and of the
// tiles (register blocking); the block-shape test follows the divided block.
// RUN: %clang-astra rewrite --passes=smem-tile,thread-coarsen --kernel=gemm --spec %S/Inputs/smem-tile.astra.json %s -- -std=c++17 > %t.coarse.cu
// RUN: FileCheck %s --check-prefix=COARSE < %t.coarse.cu
// RUN: %nvptx-compile %t.coarse.cu > /dev/null
// COARSE: {{^ +}}if (blockDim.x == 32 && (blockDim.y * 4) == 8 && blockDim.z == 1) {
// COARSE: {{^ +}}astra_acc0[astra_cy] += alpha * astra_tile0[k[astra_cy] - astra_k0][(threadIdx.y + astra_cy * blockDim.y)] * astra_tile1[k[astra_cy] - astra_k0][threadIdx.x];
// COARSE: {{^ +}}gemm<<<grid, dim3(block.x, block.y / 4, block.z)>>>
// The naive tier's gemm splits a flat 1-D index: refused.
// RUN: %clang-astra rewrite --passes=smem-tile --explain %astra_src_root/kernels/naive/gemm.cu 2>&1 >/dev/null | FileCheck %s --check-prefix=NAIVE
// NAIVE: gemm.cu:7:17: smem-tile: not applied: no 2-D thread index: the pass needs `j = blockIdx.x * blockDim.x + threadIdx.x` and `i = blockIdx.y * blockDim.y + threadIdx.y` declared at the top of the kernel (a 1-D launch, or a flat index split by `/` and `%`, is not tiled)
// PTX-LABEL: .visible .entry _Z4gemmiiiffPfS_S_(
// PTX: .shared .align 4 .b8 {{.*}}astra_tile0[1152]
// PTX: .shared .align 4 .b8 {{.*}}astra_tile1[4224]
// PTX: bar.sync 0
// PTX-LABEL: .visible .entry _Z8interioriPKfPf(
// PTX: bar.red.or.pred

#include <cuda_runtime.h>

#define NI 100
#define NK 70
#define BLOCK_X 32
#define BLOCK_Y 8

// PolyBench-ACC's form: `c *= beta`, then `+=` on global memory; the block
// is spelled with macros. a and b become tiles, c a register.
// CHECK-LABEL: {{^}}__global__ void gemm(int ni, int nj, int nk, float alpha, float beta, float *a, float *b, float *c) {
// CHECK-NEXT:  int j = blockIdx.x * blockDim.x + threadIdx.x;
// CHECK-NEXT:  int i = blockIdx.y * blockDim.y + threadIdx.y;
// CHECK-NEXT:  if (blockDim.x == 32 && blockDim.y == 8 && blockDim.z == 1) {
// CHECK-NEXT:    // smem-tile: 'a', 'b' read from shared tiles of 32 steps of 'k',
// CHECK-NEXT:    // loaded once per block; other block shapes run the code below.
// CHECK-NEXT:    __shared__ float astra_tile0[32][8 + 1];
// CHECK-NEXT:    __shared__ float astra_tile1[32][32 + 1];
// CHECK-NEXT:    const bool astra_in = (i < ni) && (j < nj);
// CHECK-NEXT:    int k;
// CHECK-NEXT:    float astra_acc0 = 0;
// CHECK-NEXT:    if (astra_in) {
// CHECK-NEXT:      c[i * nj + j] *= beta;
// CHECK-NEXT:      astra_acc0 = c[i * nj + j];
// CHECK-NEXT:    }
// CHECK-NEXT:    bool astra_live;
// CHECK-NEXT:    {
// CHECK-NEXT:      const int i = blockIdx.y * blockDim.y;
// CHECK-NEXT:      const int j = blockIdx.x * blockDim.x;
// CHECK-NEXT:      astra_live = (i < ni) && (j < nj);
// CHECK-NEXT:    }
// CHECK-NEXT:    if (astra_live) {
// CHECK-NEXT:      for (int astra_k0 = 0; astra_k0 < (nk); astra_k0 += 32) {
// CHECK-NEXT:        for (unsigned astra_e = threadIdx.y * 32 + threadIdx.x; astra_e < 32 * 8; astra_e += 32 * 8) {
// CHECK-NEXT:          const unsigned astra_kk = astra_e % 32, astra_c = astra_e / 32;
// CHECK-NEXT:          const int k = astra_k0 + astra_kk;
// CHECK-NEXT:          const int i = blockIdx.y * blockDim.y + astra_c;
// CHECK-NEXT:          astra_tile0[astra_kk][astra_c] = k < (nk) && ((i < ni)) ? a[i * nk + k] : (float)0;
// CHECK-NEXT:        }
// CHECK-NEXT:        for (unsigned astra_e = threadIdx.y * 32 + threadIdx.x; astra_e < 32 * 32; astra_e += 32 * 8) {
// CHECK-NEXT:          const unsigned astra_c = astra_e % 32, astra_kk = astra_e / 32;
// CHECK-NEXT:          const int k = astra_k0 + astra_kk;
// CHECK-NEXT:          const int j = blockIdx.x * blockDim.x + astra_c;
// CHECK-NEXT:          astra_tile1[astra_kk][astra_c] = k < (nk) && ((j < nj)) ? b[k * nj + j] : (float)0;
// CHECK-NEXT:        }
// CHECK-NEXT:        __syncthreads();
// CHECK-NEXT:        if (astra_in) {
// CHECK-NEXT:          if ((nk) - astra_k0 >= 32) {
// CHECK-NEXT: #pragma unroll
// CHECK-NEXT:            for (k = astra_k0; k < astra_k0 + 32; k++)
// CHECK-NEXT:              {
// CHECK-NEXT:        astra_acc0 += alpha * astra_tile0[k - astra_k0][threadIdx.y] * astra_tile1[k - astra_k0][threadIdx.x];
// CHECK-NEXT:      }
// CHECK-NEXT:          } else {
// CHECK-NEXT:            for (k = astra_k0; k < (nk); k++)
// CHECK-NEXT:              {
// CHECK-NEXT:        astra_acc0 += alpha * astra_tile0[k - astra_k0][threadIdx.y] * astra_tile1[k - astra_k0][threadIdx.x];
// CHECK-NEXT:      }
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:        __syncthreads();
// CHECK-NEXT:        if ((nk) - astra_k0 <= 32)
// CHECK-NEXT:          break;
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    if (astra_in) {
// CHECK-NEXT:      c[i * nj + j] = astra_acc0;
// CHECK-NEXT:    }
// CHECK-NEXT:  } else {
// CHECK-NEXT:    if ((i < ni) && (j < nj)) {
// CHECK-NEXT:      c[i * nj + j] *= beta;
// K16: {{^ +}}__shared__ float astra_tile0[16][8 + 1];
// K16: {{^ +}}for (int astra_k0 = 0; astra_k0 < (nk); astra_k0 += 16) {
__global__ void gemm(int ni, int nj, int nk, float alpha, float beta, float *a, float *b, float *c) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if ((i < ni) && (j < nj)) {
    c[i * nj + j] *= beta;
    int k;
    for (k = 0; k < nk; k++) {
      c[i * nj + j] += alpha * a[i * nk + k] * b[k * nj + j];
    }
  }
}
// EXPLAIN: smem-tile.cu:[[@LINE-8]]:3: smem-tile: fired: blocks of (32, 8, 1), as every launch passes: 'a[i * nk + k]' as a 32 x 8 rows tile (loaded along k); 'b[k * nj + j]' as a 32 x 32 columns tile (loaded along the column); 'c[i * nj + j]' accumulated in a register; the sum over 'k' keeps its order

// syrk's second operand is a[j][k]: k is its contiguous direction, so the
// tile of columns is loaded along k as well (the original's warp read it
// with a stride of NK). The sum is a local already; sizes are macros that
// are not multiples of the tile.
// CHECK-LABEL: {{^}}__global__ void syrk(float alpha, const float *__restrict__ a, float *__restrict__ c) {
// CHECK:         if (blockDim.x == 16 && blockDim.y == 16 && blockDim.z == 1) {
// CHECK:           __shared__ float astra_tile1[32][16 + 1];
// CHECK-NEXT:      const bool astra_in = i < NI && j < NI;
// CHECK-NEXT:      float acc = 0.0f;
// CHECK-NEXT:      bool astra_live;
// CHECK:             astra_tile0[astra_kk][astra_c] = k < (NK) && (i < NI) ? a[i * NK + k] : (float)0;
// CHECK-NEXT:      }
// CHECK-NEXT:      for (unsigned astra_e = threadIdx.y * 16 + threadIdx.x; astra_e < 32 * 16; astra_e += 16 * 16) {
// CHECK-NEXT:        const unsigned astra_kk = astra_e % 32, astra_c = astra_e / 32;
// CHECK-NEXT:        const int k = astra_k0 + astra_kk;
// CHECK-NEXT:        const int j = blockIdx.x * blockDim.x + astra_c;
// CHECK-NEXT:        astra_tile1[astra_kk][astra_c] = k < (NK) && (j < NI) ? a[j * NK + k] : (float)0;
// CHECK:               for (int k = astra_k0; k < astra_k0 + 32; k++)
// CHECK-NEXT:            acc += astra_tile0[k - astra_k0][threadIdx.y] * astra_tile1[k - astra_k0][threadIdx.x];
// CHECK:           if (astra_in) {
// CHECK-NEXT:        c[i * NI + j] = alpha * acc;
// CHECK-NEXT:      }
// CHECK-NEXT:    } else {
__global__ void syrk(float alpha, const float *__restrict__ a, float *__restrict__ c) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < NI && j < NI) {
    float acc = 0.0f;
    for (int k = 0; k < NK; ++k)
      acc += a[i * NK + k] * a[j * NK + k];
    c[i * NI + j] = alpha * acc;
  }
}
// EXPLAIN: smem-tile.cu:[[@LINE-7]]:3: smem-tile: fired: blocks of (16, 16, 1), as every launch passes: 'a[i * NK + k]' as a 32 x 16 rows tile (loaded along k); 'a[j * NK + k]' as a 32 x 16 columns tile (loaded along k); the sum over 'k' keeps its order

// A guard with a lower bound (`i >= 1`): the block's first row may be
// outside while others are inside, so a barrier tells whether any thread
// of the block is (the loads must not run for a block with none).
// CHECK-LABEL: {{^}}__global__ void interior(
// CHECK:         const bool astra_in = i >= 1 && i < n && j < n;
// CHECK-NEXT:    float s = 0;
// CHECK-NEXT:    if (__syncthreads_or(astra_in)) {
// CHECK:             astra_tile0[astra_kk][astra_c] = k < (n) && (i >= 1) && (i < n) ? a[(i - 1) * n + k] : (float)0;
__global__ void interior(int n, const float *__restrict__ a, float *__restrict__ c) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= 1 && i < n && j < n) {
    float s = 0;
    for (int k = 0; k < n; k++)
      s += a[(i - 1) * n + k];
    c[i * n + j] = s;
  }
}
// EXPLAIN: smem-tile.cu:[[@LINE-7]]:3: smem-tile: fired: blocks of (32, 8, 1), as every launch passes: 'a[(i - 1) * n + k]' as a 32 x 8 rows tile (loaded along k); the sum over 'k' keeps its order

// Refused: a store indexed by k.
// CHECK-LABEL: {{^}}__global__ void kstore(
// CHECK-NEXT: int j =
__global__ void kstore(int n, const float *__restrict__ a, float *__restrict__ c) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < n && j < n)
    for (int k = 0; k < n; k++)
      c[i * n + k] = a[k * n + j];
}
// EXPLAIN: smem-tile.cu:[[@LINE-2]]:7: smem-tile: not applied: a store indexed by the loop variable 'k' (only loads follow k)

// Refused: the operand b is written (after the loop).
__global__ void written(int n, float *__restrict__ a, float *__restrict__ b) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < n && j < n) {
    float s = 0;
    for (int k = 0; k < n; k++)
      s += a[i * n + k] * b[k * n + j];
    b[i * n + j] = s;
  }
}
// EXPLAIN: smem-tile.cu:[[@LINE-4]]:27: smem-tile: not applied: the operand 'b' is written in the kernel: a tile loaded ahead could miss a store

// Refused: an index that is not affine in k.
__global__ void nonaffine(int n, const float *__restrict__ a, float *__restrict__ c) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < n && j < n) {
    float s = 0;
    for (int k = 0; k < n; k++)
      s += a[i * n + k * k];
    c[i * n + j] = s;
  }
}
// EXPLAIN: smem-tile.cu:[[@LINE-4]]:12: smem-tile: not applied: the operand's index is not affine in k and the thread's row or column

// Refused: a load that reads the row, the column and k.
__global__ void cube(int n, const float *__restrict__ a, float *__restrict__ c) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < n && j < n) {
    float s = 0;
    for (int k = 0; k < n; k++)
      s += a[(i * n + j) * n + k];
    c[i * n + j] = s;
  }
}
// EXPLAIN: smem-tile.cu:[[@LINE-4]]:12: smem-tile: not applied: the load reads the row, the column and k: no other thread of the block shares it

// Refused: a branch in the k loop (not every step reads every operand).
__global__ void branchy(int n, const float *__restrict__ a, float *__restrict__ c) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < n && j < n) {
    float s = 0;
    for (int k = 0; k < n; k++)
      if (k != j)
        s += a[i * n + k];
    c[i * n + j] = s;
  }
}
// EXPLAIN: smem-tile.cu:[[@LINE-5]]:7: smem-tile: not applied: a branch or loop inside the k loop: the pass needs every step to read every operand

// Refused: a guard that couples the row and the column (a triangle).
__global__ void lower(int n, const float *__restrict__ a, float *__restrict__ c) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < n && j <= i) {
    float acc = 0.0f;
    for (int k = 0; k < n; ++k)
      acc += a[i * n + k] * a[j * n + k];
    c[i * n + j] = acc;
  }
}
// EXPLAIN: smem-tile.cu:[[@LINE-7]]:16: smem-tile: not applied: a term of the guard reads both the row 'i' and the column 'j': which rows and columns of a tile exist could not be told apart

// The launches below make the next kernels' refusals: a 1-D block, a block
// chosen at run time, a launch that passes one buffer twice, two shapes.
__global__ void oned(int n, const float *a, float *c) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < n && j < n) {
    float s = 0;
    for (int k = 0; k < n; k++)
      s += a[i * n + k];
    c[i * n + j] = s;
  }
}
// EXPLAIN: smem-tile.cu:[[@LINE-7]]:3: smem-tile: not applied: the launches pass blocks of (256, 1, 1): the pass tiles 2-D blocks (a 1-D launch has one row per block, nothing to share along it)

__global__ void runtime_block(int n, const float *a, float *c) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < n && j < n) {
    float s = 0;
    for (int k = 0; k < n; k++)
      s += a[i * n + k];
    c[i * n + j] = s;
  }
}
// EXPLAIN: smem-tile.cu:[[@LINE-7]]:3: smem-tile: not applied: the launch at {{.*}}smem-tile.cu:[[@LINE+62]]:3 passes a block that is not a compile-time constant

__global__ void aliased(int n, const float *a, float *c) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < n && j < n) {
    float s = 0;
    for (int k = 0; k < n; k++)
      s += a[i * n + k];
    c[i * n + j] = s;
  }
}
// EXPLAIN: smem-tile.cu:[[@LINE-4]]:12: smem-tile: not applied: 'c' is written and 'a' tiled: neither is `__restrict__` and the launch at {{.*}}smem-tile.cu:[[@LINE+51]]:3 may pass overlapping buffers (restrict-const may prove it)

__global__ void scaled(int n, const float *x, float *c, const float *__restrict__ a) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < n && j < n) {
    for (int k = 0; k < n; k++)
      c[i * n + j] += a[i * n + k] * x[i];
  }
}
// EXPLAIN: smem-tile.cu:[[@LINE-3]]:7: smem-tile: not applied: 'c' is written and 'x' read in the k loop, where the written element is kept in a register: neither is `__restrict__` and the launch at {{.*}}smem-tile.cu:[[@LINE+42]]:3 may pass overlapping buffers (restrict-const may prove it)

__global__ void two_shapes(int n, const float *__restrict__ a, float *__restrict__ c) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < n && j < n) {
    float s = 0;
    for (int k = 0; k < n; k++)
      s += a[i * n + k];
    c[i * n + j] = s;
  }
}
// EXPLAIN: smem-tile.cu:[[@LINE-7]]:3: smem-tile: not applied: the launches pass blocks of (32, 8, 1) and (16, 16, 1); the tiled path is written for one shape

// Refused: no launch in this file (another file could launch it with any block).
__global__ void unlaunched(int n, const float *__restrict__ a, float *__restrict__ c) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < n && j < n) {
    float s = 0;
    for (int k = 0; k < n; k++)
      s += a[i * n + k];
    c[i * n + j] = s;
  }
}
// EXPLAIN: smem-tile.cu:[[@LINE-7]]:3: smem-tile: not applied: the file may not show every launch (

void run(float *a, float *b, float *c, int n, int bx, int by) {
  dim3 block(BLOCK_X, BLOCK_Y);
  dim3 grid((n + 31) / 32, (n + 7) / 8);
  gemm<<<grid, block>>>(n, n, n, 1.0f, 0.5f, a, b, c);
  syrk<<<grid, dim3(16, 16)>>>(2.0f, a, c);
  interior<<<grid, block>>>(n, a, c);
  kstore<<<grid, block>>>(n, a, c);
  written<<<grid, block>>>(n, a, b);
  nonaffine<<<grid, block>>>(n, a, c);
  cube<<<grid, block>>>(n, a, c);
  branchy<<<grid, block>>>(n, a, c);
  lower<<<grid, block>>>(n, a, c);
  oned<<<grid, 256>>>(n, a, c);
  runtime_block<<<grid, dim3(bx, by)>>>(n, a, c);
  aliased<<<grid, block>>>(n, c, c);
  scaled<<<grid, block>>>(n, c, c, a);
  two_shapes<<<grid, block>>>(n, a, c);
  two_shapes<<<grid, dim3(16, 16)>>>(n, a, c);
}
