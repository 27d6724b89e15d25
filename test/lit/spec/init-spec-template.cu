// init-spec on a template kernel: the named instantiation's types decide
// the dtypes; a launch of that instantiation gives the launch. A launch of
// another instantiation is only a hint: its values are kept behind TODOs.
// RUN: %clang-astra init-spec %s --kernel 'scale<__half, 4>' -o - | FileCheck %s --check-prefix=HALF
// RUN: %clang-astra init-spec %s --kernel 'scale<float,2>' -o - | FileCheck %s --check-prefix=FLOAT
// RUN: not %clang-astra init-spec %s --kernel scale -o - 2>&1 | FileCheck %s --check-prefix=BARE
// RUN: not %clang-astra init-spec %s --kernel never -o - 2>&1 | FileCheck %s --check-prefix=NEVER
// A draft written beside the file is not a spec yet: check-spec names every
// TODO left; a second init-spec does not overwrite it.
// RUN: rm -rf %t && mkdir -p %t && cp %s %t/t.cu
// RUN: %clang-astra init-spec %t/t.cu --kernel 'scale<__half, 4>' 2>&1 | FileCheck %s --check-prefix=WROTE
// RUN: not %clang-astra check-spec %t/t.cu 2>&1 | FileCheck %s --check-prefix=DRAFT
// RUN: not %clang-astra init-spec %t/t.cu --kernel 'scale<float, 2>' 2>&1 | FileCheck %s --check-prefix=EXISTS
// RUN: FileCheck %s --check-prefix=HALF < %t/t.cu.astra.json

#include <cuda_fp16.h>

// The name is printed as `list` prints it, whatever the spacing given.
// HALF-LABEL:  "scale<__half, 4>": {
// HALF-NEXT:     // {{.*}}.cu:[[@LINE+22]]:17
// HALF:            "out": {"dtype": "f16", "count": "TODO", "role": "output"},  // __half *: written, never read
// HALF-NEXT:       "in": {"dtype": "f16", "count": "TODO", "role": "input", "init": "normal(0, 1)"},  // const __half *: never written
// HALF-NEXT:       "n": {"value": "n"}
// HALF-NEXT:     },
// HALF-NEXT:     "launch": {"grid": "TODO: n / 128", "block": "TODO: 128", "shmem": "0"},  // from the launch of 'scale<float, 2>' at {{.*}}.cu:[[@LINE+25]]:3; TODO: that is another instantiation; check that this one is launched the same way
// FLOAT-LABEL: "scale<float, 2>": {
// FLOAT-NEXT:    // {{.*}}init-spec-template.cu:[[@LINE+15]]:17
// FLOAT:           "out": {"dtype": "f32", "count": "TODO", "role": "output"},  // float *: written, never read
// FLOAT-NEXT:      "in": {"dtype": "f32", "count": "TODO", "role": "input", "init": "normal(0, 1)"},  // const float *: never written
// FLOAT-NEXT:      "n": {"value": "n"}
// FLOAT-NEXT:    },
// FLOAT-NEXT:    "launch": {"grid": "n / 128", "block": "128", "shmem": "0"},  // from the launch at {{.*}}init-spec-template.cu:[[@LINE+18]]:3{{$}}
// BARE: clang-astra: error: {{.*}}init-spec-template.cu: kernel 'scale' is a template; name one instantiation: scale<__half, 4>, scale<float, 2>
// WROTE: clang-astra: note: wrote a draft spec for 'scale<__half, 4>' to {{.*}}t.cu.astra.json; fill in every TODO, then run `clang-astra check-spec {{.*}}t.cu`
// DRAFT:      clang-astra: error: {{.*}}t.cu.astra.json:[[#]]:11: kernel 'scale<__half, 4>': shapes.default.n: still a TODO from init-spec ('TODO'): fill it in
// DRAFT-NEXT: clang-astra: error: {{.*}}t.cu.astra.json:[[#]]:33: kernel 'scale<__half, 4>': args.out.count: still a TODO from init-spec ('TODO'): fill it in
// DRAFT-NEXT: clang-astra: error: {{.*}}t.cu.astra.json:[[#]]:32: kernel 'scale<__half, 4>': args.in.count: still a TODO from init-spec ('TODO'): fill it in
// DRAFT-NEXT: clang-astra: error: {{.*}}t.cu.astra.json:[[#]]:18: kernel 'scale<__half, 4>': launch.grid: still a TODO from init-spec ('TODO: n / 128'): fill it in
// DRAFT-NEXT: clang-astra: error: {{.*}}t.cu.astra.json:[[#]]:43: kernel 'scale<__half, 4>': launch.block: still a TODO from init-spec ('TODO: 128'): fill it in
// EXISTS: clang-astra: error: init-spec: {{.*}}t.cu.astra.json already exists; pass --force to overwrite it, or -o - to print the draft
template <typename T, int N>
__global__ void scale(T *out, const T *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[i] * (T)N;
}
template __global__ void scale<__half, 4>(__half *, const __half *, int);

void run(float *o, const float *i, int n) {
  scale<float, 2><<<n / 128, 128>>>(o, i, n);
}

// A template nothing instantiates has no types to draft from.
// NEVER: clang-astra: error: {{.*}}init-spec-template.cu: kernel 'never' is a template with no instantiation in this file; a spec needs concrete types: instantiate it (template __global__ void never<...>(...);) or launch it
template <typename T> __global__ void never(T *p) { p[0] = T(); }
