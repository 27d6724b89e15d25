// warp-scan: shared-memory Hillis-Steele block scans become warp-shuffle
// scans. Checked per kernel: the rewritten scan (or the loop left alone),
// the refusals with their reasons, the PTX of the result, and that a second
// run finds nothing left.
// RUN: rm -rf %t.dir && mkdir -p %t.dir && cp %s %t.dir/ws.cu
// RUN: %clang-astra rewrite -i --passes=warp-scan --explain %t.dir/ws.cu -- -std=c++17 2> %t.explain
// RUN: FileCheck %s < %t.dir/ws.cu
// RUN: FileCheck %s --check-prefix=EXPLAIN < %t.explain
// RUN: %nvptx-compile %t.dir/ws.cu | FileCheck %s --check-prefix=PTX
// PTX: .visible .entry _Z10row_cumsumPKfPfi(
// PTX: shfl.sync.up.b32
// RUN: %clang-astra rewrite --passes=warp-scan %t.dir/ws.cu -- -std=c++17 | diff %t.dir/ws.cu -

// KernelBench's cumsum: the scan of each tile of a row, the carry between
// tiles read from buf[threads - 1] after it.
// CHECK-LABEL: {{^}}__global__ void row_cumsum(
__global__ void row_cumsum(const float *x, float *y, int cols) {
  __shared__ float buf[1024];
  const int tid = threadIdx.x;
  const int threads = blockDim.x;
  const float *xr = x + (long)blockIdx.x * cols;
  float *yr = y + (long)blockIdx.x * cols;
  float carry = 0.0f;
  for (int base = 0; base < cols; base += threads) {
    const int j = base + tid;
    buf[tid] = j < cols ? xr[j] : 0.0f;
    __syncthreads();
    // CHECK: {{^}}    { // warp-scan: inclusive prefix sums of buf[0 .. blockDim.x) with warp shuffles, one shared-memory step across warps
    // CHECK-NEXT: {{^}}      float astra_ws_val = buf[tid];
    // CHECK: {{^}}        const unsigned astra_ws_lanes = blockDim.x - (threadIdx.x & ~31u) < 32u ? blockDim.x - (threadIdx.x & ~31u) : 32u;
    // CHECK-NEXT: {{^}}        const unsigned astra_ws_mask = 0xffffffffu >> (32u - astra_ws_lanes);
    // CHECK-NEXT: {{^}}        for (unsigned astra_ws_off = 1u; astra_ws_off < astra_ws_lanes; astra_ws_off <<= 1) {
    // CHECK-NEXT: {{^}}          const float astra_ws_up = __shfl_up_sync(astra_ws_mask, astra_ws_val, astra_ws_off);
    // CHECK-NEXT: {{^}}          if ((threadIdx.x & 31u) >= astra_ws_off)
    // CHECK-NEXT: {{^}}            astra_ws_val += astra_ws_up;
    // CHECK: {{^}}        if (blockDim.x > 32u) {
    // CHECK-NEXT: {{^}}          __shared__ float astra_ws_sums[32];
    // CHECK-NEXT: {{^}}          if ((threadIdx.x & 31u) == astra_ws_lanes - 1u)
    // CHECK-NEXT: {{^}}            astra_ws_sums[threadIdx.x >> 5] = astra_ws_val;
    // CHECK-NEXT: {{^}}          __syncthreads();
    // CHECK: {{^}}              const float astra_ws_up = __shfl_up_sync(0xffffffffu, astra_ws_sum, astra_ws_off);
    // CHECK: {{^}}            astra_ws_sums[threadIdx.x] = astra_ws_sum;
    // CHECK: {{^}}          __syncthreads();
    // CHECK-NEXT: {{^}}          if (threadIdx.x >= 32u)
    // CHECK-NEXT: {{^}}            astra_ws_val += astra_ws_sums[(threadIdx.x >> 5) - 1u];
    // CHECK: {{^}}      buf[tid] = astra_ws_val;
    // CHECK-NEXT: {{^}}      __syncthreads();
    // CHECK-NEXT: {{^}}    }
    // CHECK-NEXT: {{^}}    if (j < cols)
    // CHECK-NOT: {{^}} *for (int offset
    for (int offset = 1; offset < threads; offset <<= 1) {
      const float v = tid >= offset ? buf[tid - offset] : 0.0f;
      __syncthreads();
      buf[tid] += v;
      __syncthreads();
    }
    if (j < cols)
      yr[j] = carry + buf[tid];
    carry += buf[threads - 1];
    __syncthreads();
  }
}
// EXPLAIN-DAG: ws.cu:[[@LINE-12]]:5: warp-scan: fired: the Hillis-Steele scan of 'buf' over blockDim.x threads (two barriers per step) now scans with warp shuffles and three barriers; buf[0 .. blockDim.x) holds the same inclusive prefix sums after a barrier as before (floating-point additions are reassociated; the sums may differ in the last bits)

// The other common spelling: the read and the add each under the guard, the
// step doubled with *=, blockDim.x itself as the bound; integer elements
// (exact, so no note about rounding).
// CHECK-LABEL: {{^}}__global__ void block_offsets(
// CHECK: {{^}}  { // warp-scan: inclusive prefix sums of counts[0 .. blockDim.x)
// CHECK-NEXT: {{^}}    int astra_ws_val = counts[threadIdx.x];
// CHECK: {{^}}        __shared__ int astra_ws_sums[32];
// CHECK: {{^}}  counts[threadIdx.x] = astra_ws_val;
// CHECK-NEXT: {{^}}  __syncthreads();
// CHECK-NEXT: {{^}}  }
// CHECK-NEXT: {{^}}  out[blockIdx.x * blockDim.x + threadIdx.x] = counts[threadIdx.x];
__global__ void block_offsets(const int *flags, int *out) {
  __shared__ int counts[512];
  counts[threadIdx.x] = flags[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  for (unsigned d = 1; d < blockDim.x; d *= 2) {
    int t = 0;
    if (threadIdx.x >= d)
      t = counts[threadIdx.x - d];
    __syncthreads();
    if (threadIdx.x >= d)
      counts[threadIdx.x] = counts[threadIdx.x] + t;
    __syncthreads();
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = counts[threadIdx.x];
}
// EXPLAIN-DAG: ws.cu:[[@LINE-11]]:3: warp-scan: fired: the Hillis-Steele scan of 'counts' over blockDim.x threads (two barriers per step) now scans with warp shuffles and three barriers; counts[0 .. blockDim.x) holds the same inclusive prefix sums after a barrier as before{{$}}

// A template kernel: one edit, written with T, serves both instantiations.
// CHECK-LABEL: {{^}}template <typename T> __global__ void scan_t(
// CHECK: {{^}}    T astra_ws_val = s[tid];
// CHECK: {{^}}        __shared__ T astra_ws_sums[32];
template <typename T> __global__ void scan_t(const T *x, T *y) {
  __shared__ T s[256];
  const unsigned tid = threadIdx.x;
  s[tid] = x[blockIdx.x * blockDim.x + tid];
  __syncthreads();
  for (int k = 1; k < blockDim.x; k = k * 2) {
    T v = tid < k ? 0 : s[tid - k];
    __syncthreads();
    s[tid] = v + s[tid];
    __syncthreads();
  }
  y[blockIdx.x * blockDim.x + tid] = s[tid];
}
template __global__ void scan_t<float>(const float *, float *);
template __global__ void scan_t<long long>(const long long *, long long *);

// Refused: the bound is a constant, not blockDim.x; the threads past it
// would still add (a 256-thread scan launched with more threads differs).
// CHECK-LABEL: {{^}}__global__ void fixed_bound(
// CHECK: {{^}}  for (int off = 1; off < 256; off <<= 1) {
__global__ void fixed_bound(float *y) {
  __shared__ float s[256];
  const int tid = threadIdx.x;
  s[tid] = y[tid];
  __syncthreads();
  for (int off = 1; off < 256; off <<= 1) {
    float v = tid >= off ? s[tid - off] : 0.f;
    __syncthreads();
    s[tid] += v;
    __syncthreads();
  }
  y[tid] = s[tid];
}
// EXPLAIN-DAG: ws.cu:[[@LINE-8]]:3: warp-scan: not applied: not a shared-memory Hillis-Steele scan: the loop condition is not 'off < blockDim.x' (through a variable initialized to it, at most): with another bound the threads past it still add partial sums

// Refused: one barrier per step, so the read and the add race (the
// GPU Gems listing before its fix). The rewrite must not bless it.
// CHECK-LABEL: {{^}}__global__ void racy(
// CHECK: {{^}}  for (int off = 1; off < blockDim.x; off <<= 1) {
__global__ void racy(float *y) {
  __shared__ float s[1024];
  const int tid = threadIdx.x;
  s[tid] = y[tid];
  __syncthreads();
  for (int off = 1; off < blockDim.x; off <<= 1) {
    float v = tid >= off ? s[tid - off] : 0.f;
    s[tid] += v;
    __syncthreads();
  }
  y[tid] = s[tid];
}
// EXPLAIN-DAG: ws.cu:[[@LINE-7]]:3: warp-scan: not applied: not a shared-memory Hillis-Steele scan: after the read, the loop body is not '__syncthreads(); s[tid] += v; __syncthreads();' (a scan step without the barrier between its read and its add races)

// Refused: a product scan is not a sum; and a scan in a 2-D block.
// CHECK-LABEL: {{^}}__global__ void prefix_product(
// CHECK: {{^}}  for (int off = 1; off < blockDim.x; off <<= 1) {
__global__ void prefix_product(float *y) {
  __shared__ float s[1024];
  const int tid = threadIdx.x;
  s[tid] = y[tid];
  __syncthreads();
  for (int off = 1; off < blockDim.x; off <<= 1) {
    float v = tid >= off ? s[tid - off] : 1.f;
    __syncthreads();
    s[tid] *= v;
    __syncthreads();
  }
  y[tid] = s[tid];
}
// EXPLAIN-DAG: ws.cu:[[@LINE-8]]:3: warp-scan: not applied: not a shared-memory Hillis-Steele scan: the loop body does not start with 'T v = tid >= off ? s[tid - off] : 0;' (or 'T v = 0; if (tid >= off) v = s[tid - off];') with s a __shared__ array and tid = threadIdx.x

// CHECK-LABEL: {{^}}__global__ void rows_2d(
// CHECK: {{^}}  for (int off = 1; off < blockDim.x; off <<= 1) {
__global__ void rows_2d(float *y) {
  __shared__ float s[8][128];
  const int tid = threadIdx.x;
  float *row = s[threadIdx.y];
  (void)row;
  __shared__ float t[128];
  t[tid] = y[tid];
  __syncthreads();
  for (int off = 1; off < blockDim.x; off <<= 1) {
    float v = tid >= off ? t[tid - off] : 0.f;
    __syncthreads();
    t[tid] += v;
    __syncthreads();
  }
  y[tid] = t[tid];
}
// EXPLAIN-DAG: ws.cu:[[@LINE-8]]:3: warp-scan: not applied: the kernel reads threadIdx.y (at {{.*}}ws.cu:[[@LINE-13]]:{{[0-9]+}}); a scan over t[threadIdx.x] in a multi-dimensional block is not handled

// Refused: the step's value is a double added into a float array.
// CHECK-LABEL: {{^}}__global__ void mixed(
// CHECK: {{^}}  for (int off = 1; off < blockDim.x; off <<= 1) {
__global__ void mixed(float *y) {
  __shared__ float s[1024];
  const int tid = threadIdx.x;
  s[tid] = y[tid];
  __syncthreads();
  for (int off = 1; off < blockDim.x; off <<= 1) {
    double v = tid >= off ? s[tid - off] : 0.0;
    __syncthreads();
    s[tid] += v;
    __syncthreads();
  }
  y[tid] = s[tid];
}
// EXPLAIN-DAG: ws.cu:[[@LINE-8]]:3: warp-scan: not applied: not a shared-memory Hillis-Steele scan: 'v' is double, not the element type of 's' (float): the sums would round differently
// EXPLAIN-NOT: fired
