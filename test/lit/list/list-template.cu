// Template kernels: parameters, instantiations (implicit and explicit) and
// launch sites with explicit template arguments.
// RUN: %clang-astra list %s | FileCheck %s
// RUN: %clang-astra list --format=json %s | FileCheck %s --check-prefix=JSON

#include <cuda_fp16.h>

template <typename T> __device__ T twice(T x) { return x + x; }

// CHECK: list-template.cu:[[@LINE+2]]:17: kernel scale<T, N>
template <typename T, int N>
__global__ void scale(T *out, const T *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = twice(in[i]) * (T)N;
}
// CHECK-NEXT:  parameters:
// CHECK-NEXT:    0 out: T *  [pointee T, written]
// CHECK-NEXT:    1 in: const T *  [pointee const T, const, read-only]
// CHECK-NEXT:    2 n: int
// CHECK-NEXT:  template parameters: typename T, int N
// CHECK-NEXT:  instantiations:
// CHECK-DAG:     scale<float, 2>  _Z5scaleIfLi2EEvPT_PKS0_i
// CHECK-DAG:     scale<double, 4>  _Z5scaleIdLi4EEvPT_PKS0_i  (explicit)
// CHECK:       calls:
// CHECK-NEXT:    twice  {{.*}}list-template.cu:8:36
// CHECK-NEXT:  launch sites:
// CHECK-NEXT:    {{.*}}list-template.cu:[[@LINE+5]]:3 in run(): scale<float, 2><<<64, 128>>>(o, i, n)

template __global__ void scale<double, 4>(double *, const double *, int);

void run(float *o, const float *i, int n) {
  scale<float, 2><<<64, 128>>>(o, i, n);
}

// JSON:      "name": "scale",
// JSON:      "mangled_name": null,
// JSON:      "template_parameters": [
// JSON-NEXT:   {
// JSON-NEXT:     "kind": "type",
// JSON-NEXT:     "name": "T",
// JSON-NEXT:     "text": "typename T"
// JSON-NEXT:   },
// JSON-NEXT:   {
// JSON-NEXT:     "kind": "non-type",
// JSON-NEXT:     "name": "N",
// JSON-NEXT:     "text": "int N"
// JSON:      "instantiations": [
// JSON:          "mangled_name": "_Z5scaleI{{[fd]}}Li{{[24]}}EEvPT_PKS0_i",
// JSON:      "launch_sites": [
// JSON-NEXT:   {
// JSON-NEXT:     "file": "{{.*}}list-template.cu",
// JSON-NEXT:     "line": 33,
// JSON-NEXT:     "column": 3,
// JSON-NEXT:     "api": "<<<>>>",
// JSON-NEXT:     "caller": "run",
// JSON-NEXT:     "template_args": "<float, 2>",
// JSON-NEXT:     "grid": "64",
// JSON-NEXT:     "block": "128",
// JSON-NEXT:     "shmem": null,
// JSON-NEXT:     "stream": null,
// JSON-NEXT:     "args": [
// JSON-NEXT:       "o",
// JSON-NEXT:       "i",
// JSON-NEXT:       "n"
// JSON-NEXT:     ]
