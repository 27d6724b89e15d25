// --header-filter and --exclude-header-filter: which headers passes may
// edit (by absolute path; the main file always). A kernel whose edits would
// reach an excluded header keeps none of them, with a warning.
// RUN: rm -rf %t && mkdir -p %t/inc && cp %s %t/main.cu && cp %S/Inputs/hdr.cuh %t/inc/hdr.cuh
// By default (.*, as clang-tidy 22) the header is edited too.
// RUN: %clang-astra rewrite --passes=fast-math --diff %t/main.cu -- -I%t/inc | FileCheck %s --check-prefix=ALL
// ALL: +++ b/{{.*}}hdr.cuh
// ALL: +  if (i < n) y[i] = __expf(x[i]);
// ALL: +++ b/{{.*}}main.cu
// A filter that does not match the header: only the main file changes.
// RUN: %clang-astra rewrite --passes=fast-math -i --header-filter='/src/' %t/main.cu -- -I%t/inc 2>&1 | FileCheck %s --check-prefix=MAIN
// MAIN: warning: fast-math: kernel 'in_header' left unchanged: the pass would also edit {{.*}}inc/hdr.cuh, which --header-filter excludes
// MAIN: note: rewrote {{.*}}main.cu (fast-math)
// RUN: diff %S/Inputs/hdr.cuh %t/inc/hdr.cuh
// RUN: FileCheck %s --check-prefix=REWRITTEN < %t/main.cu
// REWRITTEN: out[i] = __expf(in[i]) + 1.0f;
// The exclusion wins over the filter.
// RUN: cp %s %t/main.cu
// RUN: %clang-astra rewrite --passes=fast-math --diff --exclude-header-filter='/inc/' %t/main.cu -- -I%t/inc 2>&1 | FileCheck %s --check-prefix=EXCL --implicit-check-not='+++ b/{{.*}}hdr.cuh'
// EXCL: warning: fast-math: kernel 'in_header' left unchanged
// EXCL: +++ b/{{.*}}main.cu
// A filter that is not a regular expression.
// RUN: not %clang-astra rewrite --passes=fast-math --header-filter='(' %t/main.cu 2>&1 | FileCheck %s --check-prefix=BADRE
// BADRE: error: --header-filter='(' is not a regular expression: parentheses not balanced
#include "hdr.cuh"

__global__ void k(float *out, const float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = expf(in[i]) + 1.0f;
}
