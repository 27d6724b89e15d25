// init-spec on fused_add_rmsnorm (bf16): the residual is read and written
// in place, so it is inout; input is read (for the sum) and written (the
// normalized result), so it is inout too; weight is only read.
// RUN: %clang-astra init-spec %s --kernel fused_add_rmsnorm -o - | FileCheck %s
// RUN: %clang-astra init-spec %s --kernel fill -o - | FileCheck %s --check-prefix=FILL
// Both kernels in one draft, in the order named.
// RUN: %clang-astra init-spec %s --kernel fill --kernel fused_add_rmsnorm -o - | FileCheck %s --check-prefix=BOTH

#include <cuda_bf16.h>

// CHECK-LABEL: "fused_add_rmsnorm": {
// CHECK-NEXT:   // {{.*}}init-spec-inplace.cu:[[@LINE+16]]:17
// CHECK:        "default": {
// CHECK-NEXT:     "hidden": "TODO"  // parameter 'hidden' (int)
// CHECK-NEXT:   }
// Accesses through the local aliases x and r count for input and residual.
// CHECK:        "args": {
// CHECK-NEXT:     "input": {"dtype": "bf16", "count": "TODO", "role": "inout", "init": "normal(0, 1)"},  // __nv_bfloat16 *__restrict: written and read (in place)
// CHECK-NEXT:     "residual": {"dtype": "bf16", "count": "TODO", "role": "inout", "init": "normal(0, 1)"},  // __nv_bfloat16 *__restrict: written and read (in place)
// CHECK-NEXT:     "weight": {"dtype": "bf16", "count": "TODO", "role": "input", "init": "normal(0, 1)"},  // const __nv_bfloat16 *__restrict: never written
// CHECK-NEXT:     "hidden": {"value": "hidden"},  // int: the shape variable 'hidden'
// CHECK-NEXT:     "eps": {"value": "TODO"}  // float: TODO: a realistic value
// CHECK-NEXT:   },
// CHECK-NEXT:   "launch": {"grid": "TODO", "block": "TODO", "shmem": "0"},  // TODO: no launch in this file
// BOTH-LABEL: "fill": {
// BOTH-LABEL: "fused_add_rmsnorm": {
// BOTH:         "input": {"dtype": "bf16", "count": "TODO", "role": "inout"
__global__ void fused_add_rmsnorm(__nv_bfloat16 *__restrict__ input,
                                  __nv_bfloat16 *__restrict__ residual,
                                  const __nv_bfloat16 *__restrict__ weight,
                                  int hidden, float eps) {
  __shared__ float total;
  const int row = blockIdx.x;
  __nv_bfloat16 *x = input + row * hidden;
  __nv_bfloat16 *r = residual + row * hidden;
  float sum = 0.f;
  for (int i = threadIdx.x; i < hidden; i += blockDim.x) {
    float v = __bfloat162float(x[i]) + __bfloat162float(r[i]);
    r[i] = __float2bfloat16(v);
    sum += v * v;
  }
  if (threadIdx.x == 0)
    total = 0.f;
  __syncthreads();
  atomicAdd(&total, sum);
  __syncthreads();
  float scale = rsqrtf(total / hidden + eps);
  for (int i = threadIdx.x; i < hidden; i += blockDim.x)
    x[i] = __float2bfloat16(__bfloat162float(r[i]) * scale *
                            __bfloat162float(weight[i]));
}

// Written only: an output, with no init (an output starts poisoned).
// FILL-LABEL: "fill": {
// FILL-NEXT:    // {{.*}}init-spec-inplace.cu:[[@LINE+6]]:17
// FILL:         "args": {
// FILL-NEXT:      "out": {"dtype": "bf16", "count": "TODO", "role": "output"},  // __nv_bfloat16 *: written, never read
// FILL-NEXT:      "n": {"value": "n"}  // int: the shape variable 'n'
// FILL-NEXT:    },
// FILL-NOT:     fused_add_rmsnorm
__global__ void fill(__nv_bfloat16 *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = __float2bfloat16(1.f);
}

// Read and written only through a local array of pointers (as thread-coarsen
// writes them): still inout, not an output (a pointer stored into the array
// counts as read, and the array as an alias of it).
// RUN: %clang-astra init-spec %s --kernel twice_rows -o - | FileCheck %s --check-prefix=ARRAY
// ARRAY-LABEL: "twice_rows": {
// ARRAY:         "y": {"dtype": "f32", "count": "TODO", "role": "inout", "init": "normal(0, 1)"},  // float *: written and read (in place)
__global__ void twice_rows(float *y, int n) {
  float *rows[2];
  rows[0] = y;
  rows[1] = y + n;
  for (int k = 0; k < 2; ++k)
    rows[k][threadIdx.x] = 2.f * rows[k][threadIdx.x];
}
