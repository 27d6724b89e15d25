#!/bin/bash
# Session 10, call 2 (rows-per-block, vectorize through an index local):
#  1. the passes/ GPU tests (rows-per-block.test is new);
#  2. the pass's own output for merge_attn_states (restrict-const, vectorize,
#     rows-per-block at 4 and 16 rows) timed against the original with
#     `profile`, both instantiations;
#  3. bench of merge_attn_states (the default acceptance rule).
set -u
mkdir -p /tmp/astra-bundle && tar -xJf dist/clang-astra-*.tar.xz -C /tmp/astra-bundle || exit 1
A=$(ls -d /tmp/astra-bundle/clang-astra-*)
export ASTRA_TOOLS_DIR=$A/bin PATH=$A/bin:$PATH ASTRA_CACHE_DIR=/tmp/astra-cache PYTHONUNBUFFERED=1
clang-astra --version > $OUT/version.txt 2>&1
T0=$(date +%s)
(cd $A/test/gpu && timeout 240 env PYTHONPATH=$A/lit python3 -c 'import sys; from lit.main import main; sys.argv[0]="lit"; main()' -v -j 4 --filter 'passes/' . > $OUT/gpu-tests.log 2>&1)
echo "tests rc=$? $(( $(date +%s)-T0 )) s" >> $OUT/summary.txt
W=/tmp/w; mkdir -p $W/common $W/r4 $W/r16
cp $A/kernels/common/*.cuh $W/common/
cp $A/kernels/sglang/merge_attn_states.cu* $W/r4/ && cp $A/kernels/sglang/merge_attn_states.cu* $W/r16/
clang-astra rewrite --passes=restrict-const,vectorize,rows-per-block -i $W/r4/merge_attn_states.cu >> $OUT/rewrite.log 2>&1
clang-astra rewrite --passes=restrict-const,vectorize,rows-per-block --pass-opt=rows-per-block.rows=16 -i $W/r16/merge_attn_states.cu >> $OUT/rewrite.log 2>&1
for v in r4 r16; do for k in '__nv_bfloat16' '__half'; do
  echo "== $v $k" >> $OUT/profile.txt
  timeout 60 clang-astra profile $A/kernels/sglang/merge_attn_states.cu --kernel "merge_attn_states<$k>" --candidate $W/$v/merge_attn_states.cu --runs 30 >> $OUT/profile.txt 2>&1
  echo "rc=$? t=$(( $(date +%s)-T0 ))" >> $OUT/profile.txt
done; done
cd $A
ARGS="--torch bench/results/h100-torch.json --rounds 2 --candidates 2 --time-budget 30"
T1=$(date +%s)
timeout $(( 585 - (T1 - T0) )) clang-astra bench kernels/sglang/merge_attn_states.cu --report $OUT/mas $ARGS > $OUT/mas.md 2> $OUT/mas.log
echo "bench mas rc=$? $(( $(date +%s)-T1 )) s" >> $OUT/summary.txt
tar -cf $OUT/reports.tar -C $OUT mas && rm -rf $OUT/mas
cat $OUT/summary.txt; grep -E "^(PASS|FAIL|UNSUPPORTED|UNRESOLVED)" $OUT/gpu-tests.log
