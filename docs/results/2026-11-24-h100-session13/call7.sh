#!/bin/bash
# Session 13, call 7: `bench --split-shapes` of mean_dim with the scoreboard's
# settings, then the optimizer's GPU tests (split-shapes among them).
set -u
mkdir -p /tmp/astra-bundle && tar -xJf dist/clang-astra-*.tar.xz -C /tmp/astra-bundle || exit 1
A=$(ls -d /tmp/astra-bundle/clang-astra-*)
export ASTRA_TOOLS_DIR=$A/bin PATH=$A/bin:$PATH ASTRA_CACHE_DIR=/tmp/astra-cache PYTHONUNBUFFERED=1
L=$OUT/logs && mkdir -p $L
clang-astra --version > $L/version.txt 2>&1
T0=$(date +%s)
cd $A
timeout 340 clang-astra bench kernels/kernelbench/mean_dim.cu --split-shapes \
  --report $OUT/bench --torch bench/results/h100-torch.json --rounds 2 --candidates 2 --time-budget 30 \
  > $L/bench.md 2> $L/bench.log
echo "bench rc=$? $(( $(date +%s)-T0 )) s" >> $L/summary.txt
T1=$(date +%s)
(cd $A/test/gpu && timeout $(( 585 - (T1 - T0) )) env PYTHONPATH=$A/lit python3 -c 'import sys; from lit.main import main; sys.argv[0]="lit"; main()' -v -j 4 --filter 'optimize/' . > $L/gpu-tests.log 2>&1)
echo "tests rc=$? $(( $(date +%s)-T1 )) s" >> $L/summary.txt
tar -cf $OUT/call.tar -C $OUT logs $( [ -d $OUT/bench ] && echo bench ) && rm -rf $L $OUT/bench
