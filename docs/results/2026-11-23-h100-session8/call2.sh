#!/bin/bash
# Session 8, call 2 (binary b88a84d): call 1 again with its GPU test fixed,
# and the SGLang row kernels.
#  1. passes/passes-keep-results.test as fixed in the working tree (lit's
#     shell has no $(...); the bundle's copy is replaced by it), so that its
#     last checks (vectorize of the loops after a block reduction in
#     per_token_quant_fp8 and softmax) run;
#  2. bench of the SGLang
#     row kernels whose later loops are now vectorized: rmsnorm,
#     fused_add_rmsnorm, per_token_quant_fp8.
set -u
R=$(pwd)
mkdir -p /tmp/astra-bundle && tar -xJf dist/clang-astra-*.tar.xz -C /tmp/astra-bundle || exit 1
A=$(ls -d /tmp/astra-bundle/clang-astra-*)
export ASTRA_TOOLS_DIR=$A/bin PATH=$A/bin:$PATH ASTRA_CACHE_DIR=/tmp/astra-cache PYTHONUNBUFFERED=1
# At most 8 files come back from a call: the logs travel as one tar.
L=$OUT/logs && mkdir -p $L
clang-astra --version > $L/version.txt 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/device.txt 2>&1
cp $R/test/gpu/passes/passes-keep-results.test $A/test/gpu/passes/
T0=$(date +%s)
(cd $A/test/gpu && timeout 250 env PYTHONPATH=$A/lit python3 -c 'import sys; from lit.main import main; sys.argv[0]="lit"; main()' -v -j 4 --filter "${TESTS_FILTER:-passes/passes-keep}" . > $L/gpu-tests.log 2>&1)
echo "tests rc=$? $(( $(date +%s)-T0 )) s" >> $OUT/summary.txt
cd $A
T1=$(date +%s)
timeout $(( 575 - (T1 - T0) )) clang-astra bench ${BENCH_FILES:-kernels/sglang/rmsnorm.cu kernels/sglang/fused_add_rmsnorm.cu kernels/sglang/per_token_quant_fp8.cu} \
  --report $OUT/bench --torch bench/results/h100-torch.json --rounds 2 --candidates 2 --time-budget 30 \
  > $L/bench.md 2> $L/bench.log
echo "bench rc=$? $(( $(date +%s)-T1 )) s" >> $OUT/summary.txt
tar -cf $OUT/call.tar -C $OUT logs $( [ -d $OUT/bench ] && echo bench ) && rm -rf $L $OUT/bench
