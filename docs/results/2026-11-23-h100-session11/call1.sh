#!/bin/bash
# Session 11, call 1 (flat-vectorize in helpers, block-stride loops):
#  1. the new GPU test passes/flat-vectorize.test (rotary_embedding verified,
#     and a control that must fail);
#  2. the pass's own output for rotary_embedding (restrict-const,
#     flat-vectorize) timed against the original with `profile`, both
#     instantiations;
#  3. bench of rotary_embedding (the default acceptance rule).
set -u
mkdir -p /tmp/astra-bundle && tar -xJf dist/clang-astra-*.tar.xz -C /tmp/astra-bundle || exit 1
A=$(ls -d /tmp/astra-bundle/clang-astra-*)
export ASTRA_TOOLS_DIR=$A/bin PATH=$A/bin:$PATH ASTRA_CACHE_DIR=/tmp/astra-cache PYTHONUNBUFFERED=1
clang-astra --version > $OUT/version.txt 2>&1
T0=$(date +%s)
(cd $A/test/gpu && timeout 240 env PYTHONPATH=$A/lit python3 -c 'import sys; from lit.main import main; sys.argv[0]="lit"; main()' -v -j 4 --filter 'passes/flat-vectorize' . > $OUT/gpu-tests.log 2>&1)
echo "tests rc=$? $(( $(date +%s)-T0 )) s" >> $OUT/summary.txt
W=/tmp/w; mkdir -p $W/common $W/fv
cp $A/kernels/common/*.cuh $W/common/
cp $A/kernels/sglang/rotary_embedding.cu* $W/fv/
clang-astra rewrite --passes=restrict-const,flat-vectorize -i $W/fv/rotary_embedding.cu >> $OUT/rewrite.log 2>&1
for k in '__nv_bfloat16' '__half'; do
  echo "== fv $k" >> $OUT/profile.txt
  timeout 60 clang-astra profile $A/kernels/sglang/rotary_embedding.cu --kernel "rotary_embedding<$k>" --candidate $W/fv/rotary_embedding.cu --runs 30 >> $OUT/profile.txt 2>&1
  echo "rc=$? t=$(( $(date +%s)-T0 ))" >> $OUT/profile.txt
done
cd $A
ARGS="--torch bench/results/h100-torch.json --rounds 2 --candidates 2 --time-budget 30"
T1=$(date +%s)
timeout $(( 585 - (T1 - T0) )) clang-astra bench kernels/sglang/rotary_embedding.cu --report $OUT/rot $ARGS > $OUT/rot.md 2> $OUT/rot.log
echo "bench rot rc=$? $(( $(date +%s)-T1 )) s" >> $OUT/summary.txt
tar -cf $OUT/reports.tar -C $OUT rot && rm -rf $OUT/rot
cat $OUT/summary.txt; grep -E "^(PASS|FAIL|UNSUPPORTED|UNRESOLVED)" $OUT/gpu-tests.log
