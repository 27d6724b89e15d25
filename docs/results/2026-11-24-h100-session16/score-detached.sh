#!/bin/bash
# One kernel's bench for the scoreboard of ab6c397 when it needs more than one
# device call (600 s): sample_neighbors' bench was cut at 286 s and 427 s in
# this session (its verifications take 28-110 s each). The bench runs in a
# process session of its own (setsid), which the device lets run on between
# calls while the machine stays warm (the next call within 30 s), so two calls
# back to back give it up to about 1150 s.
#   MODE=start   extract the build, start the bench on top of the scoreboard
#                carried as .device/score-in/, wait up to LIMIT s (default 585)
#   MODE=collect wait up to LIMIT s for the bench started by the last call
# Either mode, once the bench has ended, packs logs/ and score/ into
# $OUT/call.tar (as score.sh does). FILE (default
# kernels/gnn/sample_neighbors.cu) and DIST (default
# build-scoreboard-ab6c397) as in score.sh; the bench's settings are the
# scoreboard's.
set -u
T0=$(date +%s)
LIMIT=${LIMIT:-585}
W=/tmp/astra-detached
F=${FILE:-kernels/gnn/sample_neighbors.cu}
mkdir -p $OUT
if [ "${MODE:-}" = start ]; then
  if [ -d $W/logs ] && [ ! -e $W/done ]; then
    echo "a bench started by an earlier call is still running: MODE=collect" >&2; exit 1
  fi
  rm -rf $W && mkdir -p $W/logs $W/score /tmp/astra-bundle
  tar -xJf ${DIST:-build-scoreboard-ab6c397}/clang-astra-*.tar.xz -C /tmp/astra-bundle || exit 1
  A=$(ls -d /tmp/astra-bundle/clang-astra-*)
  [ -d .device/score-in ] && cp -r .device/score-in/. $W/score/
  $A/bin/clang-astra --version > $W/logs/version.txt 2>&1
  nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $W/logs/version.txt 2>&1
  B=$(basename $F .cu)
  echo "bench $F started $(date -u +%FT%TZ)" >> $W/logs/summary.txt
  (cd $A && ASTRA_TOOLS_DIR=$A/bin ASTRA_CACHE_DIR=/tmp/astra-cache PYTHONUNBUFFERED=1 \
    setsid bash -c "K0=\$(date +%s); bin/clang-astra bench $F --split-shapes --resume --report $W/score \
      --torch bench/results/h100-torch.json --rounds 2 --candidates 2 --time-budget 30 \
      > $W/logs/bench-$B.md 2> $W/logs/bench-$B.log; \
      echo \"bench $F rc=\$? \$(( \$(date +%s)-K0 )) s\" >> $W/logs/summary.txt; touch $W/done" \
    < /dev/null > /dev/null 2>&1 &)
elif [ "${MODE:-}" != collect ]; then
  echo "MODE must be start or collect" >&2; exit 2
fi
[ -d $W/logs ] || { echo "no bench was started on this machine (a fresh machine: start again)" >&2; exit 1; }
while [ ! -e $W/done ] && [ $(( $(date +%s) - T0 )) -lt $LIMIT ]; do sleep 5; done
if [ -e $W/done ]; then
  tar -cf $OUT/call.tar -C $W logs score && cat $W/logs/summary.txt
else
  echo "bench still running after $(( $(date +%s) - T0 )) s: call again with MODE=collect within 30 s"
  tail -3 $W/logs/bench-*.log
fi
