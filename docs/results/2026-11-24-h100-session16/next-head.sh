#!/bin/bash
# Prepared in session 16 for the next session, not run yet: HEAD's input
# generation on the H100 machine's 16 cores, and the GPU tests that cover it.
# `make dist` first, then run on the device with carry
# ["dist", "build-scoreboard-ab6c397"]:
#   1. astra-inputs-bench (1 core against all, same run) on the three sets
#      whose inputs cost most;
#   2. the GPU lit tests engine/ and optimize/split-* (verification with the
#      parallel csr_colind and HostBuffer zeroing);
#   3. session 15's prefetch-bench.sh (ab6c397 against HEAD) in the time left.
set -u
T0=$(date +%s)
mkdir -p /tmp/astra-bundle && tar -xJf dist/clang-astra-*.tar.xz -C /tmp/astra-bundle || exit 1
A=$(ls -d /tmp/astra-bundle/clang-astra-*)
export PATH=$A/bin:$PATH ASTRA_TOOLS_DIR=$A/bin ASTRA_CACHE_DIR=/tmp/astra-cache PYTHONUNBUFFERED=1
L=$OUT/logs && mkdir -p $L
clang-astra --version > $L/version.txt 2>&1
nproc >> $L/version.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $L/version.txt 2>&1
for K in gnn/sample_neighbors:sample_neighbors:hop3 kernelbench/gelu:gelu:large kernelbench/softmax:softmax:mid; do
  IFS=: read F N S <<< "$K"
  astra-inputs-bench kernels/$F.cu.astra.json $N $S --seeds 3 >> $L/inputs-bench.txt 2>&1
  echo "rc=$?" >> $L/inputs-bench.txt
done
echo "inputs-bench $(( $(date +%s)-T0 )) s" >> $L/summary.txt
cp -r test/gpu/. $A/test/gpu/
(cd $A/test/gpu && timeout 300 env PYTHONPATH=$A/lit python3 -c 'import sys; from lit.main import main; sys.argv[0]="lit"; main()' \
  -v -j 2 --filter 'engine/|optimize/split-' . ) > $L/lit.log 2>&1
echo "lit rc=$? $(( $(date +%s)-T0 )) s" >> $L/summary.txt
P0=$(date +%s)
timeout $(( 570 - (P0 - T0) )) bash docs/results/2026-11-24-h100-session15/prefetch-bench.sh > $L/prefetch.txt 2>&1
echo "prefetch rc=$? $(( $(date +%s)-P0 )) s" >> $L/summary.txt
cp $OUT/prefetch/times.txt $L/ 2>/dev/null
tar -cf $OUT/call.tar -C $OUT logs prefetch && rm -rf $L $OUT/prefetch
