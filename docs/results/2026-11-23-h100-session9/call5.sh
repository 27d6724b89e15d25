#!/bin/bash
# Session 9, call 5 (binary 5d04f16: flat-vectorize with its 8-byte path).
#  1. the passes/ GPU tests (gather_features and scatter_add rewritten by
#     flat-vectorize, verified against the original);
#  2. bench gather_features and scatter_add, a report of their own (gnn/);
#  3. with the time left, the scoreboard of calls 1-4 resumed over the
#     SGLang kernels it had not reached (flat-vectorize, the only code
#     difference from 472ef87, fires on none of them).
set -u
R=$(pwd)
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
timeout 300 clang-astra bench kernels/gnn/gather_features.cu kernels/gnn/scatter_add.cu --report $OUT/gnn $ARGS > $OUT/gnn.md 2> $OUT/gnn.log
echo "bench gnn rc=$? $(( $(date +%s)-T1 )) s" >> $OUT/summary.txt
mkdir -p $OUT/bench && cp -r "$R/dist/resume/." $OUT/bench/
T2=$(date +%s)
timeout $(( 585 - (T2 - T0) )) clang-astra bench kernels/sglang/per_token_quant_fp8.cu kernels/sglang/rmsnorm.cu kernels/sglang/rotary_embedding.cu kernels/sglang/silu_and_mul.cu kernels/sglang/topk_softmax.cu --resume --report $OUT/bench $ARGS > $OUT/bench.md 2> $OUT/bench.log
echo "bench resume rc=$? $(( $(date +%s)-T2 )) s" >> $OUT/summary.txt
tar -cf $OUT/reports.tar -C $OUT gnn bench && rm -rf $OUT/gnn $OUT/bench
