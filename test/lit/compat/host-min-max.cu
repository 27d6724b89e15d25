// Host code calls min and max on ints (and umin, llmax, ...): nvcc's
// crt/math_functions.hpp defines them for the host; clang's headers have
// them for the device only, and a device compile parses host code too.
// REQUIRES: cuda, nvcc
// RUN: %nvcc -arch=sm_90 -c %s -o %t.o
// RUN: not %cuda-syntax-check %s 2>&1 | FileCheck %s --check-prefix=CLANG
// Without the compat header the host function is skipped (its errors lie in
// host code only); with it, nothing is skipped.
// RUN: %clang-astra list --no-nvcc-compat %s 2>&1 | FileCheck %s --check-prefix=SKIPPED
// RUN: %clang-astra list %s 2>&1 | FileCheck %s

// CLANG: error: no matching function for call to 'max'
// SKIPPED: warning: {{.*}}host-min-max.cu: host code clang rejects is left out of the device side: blocks() at {{.*}}: no matching function for call to 'max' (4 errors)
// CHECK: kernel clamp
// CHECK-NOT: warning
// CHECK-NOT: error

__global__ void clamp(int *x, int hi) { x[threadIdx.x] = min(x[threadIdx.x], hi); }

int blocks(int n, int threads) {
  int b = max((n + threads - 1) / threads, 1);
  unsigned u = umin(unsigned(b), 65535u);
  long long l = llmax(1LL, (long long)u);
  return min(int(l), 1 << 20);
}
