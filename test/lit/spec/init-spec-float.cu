// init-spec on a float kernel with a launch site: dtypes from the pointees,
// roles from what the kernel writes, n a shape variable, the launch as
// written in terms of it.
// RUN: %clang-astra init-spec %s --kernel add -o - | FileCheck %s

#include <cuda_runtime.h>

// CHECK:      "version": 1,
// CHECK-LABEL: "add": {
// CHECK-NEXT:   // {{.*}}init-spec-float.cu:[[@LINE+18]]:17
// The integer parameter is the one shape variable; its size is unknown.
// CHECK:        "default": {
// CHECK-NEXT:     "n": "TODO"  // parameter 'n' (int)
// CHECK-NEXT:   }
// Counts are TODO; out is only written, a and b only read.
// CHECK:        "args": {
// CHECK-NEXT:     "out": {"dtype": "f32", "count": "TODO", "role": "output"},  // float *: written, never read
// CHECK-NEXT:     "a": {"dtype": "f32", "count": "TODO", "role": "input", "init": "normal(0, 1)"},  // const float *: never written
// CHECK-NEXT:     "b": {"dtype": "f32", "count": "TODO", "role": "input", "init": "normal(0, 1)"},  // const float *: never written
// CHECK-NEXT:     "n": {"value": "n"}  // int: the shape variable 'n'
// CHECK-NEXT:   },
// The host variable 'num' is passed to 'n', so the grid is written in n;
// the launch has no TODO.
// CHECK-NEXT:   "launch": {"grid": "(n + 255) / 256", "block": "256", "shmem": "0"},  // from the launch at {{.*}}init-spec-float.cu:[[@LINE+12]]:3{{$}}
// CHECK-NEXT:   "bytes": "auto",
// CHECK-NEXT:   "launch_tunable": false
// CHECK-NOT:    TODO
__global__ void add(float *out, const float *a, const float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = a[i] + b[i];
}

void launch(float *out, const float *a, const float *b, int num,
            cudaStream_t stream) {
  add<<<(num + 255) / 256, 256, 0, stream>>>(out, a, b, num);
}
