#!/bin/bash
# Session 9, call 6 (binary 11da90d: flat-vectorize refuses per-element
# stores/atomics that move with the column).
#  1. the passes/ GPU tests;
#  2. bench gather_features and scatter_add (gnn/), default acceptance rule;
#  3. gather_features under --min-shape-speedup 1.0 (gnn-rule/): its small
#     set is a 5 us launch-bound one;
#  4. with the time left, a scoreboard of this build over the SGLang kernels
#     calls 1-4 did not reach (sglang/).
set -u
mkdir -p /tmp/astra-bundle && tar -xJf dist/clang-astra-*.tar.xz -C /tmp/astra-bundle || exit 1
A=$(ls -d /tmp/astra-bundle/clang-astra-*)
export ASTRA_TOOLS_DIR=$A/bin PATH=$A/bin:$PATH ASTRA_CACHE_DIR=/tmp/astra-cache PYTHONUNBUFFERED=1
clang-astra --version > $OUT/version.txt 2>&1
T0=$(date +%s)
(cd $A/test/gpu && timeout 200 env PYTHONPATH=$A/lit python3 -c 'import sys; from lit.main import main; sys.argv[0]="lit"; main()' -v -j 4 --filter 'passes/' . > $OUT/gpu-tests.log 2>&1)
echo "tests rc=$? $(( $(date +%s)-T0 )) s" >> $OUT/summary.txt
if ! grep -q '^PASS' $OUT/gpu-tests.log || grep -q -E '^(FAIL|UNRESOLVED|TIMEOUT)' $OUT/gpu-tests.log; then
  echo "GPU tests failed: no bench" >> $OUT/summary.txt; exit 0
fi
cd $A
ARGS="--torch bench/results/h100-torch.json --rounds 2 --candidates 2 --time-budget 30"
T1=$(date +%s)
timeout 200 clang-astra bench kernels/gnn/gather_features.cu kernels/gnn/scatter_add.cu --report $OUT/gnn $ARGS > $OUT/gnn.md 2> $OUT/gnn.log
echo "bench gnn rc=$? $(( $(date +%s)-T1 )) s" >> $OUT/summary.txt
T2=$(date +%s)
timeout 120 clang-astra bench kernels/gnn/gather_features.cu --min-shape-speedup 1.0 --report $OUT/gnn-rule $ARGS > $OUT/gnn-rule.md 2> $OUT/gnn-rule.log
echo "bench gnn-rule rc=$? $(( $(date +%s)-T2 )) s" >> $OUT/summary.txt
T3=$(date +%s)
timeout $(( 588 - (T3 - T0) )) clang-astra bench kernels/sglang/per_token_quant_fp8.cu kernels/sglang/rmsnorm.cu kernels/sglang/rotary_embedding.cu kernels/sglang/silu_and_mul.cu kernels/sglang/topk_softmax.cu --report $OUT/sglang $ARGS > $OUT/sglang.md 2> $OUT/sglang.log
echo "bench sglang rc=$? $(( $(date +%s)-T3 )) s" >> $OUT/summary.txt
tar -cf $OUT/reports.tar -C $OUT gnn gnn-rule sglang && rm -rf $OUT/gnn $OUT/gnn-rule $OUT/sglang
