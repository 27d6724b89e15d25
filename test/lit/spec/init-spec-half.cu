// init-spec on a __half kernel: f16 buffers, a float scalar left as TODO,
// no launch in the file (grid and block TODO). 'in' is read through a
// helper; being const, it is an input.
// RUN: %clang-astra init-spec %s --kernel scale_half -o - | FileCheck %s

#include <cuda_fp16.h>

__device__ float load(const __half *p, int i) { return __half2float(p[i]); }

// CHECK-LABEL: "scale_half": {
// CHECK-NEXT:   // {{.*}}init-spec-half.cu:[[@LINE+13]]:17
// CHECK:        "default": {
// CHECK-NEXT:     "n": "TODO"  // parameter 'n' (int)
// CHECK-NEXT:   }
// CHECK:        "args": {
// CHECK-NEXT:     "out": {"dtype": "f16", "count": "TODO", "role": "output"},  // __half *: written, never read
// CHECK-NEXT:     "in": {"dtype": "f16", "count": "TODO", "role": "input", "init": "normal(0, 1)"},  // const __half *: never written
// A float scalar is no shape variable: its value is a TODO.
// CHECK-NEXT:     "s": {"value": "TODO"},  // float: TODO: a realistic value
// CHECK-NEXT:     "n": {"value": "n"}  // int: the shape variable 'n'
// CHECK-NEXT:   },
// CHECK-NEXT:   "launch": {"grid": "TODO", "block": "TODO", "shmem": "0"},  // TODO: no launch in this file; grid and block as expressions over the shape variables
// CHECK-NEXT:   "bytes": "auto",
__global__ void scale_half(__half *out, const __half *in, float s, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += blockDim.x * gridDim.x)
    out[i] = __float2half(s * load(in, i));
}
