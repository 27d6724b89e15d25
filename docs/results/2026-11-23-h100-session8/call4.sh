#!/bin/bash
# Session 8, call 4 (binary 2136a3a):
#  1. the engine GPU tests (the other GPU tests ran in calls 1-3);
#  2. conv1d, `profile` against the original: the pipeline restrict-const,
#     hoist, ldg, index32, launch-bounds without thread-coarsen and with it
#     along x (x = 2, 4: the guard-return tail of ba7fd22 makes a 1-D kernel
#     coarsenable; the planner does not try x), to learn whether
#     x-coarsening a 1-D kernel pays;
#  3. bench of conv1d (last measured in session 6) with what remains.
set -u
R=$(pwd)
mkdir -p /tmp/astra-bundle && tar -xJf dist/clang-astra-*.tar.xz -C /tmp/astra-bundle || exit 1
A=$(ls -d /tmp/astra-bundle/clang-astra-*)
export ASTRA_TOOLS_DIR=$A/bin PATH=$A/bin:$PATH ASTRA_CACHE_DIR=/tmp/astra-cache PYTHONUNBUFFERED=1
L=$OUT/logs && mkdir -p $L
clang-astra --version > $L/version.txt 2>&1
T0=$(date +%s)
(cd $A/test/gpu && timeout 200 env PYTHONPATH=$A/lit python3 -c 'import sys; from lit.main import main; sys.argv[0]="lit"; main()' -v -j 4 --filter 'engine/' . > $L/gpu-tests.log 2>&1)
echo "tests rc=$? $(( $(date +%s)-T0 )) s" >> $OUT/summary.txt
W=/tmp/variants && mkdir -p $W
cd $A/kernels/kernelbench
PIPE=restrict-const,hoist,ldg,index32
for v in none x2 x4; do
  mkdir -p $W/$v && cp conv1d.cu conv1d.cu.astra.json $W/$v/
  if [ $v = none ]; then
    clang-astra rewrite --passes=$PIPE,launch-bounds -i $W/$v/conv1d.cu >> $L/variants.log 2>&1
  else
    clang-astra rewrite --passes=$PIPE,thread-coarsen,launch-bounds --pass-opt=thread-coarsen.y=1 --pass-opt=thread-coarsen.x=${v#x} -i $W/$v/conv1d.cu >> $L/variants.log 2>&1
  fi
  echo "== conv1d $v" >> $L/profiles.txt
  timeout 90 clang-astra profile conv1d.cu --candidate $W/$v/conv1d.cu >> $L/profiles.txt 2>&1
  echo "   rc=$? $(( $(date +%s)-T0 )) s" >> $L/profiles.txt
done
echo "profiles $(( $(date +%s)-T0 )) s" >> $OUT/summary.txt
cd $A
T1=$(date +%s)
timeout $(( 580 - (T1 - T0) )) clang-astra bench kernels/kernelbench/conv1d.cu \
  --report $OUT/bench --torch bench/results/h100-torch.json --rounds 2 --candidates 2 --time-budget 30 \
  > $L/bench.md 2> $L/bench.log
echo "bench rc=$? $(( $(date +%s)-T1 )) s" >> $OUT/summary.txt
tar -cf $OUT/call.tar -C $OUT logs $( [ -d $OUT/bench ] && echo bench ) && rm -rf $L $OUT/bench
