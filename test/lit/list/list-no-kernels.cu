// A file with no kernels is not an error: exit 0 and say so.
// RUN: %clang-astra list %s | FileCheck %s
// RUN: %clang-astra list --format=json %s | FileCheck %s --check-prefix=JSON

// CHECK: list-no-kernels.cu: no __global__ kernels
// JSON: "kernels": []
__device__ float helper(float x) { return 2 * x; }
void host_only() {}
