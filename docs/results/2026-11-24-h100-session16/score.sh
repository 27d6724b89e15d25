#!/bin/bash
# Session 16 (session 15's script, plus a warm machine keeps the scoreboard): one scoreboard of one build over the whole suite, resumed call
# after call. Run on the device with the portable build carried as dist/ and
# the scoreboard so far (the previous call's score/) carried as
# .device/score-in/. Each kernel is one `bench --split-shapes --resume` into
# $OUT/score, with the scoreboard's settings, started only while its
# estimated time is left of the call's LIMIT seconds; a kernel cut by the
# limit is simply not in the scoreboard (it runs again next call).
# Optional: PRE (a command run first, e.g. GPU tests), LIMIT (default 585),
# DIST (the folder holding the build's tarball, default dist; --resume needs
# the scoreboard's own build: ab6c397 is kept in build-scoreboard-ab6c397/).
set -u
T0=$(date +%s)
LIMIT=${LIMIT:-585}
mkdir -p /tmp/astra-bundle && tar -xJf ${DIST:-dist}/clang-astra-*.tar.xz -C /tmp/astra-bundle || exit 1
A=$(ls -d /tmp/astra-bundle/clang-astra-*)
export ASTRA_TOOLS_DIR=$A/bin PATH=$A/bin:$PATH ASTRA_CACHE_DIR=/tmp/astra-cache PYTHONUNBUFFERED=1
L=$OUT/logs && mkdir -p $L
clang-astra --version > $L/version.txt 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $L/version.txt 2>&1
mkdir -p $OUT/score
# A warm machine keeps the last call's scoreboard in /tmp/astra-score-keep, so
# the next call can start at once, before its output is copied here.
if [ -f /tmp/astra-score-keep/scoreboard.json ]; then cp -r /tmp/astra-score-keep/. $OUT/score/; echo "score from warm machine" >> $L/summary.txt
elif [ -d .device/score-in ]; then cp -r .device/score-in/. $OUT/score/; fi
cp -r test/gpu/. $A/test/gpu/ 2>/dev/null
S=$(pwd)
cd $A
if [ -n "${PRE:-}" ]; then
  P0=$(date +%s); bash -c "$PRE" > $L/pre.log 2>&1
  echo "pre rc=$? $(( $(date +%s)-P0 )) s" >> $L/summary.txt
fi
# Seconds each file took with --split-shapes in sessions 13-14, rounded up
# (3d102e7 and before: the next build verifies less, so these are ceilings);
# the rest twice its unsplit time in session 9 (matvec: cut at 195 s in
# session 15's call 1, its large half not done; softmax: cut at 419 s in
# session 15's call 6 before its merged-file check).
est() {
  case $1 in
    *kernelbench/softmax.cu) echo 540 ;; *conv1d*) echo 400 ;; *gelu.cu) echo 330 ;; *cumsum*) echo 320 ;;
    *matvec*) echo 300 ;;
    *argmax*|*fused_add*|*sgemm*) echo 260 ;; *sample_neighbors*) echo 400 ;;
    *per_token*|*rmsnorm*|*merge_attn*|*layernorm*|*sage_mean*) echo 230 ;;
    *topk*|*mean_dim*) echo 190 ;;
    *silu*|*gelu_tanh*|*rotary*) echo 100 ;;
    *) echo 180 ;;
  esac
}
for F in $(cat $S/docs/results/2026-11-24-h100-session16/order.txt); do
  if grep -q "\"$F\"" $OUT/score/scoreboard.json 2>/dev/null; then continue; fi
  LEFT=$(( LIMIT - ($(date +%s) - T0) ))
  E=$(est $F)
  if [ $LEFT -lt $E ]; then echo "skip $F: $LEFT s left, needs ~$E" >> $L/summary.txt; continue; fi
  K0=$(date +%s)
  timeout $LEFT clang-astra bench $F --split-shapes --resume --report $OUT/score \
    --torch bench/results/h100-torch.json --rounds 2 --candidates 2 --time-budget 30 \
    > $L/bench-$(basename $F .cu).md 2> $L/bench-$(basename $F .cu).log
  echo "bench $F rc=$? $(( $(date +%s)-K0 )) s" >> $L/summary.txt
done
echo "total $(( $(date +%s)-T0 )) s" >> $L/summary.txt
rm -rf /tmp/astra-score-keep && cp -r $OUT/score /tmp/astra-score-keep
tar -cf $OUT/call.tar -C $OUT logs score && rm -rf $L $OUT/score
