#!/bin/bash
# GPU call 8 of session 5: does an idle GPU inflate a microsecond kernel's
# timing, and does the 50 ms warm-up (e20bac1) fix it? The old binary
# (f866c93, 5 warm-up launches) and the new one each time transpose's "small"
# shape set, baseline against the smem-transpose candidate, once right after
# 20 s of GPU idleness. Then the new binary's profile and verify GPU tests.
set -u
R=$(pwd)
for v in old new; do
  mkdir -p /tmp/b-$v && tar -xJf dist/$v.tar.xz -C /tmp/b-$v || exit 1
done
OLD=$(ls -d /tmp/b-old/clang-astra-*); NEW=$(ls -d /tmp/b-new/clang-astra-*)
export ASTRA_CACHE_DIR=/tmp/astra-cache PYTHONUNBUFFERED=1
for v in old new; do
  B=$(ls -d /tmp/b-$v/clang-astra-*)
  $B/bin/clang-astra --version >> $OUT/version.txt 2>&1
  cd $B/kernels/kernelbench
  $B/bin/clang-astra rewrite --passes=restrict-const,smem-transpose,ldg,index32,launch-bounds transpose.cu -o transpose.cand.cu 2>/dev/null
  # Compile once (the PTX cache), so that the idle time before timing is the sleep.
  $B/bin/clang-astra profile transpose.cu --candidate transpose.cand.cu --shape small --runs 5 > /dev/null 2>&1
  for round in 1 2; do
    sleep 20
    echo "== $v round $round (after 20 s idle)" >> $OUT/idle.txt
    $B/bin/clang-astra profile transpose.cu --candidate transpose.cand.cu --shape small >> $OUT/idle.txt 2>&1
  done
  cd $R
done
A=$NEW; export ASTRA_TOOLS_DIR=$A/bin PATH=$A/bin:$PATH
(cd $A/test/gpu && timeout 120 env PYTHONPATH=$A/lit python3 -c 'import sys; from lit.main import main; sys.argv[0]="lit"; main()' -v -j 4 --filter 'profile-copy|verify-accepts|run-dump' . > $OUT/gpu-tests.log 2>&1); echo "tests rc=$?" >> $OUT/summary.txt
