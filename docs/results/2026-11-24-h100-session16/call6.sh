#!/bin/bash
# Session 16, call 6: the code after the scoreboard's build on a GPU for the
# first time. HEAD's portable build (dist/): the GPU lit tests of engine/
# (the prefetching verifier), optimize/bench-resume.test (bench
# --stop-after) and optimize/split-seed.test (the known-winner refactor);
# then the prefetch benchmark (session 15's prefetch-bench.sh) in the time
# left. Carry ["dist", "build-scoreboard-ab6c397"].
set -u
T0=$(date +%s)
mkdir -p /tmp/astra-bundle && tar -xJf dist/clang-astra-*.tar.xz -C /tmp/astra-bundle || exit 1
A=$(ls -d /tmp/astra-bundle/clang-astra-*)
export PATH=$A/bin:$PATH ASTRA_TOOLS_DIR=$A/bin ASTRA_CACHE_DIR=/tmp/astra-cache PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
clang-astra --version > $OUT/logs/version.txt 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $OUT/logs/version.txt 2>&1
cp -r test/gpu/. $A/test/gpu/
(cd $A/test/gpu && timeout 330 env PYTHONPATH=$A/lit python3 -c 'import sys; from lit.main import main; sys.argv[0]="lit"; main()' \
  -v -j 2 --filter 'engine/|optimize/bench-resume|optimize/split-seed' . ) > $OUT/logs/lit.log 2>&1
echo "lit rc=$? $(( $(date +%s)-T0 )) s" >> $OUT/logs/summary.txt
P0=$(date +%s)
timeout $(( 570 - (P0 - T0) )) bash docs/results/2026-11-24-h100-session15/prefetch-bench.sh > $OUT/logs/prefetch.txt 2>&1
echo "prefetch rc=$? $(( $(date +%s)-P0 )) s" >> $OUT/logs/summary.txt
cp $OUT/prefetch/times.txt $OUT/logs/ 2>/dev/null
tar -cf $OUT/call.tar -C $OUT logs prefetch && rm -rf $OUT/logs $OUT/prefetch
