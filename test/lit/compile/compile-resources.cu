// --emit=resources: ptxas's report per kernel, as a table and as JSON.
// REQUIRES: ptxas
// RUN: %clang-astra compile --no-cache --emit=resources %s | FileCheck %s
// RUN: %clang-astra compile --no-cache --emit=resources --format=json %s | FileCheck %s --check-prefix=JSON
// RUN: %clang-astra compile --no-cache --emit=resources --kernel copy %s | FileCheck %s --check-prefix=ONE

// FileCheck folds runs of spaces, so the columns are checked by order.
// CHECK:      {{^}}kernel regs spill-st spill-ld stack smem cmem bar{{$}}
// CHECK-NEXT: {{^}}tile(float*, float const*) {{[1-9][0-9]*}} 0 0 0 1024 0 1{{$}}
// CHECK-NEXT: {{^}}copy(float*, float const*) {{[1-9][0-9]*}} 0 0 0 0 0 0{{$}}
// CHECK-NEXT: {{^}}(sm_90; spills, stack, smem and cmem in bytes; smem is static shared memory only)

// JSON:      "arch": "sm_90",
// JSON-NEXT: "compiler": "clang",
// JSON:      "entry": "_Z4tilePfPKf",
// JSON-NEXT: "name": "tile(float*, float const*)",
// JSON-NEXT: "registers": {{[1-9][0-9]*}},
// JSON-NEXT: "spill_store_bytes": 0,
// JSON-NEXT: "spill_load_bytes": 0,
// JSON-NEXT: "stack_frame_bytes": 0,
// JSON-NEXT: "shared_bytes": 1024,
// JSON-NEXT: "constant_bytes": 0,
// JSON-NEXT: "barriers": 1
// JSON:      "entry": "_Z4copyPfPKf",

// ONE:      kernel
// ONE-NEXT: copy(float*, float const*)
// ONE-NEXT: (sm_90;

__global__ void tile(float *out, const float *in) {
  __shared__ float t[256];
  t[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = t[255 - threadIdx.x];
}

__global__ void copy(float *out, const float *in) {
  out[threadIdx.x] = in[threadIdx.x];
}
