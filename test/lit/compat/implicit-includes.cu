// nvcc's cuda_runtime.h includes <time.h> and <math.h>; clang's runtime
// wrapper does not, and code written for nvcc calls clock, time and isfinite
// without them.
// REQUIRES: cuda, nvcc
// RUN: %nvcc -arch=sm_90 -c %s -o %t.o
// RUN: not %cuda-syntax-check %s 2>&1 | FileCheck %s --check-prefix=CLANG
// RUN: %clang-astra compile --no-cache --kernel timed %s | FileCheck %s

// CLANG: error: no matching function for call to 'clock'
// CHECK: .entry _Z5timedPfPx(

__global__ void timed(float *x, long long *t) {
  long long start = clock64();
  if (isfinite(x[threadIdx.x]))
    x[threadIdx.x] *= 2.0f;
  t[threadIdx.x] = clock64() - start;
}

double host_seconds(float v) {
  clock_t c = clock();
  time_t now = time(nullptr);
  return isfinite(v) ? double(c) / CLOCKS_PER_SEC + double(now) : 0.0;
}
