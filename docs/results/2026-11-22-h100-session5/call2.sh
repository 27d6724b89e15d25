#!/bin/bash
# GPU call 2 of session 5: GPU tests of the new passes (smem-transpose,
# warp-reduce through block_reduce), verify --verbose, bench --resume; a first
# bench of transpose and rmsnorm with them.
set -u
mkdir -p /tmp/astra-bundle && tar -xJf dist/clang-astra-*.tar.xz -C /tmp/astra-bundle || exit 1
A=$(ls -d /tmp/astra-bundle/clang-astra-*)
export ASTRA_TOOLS_DIR=$A/bin PATH=$A/bin:$PATH ASTRA_CACHE_DIR=/tmp/astra-cache PYTHONUNBUFFERED=1
clang-astra --version > $OUT/version.txt 2>&1
T0=$(date +%s)
(cd $A/test/gpu && timeout 300 env PYTHONPATH=$A/lit python3 -c 'import sys; from lit.main import main; sys.argv[0]="lit"; main()' -v -j 3 --filter 'passes-keep|verify-accepts|bench-resume' . > $OUT/gpu-tests.log 2>&1); echo "tests rc=$? $(( $(date +%s)-T0 )) s" >> $OUT/summary.txt
cd $A
T0=$(date +%s)
timeout 250 clang-astra bench kernels/kernelbench/transpose.cu kernels/sglang/rmsnorm.cu --report $OUT/bench --torch bench/results/h100-torch.json --rounds 2 --candidates 2 --time-budget 40 > $OUT/bench.md 2> $OUT/bench.log; echo "bench rc=$? $(( $(date +%s)-T0 )) s" >> $OUT/summary.txt
