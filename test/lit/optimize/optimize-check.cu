// optimize --check, --without-gpu and repeated --kernel, without a GPU
// (ASTRA_LIBCUDA names no driver; --passes=restrict-const keeps the static
// runs to seconds). --check never writes; with no GPU,
// --without-gpu=static runs the static mode and exits 0, skip applies only
// cached results (none here: an empty cache) and exits 0, error (the
// default) fails.
// RUN: rm -rf %t && mkdir -p %t && cp %s %t/two.cu && cp %S/Inputs/two.cu.astra.json %t/
// RUN: cp %t/two.cu %t/orig.cu

// RUN: env ASTRA_LIBCUDA=%t/none.so %clang-astra optimize --check --without-gpu=static --passes=restrict-const %t/two.cu > %t/static.out 2> %t/static.err
// RUN: FileCheck %s --check-prefix=STATIC < %t/static.err
// STATIC: note: no GPU (no NVIDIA driver ({{.*}}none.so could not be loaded{{.*}})): running as --static (--without-gpu=static); nothing is verified, timed or written
// STATIC-DAG: two.cu: scale: unchanged: static mode does not run kernels
// STATIC-DAG: two.cu: shift: unchanged: static mode does not run kernels
// RUN: touch %t/empty && cmp %t/empty %t/static.out
// RUN: cmp %t/orig.cu %t/two.cu

// RUN: env ASTRA_LIBCUDA=%t/none.so ASTRA_CACHE_DIR=%t/cache %clang-astra optimize -i --without-gpu=skip %t/two.cu 2>&1 | FileCheck %s --check-prefix=SKIP
// SKIP: note: no GPU (no NVIDIA driver ({{.*}})): only cached results are applied (--without-gpu=skip)
// SKIP-NEXT: note: {{.*}}two.cu: skipped: no GPU and no cached result (--without-gpu=skip)
// SKIP-NOT: two.cu:
// RUN: env ASTRA_LIBCUDA=%t/none.so %clang-astra optimize -i --without-gpu=skip --no-cache %t/two.cu %t/orig.cu 2>&1 | FileCheck %s --check-prefix=SKIP-NOCACHE
// SKIP-NOCACHE: note: no GPU (no NVIDIA driver ({{.*}})): the kernels of 2 files were skipped (--without-gpu=skip)
// RUN: cmp %t/orig.cu %t/two.cu

// RUN: not env ASTRA_LIBCUDA=%t/none.so %clang-astra optimize --check %t/two.cu 2>&1 | FileCheck %s --check-prefix=ERROR
// RUN: not env ASTRA_LIBCUDA=%t/none.so %clang-astra optimize --check --without-gpu=error %t/two.cu 2>&1 | FileCheck %s --check-prefix=ERROR
// ERROR: error: no NVIDIA driver ({{.*}}); optimize needs a GPU

// Repeated --kernel: one run per kernel, each reported once.
// RUN: %clang-astra optimize --static --passes=restrict-const --kernel shift --kernel scale %t/two.cu 2>&1 | FileCheck %s --check-prefix=KERNELS
// KERNELS: two.cu: shift: unchanged
// KERNELS-NOT: two.cu: shift:
// KERNELS: two.cu: scale: unchanged
// KERNELS-NOT: two.cu: {{scale|shift}}:
// RUN: not %clang-astra optimize --static --passes=restrict-const --kernel shift --kernel nope %t/two.cu 2>&1 | FileCheck %s --check-prefix=NOPE
// NOPE: two.cu: shift: unchanged
// NOPE: error: no kernel named 'nope' in the spec of any input file

// Bad combinations.
// RUN: not %clang-astra optimize --check -i %t/two.cu 2>&1 | FileCheck %s --check-prefix=EXCL
// EXCL: error: optimize: -i, -o, --diff and --check exclude each other
// RUN: not %clang-astra optimize --static --static-write --check %t/two.cu 2>&1 | FileCheck %s --check-prefix=SW
// SW: error: optimize: --check reports verified rewrites only; --static-write writes unverified ones
// RUN: not %clang-astra optimize --static --kernel a --kernel b -o %t/o.cu %t/two.cu 2>&1 | FileCheck %s --check-prefix=ONE
// ONE: error: optimize: -o takes one --kernel (use -i or --diff for several)
// RUN: not %clang-astra optimize --without-gpu=later %t/two.cu 2>&1 | FileCheck %s --check-prefix=BADMODE
// BADMODE: Cannot find option named 'later'!
// RUN: not %clang-astra bench --static --kernel a --kernel b %t/two.cu 2>&1 | FileCheck %s --check-prefix=BENCH
// BENCH: error: bench: --kernel may be given once
// RUN: cmp %t/orig.cu %t/two.cu

#include <cuda_runtime.h>

__global__ void scale(float *out, const float *in, float a, int n) {
  for (int j = threadIdx.x; j < n; j += blockDim.x)
    out[blockIdx.x * n + j] = a * in[blockIdx.x * n + j];
}

__global__ void shift(float *out, const float *in, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[i] + b;
}

void launch(float *out, const float *in, int rows, int n, cudaStream_t s) {
  scale<<<rows, 256, 0, s>>>(out, in, 1.5f, n);
  shift<<<(n + 255) / 256, 256, 0, s>>>(out, in, 2.0f, n);
}
