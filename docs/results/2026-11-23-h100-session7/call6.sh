#!/bin/bash
# Session 7, call 6 (binary 6452be7, the scoreboard's build): the
# kernelbench kernels call 5 did not reach (matvec, softmax, sum_rows).
set -u
mkdir -p /tmp/astra-bundle && tar -xJf dist/clang-astra-*.tar.xz -C /tmp/astra-bundle || exit 1
A=$(ls -d /tmp/astra-bundle/clang-astra-*)
export ASTRA_TOOLS_DIR=$A/bin PATH=$A/bin:$PATH ASTRA_CACHE_DIR=/tmp/astra-cache PYTHONUNBUFFERED=1
L=$OUT/logs && mkdir -p $L
clang-astra --version > $L/version.txt 2>&1
T0=$(date +%s)
cd $A
timeout 480 clang-astra bench kernels/kernelbench/matvec.cu kernels/kernelbench/softmax.cu kernels/kernelbench/sum_rows.cu \
  --report $OUT/bench --torch bench/results/h100-torch.json --rounds 2 --candidates 2 --time-budget 30 \
  > $L/bench.md 2> $L/bench.log
echo "bench rc=$? $(( $(date +%s)-T0 )) s" >> $OUT/summary.txt
tar -cf $OUT/bench.tar -C $OUT bench logs && rm -rf $OUT/bench $L
