#!/bin/bash
# Session 7, call 5 (binary 6452be7):
#  1. the acceptance rule `--min-shape-speedup 1.0` (not slower on any set,
#     1.02x over all of them) on gelu and mean_dim, the two kernels whose
#     candidates the default rule refused in session 6 (its own scoreboard,
#     bench-rule/);
#  2. the other kernelbench kernels with the default rule (bench/), as far
#     as the call's time goes.
set -u
R=$(pwd)
mkdir -p /tmp/astra-bundle && tar -xJf dist/clang-astra-*.tar.xz -C /tmp/astra-bundle || exit 1
A=$(ls -d /tmp/astra-bundle/clang-astra-*)
export ASTRA_TOOLS_DIR=$A/bin PATH=$A/bin:$PATH ASTRA_CACHE_DIR=/tmp/astra-cache PYTHONUNBUFFERED=1
L=$OUT/logs && mkdir -p $L
clang-astra --version > $L/version.txt 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv >> $L/version.txt 2>&1
T0=$(date +%s)
cd $A
timeout 250 clang-astra bench kernels/kernelbench/gelu.cu kernels/kernelbench/mean_dim.cu --min-shape-speedup 1.0 \
  --report $OUT/bench-rule --torch bench/results/h100-torch.json --rounds 2 --candidates 2 --time-budget 30 \
  > $L/bench-rule.md 2> $L/bench-rule.log
echo "bench-rule rc=$? $(( $(date +%s)-T0 )) s" >> $OUT/summary.txt
T1=$(date +%s)
timeout $(( 570 - (T1 - T0) )) clang-astra bench kernels/kernelbench/matvec.cu kernels/kernelbench/layernorm.cu \
  kernels/kernelbench/softmax.cu kernels/kernelbench/sum_rows.cu kernels/kernelbench/argmax.cu kernels/kernelbench/cumsum.cu \
  --report $OUT/bench --torch bench/results/h100-torch.json --rounds 2 --candidates 2 --time-budget 30 \
  > $L/bench.md 2> $L/bench.log
echo "bench rc=$? $(( $(date +%s)-T1 )) s" >> $OUT/summary.txt
tar -cf $OUT/bench.tar -C $OUT bench bench-rule logs && rm -rf $OUT/bench $OUT/bench-rule $L
