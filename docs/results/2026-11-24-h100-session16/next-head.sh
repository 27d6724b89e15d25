#!/bin/bash
# Prepared in session 16 for the next session, not run yet: HEAD's input
# generation on the H100 machine's 16 cores, and the GPU tests that cover it.
# `make dist` first, then run on the device with carry
# ["dist", "build-scoreboard-ab6c397"]:
#   1. astra-inputs-bench (1 core against all, same run) on the three sets
#      whose inputs cost most;
#   2. the GPU lit tests engine/ and optimize/split-seed (verification with
#      the prefetcher across runs, parallel csr_colind and zeroing), then a
#      whole verification of gelu and softmax, ab6c397 against HEAD;
#   3. topk_softmax with 32-thread blocks against its own 64 (verify, profile);
#   4. session 15's prefetch-bench.sh (ab6c397 against HEAD) in the time left.
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
# topk_softmax with one-warp blocks, which the planner's block-size sweep
# never tries (sizes under 64 are skipped): the round-1 pipeline's passes
# with 32 threads and with the kernel's own 64, each verified and profiled
# against the original.
for TH in 32 64; do
  W=/tmp/topk$TH && rm -rf $W && mkdir -p $W/sglang $W/common
  cp kernels/sglang/topk_softmax.cu* $W/sglang/ && cp kernels/common/* $W/common/
  P=restrict-const,warp-reduce,launch-bounds; [ $TH = 32 ] && P=restrict-const,warp-reduce,block-size,launch-bounds
  clang-astra rewrite -i --passes=$P --pass-opt=block-size.threads=32 $W/sglang/topk_softmax.cu > $L/topk$TH.txt 2>&1
  for K in "topk_softmax<__nv_bfloat16>" "topk_softmax<float>"; do
    clang-astra verify kernels/sglang/topk_softmax.cu --candidate $W/sglang/topk_softmax.cu --kernel "$K" >> $L/topk$TH.txt 2>&1
    clang-astra profile kernels/sglang/topk_softmax.cu --candidate $W/sglang/topk_softmax.cu --kernel "$K" >> $L/topk$TH.txt 2>&1
  done
done
echo "topk $(( $(date +%s)-T0 )) s" >> $L/summary.txt
cp -r test/gpu/. $A/test/gpu/
(cd $A/test/gpu && timeout 300 env PYTHONPATH=$A/lit python3 -c 'import sys; from lit.main import main; sys.argv[0]="lit"; main()' \
  -v -j 2 --filter 'engine/|optimize/split-seed' . ) > $L/lit.log 2>&1
echo "lit rc=$? $(( $(date +%s)-T0 )) s" >> $L/summary.txt
# A whole verification (every shape set, the adversarial runs, 5 seeds) of
# the original against itself, ab6c397 then HEAD: all of the session's
# input changes together (prefetch within and across runs, parallel
# csr_colind and zeroing).
mkdir -p /tmp/pf-old && tar -xJf build-scoreboard-ab6c397/clang-astra-*.tar.xz -C /tmp/pf-old
for F in kernelbench/gelu kernelbench/softmax; do
  for V in old new; do
    B=$A; [ $V = old ] && B=$(ls -d /tmp/pf-old/clang-astra-*)
    V0=$(date +%s%N)
    ASTRA_CACHE_DIR=/tmp/astra-cache-$V ASTRA_TOOLS_DIR=$B/bin $B/bin/clang-astra verify kernels/$F.cu \
      --candidate kernels/$F.cu --seeds 5 > $L/full-$V-${F#*/}.log 2>&1
    echo "full verify $F $V rc=$? $(( ($(date +%s%N)-V0)/1000000 )) ms" >> $L/summary.txt
  done
done
P0=$(date +%s)
LEFT=$(( 570 - (P0 - T0) )); [ $LEFT -lt 1 ] && LEFT=1
timeout $LEFT bash docs/results/2026-11-24-h100-session15/prefetch-bench.sh > $L/prefetch.txt 2>&1
echo "prefetch rc=$? $(( $(date +%s)-P0 )) s" >> $L/summary.txt
cp $OUT/prefetch/times.txt $L/ 2>/dev/null
mkdir -p $OUT/prefetch # absent when no time was left for it
tar -cf $OUT/call.tar -C $OUT logs prefetch && rm -rf $L $OUT/prefetch
