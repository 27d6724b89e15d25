// Host code clang rejects does not stop kernel work: main calls
// cudaThreadSynchronize, which CUDA 13 removed (every PolyBench-ACC file
// does). list, compile, init-spec and rewrite work on the kernels, each with
// a warning that names the host function and its first error; the device
// compile stubs main's body in memory. The file is never written.
// REQUIRES: cuda
// RUN: rm -rf %t && mkdir -p %t && cp %s %t/k.cu && cp %s %t/orig.cu
// RUN: %clang-astra list %t/k.cu > %t/list.out 2> %t/list.err
// RUN: FileCheck %s --check-prefix=LIST < %t/list.out
// RUN: FileCheck %s --check-prefix=WARN < %t/list.err
// RUN: %clang-astra compile --no-cache --kernel scale %t/k.cu 2> %t/compile.err | FileCheck %s --check-prefix=PTX
// RUN: FileCheck %s --check-prefix=WARN < %t/compile.err
// A second compile comes from the cache and warns the same.
// RUN: env ASTRA_CACHE_DIR=%t/cache %clang-astra compile %t/k.cu > /dev/null 2> /dev/null
// RUN: env ASTRA_CACHE_DIR=%t/cache %clang-astra compile --verbose %t/k.cu 2>&1 > /dev/null | FileCheck %s --check-prefix=CACHED
// RUN: %clang-astra init-spec %t/k.cu --kernel scale -o - 2> %t/spec.err | FileCheck %s --check-prefix=SPEC
// RUN: FileCheck %s --check-prefix=WARN < %t/spec.err
// RUN: %clang-astra rewrite --passes=restrict-const --diff %t/k.cu 2>/dev/null | FileCheck %s --check-prefix=DIFF
// Without the tolerance there would be nothing: the plain clang error.
// RUN: not %cuda-syntax-check %t/k.cu 2>&1 | FileCheck %s --check-prefix=CLANG
// RUN: diff %t/orig.cu %t/k.cu

// LIST: {{.*}}k.cu:[[@LINE+14]]:17: kernel scale
// LIST: launch sites:
// LIST-NEXT: {{.*}}k.cu:[[@LINE+22]]:3 in main(): scale<<<(n + 255) / 256, 256>>>(
// WARN: warning: {{.*}}k.cu: host code clang rejects is left out of the device side: main() at {{.*}}k.cu:[[@LINE+17]], first error {{.*}}k.cu:[[@LINE+22]]:3: use of undeclared identifier 'cudaThreadSynchronize'{{.*}} (2 errors)
// PTX: .entry _Z5scalePffi(
// CACHED-DAG: note: PTX from cache
// CACHED-DAG: warning: {{.*}}k.cu: host code clang rejects is left out
// SPEC: "scale": {
// SPEC: "launch": {"grid": "(n + 255) / 256", "block": "256", "shmem": "0"}
// DIFF: +__global__ void scale(float *__restrict__ x, float a, int n) {
// CLANG: error: use of undeclared identifier 'cudaThreadSynchronize'

#include <cuda_runtime.h>

__global__ void scale(float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= a;
}

int main() {
  int n = 1 << 20;
  float *d;
  cudaMalloc(&d, n * sizeof(float));
  scale<<<(n + 255) / 256, 256>>>(d, 2.0f, n);
  cudaThreadSynchronize();
  cudaThreadExit();
  cudaFree(d);
  return 0;
}
