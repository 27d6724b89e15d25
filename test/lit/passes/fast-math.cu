// fast-math: CUDA fast intrinsics for float math, __fdividef, rsqrtf, and
// float literals in expressions narrowed to float.
// RUN: rm -rf %t.dir && mkdir -p %t.dir/Inputs
// RUN: cp %s %t.dir/fm.cu && cp %S/Inputs/fast-math.cuh %t.dir/Inputs/
// RUN: %clang-astra rewrite --passes=fast-math -i %t.dir/fm.cu -- -std=c++17
// RUN: FileCheck %s < %t.dir/fm.cu
// RUN: FileCheck %s --check-prefix=HEADER < %t.dir/Inputs/fast-math.cuh
// RUN: %nvptx-compile %t.dir/fm.cu | FileCheck %s --check-prefix=PTX
// Host code still compiles (the __host__ __device__ helper's copy is
// __device__ only).
// RUN: %cuda-syntax-check %t.dir/fm.cu
// RUN: %clang-astra rewrite --passes=fast-math --explain %s -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=EXPLAIN
// RUN: %clang-astra rewrite --passes=fast-math --allow-double %s -- -std=c++17 > %t.double.cu
// RUN: FileCheck %s --check-prefix=DOUBLE < %t.double.cu
// RUN: %nvptx-compile -I %S %t.double.cu | FileCheck %s --check-prefix=PTX
// RUN: %clang-astra rewrite --passes=fast-math --pass-opt=fast-math.pow=1 %s -- -std=c++17 | FileCheck %s --check-prefix=POW
// A second run changes nothing more (the output is a fixed point).
// RUN: %clang-astra rewrite --passes=fast-math %t.dir/fm.cu -- -std=c++17 > %t.again.cu
// RUN: diff %t.dir/fm.cu %t.again.cu
// PTX: .visible .entry

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cmath>

#include "Inputs/fast-math.cuh"
// HEADER: {{^}}    y[i] = 0.5f * v * (1.0f + tanhf(u)) * __expf(-v * v / 8.0f);
// EXPLAIN: fast-math.cuh:10:{{[0-9]+}}: fast-math: not applied: dividing by the power of two '8.0f' is exact
// The header's kernel calls its copy of the header's helper:
// HEADER: {{^}}__device__ inline float decay(float v) { return expf(-v); }
// HEADER-EMPTY:
// HEADER-NEXT: {{^}}__device__ inline float decay_astra_decay_all(float v) { return __expf(-v); }
// HEADER: {{^}}    y[i] = decay_astra_decay_all(y[i]);
// EXPLAIN: fast-math.cuh:[[#DECAY:]]:{{[0-9]+}}: fast-math: fired: in helper 'decay' (called from the kernel at {{.*}}fast-math.cuh:{{[0-9]+}}:12; its changes go into a copy, 'decay_astra_decay_all', because it is defined in the header '{{.*}}fast-math.cuh', which other files may include): 'expf' -> '__expf'
// EXPLAIN: fast-math.cuh:[[#DECAY+5]]:12: fast-math: fired: the call of 'decay' now calls 'decay_astra_decay_all', the kernel's copy of it
// EXPLAIN: fast-math.cuh:[[#DECAY]]:25: fast-math: fired: helper 'decay' cloned as 'decay_astra_decay_all' (placed after it) for the kernel because it is defined in the header

// silu_and_mul: bf16 in and out, fp32 math.
// CHECK-LABEL: {{^}}__global__ void silu_and_mul(
__global__ void silu_and_mul(__nv_bfloat16 *out, const __nv_bfloat16 *in, int d) {
  const int t = blockIdx.x;
  for (int j = threadIdx.x; j < d; j += blockDim.x) {
    float x = __bfloat162float(in[t * 2 * d + j]);
    float y = __bfloat162float(in[t * 2 * d + d + j]);
    // CHECK: {{^}}    float s = __fdividef(x, (1.0f + __expf(-x)));
    float s = x / (1.0f + expf(-x));
    // EXPLAIN: fast-math.cu:[[@LINE-1]]:17: fast-math: fired: 'x / (1.0f + expf(-x))' -> '__fdividef(...)'
    // EXPLAIN: fast-math.cu:[[@LINE-2]]:27: fast-math: fired: 'expf' -> '__expf'
    out[t * d + j] = __float2bfloat16(s * y);
  }
}

// rmsnorm with half I/O: 1/sqrt becomes rsqrtf, the inner division
// __fdividef, and the double literal in a float expression float.
// CHECK-LABEL: {{^}}__global__ void rmsnorm_half(
__global__ void rmsnorm_half(__half *out, const __half *in, const __half *w,
                             int h, float eps) {
  __shared__ float total;
  const __half *row = in + blockIdx.x * h;
  float acc = 0.f;
  for (int j = threadIdx.x; j < h; j += blockDim.x) {
    float v = __half2float(row[j]);
    acc += v * v;
  }
  if (threadIdx.x == 0)
    total = 0.f;
  __syncthreads();
  atomicAdd(&total, acc);
  __syncthreads();
  // CHECK: {{^}}  float inv = rsqrtf(__fdividef(total, h) + eps);
  float inv = 1.0f / sqrtf(total / h + eps);
  // EXPLAIN: fast-math.cu:[[@LINE-1]]:20: fast-math: fired: '1.0f / sqrtf(total / h + eps)' -> 'rsqrtf(...)'
  for (int j = threadIdx.x; j < h; j += blockDim.x)
    // CHECK: {{^}}    out[blockIdx.x * h + j] = __float2half(__half2float(row[j]) * inv * __half2float(w[j]) * 1.0f);
    out[blockIdx.x * h + j] = __float2half(__half2float(row[j]) * inv * __half2float(w[j]) * 1.0);
}

// The float overloads of the C++ names and std:: spellings; powf with a
// positive constant base, __powf refused for an unknown base; a power-of-two
// divisor left alone.
// CHECK-LABEL: {{^}}__global__ void softplus_mix(
__global__ void softplus_mix(float *y, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float v = x[i];
  // CHECK: {{^}}  float a = __logf(1.0f + __expf(v)) + __sinf(v) * __cosf(v) + __tanf(v);
  float a = log(1.0f + std::exp(v)) + sinf(v) * cos(v) + tanf(v);
  // CHECK: {{^}}  float b = __powf(2.0f, v) + powf(v, 3.0f) + v / 4.0f;
  // POW: {{^}}  float b = __powf(2.0f, v) + __powf(v, 3.0f) + v / 4.0f;
  float b = powf(2.0f, v) + powf(v, 3.0f) + v / 4.0f;
  // EXPLAIN: fast-math.cu:[[@LINE-1]]:29: fast-math: not applied: 'powf(v, ...)': __powf returns NaN for a negative base
  // EXPLAIN: fast-math.cu:[[@LINE-2]]:47: fast-math: not applied: dividing by the power of two '4.0f'
  y[i] = a * b;
}

// Double literals in float math: narrowed when the result is float anyway,
// and only then; `exp` of a float-times-double becomes __expf of floats.
// CHECK-LABEL: {{^}}__global__ void literals(
__global__ void literals(float *y, const float *x, double *z, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float v = x[i];
  // CHECK: {{^}}  float a = v * 0.5f + 1e-3f;
  float a = v * 0.5 + 1e-3;
  // EXPLAIN: fast-math.cu:[[@LINE-1]]:13: fast-math: fired: 'v * 0.5 + 1e-3' is narrowed to float: now computed in float (0.5 -> 0.5f, 1e-3 -> 1e-3f)
  // CHECK: {{^}}  float b = __expf(v * 0.25f);
  float b = exp(v * 0.25);
  // The double result is kept: stored to a double.
  // CHECK: {{^}}  z[i] = v * 0.5;
  z[i] = v * 0.5;
  // A double variable takes part: the double math is intended.
  double scale = 3.0;
  // CHECK: {{^}}  float c = v * scale + 2.0;
  float c = v * scale + 2.0;
  // EXPLAIN: fast-math.cu:[[@LINE-1]]:13: fast-math: not applied: 'v * scale + 2.0' stays double: 'scale' is a double value
  // An integer variable would convert to float instead of double.
  // CHECK: {{^}}  float d = v * 0.5 + i;
  float d = v * 0.5 + i;
  // EXPLAIN: fast-math.cu:[[@LINE-1]]:13: fast-math: not applied: 'v * 0.5 + i' stays double: the integer 'i' would be converted to float instead of double
  // Outside float's range: stays.
  // CHECK: {{^}}  float e = v * 1e-300 + 1.0;
  float e = v * 1e-300 + 1.0;
  // EXPLAIN: fast-math.cu:[[@LINE-1]]:13: fast-math: not applied: 'v * 1e-300 + 1.0' stays double: the literal '1e-300' is outside float's normal range
  y[i] = a + b + c + d + e;
}

// Double math on double values: only with --allow-double. expf of a double
// argument narrows it, so it is refused too.
// CHECK-LABEL: {{^}}__global__ void double_math(
__global__ void double_math(double *y, const double *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    // CHECK: {{^}}    y[i] = exp(x[i]) + expf(x[i]);
    // DOUBLE: {{^}}    y[i] = __expf(x[i]) + __expf(x[i]);
    y[i] = exp(x[i]) + expf(x[i]);
  // EXPLAIN: fast-math.cu:[[@LINE-1]]:12: fast-math: not applied: 'exp' computes in double on the double value 'x[i]'; fast-math rewrites double math only with --allow-double
  // EXPLAIN: fast-math.cu:[[@LINE-2]]:24: fast-math: not applied: the argument 'x[i]' of 'expf' is a double value
}

// A user function named like the library one is not the library function;
// a call spelled by a macro is not edited.
namespace mymath {
__device__ float expf(float v) { return 1.0f + v; }
} // namespace mymath
#define FAST_EXP(v) expf(v)
// CHECK-LABEL: {{^}}__global__ void not_library(
__global__ void not_library(float *y, const float *x) {
  // CHECK: {{^}}  y[threadIdx.x] = mymath::expf(x[threadIdx.x]) + FAST_EXP(x[threadIdx.x]);
  y[threadIdx.x] = mymath::expf(x[threadIdx.x]) + FAST_EXP(x[threadIdx.x]);
  // EXPLAIN: fast-math.cu:[[@LINE-1]]:28: fast-math: not applied: 'mymath::expf' is a user function (declared at {{.*}}fast-math.cu:[[@LINE-7]]:18), not the CUDA math function
  // EXPLAIN: fast-math.cu:[[@LINE-2]]:51: fast-math: not applied: 'expf' is spelled inside a macro expansion
}

// Templates: fired where every instantiation computes in float; refused
// where one instantiation computes in double.
// CHECK-LABEL: {{^}}__global__ void scale_exp(
template <typename T>
__global__ void scale_exp(T *y, const T *x, float k, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    // CHECK: {{^}}    float e = __expf(k * float(x[i]));
    float e = expf(k * float(x[i]));
    // CHECK: {{^}}    y[i] = T(e * log(x[i]));
    y[i] = T(e * log(x[i]));
    // EXPLAIN: fast-math.cu:[[@LINE-1]]:18: fast-math: not applied: in scale_exp<double>: 'log' computes in double on the double value 'x[i]'
  }
}
template __global__ void scale_exp<float>(float *, const float *, float, int);
template __global__ void scale_exp<double>(double *, const double *, float, int);

// Compound division of a plain variable.
// CHECK-LABEL: {{^}}__global__ void normalize(
__global__ void normalize(float *v, const float *norm, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float s = v[i];
  // CHECK: {{^}}  s = __fdividef(s, norm[0]);
  s /= norm[0];
  // Nested divisions share their first operand.
  // CHECK: {{^}}  s = __fdividef(__fdividef(s, norm[1]), norm[2]) * 3.0f;
  s = s / norm[1] / norm[2] * 3.0f;
  // CHECK: {{^}}  v[i] /= norm[0];
  v[i] /= norm[0];
  // EXPLAIN: fast-math.cu:[[@LINE-1]]:8: fast-math: not applied: 'v[i] /= norm[0]': '/=' is rewritten only when its left side is a plain variable
}

// Helpers the kernel calls (the header's kernel and its helper: at the top).
// Only swish calls sigmoid: rewritten in place.
// CHECK-LABEL: {{^}}__device__ __forceinline__ float sigmoid(float v) {
// CHECK-NEXT: {{^}}  return __fdividef(1.0f, (1.0f + __expf(-v)));
__device__ __forceinline__ float sigmoid(float v) {
  return 1.0f / (1.0f + expf(-v));
}
// CHECK-LABEL: {{^}}__global__ void swish(
// CHECK: {{^}}    y[i] = x[i] * sigmoid(x[i]) + ops::decay(x[i]);
__global__ void swish(float *y, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = x[i] * sigmoid(x[i]) + ops::decay(x[i]);
}
// EXPLAIN: fast-math.cu:[[@LINE-2]]:{{[0-9]+}}: fast-math: not applied: helper not rewritten: 'ops::decay' is defined in '{{.*}}fast-math.cuh', not in the file being rewritten
// EXPLAIN: fast-math.cu:[[@LINE-10]]:15: fast-math: fired: in helper 'sigmoid' (called from the kernel at {{.*}}fast-math.cu:[[@LINE-3]]:19): '1.0f / (1.0f + expf(-v))' -> '__fdividef(...)'
// EXPLAIN: fast-math.cu:[[@LINE-11]]:25: fast-math: fired: in helper 'sigmoid' {{.*}}: 'expf' -> '__expf'

// Two kernels call gelu: each gets its own copy right after the original,
// which stays as it was for the other. The copy of a recursive helper calls
// itself, and keeps its default argument.
// CHECK-LABEL: {{^}}__device__ float gelu(float x, int terms = 2) {
// CHECK-NEXT: {{^}}  return terms == 0 ? x : 0.5f * x * expf(-x * x) + gelu(x, terms - 1);
// CHECK-NEXT: {{^}}}
// CHECK-EMPTY:
// CHECK-NEXT: {{^}}__device__ float gelu_astra_gelu_a(float x, int terms = 2) {
// CHECK-NEXT: {{^}}  return terms == 0 ? x : 0.5f * x * __expf(-x * x) + gelu_astra_gelu_a(x, terms - 1);
// CHECK-NEXT: {{^}}}
// CHECK-EMPTY:
// CHECK-NEXT: {{^}}__device__ float gelu_astra_gelu_b(float x, int terms = 2) {
// CHECK-NEXT: {{^}}  return terms == 0 ? x : 0.5f * x * __expf(-x * x) + gelu_astra_gelu_b(x, terms - 1);
// CHECK-NEXT: {{^}}}
__device__ float gelu(float x, int terms = 2) {
  return terms == 0 ? x : 0.5f * x * expf(-x * x) + gelu(x, terms - 1);
}
// CHECK-LABEL: {{^}}__global__ void gelu_a(
// CHECK: {{^}}    y[i] = gelu_astra_gelu_a(x[i]);
__global__ void gelu_a(float *y, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = gelu(x[i]);
}
// EXPLAIN: fast-math.cu:[[@LINE-9]]:38: fast-math: fired: in helper 'gelu' (called from the kernel at {{.*}}fast-math.cu:[[@LINE-2]]:12; its changes go into a copy, 'gelu_astra_gelu_a', because the kernel 'gelu_b' also calls it (at {{.*}}fast-math.cu:[[@LINE+8]]:19)): 'expf' -> '__expf'
// EXPLAIN: fast-math.cu:[[@LINE-3]]:12: fast-math: fired: the call of 'gelu' now calls 'gelu_astra_gelu_a', the kernel's copy of it
// EXPLAIN: fast-math.cu:[[@LINE-12]]:18: fast-math: fired: helper 'gelu' cloned as 'gelu_astra_gelu_a' (placed after it) for the kernel because the kernel 'gelu_b' also calls it
// CHECK-LABEL: {{^}}__global__ void gelu_b(
// CHECK: {{^}}    y[i] = 2.0f * gelu_astra_gelu_b(x[i], 3);
__global__ void gelu_b(float *y, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = 2.0f * gelu(x[i], 3);
}

// A __host__ __device__ helper that host code calls too: the kernel's copy
// is __device__ only (the intrinsics do not exist on the host).
// CHECK-LABEL: {{^}}__host__ __device__ float softplus(float v) {
// CHECK-NEXT: {{^}}  return logf(1.0f + expf(v));
// CHECK-NEXT: {{^}}}
// CHECK-EMPTY:
// CHECK-NEXT: {{^}}__device__ float softplus_astra_softplus_all(float v) {
// CHECK-NEXT: {{^}}  return __logf(1.0f + __expf(v));
__host__ __device__ float softplus(float v) {
  return logf(1.0f + expf(v));
}
// CHECK-LABEL: {{^}}__global__ void softplus_all(
// CHECK: {{^}}    y[i] = softplus_astra_softplus_all(y[i]);
__global__ void softplus_all(float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = softplus(y[i]);
}
// EXPLAIN: fast-math.cu:[[@LINE-9]]:10: fast-math: fired: in helper 'softplus' (called from the kernel at {{.*}}:[[@LINE-2]]:12; its changes go into a copy, 'softplus_astra_softplus_all', because it is __host__ __device__ (host code keeps the original, and the copy is __device__ only)): 'logf' -> '__logf'
float softplus_on_host(float v) { return softplus(v); }

// Template helpers are judged on the instantiations the kernel reaches:
// exp_float reaches exp_of<float> only, where expf takes a float; the
// other kernel's exp_of<double> would narrow a double, so the helper is
// shared and the float kernel gets a copy.
// CHECK-LABEL: {{^}}template <typename T> __device__ float exp_of(T v) { return expf(v); }
// CHECK-EMPTY:
// CHECK-NEXT: {{^}}template <typename T> __device__ float exp_of_astra_exp_float(T v) { return __expf(v); }
template <typename T> __device__ float exp_of(T v) { return expf(v); }
// CHECK-LABEL: {{^}}__global__ void exp_float(
// CHECK: {{^}}  y[threadIdx.x] = exp_of_astra_exp_float(y[threadIdx.x]);
__global__ void exp_float(float *y) {
  y[threadIdx.x] = exp_of(y[threadIdx.x]);
}
// CHECK-LABEL: {{^}}__global__ void exp_double(
// CHECK: {{^}}  y[threadIdx.x] = exp_of(y[threadIdx.x]);
__global__ void exp_double(double *y) {
  y[threadIdx.x] = exp_of(y[threadIdx.x]);
}
// EXPLAIN: fast-math.cu:[[@LINE-11]]:{{[0-9]+}}: fast-math: fired: in helper 'exp_of' (called from the kernel at {{.*}}; its changes go into a copy, 'exp_of_astra_exp_float', because the kernel 'exp_double' also calls it (at {{.*}})): 'expf' -> '__expf'
// EXPLAIN: fast-math.cu:[[@LINE-12]]:{{[0-9]+}}: fast-math: not applied: in helper 'exp_of' (called from the kernel at {{.*}}; its changes go into a copy, 'exp_of_astra_exp_double', because the kernel 'exp_float' also calls it (at {{.*}})): in exp_of<double>: the argument 'v' of 'expf' is a double value

// A template kernel reaches a template helper through a forward declaration
// in a namespace; only the kernel calls them: rewritten in place, judged on
// both instantiations.
// CHECK-LABEL: {{^}}namespace act {
// CHECK-NEXT: {{^}}template <typename T> __device__ T silu(T x);
// CHECK-NEXT: {{^}}}
namespace act {
template <typename T> __device__ T silu(T x);
}
// CHECK-LABEL: {{^}}__global__ void silu_kernel(
// CHECK: {{^}}    y[i] = act::silu(x[i]);
template <typename T>
__global__ void silu_kernel(T *y, const T *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = act::silu(x[i]);
}
template __global__ void silu_kernel<float>(float *, const float *, int);
template __global__ void silu_kernel<__half>(__half *, const __half *, int);
// CHECK-LABEL: {{^}}template <typename T> __device__ T act::silu(T x) {
// CHECK-NEXT: {{^}}  return T(__fdividef(float(x), (1.0f + __expf(-float(x)))));
template <typename T> __device__ T act::silu(T x) {
  return T(float(x) / (1.0f + expf(-float(x))));
}
// EXPLAIN: fast-math.cu:[[@LINE-2]]:21: fast-math: fired: in helper 'silu' (called from the kernel at {{.*}}fast-math.cu:[[@LINE-9]]:12): 'float(x) / (1.0f + expf(-float(x)))' -> '__fdividef(...)'

// A helper that must be copied but cannot be: the calls are spelled in a
// macro, so they could not be renamed. Left as it is, with the reason.
// CHECK-LABEL: {{^}}__device__ float erf_like(float v) { return 1.0f - expf(-v * v); }
// CHECK-NEXT: {{^}}#define ERF_LIKE(v) erf_like(v)
__device__ float erf_like(float v) { return 1.0f - expf(-v * v); }
#define ERF_LIKE(v) erf_like(v)
__global__ void erf_a(float *y) { y[threadIdx.x] = ERF_LIKE(y[threadIdx.x]); }
// EXPLAIN: fast-math.cu:[[@LINE-1]]:52: fast-math: not applied: helper 'erf_like' is left as it is: the kernel 'erf_b' also calls it (at {{.*}}fast-math.cu:[[@LINE+1]]:52), so a change would go into a copy for the kernel, but the call at {{.*}}fast-math.cu:[[@LINE-1]]:52 is spelled inside a macro expansion
__global__ void erf_b(float *y) { y[threadIdx.x] = ERF_LIKE(y[threadIdx.x]); }

// A member function is not reached.
struct Scaler {
  float k;
  __device__ float operator()(float v) const { return expf(k * v); }
};
__global__ void scale_all(float *y, float k) { y[threadIdx.x] = Scaler{k}(y[threadIdx.x]); }
// EXPLAIN: fast-math.cu:[[@LINE-1]]:{{[0-9]+}}: fast-math: not applied: helper not rewritten: 'Scaler::operator()' is a member function; passes reach free functions only
