// hoist: loop-invariant work moves into const locals before the loop.
// RUN: rm -rf %t.dir && mkdir -p %t.dir/Inputs
// RUN: cp %s %t.dir/hoist.cu && cp %S/Inputs/hoist.cuh %t.dir/Inputs/
// RUN: %clang-astra rewrite --passes=hoist -i %t.dir/hoist.cu -- -std=c++17
// RUN: FileCheck --strict-whitespace %s < %t.dir/hoist.cu
// RUN: FileCheck --strict-whitespace %s --check-prefix=HEADER < %t.dir/Inputs/hoist.cuh
// RUN: %nvptx-compile %t.dir/hoist.cu | FileCheck %s --check-prefix=PTX
// RUN: %cuda-syntax-check %t.dir/hoist.cu
// RUN: %clang-astra rewrite --passes=hoist --explain %s -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=EXPLAIN
// --fast-math: divisions by a loop-invariant float become multiplies by a
// reciprocal computed once.
// RUN: %clang-astra rewrite --passes=hoist --fast-math %s -- -std=c++17 > %t.fast.cu
// RUN: FileCheck --strict-whitespace %s --check-prefix=FAST < %t.fast.cu
// RUN: %nvptx-compile -I %S %t.fast.cu | FileCheck %s --check-prefix=PTX-FAST
// RUN: %clang-astra rewrite --passes=hoist --fast-math --explain %s -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=FAST-EXPLAIN
// hoist.speculate-loads=1: loads leave loops that may run zero times;
// divisions do not.
// RUN: %clang-astra rewrite --passes=hoist --pass-opt=hoist.speculate-loads=1 %s -- -std=c++17 > %t.spec.cu
// RUN: FileCheck --strict-whitespace %s --check-prefix=SPEC < %t.spec.cu
// A second run changes nothing more.
// RUN: %clang-astra rewrite --passes=hoist %t.dir/hoist.cu -- -std=c++17 > %t.again.cu
// RUN: diff %t.dir/hoist.cu %t.again.cu
// RUN: %clang-astra rewrite --passes=hoist --explain %t.dir/hoist.cu -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=AGAIN
// RUN: %clang-astra rewrite --passes=hoist --fast-math %t.fast.cu -- -std=c++17 -I %S > %t.fast.again.cu
// RUN: diff %t.fast.cu %t.fast.again.cu
// AGAIN-NOT: fired
// PTX: .visible .entry

#include "Inputs/hoist.cuh"
// HEADER:      {{^}}__global__ void bias_rows(float *out, const float *__restrict__ bias, int d) {
// HEADER-NEXT: {{^}}  const unsigned int astra_inv = blockIdx.x * 4;
// HEADER-NEXT: {{^}}  const float astra_inv1 = bias[blockIdx.x];
// HEADER-NEXT: {{^}}  for (int k = 0; k < 4; ++k)
// HEADER-NEXT: {{^}}    out[(astra_inv + k) * d + threadIdx.x] += astra_inv1;
// EXPLAIN: hoist.cuh:9:10: hoist: fired: hoisted loop-invariant 'blockIdx.x * 4' out of the loop at {{.*}}hoist.cuh:8:3 as 'astra_inv'
// EXPLAIN: hoist.cuh:9:52: hoist: fired: hoisted loop-invariant 'bias[blockIdx.x]' out of the loop at {{.*}}hoist.cuh:8:3 as 'astra_inv1'

// Index arithmetic used twice becomes one name, with the type of the
// expression (unsigned: blockIdx.x is); expf of a parameter is a pure call.
// CHECK-LABEL: {{^}}__global__ void row_scale(
// CHECK-NEXT:  {{^}}                          float t) {
// CHECK-NEXT:  {{^}}  const unsigned int astra_inv = blockIdx.x * d;
// CHECK-NEXT:  {{^}}  const float astra_inv1 = expf(t);
// CHECK-NEXT:  {{^}}  for (int j = threadIdx.x; j < d; j += blockDim.x)
// CHECK-NEXT:  {{^}}    out[astra_inv + j] = in[astra_inv + j] * astra_inv1;
// CHECK-NEXT:  {{^}}}
__global__ void row_scale(float *__restrict__ out, const float *__restrict__ in, int d,
                          float t) {
  for (int j = threadIdx.x; j < d; j += blockDim.x)
    out[blockIdx.x * d + j] = in[blockIdx.x * d + j] * expf(t);
}
// EXPLAIN: hoist.cu:[[@LINE-2]]:9: hoist: fired: hoisted loop-invariant 'blockIdx.x * d' out of the loop at {{.*}}hoist.cu:[[@LINE-3]]:3 as 'astra_inv' (2 uses)
// EXPLAIN: hoist.cu:[[@LINE-3]]:56: hoist: fired: hoisted loop-invariant 'expf(t)' out of the loop at {{.*}}hoist.cu:[[@LINE-4]]:3 as 'astra_inv1'

// A per-row scalar: w[row] is read from a __restrict__ buffer the kernel
// never writes, in a loop that runs eight times whenever it is reached.
// CHECK-LABEL: {{^}}__global__ void dot_rows(
// CHECK:       {{^}}  float acc = 0.f;
// CHECK-NEXT:  {{^}}  const int astra_inv = row * 8;
// CHECK-NEXT:  {{^}}  const float astra_inv1 = w[row];
// CHECK-NEXT:  {{^}}  for (int k = 0; k < 8; ++k)
// CHECK-NEXT:  {{^}}    acc += x[astra_inv + k] * astra_inv1;
__global__ void dot_rows(float *__restrict__ out, const float *__restrict__ x,
                         const float *__restrict__ w) {
  const int row = blockIdx.x;
  float acc = 0.f;
  for (int k = 0; k < 8; ++k)
    acc += x[row * 8 + k] * w[row];
  out[row] = acc;
}
// EXPLAIN: hoist.cu:[[@LINE-3]]:14: hoist: fired: hoisted loop-invariant 'row * 8' out of the loop at {{.*}}hoist.cu:[[@LINE-4]]:3 as 'astra_inv'
// EXPLAIN: hoist.cu:[[@LINE-4]]:29: hoist: fired: hoisted loop-invariant 'w[row]' out of the loop at {{.*}}hoist.cu:[[@LINE-5]]:3 as 'astra_inv1'

// Nested loops: each expression leaves the outermost loop it is invariant
// in; (s * t) leaves both, r * n and __expf(r * s) only the inner one.
// CHECK-LABEL: {{^}}__global__ void nested(
// CHECK-NEXT:  {{^}}  const float astra_inv1 = (s * t);
// CHECK-NEXT:  {{^}}  for (int r = blockIdx.x; r < rows; r += gridDim.x) {
// CHECK-NEXT:  {{^}}    const int astra_inv = r * n;
// CHECK-NEXT:  {{^}}    const float astra_inv2 = __expf(r * s);
// CHECK-NEXT:  {{^}}    for (int i = threadIdx.x; i < n; i += blockDim.x)
// CHECK-NEXT:  {{^}}      y[astra_inv + i] = w[i] * astra_inv1 * astra_inv2;
__global__ void nested(float *__restrict__ y, const float *__restrict__ w, int rows, int n, float s, float t) {
  for (int r = blockIdx.x; r < rows; r += gridDim.x) {
    for (int i = threadIdx.x; i < n; i += blockDim.x)
      y[r * n + i] = w[i] * (s * t) * __expf(r * s);
  }
}
// EXPLAIN: hoist.cu:[[@LINE-3]]:9: hoist: fired: hoisted loop-invariant 'r * n' out of the loop at {{.*}}hoist.cu:[[@LINE-4]]:5 as 'astra_inv'
// EXPLAIN: hoist.cu:[[@LINE-4]]:39: hoist: fired: hoisted loop-invariant '__expf(r * s)' out of the loop at {{.*}}hoist.cu:[[@LINE-5]]:5 as 'astra_inv2'
// EXPLAIN: hoist.cu:[[@LINE-5]]:29: hoist: fired: hoisted loop-invariant '(s * t)' out of the loop at {{.*}}hoist.cu:[[@LINE-7]]:3 as 'astra_inv1'

// Division by a loop-invariant float: kept without --fast-math (x / norm
// and x * (1 / norm) round differently); with it, the reciprocal is
// computed once and the division becomes a multiply (an rcp and no div
// in the kernel's PTX).
// CHECK-LABEL: {{^}}__global__ void normalize(
// CHECK-NEXT:  {{^}}                          float norm, int n) {
// CHECK-NEXT:  {{^}}  for (int i = threadIdx.x; i < n; i += blockDim.x)
// CHECK-NEXT:  {{^}}    y[i] = x[i] / norm;
// FAST-LABEL:  {{^}}__global__ void normalize(
// FAST-NEXT:   {{^}}                          float norm, int n) {
// FAST-NEXT:   {{^}}  const float astra_rcp = 1.0f / norm;
// FAST-NEXT:   {{^}}  for (int i = threadIdx.x; i < n; i += blockDim.x)
// FAST-NEXT:   {{^}}    y[i] = x[i] * astra_rcp;
// PTX-FAST-LABEL: .entry _Z9normalizePfPKffi(
// PTX-FAST-NOT:   div.rn.f32
// PTX-FAST:       rcp.rn.f32
// PTX-FAST-NOT:   div.rn.f32
// PTX-FAST:       ret;
__global__ void normalize(float *__restrict__ y, const float *__restrict__ x,
                          float norm, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    y[i] = x[i] / norm;
}
// EXPLAIN: hoist.cu:[[@LINE-2]]:17: hoist: not applied: 'x[i] / norm' divides by a loop-invariant value; a multiply by its reciprocal computed once needs --fast-math (it rounds differently)
// FAST-EXPLAIN: hoist.cu:[[@LINE-3]]:17: hoist: fired: division by loop-invariant 'norm' is now a multiply by its reciprocal 'astra_rcp', computed once before the loop at {{.*}}hoist.cu:[[@LINE-4]]:3 (fast-math: the result may differ in the last bit)

// A compound division by a sum. Without --fast-math only the divisor is
// computed once; with it, its reciprocal is, and the division multiplies.
// CHECK-LABEL: {{^}}__global__ void scale_down(
// CHECK-NEXT:  {{^}}  const float astra_inv = d + 1.f;
// CHECK-NEXT:  {{^}}  for (int i = threadIdx.x; i < n; i += blockDim.x)
// CHECK-NEXT:  {{^}}    y[i] /= astra_inv;
// FAST-LABEL:  {{^}}__global__ void scale_down(
// FAST-NEXT:   {{^}}  const float astra_rcp = 1.0f / (d + 1.f);
// FAST-NEXT:   {{^}}  for (int i = threadIdx.x; i < n; i += blockDim.x)
// FAST-NEXT:   {{^}}    y[i] *= astra_rcp;
__global__ void scale_down(float *__restrict__ y, float d, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    y[i] /= d + 1.f;
}
// EXPLAIN: hoist.cu:[[@LINE-2]]:10: hoist: not applied: 'y[i] /= d + 1.f' divides by a loop-invariant value; a multiply by its reciprocal computed once needs --fast-math (it rounds differently)
// EXPLAIN: hoist.cu:[[@LINE-3]]:13: hoist: fired: hoisted loop-invariant 'd + 1.f' out of the loop at {{.*}}hoist.cu:[[@LINE-4]]:3 as 'astra_inv'
// FAST-EXPLAIN: hoist.cu:[[@LINE-4]]:10: hoist: fired: division by loop-invariant 'd + 1.f' is now a multiply by its reciprocal 'astra_rcp', computed once before the loop at {{.*}}hoist.cu:[[@LINE-5]]:3

// A loop that may run zero times (n <= threadIdx.x): the original then
// never loads w[row] nor divides by g, so neither is hoisted; the index
// arithmetic, which cannot trap, is. With hoist.speculate-loads=1 the load
// is hoisted too, the division still not.
// CHECK-LABEL: {{^}}__global__ void maybe_zero(
// CHECK-NEXT:  {{^}}                           int n, int g) {
// CHECK-NEXT:  {{^}}  const int row = blockIdx.x;
// CHECK-NEXT:  {{^}}  const int astra_inv = row * n;
// CHECK-NEXT:  {{^}}  for (int i = threadIdx.x; i < n; i += blockDim.x)
// CHECK-NEXT:  {{^}}    out[astra_inv + i] = w[row] * (n / g) + i;
// SPEC-LABEL:  {{^}}__global__ void maybe_zero(
// SPEC-NEXT:   {{^}}                           int n, int g) {
// SPEC-NEXT:   {{^}}  const int row = blockIdx.x;
// SPEC-NEXT:   {{^}}  const int astra_inv = row * n;
// SPEC-NEXT:   {{^}}  const float astra_inv1 = w[row];
// SPEC-NEXT:   {{^}}  for (int i = threadIdx.x; i < n; i += blockDim.x)
// SPEC-NEXT:   {{^}}    out[astra_inv + i] = astra_inv1 * (n / g) + i;
__global__ void maybe_zero(float *__restrict__ out, const float *__restrict__ w,
                           int n, int g) {
  const int row = blockIdx.x;
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    out[row * n + i] = w[row] * (n / g) + i;
}
// EXPLAIN: hoist.cu:[[@LINE-2]]:24: hoist: not applied: 'w[row] * (n / g)' is loop-invariant but divides by a value that may be zero; it is evaluated only if the loop runs, which it may not, so hoisting it could add a division by zero
// EXPLAIN: hoist.cu:[[@LINE-3]]:9: hoist: fired: hoisted loop-invariant 'row * n' out of the loop at {{.*}}hoist.cu:[[@LINE-4]]:3 as 'astra_inv'

// In the loop's condition, which runs whenever the loop is reached, a load
// and a division are hoisted.
// CHECK-LABEL: {{^}}__global__ void in_condition(
// CHECK-NEXT:  {{^}}  int i = threadIdx.x;
// CHECK-NEXT:  {{^}}  const int astra_inv = len[blockIdx.x] / g;
// CHECK-NEXT:  {{^}}  while (i < astra_inv) {
__global__ void in_condition(float *__restrict__ y, const int *__restrict__ len, int g) {
  int i = threadIdx.x;
  while (i < len[blockIdx.x] / g) {
    y[i] = 1.f;
    i += blockDim.x;
  }
}
// EXPLAIN: hoist.cu:[[@LINE-5]]:14: hoist: fired: hoisted loop-invariant 'len[blockIdx.x] / g' out of the loop at {{.*}}hoist.cu:[[@LINE-5]]:3 as 'astra_inv'

// Loads the loop may change: acc is written by the kernel (here, in the
// loop itself); x is never written, but it is not __restrict__ and the loop
// stores through acc, which may alias it. Nothing changes.
// CHECK-LABEL: {{^}}__global__ void accumulate(
// CHECK-NEXT:  {{^}}  for (int i = threadIdx.x; i < n; i += blockDim.x)
// CHECK-NEXT:  {{^}}    acc[i] += acc[blockIdx.x] * x[blockIdx.x];
__global__ void accumulate(float *acc, const float *x, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    acc[i] += acc[blockIdx.x] * x[blockIdx.x];
}
// EXPLAIN: hoist.cu:[[@LINE-2]]:15: hoist: not applied: 'acc[blockIdx.x]' reads 'acc', which the kernel writes; the value may change between iterations, so the load stays in the loop
// EXPLAIN: hoist.cu:[[@LINE-3]]:33: hoist: not applied: 'x[blockIdx.x]' reads 'x', which the kernel never writes, but the loop stores through pointers that may alias it; declare 'x' __restrict__ (the restrict-const pass does) to hoist it

// A shared scalar across a barrier in the loop: another thread may change
// it there. Without the barrier it is hoisted.
// CHECK-LABEL: {{^}}__global__ void shared_scalar(
// CHECK:       {{^}}  for (int i = 0; i < 4; ++i) {
// CHECK-NEXT:  {{^}}    y[i] = s * 2.f;
// CHECK:       {{^}}  const float astra_inv = s * 3.f;
// CHECK-NEXT:  {{^}}  for (int i = 0; i < 4; ++i)
// CHECK-NEXT:  {{^}}    y[i + 4] = astra_inv;
__global__ void shared_scalar(float *__restrict__ y) {
  __shared__ float s;
  if (threadIdx.x == 0)
    s = y[8];
  __syncthreads();
  for (int i = 0; i < 4; ++i) {
    y[i] = s * 2.f;
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i)
    y[i + 4] = s * 3.f;
}
// EXPLAIN: hoist.cu:[[@LINE-7]]:3: hoist: not applied: no loop-invariant work worth hoisting
// EXPLAIN: hoist.cu:[[@LINE-3]]:16: hoist: fired: hoisted loop-invariant 's * 3.f' out of the loop at {{.*}}hoist.cu:[[@LINE-4]]:3 as 'astra_inv'

// A loop that is the body of an if gets braces to hold the declaration.
// CHECK-LABEL: {{^}}__global__ void guarded(
// CHECK-NEXT:  {{^}}  if (n > 0)
// CHECK-NEXT:  {{^}}    { const float astra_inv = s * s;
// CHECK-NEXT:  {{^}}    for (int i = threadIdx.x; i < n; i += blockDim.x)
// CHECK-NEXT:  {{^}}      y[i] = astra_inv; }
__global__ void guarded(float *__restrict__ y, int n, float s) {
  if (n > 0)
    for (int i = threadIdx.x; i < n; i += blockDim.x)
      y[i] = s * s;
}
// EXPLAIN: hoist.cu:[[@LINE-2]]:14: hoist: fired: hoisted loop-invariant 's * s' out of the loop at {{.*}}hoist.cu:[[@LINE-3]]:5 as 'astra_inv'

// A template: the declared type is auto, one text for every instantiation.
// CHECK-LABEL: {{^}}__global__ void shift(
// CHECK-NEXT:  {{^}}  const auto astra_inv = blockIdx.x * n;
// CHECK-NEXT:  {{^}}  for (int i = threadIdx.x; i < n; i += blockDim.x)
// CHECK-NEXT:  {{^}}    y[astra_inv + i] = x[i] + (T)1;
template <typename T>
__global__ void shift(T *__restrict__ y, const T *__restrict__ x, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    y[blockIdx.x * n + i] = x[i] + (T)1;
}
template __global__ void shift<float>(float *, const float *, int);
template __global__ void shift<int>(int *, const int *, int);
// EXPLAIN: hoist.cu:[[@LINE-4]]:7: hoist: fired: hoisted loop-invariant 'blockIdx.x * n' out of the loop at {{.*}}hoist.cu:[[@LINE-5]]:3 as 'astra_inv'

// The invariant text comes from a macro: it cannot be edited.
// CHECK-LABEL: {{^}}__global__ void with_macro(
// CHECK-NEXT:  {{^}}  for (int i = threadIdx.x; i < n; i += blockDim.x)
// CHECK-NEXT:  {{^}}    out[ROW_BASE + i] = 0.f;
#define ROW_BASE (blockIdx.x * n)
__global__ void with_macro(float *__restrict__ out, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    out[ROW_BASE + i] = 0.f;
}
// EXPLAIN: hoist.cu:[[@LINE-2]]:9: hoist: not applied: 'ROW_BASE' is loop-invariant but comes from a macro expansion; its text cannot be edited

// The step of a grid-stride or block-stride loop stays in the loop header:
// vectorize and grid-coarsen recognize those loops by it, and the special
// registers' product costs nothing per iteration.
__global__ void stride_steps(float *y, const float *x, int n, int d) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += blockDim.x * gridDim.x)
    y[i] = x[i] * 2.0f;
  for (int j = threadIdx.x; j < d; j += blockDim.x)
    y[j] += 1.0f;
}
// CHECK-LABEL: __global__ void stride_steps(
// CHECK-NEXT:  {{^}}  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
// CHECK-NEXT:  {{^}}       i += blockDim.x * gridDim.x)
// CHECK:       {{^}}  for (int j = threadIdx.x; j < d; j += blockDim.x)
// EXPLAIN: hoist.cu:[[@LINE-10]]:3: hoist: not applied: no loop-invariant work worth hoisting
// EXPLAIN: hoist.cu:[[@LINE-8]]:3: hoist: not applied: no loop-invariant work worth hoisting

// Helpers the kernel calls. Only scale_rows runs scale_row: hoisted in
// place; w points into the kernel's __restrict__, never written 'w' at
// every call, so w[0] leaves a loop that stores.
// CHECK-LABEL: {{^}}__device__ void scale_row(float *out, const float *x, const float *w, int n) {
// CHECK-NEXT:  {{^}}  const float astra_inv = w[0];
// CHECK-NEXT:  {{^}}  const float astra_inv1 = sqrtf(float(n));
// CHECK-NEXT:  {{^}}  for (int k = 0; k < 8; ++k)
// CHECK-NEXT:  {{^}}    out[k * n] = x[k * n] * astra_inv * astra_inv1;
__device__ void scale_row(float *out, const float *x, const float *w, int n) {
  for (int k = 0; k < 8; ++k)
    out[k * n] = x[k * n] * w[0] * sqrtf(float(n));
}
// EXPLAIN: hoist.cu:[[@LINE-2]]:29: hoist: fired: in helper 'scale_row' (called from the kernel at {{.*}}hoist.cu:[[@LINE+4]]:3): hoisted loop-invariant 'w[0]' out of the loop at {{.*}}hoist.cu:[[@LINE-3]]:3 as 'astra_inv'
// EXPLAIN: hoist.cu:[[@LINE-3]]:36: hoist: fired: in helper 'scale_row' {{.*}}: hoisted loop-invariant 'sqrtf(float(n))' out of the loop at {{.*}}hoist.cu:[[@LINE-4]]:3 as 'astra_inv1'
__global__ void scale_rows(float *__restrict__ out, const float *__restrict__ x,
                           const float *__restrict__ w, int n) {
  scale_row(out + blockIdx.x, x + blockIdx.x, w, n);
}

// Two kernels share bias_row: each gets a copy. bias_b passes the buffer it
// writes as w, so its copy keeps w[0] in the loop.
// CHECK-LABEL: {{^}}__device__ void bias_row(float *out, const float *w, int n) {
// CHECK-NEXT:  {{^}}  for (int k = 0; k < 8; ++k)
// CHECK-NEXT:  {{^}}    out[k * n] += w[0] * expf(float(n));
// CHECK-NEXT:  {{^}}}
// CHECK-EMPTY:
// CHECK-NEXT:  {{^}}__device__ void bias_row_astra_bias_a(float *out, const float *w, int n) {
// CHECK-NEXT:  {{^}}  const float astra_inv = w[0] * expf(float(n));
// CHECK-NEXT:  {{^}}  for (int k = 0; k < 8; ++k)
// CHECK-NEXT:  {{^}}    out[k * n] += astra_inv;
// CHECK-NEXT:  {{^}}}
// CHECK-EMPTY:
// CHECK-NEXT:  {{^}}__device__ void bias_row_astra_bias_b(float *out, const float *w, int n) {
// CHECK-NEXT:  {{^}}  const float astra_inv = expf(float(n));
// CHECK-NEXT:  {{^}}  for (int k = 0; k < 8; ++k)
// CHECK-NEXT:  {{^}}    out[k * n] += w[0] * astra_inv;
__device__ void bias_row(float *out, const float *w, int n) {
  for (int k = 0; k < 8; ++k)
    out[k * n] += w[0] * expf(float(n));
}
// CHECK-LABEL: {{^}}__global__ void bias_a(
// CHECK-NEXT:  {{^}}  bias_row_astra_bias_a(out + blockIdx.x, w, n);
__global__ void bias_a(float *__restrict__ out, const float *__restrict__ w, int n) {
  bias_row(out + blockIdx.x, w, n);
}
// EXPLAIN: hoist.cu:[[@LINE-7]]:19: hoist: fired: in helper 'bias_row' (called from the kernel at {{.*}}hoist.cu:[[@LINE-2]]:3; its changes go into a copy, 'bias_row_astra_bias_a', because the kernel 'bias_b' also calls it (at {{.*}})): hoisted loop-invariant 'w[0] * expf(float(n))' out of the loop at {{.*}}hoist.cu:[[@LINE-8]]:3 as 'astra_inv'
// CHECK-LABEL: {{^}}__global__ void bias_b(
// CHECK-NEXT:  {{^}}  bias_row_astra_bias_b(out + blockIdx.x, out, n);
__global__ void bias_b(float *out, int n) {
  bias_row(out + blockIdx.x, out, n);
}
// EXPLAIN: hoist.cu:[[@LINE-13]]:19: hoist: not applied: in helper 'bias_row' (called from the kernel at {{.*}}hoist.cu:[[@LINE-2]]:3; its changes go into a copy, 'bias_row_astra_bias_b', because the kernel 'bias_a' also calls it (at {{.*}})): 'w[0]' reads 'w', which is not known to point into kernel parameters the kernel never writes at every call; the value may change between iterations, so the load stays in the loop

// A template helper only the template kernel calls: in place, `auto`, every
// instantiation agreeing.
// CHECK-LABEL: {{^}}__device__ T axpy_sum(const T *x, T a, int n) {
// CHECK-NEXT:  {{^}}  T s = 0;
// CHECK-NEXT:  {{^}}  const auto astra_inv = (a * a);
// CHECK-NEXT:  {{^}}  for (int k = 0; k < n; ++k)
// CHECK-NEXT:  {{^}}    s += x[k] * astra_inv;
template <typename T>
__device__ T axpy_sum(const T *x, T a, int n) {
  T s = 0;
  for (int k = 0; k < n; ++k)
    s += x[k] * (a * a);
  return s;
}
template <typename T>
__global__ void axpy_k(T *__restrict__ y, const T *__restrict__ x, T a, int n) {
  y[blockIdx.x] = axpy_sum(x + blockIdx.x * n, a, n);
}
template __global__ void axpy_k<float>(float *, const float *, float, int);
template __global__ void axpy_k<double>(double *, const double *, double, int);

// A __host__ __device__ helper host code calls: a __device__ copy.
// CHECK-LABEL: {{^}}__host__ __device__ inline float poly(float x, const float *c) {
// CHECK:       {{^}}__device__ inline float poly_astra_poly_k(float x, const float *c) {
// CHECK-NEXT:  {{^}}  float s = 0.f;
// CHECK-NEXT:  {{^}}  const float astra_inv = expf(x);
// CHECK-NEXT:  {{^}}  for (int k = 0; k < 4; ++k)
// CHECK-NEXT:  {{^}}    s = s * x + c[k] * astra_inv;
__host__ __device__ inline float poly(float x, const float *c) {
  float s = 0.f;
  for (int k = 0; k < 4; ++k)
    s = s * x + c[k] * expf(x);
  return s;
}
// CHECK: {{^}}  y[threadIdx.x] = poly_astra_poly_k(y[threadIdx.x], c);
__global__ void poly_k(float *__restrict__ y, const float *__restrict__ c) {
  y[threadIdx.x] = poly(y[threadIdx.x], c);
}
float poly_host(float x, const float *c) { return poly(x, c); }
