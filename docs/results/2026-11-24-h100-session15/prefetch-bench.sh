#!/bin/bash
# Prepared in session 15, not run yet (the session's device time was spent).
# Benchmark of the input prefetch (3d04ea3): the same verification with the
# scoreboard's build (ab6c397, inputs made per seed before the seed runs)
# and the new build (dist/, the next seed's inputs made while a seed runs),
# alternated, on the three sets where inputs cost most; prints each time and
# the ratio old/new measured in the same call. The candidate is the original
# itself, 5 seeds (optimize's default), no adversarial runs.
# Run on the device with carry ["dist", "build-scoreboard-ab6c397"].
set -u
L=$OUT/prefetch && mkdir -p $L
for B in old:build-scoreboard-ab6c397 new:dist; do
  mkdir -p /tmp/pf-${B%%:*} && tar -xJf ${B#*:}/clang-astra-*.tar.xz -C /tmp/pf-${B%%:*} || exit 1
done
for K in kernelbench/gelu:large kernelbench/softmax:mid gnn/sample_neighbors:hop3; do
  F=kernels/${K%%:*}.cu
  for Rep in 1 2; do
    for V in old new; do
      A=$(ls -d /tmp/pf-$V/clang-astra-*)
      T0=$(date +%s%N)
      # Each build its own compile cache: rep 1 compiles for both, rep 2
      # reuses its own.
      ASTRA_CACHE_DIR=/tmp/astra-cache-pf-$V ASTRA_TOOLS_DIR=$A/bin $A/bin/clang-astra verify $F --candidate $F --shape ${K##*:} --seeds 5 \
        --no-adversarial --verbose > $L/$V-${K//\//_}-$Rep.log 2>&1
      RC=$?
      MS=$(( ($(date +%s%N) - T0) / 1000000 ))
      echo "$K $V rep$Rep rc=$RC $(( MS / 1000 )).$(printf %03d $(( MS % 1000 ))) s" >> $L/times.txt
    done
  done
done
python3 - $L/times.txt <<'PY' >> $L/times.txt
import sys, collections
t = collections.defaultdict(list)
for line in open(sys.argv[1]):
    k, v, _, _, s, _ = line.split()
    t[(k, v)].append(float(s))
for k in sorted({k for k, _ in t}):
    o, n = sum(t[(k, 'old')]), sum(t[(k, 'new')])
    print(f"{k}: old {o:.1f} s, new {n:.1f} s, old/new {o / n:.2f}x")
PY
cat $L/times.txt
