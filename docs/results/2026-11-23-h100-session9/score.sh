#!/bin/bash
# Session 9 (binary 472ef87), the whole-suite scoreboard: `bench` over BENCH_FILES as one
# scoreboard of one build, continued across calls with --resume (the report
# folder of the previous call is carried back as dist/resume).
#   RUN_TESTS=1  first run the GPU tests named by TESTS_FILTER; no bench if
#                one fails
#   BENCH_TIMEOUT seconds for the bench
set -u
R=$(pwd)
mkdir -p /tmp/astra-bundle && tar -xJf dist/clang-astra-*.tar.xz -C /tmp/astra-bundle || exit 1
A=$(ls -d /tmp/astra-bundle/clang-astra-*)
export ASTRA_TOOLS_DIR=$A/bin PATH=$A/bin:$PATH ASTRA_CACHE_DIR=/tmp/astra-cache PYTHONUNBUFFERED=1
clang-astra --version > $OUT/version.txt 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv >> $OUT/version.txt 2>&1
T0=$(date +%s)
if [ "${RUN_TESTS:-0}" = 1 ]; then
  (cd $A/test/gpu && timeout ${TESTS_TIMEOUT:-200} env PYTHONPATH=$A/lit python3 -c 'import sys; from lit.main import main; sys.argv[0]="lit"; main()' -v -j 4 --filter "${TESTS_FILTER:-engine/}" . > $OUT/gpu-tests.log 2>&1)
  echo "tests rc=$? $(( $(date +%s)-T0 )) s" >> $OUT/summary.txt
  if ! grep -q '^PASS' $OUT/gpu-tests.log || grep -q -E '^(FAIL|UNRESOLVED|TIMEOUT)' $OUT/gpu-tests.log; then
    echo "GPU tests failed: no bench" >> $OUT/summary.txt; exit 0
  fi
fi
cd $A
resume=""
if [ -d "$R/dist/resume" ]; then
  mkdir -p $OUT/bench && cp -r "$R/dist/resume/." $OUT/bench/ && resume=--resume
fi
T1=$(date +%s)
timeout $(( ${BENCH_END:-560} - (T1 - T0) )) clang-astra bench ${BENCH_FILES:-kernels} $resume --report $OUT/bench \
  --torch bench/results/h100-torch.json ${BENCH_ARGS:---rounds 2 --candidates 2 --time-budget 30} \
  > $OUT/bench.md 2> $OUT/bench.log
echo "bench rc=$? $(( $(date +%s)-T1 )) s $resume" >> $OUT/summary.txt
# At most 8 files come back from a call: the report folder travels as one.
tar -cf $OUT/bench.tar -C $OUT bench && rm -rf $OUT/bench
