#!/bin/bash
# Session 8, call 3 (binary 2136a3a, with the argmax merge):
#  1. the passes GPU tests and the offline optimize tests (argmax rewritten
#     by vectorize's arg-reduction and warp-reduce's pair reduction,
#     verified against the original; the merge touched both passes);
#  2. bench of argmax and topk_softmax (the pair reduction in
#     block_reduce_argmax), then softmax (cut in call 1 in its
#     confirmation) with what remains.
set -u
R=$(pwd)
mkdir -p /tmp/astra-bundle && tar -xJf dist/clang-astra-*.tar.xz -C /tmp/astra-bundle || exit 1
A=$(ls -d /tmp/astra-bundle/clang-astra-*)
export ASTRA_TOOLS_DIR=$A/bin PATH=$A/bin:$PATH ASTRA_CACHE_DIR=/tmp/astra-cache PYTHONUNBUFFERED=1
L=$OUT/logs && mkdir -p $L
clang-astra --version > $L/version.txt 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/device.txt 2>&1
T0=$(date +%s)
(cd $A/test/gpu && timeout 200 env PYTHONPATH=$A/lit python3 -c 'import sys; from lit.main import main; sys.argv[0]="lit"; main()' -v -j 4 --filter 'passes/|optimize/offline' . > $L/gpu-tests.log 2>&1)
echo "tests rc=$? $(( $(date +%s)-T0 )) s" >> $OUT/summary.txt
cd $A
T1=$(date +%s)
timeout $(( 400 - (T1 - T0) )) clang-astra bench kernels/kernelbench/argmax.cu kernels/sglang/topk_softmax.cu \
  --report $OUT/bench-a --torch bench/results/h100-torch.json --rounds 2 --candidates 2 --time-budget 30 \
  > $L/bench-a.md 2> $L/bench-a.log
echo "bench-a rc=$? $(( $(date +%s)-T1 )) s" >> $OUT/summary.txt
T2=$(date +%s)
timeout $(( 580 - (T2 - T0) )) clang-astra bench kernels/kernelbench/softmax.cu \
  --report $OUT/bench-b --torch bench/results/h100-torch.json --rounds 2 --candidates 2 --time-budget 30 \
  > $L/bench-b.md 2> $L/bench-b.log
echo "bench-b rc=$? $(( $(date +%s)-T2 )) s" >> $OUT/summary.txt
tar -cf $OUT/call.tar -C $OUT logs $(cd $OUT && ls -d bench-a bench-b 2>/dev/null) && rm -rf $L $OUT/bench-a $OUT/bench-b
