#!/bin/bash
# Session 7, call 1: thread-coarsen on the GPU.
#  1. the engine, optimize and passes GPU tests (thread-coarsen's two new
#     tests among them; the commits since 3526bbe never ran on a GPU);
#  2. sgemm: the pipeline restrict-const, hoist, ldg, unroll, index32,
#     launch-bounds without thread-coarsen and with it at several shapes of
#     the per-thread patch (y4, y8, y4x2, y4x4, y8x2, y2x2), each timed
#     against the original with `profile` (the candidate's spec, written by
#     rewrite -i, gives its launch); transpose: smem-transpose pipeline with
#     and without thread-coarsen y4 and y8;
#  3. where the time of one verification goes (gelu "large", verify -v:
#     inputs, baseline, candidate per seed);
#  4. bench of sgemm and transpose with what remains of the call.
set -u
R=$(pwd)
mkdir -p /tmp/astra-bundle && tar -xJf dist/clang-astra-*.tar.xz -C /tmp/astra-bundle || exit 1
A=$(ls -d /tmp/astra-bundle/clang-astra-*)
export ASTRA_TOOLS_DIR=$A/bin PATH=$A/bin:$PATH ASTRA_CACHE_DIR=/tmp/astra-cache PYTHONUNBUFFERED=1
# At most 8 files come back from a call: the logs travel as one tar.
L=$OUT/logs && mkdir -p $L
clang-astra --version > $L/version.txt 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/device.txt 2>&1
T0=$(date +%s)
(cd $A/test/gpu && timeout 260 env PYTHONPATH=$A/lit python3 -c 'import sys; from lit.main import main; sys.argv[0]="lit"; main()' -v -j 4 --filter 'engine/|optimize/|passes/' . > $L/gpu-tests.log 2>&1)
echo "tests rc=$? $(( $(date +%s)-T0 )) s" >> $OUT/summary.txt
W=/tmp/variants && mkdir -p $W
cd $A/kernels/kernelbench
PIPE=restrict-const,hoist,ldg,unroll,index32
for v in none y4 y8 y4x2 y4x4 y8x2 y2x2; do
  mkdir -p $W/$v && cp sgemm.cu sgemm.cu.astra.json $W/$v/
  case $v in
    none) clang-astra rewrite --passes=$PIPE,launch-bounds -i $W/$v/sgemm.cu 2>> $L/variants.log ;;
    *) y=$(echo $v | sed -E 's/^y([0-9]+).*/\1/'); x=$(echo $v | sed -E -n 's/.*x([0-9]+)$/\1/p'); x=${x:-1}
       clang-astra rewrite --passes=$PIPE,thread-coarsen,launch-bounds --pass-opt=thread-coarsen.y=$y --pass-opt=thread-coarsen.x=$x -i $W/$v/sgemm.cu 2>> $L/variants.log ;;
  esac
  echo "== sgemm $v" >> $L/profiles.txt
  timeout 60 clang-astra profile sgemm.cu --candidate $W/$v/sgemm.cu >> $L/profiles.txt 2>&1
done
for v in none y4 y8; do
  mkdir -p $W/t$v && cp transpose.cu transpose.cu.astra.json $W/t$v/
  if [ $v = none ]; then
    clang-astra rewrite --passes=restrict-const,smem-transpose,ldg,index32,launch-bounds -i $W/t$v/transpose.cu 2>> $L/variants.log
  else
    clang-astra rewrite --passes=restrict-const,smem-transpose,ldg,index32,thread-coarsen,launch-bounds --pass-opt=thread-coarsen.y=${v#y} -i $W/t$v/transpose.cu 2>> $L/variants.log
  fi
  echo "== transpose $v" >> $L/profiles.txt
  timeout 60 clang-astra profile transpose.cu --candidate $W/t$v/transpose.cu >> $L/profiles.txt 2>&1
done
echo "profiles $(( $(date +%s)-T0 )) s" >> $OUT/summary.txt
cp gelu.cu gelu.cu.astra.json $W/
clang-astra rewrite --passes=restrict-const,grid-stride,vectorize,ldg,index32,grid-coarsen,launch-bounds -i $W/gelu.cu 2>> $L/variants.log
timeout 90 clang-astra verify gelu.cu --candidate $W/gelu.cu --shape large --seeds 2 --verbose > $L/verify-gelu.txt 2>&1
echo "verify gelu rc=$? $(( $(date +%s)-T0 )) s" >> $OUT/summary.txt
tar -cf $OUT/variants.tar -C /tmp variants
cd $A
T1=$(date +%s)
timeout $(( 570 - (T1 - T0) )) clang-astra bench kernels/kernelbench/sgemm.cu kernels/kernelbench/transpose.cu --report $OUT/bench \
  --torch bench/results/h100-torch.json --rounds 2 --candidates 2 --time-budget 60 > $L/bench.md 2> $L/bench.log
echo "bench rc=$? $(( $(date +%s)-T1 )) s" >> $OUT/summary.txt
tar -cf $OUT/bench.tar -C $OUT bench && rm -rf $OUT/bench
tar -cf $OUT/logs.tar -C $OUT logs && rm -rf $L
