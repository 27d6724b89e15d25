// The rewrite command line: --diff, -o, -i, --export-fixes (applied by the
// real clang-apply-replacements), --list-passes and bad input. Nothing is
// written unless asked.
// RUN: rm -rf %t && mkdir -p %t/fixes && cp %s %t/k.cu && cp %s %t/orig.cu
// RUN: %clang-astra rewrite --passes=restrict-const,fast-math --diff %t/k.cu | FileCheck %s --check-prefix=DIFF
// DIFF: --- a/{{.*}}k.cu
// DIFF: -__global__ void k(float *out, float *in, int n) {
// DIFF-NEXT: +__global__ void k(float *__restrict__ out, const float *__restrict__ in, int n) {
// DIFF: +  if (i < n) out[i] = __expf(in[i]);
// RUN: diff %t/orig.cu %t/k.cu
// RUN: %clang-astra rewrite --passes=restrict-const,fast-math %t/k.cu -o %t/out.cu
// RUN: diff %t/orig.cu %t/k.cu
// RUN: FileCheck %s --check-prefix=OUT < %t/out.cu
// OUT: __global__ void k(float *__restrict__ out, const float *__restrict__ in, int n) {
// OUT: out[i] = __expf(in[i]);
// RUN: %clang-astra rewrite --passes=restrict-const,fast-math --export-fixes=%t/fixes/k.yaml %t/k.cu > /dev/null
// RUN: FileCheck %s --check-prefix=YAML < %t/fixes/k.yaml
// YAML: MainSourceFile: {{.*}}k.cu
// YAML: Replacements:
// YAML: ReplacementText: "__global__ void k(float *__restrict__ out, const float *__restrict__ in, int n) {\n"
// RUN: %clang-apply-replacements %t/fixes
// RUN: diff %t/out.cu %t/k.cu
// RUN: cp %t/orig.cu %t/k.cu && %clang-astra rewrite --passes=restrict-const,fast-math -i %t/k.cu
// RUN: diff %t/out.cu %t/k.cu
// RUN: %clang-astra rewrite --list-passes | FileCheck %s --check-prefix=LIST
// LIST: restrict-const
// LIST: vectorize
// LIST: hoist
// RUN: not %clang-astra rewrite --passes=nope %t/orig.cu 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: --passes: unknown pass 'nope' (--list-passes lists them)
// RUN: not %clang-astra rewrite --passes=fast-math %t/missing.cu 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: {{.*}}missing.cu

__global__ void k(float *out, float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = expf(in[i]);
}
void launch(float *o, float *x, int n) { k<<<(n + 255) / 256, 256>>>(o, x, n); }
