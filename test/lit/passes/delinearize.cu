// delinearize: a flat index split by `% A`, `(/ A) % B` and `/ (A * B)`
// becomes the coordinates of a 3-D grid; threads past the edge compute a
// clamped element and do not store. Checked: the 3-D and flat branches, the
// launch site, the spec after -i, the refusals with their reasons, the PTX,
// and that thread-coarsen then blocks the kernel without a tail.
// RUN: rm -rf %t.dir && mkdir -p %t.dir
// RUN: cp %s %t.dir/dl.cu && cp %S/Inputs/delinearize.astra.json %t.dir/dl.cu.astra.json
// RUN: %clang-astra rewrite --passes=delinearize -i %t.dir/dl.cu -- -std=c++17
// RUN: FileCheck %s < %t.dir/dl.cu
// RUN: FileCheck %s --check-prefix=SPEC < %t.dir/dl.cu.astra.json
// SPEC: "conv": {
// The parameters of A, B and C become the spec's values of the arguments.
// SPEC: "launch": {"grid": ["(((((L) - (K)) + 1))) > 0 && ((OC)) > 0 && ((B)) > 0 && ((B)) <= 65535 && (((OC)) + 3) / 4 <= 65535 && ((((((L) - (K)) + 1))) + 127) / 128 <= 2147483647 ? cdiv((((((L) - (K)) + 1))), 128) : cdiv((cdiv(B * OC * (L - K + 1), 256)) * 256, 512)",
// SPEC-SAME: "block": ["128", "4", "1"]
// RUN: %clang-astra check-spec %t.dir/dl.cu -- -std=c++17 | FileCheck %s --check-prefix=CHECKSPEC
// CHECKSPEC: launch: grid (1, 2, 2), block (128, 4, 1)
// The edited launch sites are host code: they must compile too.
// RUN: %cuda-syntax-check %t.dir/dl.cu
// RUN: %nvptx-compile %t.dir/dl.cu | FileCheck %s --check-prefix=PTX
// PTX: .visible .entry _Z4convPKfS0_Pfiiiii(
// PTX: mov.u32 %r{{[0-9]+}}, %ctaid.z;
// RUN: cp %s %t.dir/dl.cu && cp %S/Inputs/delinearize.astra.json %t.dir/dl.cu.astra.json
// RUN: %clang-astra rewrite --passes=delinearize --explain %t.dir/dl.cu -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=EXPLAIN
// thread-coarsen after it: no early return is left, so the copy loop goes
// inside the tap loop (each x load serves the 8 channels of a thread).
// RUN: %clang-astra rewrite --passes=delinearize,thread-coarsen --pass-opt=delinearize.y=8 --pass-opt=thread-coarsen.y=8 --pass-opt=thread-coarsen.x=2 --kernel=conv %t.dir/dl.cu -- -std=c++17 | FileCheck %s --check-prefix=TC
// TC: {{^}}    for (int t = 0; t < k; ++t)
// TC-NEXT: {{^ *}}{ _Pragma("unroll") for (int astra_cy = 0; astra_cy < 8; ++astra_cy) _Pragma("unroll") for (int astra_cx = 0; astra_cx < 2; ++astra_cx) { acc[astra_cy][astra_cx] += wr[astra_cy][astra_cx][t] * xr[astra_cy][astra_cx][t]; } }
// RUN: %clang-astra rewrite --passes=delinearize --pass-opt=delinearize.x=512 --kernel=conv --explain %t.dir/dl.cu -- -std=c++17 2>&1 >/dev/null | FileCheck %s --check-prefix=BADOPT
// BADOPT: delinearize: not applied: --pass-opt=delinearize.x=512 and .y=4: x must be a multiple of 32 and x * y at most 1024

#include <cstdint>
#include <cuda_runtime.h>

// The body runs in two branches: the 3-D grid's, where the coordinates are
// the thread's (clamped), and the flat grid's, over 2-D blocks; the store
// runs only for a thread inside the output.
// CHECK-LABEL: __global__ void conv(
// CHECK: {{^}}  const int out_len = len - k + 1;
// CHECK-NEXT: {{^}}  const int64_t n = (int64_t)batch * oc * out_len;
// CHECK-NEXT: {{^}}  if (((long long)((((len - k) + 1)))) > 0 && ((long long)(oc)) > 0 && ((long long)(batch)) > 0 && ((long long)(batch)) <= 65535 && (((long long)(oc)) + 3) / 4 <= 65535 && (((long long)((((len - k) + 1)))) + 127) / 128 <= 2147483647) {
// CHECK-NEXT: {{^}}    const long long astra_x = (long long)blockIdx.x * blockDim.x + threadIdx.x;
// CHECK-NEXT: {{^}}    const long long astra_y = (long long)blockIdx.y * blockDim.y + threadIdx.y;
// CHECK-NEXT: {{^}}    const bool astra_valid = astra_x < ((long long)((((len - k) + 1)))) && astra_y < ((long long)(oc));
// CHECK-NEXT: {{^}}    const int64_t i = (int64_t)(((long long)blockIdx.z * ((long long)(oc)) + (astra_y < ((long long)(oc)) ? astra_y : ((long long)(oc)) - 1)) * ((long long)((((len - k) + 1)))) + (astra_x < ((long long)((((len - k) + 1)))) ? astra_x : ((long long)((((len - k) + 1)))) - 1));
// CHECK-NEXT: {{^}}    const int l = ((int64_t)(astra_x < ((long long)((((len - k) + 1)))) ? astra_x : ((long long)((((len - k) + 1)))) - 1));
// CHECK-NEXT: {{^}}  const int o = ((int64_t)(astra_y < ((long long)(oc)) ? astra_y : ((long long)(oc)) - 1));
// CHECK-NEXT: {{^}}  const int64_t b = ((int64_t)blockIdx.z);
// CHECK: {{^}}  if (astra_valid) { out[i] = acc; }
// CHECK-NEXT: {{^}}  } else {
// CHECK-NEXT: {{^}}    if (!((n) > 0))
// CHECK-NEXT: {{^}}      return;
// CHECK-NEXT: {{^}}    const long long astra_flat = (long long)blockIdx.x * (blockDim.x * blockDim.y) + (threadIdx.y * blockDim.x + threadIdx.x);
// CHECK-NEXT: {{^}}    const bool astra_valid = astra_flat < (n);
// CHECK-NEXT: {{^}}    const int64_t i = (int64_t)(astra_flat < (n) ? astra_flat : (n) - 1);
// CHECK-NEXT: {{^}}    const int l = i % out_len;
// CHECK-NEXT: {{^}}  const int o = (i / out_len) % oc;
// CHECK: {{^}}  if (astra_valid) { out[i] = acc; }
// CHECK-NEXT: {{^}}  }
// CHECK-NEXT: {{^}}}
// EXPLAIN: dl.cu:[[@LINE+1]]:17: delinearize: fired: 3-D grid (x over (((len - k) + 1)), y over oc, z over batch) of 128 x 4 blocks at 1 launch site ({{.*}}dl.cu:{{[0-9]+}}:3), 3 coordinate reads replaced
__global__ void conv(const float *x, const float *w, float *out, int batch,
                     int ic, int oc, int len, int k) {
  const int out_len = len - k + 1;
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const int64_t n = (int64_t)batch * oc * out_len;
  if (i >= n)
    return;
  const int l = i % out_len;
  const int o = (i / out_len) % oc;
  const int64_t b = i / ((int64_t)out_len * oc);
  float acc = 0.0f;
  for (int c = 0; c < ic; ++c) {
    const float *xr = x + (b * ic + c) * len + l;
    const float *wr = w + ((int64_t)o * ic + c) * k;
    for (int t = 0; t < k; ++t)
      acc += wr[t] * xr[t];
  }
  out[i] = acc;
}

// Only the middle coordinate is read; launched with a dim3 local and with
// `dim3(...)`: the flat grid's size is read from them.
// EXPLAIN: dl.cu:[[@LINE+1]]:17: delinearize: fired: 3-D grid (x over d, y over h, z over b) of 128 x 4 blocks at 2 launch sites
__global__ void bias3(const float *x, const float *bias, float *out, int b,
                      int h, int d) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= b * h * d)
    return;
  const int hh = (i / d) % h;
  out[i] = x[i] + bias[hh];
}

// Split in two only: refused (a third coordinate is what gives the grid
// its z; rows x columns is left to flat-vectorize).
// EXPLAIN: dl.cu:[[@LINE+2]]:13: delinearize: not applied: the flat index is not split as `idx % A` and `(idx / A) % B`
__global__ void rows(float *out, int r, int c) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= r * c)
    return;
  out[i] = (float)(i / c) + (float)(i % c);
}

// A return after the guard: a clamped thread must run to the end.
__global__ void early(float *out, int b, int h, int d) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= b * h * d)
    return;
  const int j = i % d, hh = (i / d) % h;
  // EXPLAIN: dl.cu:[[@LINE+1]]:3: delinearize: not applied: a return or goto after the guard (a thread past the edge must run to the end)
  if (j == 0)
    return;
  out[i] = (float)(j + hh);
}

// An effect in a declaration after the guard cannot be made conditional.
__global__ void counted(float *out, int *n, int b, int h, int d) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= b * h * d)
    return;
  const int j = i % d, hh = (i / d) % h;
  // EXPLAIN: dl.cu:[[@LINE+1]]:3: delinearize: not applied: a declaration with an effect after the guard (it cannot be made conditional)
  const int slot = atomicAdd(n, 1);
  out[i] = (float)(j + hh + slot);
}

// A read of memory after a store: a thread past the edge would still read.
__global__ void reread(float *out, int b, int h, int d) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= b * h * d)
    return;
  out[i] = (float)(i % d + (i / d) % h);
  // EXPLAIN: dl.cu:[[@LINE+1]]:3: delinearize: not applied: a read of memory after a store (a thread past the edge, which skips the store, would still read)
  const float again = out[i];
  if (again > 1.0f)
    out[i] = again * 0.5f;
}

// The spec does not mark the launch as the kernel's own.
// EXPLAIN: dl.cu:[[@LINE+1]]:17: delinearize: not applied: {{.*}}launch_tunable
__global__ void fixed(float *out, int b, int h, int d) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= b * h * d)
    return;
  out[i] = (float)(i % d + (i / d) % h + i / (d * h));
}

void launch(const float *x, const float *w, float *out, int *n, int batch,
            int ic, int oc, int len, int k, cudaStream_t s) {
  const int64_t total = (int64_t)batch * oc * (len - k + 1);
  conv<<<(total + 255) / 256, 256, 0, s>>>(x, w, out, batch, ic, oc, len, k);
  // CHECK: {{^}}  conv<<<((((long long)((((((int)(len)) - ((int)(k))) + 1)))) > 0 && ((long long)(((int)(oc)))) > 0 && ((long long)(((int)(batch)))) > 0 && ((long long)(((int)(batch)))) <= 65535 && (((long long)(((int)(oc)))) + 3) / 4 <= 65535 && (((long long)((((((int)(len)) - ((int)(k))) + 1)))) + 127) / 128 <= 2147483647) ? dim3((((long long)((((((int)(len)) - ((int)(k))) + 1)))) + 127) / 128, (((long long)(((int)(oc)))) + 3) / 4, ((long long)(((int)(batch))))) : dim3(((long long)((total + 255) / 256) * 256 + 511) / 512)), dim3(128, 4), 0, s>>>(x, w, out, batch, ic, oc, len, k);
  rows<<<(oc * len + 255) / 256, 256, 0, s>>>(out, oc, len);
  early<<<(batch * oc * len + 255) / 256, 256, 0, s>>>(out, batch, oc, len);
  counted<<<(batch * oc * len + 255) / 256, 256, 0, s>>>(out, n, batch, oc, len);
  fixed<<<(batch * oc * len + 255) / 256, 256, 0, s>>>(out, batch, oc, len);
  reread<<<(batch * oc * len + 255) / 256, 256, 0, s>>>(out, batch, oc, len);
  const dim3 grid((batch * oc * len + 255) / 256);
  bias3<<<grid, 256, 0, s>>>(x, w, out, batch, oc, len);
  // CHECK: {{^}}  bias3<<<({{.*}} ? dim3({{.*}}) : dim3(((long long)(grid.x) * 256 + 511) / 512)), dim3(128, 4), 0, s>>>(x, w, out, batch, oc, len);
  bias3<<<dim3((batch * oc * len + 255) / 256), dim3(256), 0, s>>>(x, w, out, batch, oc, len);
  // CHECK: {{^}}  bias3<<<({{.*}} ? dim3({{.*}}) : dim3(((long long)((batch * oc * len + 255) / 256) * 256 + 511) / 512)), dim3(128, 4), 0, s>>>(x, w, out, batch, oc, len);
}
