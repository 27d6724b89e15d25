#!/bin/bash
# Session 11, call 4 (binary f19443a): gelu with more rounds and time than
# the scoreboard's (--rounds 3 --candidates 2 --time-budget 150): its
# pipeline candidate reached 1.018-1.0197x on the 7 us set in sessions 6-7,
# where the default rule asks 1.02x.
set -u
mkdir -p /tmp/astra-bundle && tar -xJf dist/clang-astra-*.tar.xz -C /tmp/astra-bundle || exit 1
A=$(ls -d /tmp/astra-bundle/clang-astra-*)
export ASTRA_TOOLS_DIR=$A/bin PATH=$A/bin:$PATH ASTRA_CACHE_DIR=/tmp/astra-cache PYTHONUNBUFFERED=1
clang-astra --version > $OUT/version.txt 2>&1
cd $A
T1=$(date +%s)
timeout 540 clang-astra bench kernels/kernelbench/gelu.cu --report $OUT/gelu --torch bench/results/h100-torch.json --rounds 3 --candidates 2 --time-budget 150 > $OUT/gelu.md 2> $OUT/gelu.log
echo "bench rc=$? $(( $(date +%s)-T1 )) s" >> $OUT/summary.txt
tar -cf $OUT/reports.tar -C $OUT gelu && rm -rf $OUT/gelu
cat $OUT/summary.txt
