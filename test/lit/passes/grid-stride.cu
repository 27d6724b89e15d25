// grid-stride: one-element-per-thread kernels become grid-stride loops.
// RUN: rm -rf %t.dir && mkdir -p %t.dir/Inputs
// RUN: cp %s %t.dir/grid-stride.cu && cp %S/Inputs/grid-stride.cuh %t.dir/Inputs/
// RUN: %clang-astra rewrite --passes=grid-stride -i %t.dir/grid-stride.cu -- -std=c++17
// RUN: FileCheck %s < %t.dir/grid-stride.cu
// RUN: FileCheck %s --check-prefix=HEADER < %t.dir/Inputs/grid-stride.cuh
// RUN: %nvptx-compile %t.dir/grid-stride.cu | FileCheck %s --check-prefix=PTX
// RUN: %clang-astra rewrite --passes=grid-stride --explain %s -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=EXPLAIN
// A second run changes nothing more.
// RUN: %clang-astra rewrite --passes=grid-stride %t.dir/grid-stride.cu -- -std=c++17 > %t.again.cu
// RUN: diff %t.dir/grid-stride.cu %t.again.cu
// RUN: %clang-astra rewrite --passes=grid-stride --explain %t.dir/grid-stride.cu -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=AGAIN
// AGAIN-NOT: fired
// AGAIN: grid-stride: not applied: the kernel already uses a grid-stride loop

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "Inputs/grid-stride.cuh"
// HEADER: {{^}}__global__ void relu(float *y, const float *x, int n) {
// HEADER-NEXT: {{^}}  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
// HEADER-NEXT: {{^}}    y[i] = x[i] > 0.f ? x[i] : 0.f;
// HEADER-NEXT: {{^}}}
// EXPLAIN: grid-stride.cuh:6:7: grid-stride: fired: 'i' < n now steps by blockDim.x * gridDim.x

// The guarded form, float.
// CHECK-LABEL: {{^}}__global__ void saxpy(
// CHECK-NEXT: {{^}}  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
// CHECK-NEXT: {{^}}    y[i] = a * x[i] + y[i];
// CHECK-NEXT: {{^}}  }
// CHECK-NEXT: {{^}}}
__global__ void saxpy(int n, float a, const float *__restrict__ x, float *__restrict__ y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = a * x[i] + y[i];
  }
}
// EXPLAIN: grid-stride.cu:[[@LINE-5]]:7: grid-stride: fired: 'i' < n now steps by blockDim.x * gridDim.x: a grid-stride loop, correct for any grid size
// PTX-LABEL: .entry _Z5saxpyifPKfPf(
// PTX: %nctaid.x

// The early-return form with a const 64-bit index written in another order:
// the step is computed in 64 bits and the rest of the body is re-indented.
// CHECK-LABEL: {{^}}__global__ void relu_half(
// CHECK-NEXT: {{^}}  for (int64_t i = threadIdx.x + (int64_t)blockDim.x * blockIdx.x; i < n; i += (int64_t)blockDim.x * gridDim.x) {
// CHECK-NEXT: {{^}}    const __half v = in[i];
// CHECK-NEXT: {{^}}    const __half zero = __float2half(0.f);
// CHECK-NEXT: {{^}}    out[i] = __hgt(v, zero) ? v : zero;
// CHECK-NEXT: {{^}}  }
// CHECK-NEXT: {{^}}}
__global__ void relu_half(__half *out, const __half *in, int64_t n) {
  const int64_t i = threadIdx.x + (int64_t)blockDim.x * blockIdx.x;
  if (i >= n)
    return;
  const __half v = in[i];
  const __half zero = __float2half(0.f);
  out[i] = __hgt(v, zero) ? v : zero;
}
// EXPLAIN: grid-stride.cu:[[@LINE-7]]:17: grid-stride: fired: early return when 'i' >= n replaced by a grid-stride loop over the rest of the kernel, correct for any grid size
// PTX-LABEL: .entry _Z9relu_halfP6__halfPKS_l(
// PTX: %nctaid.x

// A template (bf16 and float instantiations), an unsigned index, the bound on
// the left and a body without braces.
// CHECK-LABEL: {{^}}__global__ void scale_t(
// CHECK-NEXT: {{^}}  for (unsigned i = blockDim.x * blockIdx.x + threadIdx.x; n > i; i += blockDim.x * gridDim.x)
// CHECK-NEXT: {{^}}    out[i] = (T)((float)in[i] * s);
// CHECK-NEXT: {{^}}}
template <typename T>
__global__ void scale_t(T *out, const T *in, float s, unsigned n) {
  unsigned i = blockDim.x * blockIdx.x + threadIdx.x;
  if (n > i)
    out[i] = (T)((float)in[i] * s);
}
void launch_scale(__nv_bfloat16 *ob, const __nv_bfloat16 *ib, float *of,
                  const float *inf, unsigned n) {
  scale_t<<<(n + 255) / 256, 256>>>(ob, ib, 2.f, n);
  scale_t<<<(n + 255) / 256, 256>>>(of, inf, 2.f, n);
}

// The index spelled by a macro, a macro in the body, statements before it.
#define GLOBAL_ID (blockIdx.x * blockDim.x + threadIdx.x)
#define SQR(v) ((v) * (v))
// CHECK-LABEL: {{^}}__global__ void square(
// CHECK-NEXT: {{^}}  const int limit = n;
// CHECK-NEXT: {{^}}  for (int idx = GLOBAL_ID; idx < limit; idx += blockDim.x * gridDim.x) {
// CHECK-NEXT: {{^}}    data[idx] = SQR(data[idx]);
// CHECK-NEXT: {{^}}  }
// CHECK-NEXT: {{^}}}
__global__ void square(int *data, int n) {
  const int limit = n;
  int idx = GLOBAL_ID;
  if (idx >= limit) { return; }
  data[idx] = SQR(data[idx]);
}
// PTX-LABEL: .entry _Z6squarePii(
// PTX: %nctaid.x

//===--- Refusals: the text stays as it is --------------------------------===//

// A barrier: threads of one block would run different iteration counts.
// CHECK-LABEL: {{^}}__global__ void sync_inside(
// CHECK-NEXT: {{^}}  int i = blockIdx.x * blockDim.x + threadIdx.x;
// CHECK-NEXT: {{^}}  if (i < n) {
__global__ void sync_inside(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    x[i] *= 2.f;
    __syncthreads();
  }
}
// EXPLAIN: grid-stride.cu:[[@LINE-6]]:7: grid-stride: not applied: the kernel calls __syncthreads at {{.*}}grid-stride.cu:[[@LINE-3]]:5; threads of a block would run different numbers of iterations

// A warp shuffle is refused the same way.
// CHECK-LABEL: {{^}}__global__ void shuffle_inside(
// CHECK-NEXT: {{^}}  int i = blockIdx.x * blockDim.x + threadIdx.x;
__global__ void shuffle_inside(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] += __shfl_down_sync(0xffffffffu, x[i], 1);
}
// EXPLAIN: grid-stride.cu:[[@LINE-4]]:7: grid-stride: not applied: the kernel calls __shfl_down_sync at

// Shared memory.
// CHECK-LABEL: {{^}}__global__ void uses_shared(
// CHECK-NEXT: {{^}}  __shared__ float tile[128];
// CHECK-NEXT: {{^}}  int i = blockIdx.x * blockDim.x + threadIdx.x;
__global__ void uses_shared(float *x, int n) {
  __shared__ float tile[128];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    tile[threadIdx.x % 128] = x[i];
    x[i] = 2.f * tile[threadIdx.x % 128];
  }
}
// EXPLAIN: grid-stride.cu:[[@LINE-6]]:7: grid-stride: not applied: the kernel declares __shared__ 'tile' at {{.*}}; one block would see shared data meant for another block

// A second return inside the guarded code.
// CHECK-LABEL: {{^}}__global__ void early_exit(
// CHECK-NEXT: {{^}}  int i = blockIdx.x * blockDim.x + threadIdx.x;
// CHECK-NEXT: {{^}}  if (i >= n)
// CHECK-NEXT: {{^}}    return;
__global__ void early_exit(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  if (x[i] < 0.f)
    return;
  x[i] = sqrtf(x[i]);
}
// EXPLAIN: grid-stride.cu:[[@LINE-3]]:5: grid-stride: not applied: a `return` inside the guarded code would end the loop early for later elements

// The index or the bound is modified.
// CHECK-LABEL: {{^}}__global__ void index_modified(
// CHECK-NEXT: {{^}}  int i = blockIdx.x * blockDim.x + threadIdx.x;
__global__ void index_modified(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    x[i] = 1.f;
    i += 1;
  }
}
// EXPLAIN: grid-stride.cu:[[@LINE-3]]:5: grid-stride: not applied: 'i' is modified (or its address is taken) in the kernel; the loop owns the index
// CHECK-LABEL: {{^}}__global__ void bound_modified(
// CHECK-NEXT: {{^}}  int i = blockIdx.x * blockDim.x + threadIdx.x;
__global__ void bound_modified(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    n -= 1;
    x[i] = (float)n;
  }
}
// EXPLAIN: grid-stride.cu:[[@LINE-4]]:5: grid-stride: not applied: 'n' is modified (or its address is taken) in the kernel; the loop bound must not change

// blockIdx.y in the index; an index that is not the global thread index.
// CHECK-LABEL: {{^}}__global__ void rows_y(
// CHECK-NEXT: {{^}}  int i = blockIdx.y * blockDim.x + threadIdx.x;
__global__ void rows_y(float *x, int n) {
  int i = blockIdx.y * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = 0.f;
}
// EXPLAIN: grid-stride.cu:[[@LINE-4]]:7: grid-stride: not applied: 'i': the index uses blockIdx.y; only the x dimension is turned into a loop
// CHECK-LABEL: {{^}}__global__ void fixed_block(
// CHECK-NEXT: {{^}}  int i = blockIdx.x * 256 + threadIdx.x;
__global__ void fixed_block(float *x, int n) {
  int i = blockIdx.x * 256 + threadIdx.x;
  if (i < n)
    x[i] = 0.f;
}
// EXPLAIN: grid-stride.cu:[[@LINE-4]]:7: grid-stride: not applied: 'i': the index is not blockIdx.x * blockDim.x + threadIdx.x

// blockIdx.x read in the body; the index used after its check.
// CHECK-LABEL: {{^}}__global__ void block_id_in_body(
// CHECK-NEXT: {{^}}  int i = blockIdx.x * blockDim.x + threadIdx.x;
__global__ void block_id_in_body(int *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = blockIdx.x;
}
// EXPLAIN: grid-stride.cu:[[@LINE-2]]:12: grid-stride: not applied: the guarded code reads blockIdx.x besides the index; in a grid-stride loop a block also handles other blocks' elements
// CHECK-LABEL: {{^}}__global__ void used_after(
// CHECK-NEXT: {{^}}  int i = blockIdx.x * blockDim.x + threadIdx.x;
__global__ void used_after(int *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = 1;
  if (i == 0)
    x[0] = 2;
}
// EXPLAIN: grid-stride.cu:[[@LINE-3]]:7: grid-stride: not applied: 'i' is used after its bounds check; it would be out of scope after the loop

// Already a grid-stride loop; nothing of the kind at all.
// CHECK-LABEL: {{^}}__global__ void already(
// CHECK-NEXT: {{^}}  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
__global__ void already(float *x, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    x[i] = 0.f;
}
// EXPLAIN: grid-stride.cu:[[@LINE-4]]:17: grid-stride: not applied: the kernel already uses a grid-stride loop
__global__ void one_block(float *x) { x[threadIdx.x] = 0.f; }
// EXPLAIN: grid-stride.cu:[[@LINE-1]]:17: grid-stride: not applied: no one-element-per-thread index

// A template nobody instantiates: its calls cannot be checked.
template <typename T> __global__ void never_used(T *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = T(0);
}
// EXPLAIN: grid-stride.cu:[[@LINE-5]]:39: grid-stride: not applied: the template is never instantiated in this file

// Template instantiations come last in the PTX.
// PTX-LABEL: .entry _Z7scale_tI13__nv_bfloat16EvPT_PKS1_fj(
// PTX: %nctaid.x
