// optimize without a GPU: --static runs the planner, the passes and the
// NVPTX compile gate and says what it would try; nothing is written unless
// --static-write asks for unverified code. Without --static it stops with a
// clear error naming the missing driver; a file without a spec points to
// init-spec.
// RUN: rm -rf %t && mkdir -p %t && cp %s %t/scale.cu && cp %S/Inputs/scale.cu.astra.json %t/
// RUN: cp %t/scale.cu %t/orig.cu
// RUN: %clang-astra optimize --static %t/scale.cu 2>&1 | FileCheck %s --check-prefix=STATIC
// STATIC: scale.cu: scale: unchanged: static mode does not run kernels, so nothing was verified or timed
// STATIC: static: restrict-const+{{.*}}vectorize{{.*}}: compiles (not run: static mode)
// RUN: diff %t/orig.cu %t/scale.cu
// Without -i, -o or --diff the note says the rewrite is unverified, not
// "verified faster code found".
// RUN: %clang-astra optimize --static --static-write %t/scale.cu 2>&1 | FileCheck %s --check-prefix=READY --implicit-check-not='faster code found'
// READY: note: {{.*}}scale.cu: an unverified rewrite is ready (--static-write); use -i to apply it, --diff to see it, or -o FILE to write it elsewhere
// RUN: diff %t/orig.cu %t/scale.cu
// RUN: %clang-astra optimize --static --static-write -i %t/scale.cu 2>&1 | FileCheck %s --check-prefix=WRITE
// WRITE: warning: scale: writing 'restrict-const+{{.*}}vectorize{{.*}}' unverified (--static-write)
// RUN: FileCheck %s --check-prefix=NEW < %t/scale.cu
// NEW: __global__ void {{.*}}scale(float *__restrict__ out, const float *__restrict__ in, float a, int n)
// NEW: reinterpret_cast<const uint4 *>
// A rewrite of a helper in a shared header (warp-reduce's block_reduce) is
// written there, with a warning that every file including it changes.
// RUN: mkdir -p %t/suite/kb %t/suite/common && cp %astra_src_root/kernels/kernelbench/softmax.cu* %t/suite/kb/ && cp %astra_src_root/kernels/common/*.cuh %t/suite/common/
// RUN: %clang-astra optimize --static --static-write --passes=warp-reduce -i %t/suite/kb/softmax.cu 2>&1 | FileCheck %s --check-prefix=SHARED
// SHARED: warning: the result also changes {{.*}}suite/common/reduce.cuh (code that {{.*}}suite/kb/softmax.cu's kernels use): every file that includes it gets the change, and none of their kernels was tested with it
// SHARED: note: rewrote {{.*}}suite/common/reduce.cuh
// RUN: grep -q '__shfl_xor_sync' %t/suite/common/reduce.cuh
// A grid-stride kernel: the combined plan vectorizes the loop (hoist leaves
// its step alone) and divides the grid by the vector width; grid-coarsen is
// probed on top of vectorize and planned with it.
// RUN: cp %astra_src_root/kernels/kernelbench/gelu.cu* %t/suite/kb/
// RUN: %clang-astra optimize --static %t/suite/kb/gelu.cu 2>&1 | FileCheck %s --check-prefix=COARSEN
// COARSEN: static: restrict-const+grid-stride+vectorize+ldg+index32+grid-coarsen+launch-bounds: compiles
// COARSEN: static: restrict-const+grid-stride+vectorize+grid-coarsen: compiles
// --static-write passes over plans that change the launch (the spec is
// rewritten only with a verified winner): the spec and code still agree.
// RUN: %clang-astra optimize --static --static-write --passes=restrict-const,grid-stride,vectorize,grid-coarsen -i %t/suite/kb/gelu.cu 2>&1 | FileCheck %s --check-prefix=COARSEN-WRITE
// COARSEN-WRITE: warning: gelu: writing 'restrict-const+grid-stride+vectorize' unverified (--static-write)
// RUN: FileCheck %s --check-prefix=COARSEN-CODE < %t/suite/kb/gelu.cu
// COARSEN-CODE: constexpr int astra_vec = 4;
// COARSEN-CODE: gelu<<<blocks, threads, 0, stream>>>(x, y, n);
// A pipeline with rows-per-block first, the same without it second (it
// costs launch-bound sets their parallelism: silu_and_mul's decode 0.77x
// on the H100, 1.95x without it).
// RUN: mkdir -p %t/suite/sg && cp %astra_src_root/kernels/sglang/silu_and_mul.cu* %t/suite/sg/
// RUN: %clang-astra optimize --static %t/suite/sg/silu_and_mul.cu 2>&1 | FileCheck %s --check-prefix=ROWS
// ROWS: static: restrict-const+vectorize+ldg+fast-math+index32+rows-per-block+launch-bounds: compiles
// ROWS-NEXT: static: restrict-const+vectorize+ldg+fast-math+index32+launch-bounds: compiles
// RUN: not env ASTRA_LIBCUDA=%t/no-such-libcuda.so %clang-astra optimize %t/orig.cu 2>&1 | FileCheck %s --check-prefix=NOGPU
// NOGPU: error: no NVIDIA driver ({{.*}}no-such-libcuda.so could not be loaded{{.*}}); optimize needs a GPU to verify and time candidates (--static runs the passes and the NVPTX compile without one; see also --without-gpu)
// RUN: cp %s %t/nospec.cu
// RUN: not %clang-astra optimize --static %t/nospec.cu 2>&1 | FileCheck %s --check-prefix=NOSPEC
// NOSPEC: error: {{.*}}nospec.cu: no spec at {{.*}}nospec.cu.astra.json; run `clang-astra init-spec {{.*}}nospec.cu --kernel <name>` to draft one
// RUN: not %clang-astra optimize --static --passes=no-such-pass %t/orig.cu 2>&1 | FileCheck %s --check-prefix=BADPASS
// BADPASS: error: --passes: unknown pass 'no-such-pass'
// RUN: not %clang-astra optimize --static --min-shape-speedup 0.5 %t/orig.cu 2>&1 | FileCheck %s --check-prefix=BADSHAPE
// BADSHAPE: error: --min-shape-speedup must be at least 1.0 (--allow-shape-regression accepts slower shape sets)
// --split-shapes needs the offline agents; with --static it tries nothing
// more (nothing is timed), and the planner never proposes shape-split.
// RUN: not %clang-astra optimize --static --split-shapes --agents=llm --llm-model m %t/orig.cu 2>&1 | FileCheck %s --check-prefix=SPLITLLM
// SPLITLLM: error: --split-shapes works with the offline agents only
// RUN: %clang-astra optimize --static --split-shapes %t/suite/kb/gelu.cu 2>&1 | FileCheck %s --check-prefix=SPLITSTATIC
// SPLITSTATIC: gelu
// SPLITSTATIC-NOT: shape-split

#include <cuda_runtime.h>

__global__ void scale(float *out, const float *in, float a, int n) {
  for (int j = threadIdx.x; j < n; j += blockDim.x)
    out[blockIdx.x * n + j] = a * in[blockIdx.x * n + j];
}

void launch_scale(float *out, const float *in, float a, int rows, int n,
                  cudaStream_t s) {
  scale<<<rows, 256, 0, s>>>(out, in, a, n);
}
