#!/bin/bash
# Session 13, call 8: `bench --split-shapes` of rmsnorm and fused_add_rmsnorm with the scoreboard's
# settings.
set -u
mkdir -p /tmp/astra-bundle && tar -xJf dist/clang-astra-*.tar.xz -C /tmp/astra-bundle || exit 1
A=$(ls -d /tmp/astra-bundle/clang-astra-*)
export ASTRA_TOOLS_DIR=$A/bin PATH=$A/bin:$PATH ASTRA_CACHE_DIR=/tmp/astra-cache PYTHONUNBUFFERED=1
L=$OUT/logs && mkdir -p $L
clang-astra --version > $L/version.txt 2>&1
T0=$(date +%s)
cd $A
timeout 570 clang-astra bench kernels/sglang/rmsnorm.cu kernels/sglang/fused_add_rmsnorm.cu --split-shapes \
  --report $OUT/bench --torch bench/results/h100-torch.json --rounds 2 --candidates 2 --time-budget 30 \
  > $L/bench.md 2> $L/bench.log
echo "bench rc=$? $(( $(date +%s)-T0 )) s" >> $L/summary.txt
tar -cf $OUT/call.tar -C $OUT logs $( [ -d $OUT/bench ] && echo bench ) && rm -rf $L $OUT/bench
