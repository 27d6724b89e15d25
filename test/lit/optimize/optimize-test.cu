// optimize --test: the user's own command runs with each file's rewrite in
// place; the rewrite stays only when the command exits 0, otherwise every
// file it changed is put back byte for byte and the report shows the exit
// code and the last lines of output. The commands look for the rewrite's
// __restrict__ on `out` with the regex "__restrict_[_] out", which these
// lines, copied with the kernel, never match. Without a GPU the rewrite comes from
// --static --static-write (unverified), which goes through the same test
// step as a verified winner.
// RUN: rm -rf %t && mkdir -p %t/p %t/elsewhere && cp %s %t/p/k.cu && cp %S/Inputs/scale.cu.astra.json %t/p/k.cu.astra.json
// RUN: cp %t/p/k.cu %t/orig.cu

// Options.
// RUN: not %clang-astra optimize --static --test-dir %t %t/p/k.cu 2>&1 | FileCheck %s --check-prefix=NEEDTEST
// RUN: not %clang-astra optimize --static --test-timeout 5 %t/p/k.cu 2>&1 | FileCheck %s --check-prefix=NEEDTEST
// RUN: not %clang-astra bench --test-dir %t %t/p/k.cu 2>&1 | FileCheck %s --check-prefix=NEEDTEST
// NEEDTEST: error: --test-dir and --test-timeout need --test
// RUN: not %clang-astra optimize --static --test ' ' %t/p/k.cu 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: error: --test: the command is empty
// RUN: not %clang-astra optimize --static --test true --test-dir %t/nope %t/p/k.cu 2>&1 | FileCheck %s --check-prefix=NODIR
// NODIR: error: --test-dir: '{{.*}}nope' is not a directory
// RUN: cmp %t/orig.cu %t/p/k.cu

// The rewrite breaks the user's program (the original passes): nothing is
// written, exit 0, and the exit code and output tail are in the report.
// RUN: cd %t/p && %clang-astra optimize --static --static-write --passes=restrict-const -i --report %t/rep --test 'echo "testing $ASTRA_TEST_FILE in $(pwd)"; if grep -q "__restrict_[_] out" k.cu; then echo "block 512: invalid argument"; exit 3; fi' k.cu 2>&1 | FileCheck %s --check-prefix=FAIL
// FAIL: note: k.cu: running the --test command with the rewrite in place: echo "testing
// FAIL: warning: k.cu: the --test command failed (exit 3, {{[0-9.]+}} s); the original code passes it (exit 0, {{[0-9.]+}} s): the rewrite is not written; every file is as it was before the test; its last lines of output:
// FAIL-NEXT: testing {{.*}}/p/k.cu in {{.*}}/p
// FAIL-NEXT: block 512: invalid argument
// FAIL: k.cu: scale: unchanged: its rewrite failed the --test command (exit 3), so it was not written
// FAIL-NOT: unverified
// FAIL-NOT: rewrote
// RUN: cmp %t/orig.cu %t/p/k.cu
// RUN: ls -A %t/p | FileCheck %s --check-prefix=CLEAN
// CLEAN: k.cu
// CLEAN-NEXT: k.cu.astra.json
// CLEAN-NOT: {{.}}
// RUN: FileCheck %s --check-prefix=JSON < %t/rep/report.json
// JSON: "user_test": {
// JSON-NEXT: "command": "echo \"testing $ASTRA_TEST_FILE in $(pwd)\"; if grep
// JSON-NEXT: "directory": "{{.*}}/p",
// JSON-NEXT: "file": "k.cu",
// JSON-NEXT: "timeout_s": 600,
// JSON-NEXT: "passed": false,
// JSON-NEXT: "kept": false,
// JSON-NEXT: "run": {
// JSON-NEXT: "passed": false,
// JSON-NEXT: "exit_code": 3,
// JSON: "original_code_run": {
// JSON-NEXT: "passed": true,
// JSON-NEXT: "exit_code": 0,
// JSON: "output_tail": "testing {{.*}}/p/k.cu in {{.*}}/p\nblock 512: invalid argument",
// JSON-NEXT: "output_file": "{{.*}}/rep/test-output/k.cu.1.log"
// RUN: FileCheck %s --check-prefix=MD < %t/rep/report.md
// MD: No change was accepted: its rewrite failed the --test command (exit 3), so it was not written.
// MD: User test (`--test`): `echo "testing $ASTRA_TEST_FILE in $(pwd)"; {{.*}}` in `{{.*}}/p`: failed (exit 3, {{.*}}); the original code passes it (exit 0, {{.*}}); every file is as it was before the test.
// MD: Its whole output: `{{.*}}/rep/test-output/k.cu.1.log`.
// MD: Its last lines of output:
// MD: block 512: invalid argument
// RUN: FileCheck %s --check-prefix=LOG < %t/rep/test-output/k.cu.1.log
// LOG: block 512: invalid argument

// A file with CRLF line ends and no final newline comes back byte for byte.
// RUN: %python %S/Inputs/crlf.py %s %t/p/k.cu && cp %t/p/k.cu %t/crlf.cu
// RUN: cd %t/p && %clang-astra optimize --static --static-write --passes=restrict-const -i --test '! grep -q "__restrict_[_] out" "$ASTRA_TEST_FILE"' k.cu 2>&1 | FileCheck %s --check-prefix=CRLF
// CRLF: running the --test command with the rewrite in place
// CRLF: warning: k.cu: the --test command failed (exit 1,
// RUN: cmp %t/crlf.cu %t/p/k.cu

// A hang is a failure: the command's process group is killed.
// RUN: cp %t/orig.cu %t/p/k.cu
// RUN: cd %t/p && %clang-astra optimize --static --static-write --passes=restrict-const -i --test-timeout 1 --test 'if grep -q "__restrict_[_] out" k.cu; then sleep 60; fi' k.cu 2>&1 | FileCheck %s --check-prefix=HANG
// HANG: warning: k.cu: the --test command failed (timed out after 1 s (its process group was killed), {{[0-9.]+}} s); the original code passes it (exit 0,
// RUN: cmp %t/orig.cu %t/p/k.cu

// A command that fails on the original code too is broken: an error.
// RUN: cd %t/p && not %clang-astra optimize --static --static-write --passes=restrict-const -i --test 'echo no such harness; exit 127' k.cu 2>&1 | FileCheck %s --check-prefix=BROKEN
// BROKEN: error: k.cu: the --test command failed (exit 127, {{[0-9.]+}} s); it fails on the original code too (exit 127, {{[0-9.]+}} s): the command itself fails, so no rewrite can be tested with it; nothing was written (check the command, the directory it runs in (--test-dir, now {{.*}}/p) and --test-timeout); its last lines of output:
// BROKEN-NEXT: no such harness
// RUN: cmp %t/orig.cu %t/p/k.cu

// A passing command keeps the rewrite (-i).
// RUN: cd %t/p && %clang-astra optimize --static --static-write --passes=restrict-const -i --test 'grep -q "__restrict_[_] out" "$ASTRA_TEST_FILE"' k.cu 2>&1 | FileCheck %s --check-prefix=PASS
// PASS: note: k.cu: the --test command passed (exit 0, {{[0-9.]+}} s)
// PASS: k.cu: scale: unchanged: static mode
// PASS: warning: scale: writing 'restrict-const' unverified (--static-write)
// PASS: note: rewrote k.cu
// RUN: FileCheck %s --check-prefix=KEPT < %t/p/k.cu
// KEPT: __global__ void scale(float *{{__restrict__}} out, const float *{{__restrict__}} in, float a, int n)
// RUN: ls -A %t/p | FileCheck %s --check-prefix=CLEAN

// --diff and -o: the rewrite is tried in place and always put back; shown or
// written elsewhere only when it passed. --test-dir: where the command runs.
// RUN: cp %t/orig.cu %t/p/k.cu
// RUN: cd %t/p && %clang-astra optimize --static --static-write --passes=restrict-const --diff --test-dir %t/elsewhere --test 'pwd > where.txt; grep -q "__restrict_[_] out" "$ASTRA_TEST_FILE"' k.cu 2>%t/diff.err | FileCheck %s --check-prefix=DIFF
// DIFF: +__global__ void scale(float *{{__restrict__}} out
// RUN: cmp %t/orig.cu %t/p/k.cu
// RUN: FileCheck %s --check-prefix=WHERE < %t/elsewhere/where.txt
// WHERE: {{.*}}/elsewhere
// RUN: cd %t/p && %clang-astra optimize --static --static-write --passes=restrict-const --diff --test '! grep -q "__restrict_[_] out" "$ASTRA_TEST_FILE"' k.cu 2>%t/diff2.err > %t/diff2.out
// RUN: touch %t/empty && cmp %t/empty %t/diff2.out
// RUN: cd %t/p && %clang-astra optimize --static --static-write --passes=restrict-const -o %t/out.cu --test 'grep -q "__restrict_[_] out" "$ASTRA_TEST_FILE"' k.cu
// RUN: grep -q "__restrict_[_] out" %t/out.cu
// RUN: cmp %t/orig.cu %t/p/k.cu

// A rewrite that changes a shared header (warp-reduce's block_reduce): the
// header is put back too.
// RUN: mkdir -p %t/suite/kb %t/suite/common && cp %astra_src_root/kernels/kernelbench/softmax.cu* %t/suite/kb/ && cp %astra_src_root/kernels/common/*.cuh %t/suite/common/
// RUN: cp -r %t/suite %t/suite-orig
// RUN: cd %t/suite && %clang-astra optimize --static --static-write --passes=warp-reduce -i --test '! grep -q __shfl_xor_sync common/reduce.cuh' kb/softmax.cu 2>&1 | FileCheck %s --check-prefix=HEADER
// HEADER: warning: kb/softmax.cu: the --test command failed (exit 1,
// RUN: diff -r %t/suite-orig %t/suite

// Several files: each is tested in order, with the rewrites accepted before
// it in place; a failure names its file and leaves the others as decided.
// RUN: mkdir -p %t/two && cp %s %t/two/a.cu && cp %s %t/two/b.cu && cp %S/Inputs/scale.cu.astra.json %t/two/a.cu.astra.json && cp %S/Inputs/scale.cu.astra.json %t/two/b.cu.astra.json
// RUN: cd %t/two && %clang-astra optimize --static --static-write --passes=restrict-const -i --test 'case "$ASTRA_TEST_FILE" in */b.cu) grep -q "__restrict_[_] out" a.cu && echo "a.cu holds its rewrite"; ! grep -q "__restrict_[_] out" b.cu;; esac' a.cu b.cu 2>&1 | FileCheck %s --check-prefix=TWO
// TWO: note: a.cu: the --test command passed
// TWO: note: rewrote a.cu
// TWO: warning: b.cu: the --test command failed (exit 1, {{[0-9.]+}} s); the original code passes it (exit 0, {{[0-9.]+}} s): the rewrite is not written; every file is as it was before the test; its last lines of output:
// TWO-NEXT: a.cu holds its rewrite
// TWO-NOT: rewrote b.cu
// RUN: grep -q "__restrict_[_] out" %t/two/a.cu
// RUN: cmp %s %t/two/b.cu

// A signal to clang-astra while the rewrite is in place (the command sends
// SIGTERM to it; lit runs tests with SIGINT ignored, so Ctrl-C's SIGINT is
// in the unit test): the command is ended, the file comes back, and
// clang-astra then dies of the signal.
// RUN: cp %t/orig.cu %t/p/k.cu
// RUN: cd %t/p && not --crash %clang-astra optimize --static --static-write --passes=restrict-const -i --test 'kill -TERM $PPID; sleep 30' k.cu 2> %t/term.err
// RUN: FileCheck %s --check-prefix=TERM < %t/term.err
// TERM: running the --test command with the rewrite in place
// TERM-NOT: k.cu: scale:
// RUN: cmp %t/orig.cu %t/p/k.cu
// RUN: ls -A %t/p | FileCheck %s --check-prefix=CLEAN

// Killed outright (SIGKILL) with the rewrite in place: the file keeps it,
// and the next run on the file puts the original back before reading it.
// RUN: cd %t/p && not --crash %clang-astra optimize --static --static-write --passes=restrict-const -i --test 'kill -KILL $PPID' k.cu
// RUN: grep -q "__restrict_[_] out" %t/p/k.cu
// RUN: cd %t/p && %clang-astra optimize --static --passes=restrict-const k.cu 2>&1 | FileCheck %s --check-prefix=RECOVER
// RECOVER: note: restored {{.*}}/p/k.cu: an interrupted `--test` run had left an untested rewrite in it
// RECOVER: k.cu: scale: unchanged: static mode
// RUN: cmp %t/orig.cu %t/p/k.cu
// RUN: ls -A %t/p | FileCheck %s --check-prefix=CLEAN

#include <cuda_runtime.h>

__global__ void scale(float *out, const float *in, float a, int n) {
  for (int j = threadIdx.x; j < n; j += blockDim.x)
    out[blockIdx.x * n + j] = a * in[blockIdx.x * n + j];
}

void launch_scale(float *out, const float *in, float a, int rows, int n,
                  cudaStream_t s) {
  scale<<<rows, 256, 0, s>>>(out, in, a, n);
}
