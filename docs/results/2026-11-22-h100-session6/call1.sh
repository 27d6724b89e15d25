#!/bin/bash
# Session 6, call 1: the GPU checks of what session 5 could not run.
#  1. engine and optimize GPU tests (verifier refactor 8ace3a3, re-timing
#     48d691a, profiler warm-up e20bac1);
#  2. does an idle GPU inflate a microsecond kernel's timing, and does the
#     50 ms warm-up fix it? One binary, transpose's "small" shape set
#     (baseline against the smem-transpose candidate) timed after 20 s of
#     GPU idleness with --warmup-ms 0 (5 launches only, the old behaviour)
#     and with the default 50 ms, alternating;
#  3. transpose benched alone (it was unchanged in session 5's scoreboard
#     because of such a timing).
set -u
R=$(pwd)
mkdir -p /tmp/astra-bundle && tar -xJf dist/clang-astra-*.tar.xz -C /tmp/astra-bundle || exit 1
A=$(ls -d /tmp/astra-bundle/clang-astra-*)
export ASTRA_TOOLS_DIR=$A/bin PATH=$A/bin:$PATH ASTRA_CACHE_DIR=/tmp/astra-cache PYTHONUNBUFFERED=1
clang-astra --version > $OUT/version.txt 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/device.txt 2>&1
T0=$(date +%s)
(cd $A/test/gpu && timeout 240 env PYTHONPATH=$A/lit python3 -c 'import sys; from lit.main import main; sys.argv[0]="lit"; main()' -v -j 4 --filter 'engine/|optimize/' . > $OUT/gpu-tests.log 2>&1)
echo "tests rc=$? $(( $(date +%s)-T0 )) s" >> $OUT/summary.txt
cd $A/kernels/kernelbench
clang-astra rewrite --passes=restrict-const,smem-transpose,ldg,index32,launch-bounds transpose.cu -o /tmp/transpose.cand.cu 2>/dev/null
clang-astra profile transpose.cu --candidate /tmp/transpose.cand.cu --shape small --runs 5 > /dev/null 2>&1
for round in 1 2; do
  for wm in 0 50; do
    sleep 20
    echo "== round $round --warmup-ms $wm (after 20 s idle)" >> $OUT/idle.txt
    clang-astra profile transpose.cu --candidate /tmp/transpose.cand.cu --shape small --warmup-ms $wm >> $OUT/idle.txt 2>&1
  done
done
echo "idle done $(( $(date +%s)-T0 )) s" >> $OUT/summary.txt
cd $A
T1=$(date +%s)
timeout $(( 570 - (T1 - T0) )) clang-astra bench kernels/kernelbench/transpose.cu --report $OUT/bench \
  --torch bench/results/h100-torch.json --rounds 1 --candidates 2 --time-budget 60 > $OUT/bench.md 2> $OUT/bench.log
echo "bench rc=$? $(( $(date +%s)-T1 )) s" >> $OUT/summary.txt
tar -cf $OUT/bench.tar -C $OUT bench && rm -rf $OUT/bench
