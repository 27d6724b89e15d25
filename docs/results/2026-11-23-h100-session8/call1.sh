#!/bin/bash
# Session 8, call 1 (binary b88a84d): the commits since 6452be7 on the GPU.
#  1. the optimize and passes GPU tests (among them warp-scan's cumsum and
#     exact integer scans at 20/100/992/1024 threads, vectorize of the loops
#     after a block reduction; ba7fd22, b405f84 and 9f4818c never ran on a
#     GPU);
#  2. bench of the kernels these commits change: cumsum (warp-scan),
#     softmax and layernorm (their later loops now vectorized), as far as
#     the call's time goes.
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
(cd $A/test/gpu && timeout 250 env PYTHONPATH=$A/lit python3 -c 'import sys; from lit.main import main; sys.argv[0]="lit"; main()' -v -j 4 --filter "${TESTS_FILTER:-optimize/|passes/}" . > $L/gpu-tests.log 2>&1)
echo "tests rc=$? $(( $(date +%s)-T0 )) s" >> $OUT/summary.txt
cd $A
T1=$(date +%s)
timeout $(( 575 - (T1 - T0) )) clang-astra bench ${BENCH_FILES:-kernels/kernelbench/cumsum.cu kernels/kernelbench/softmax.cu kernels/kernelbench/layernorm.cu} \
  --report $OUT/bench --torch bench/results/h100-torch.json --rounds 2 --candidates 2 --time-budget 30 \
  > $L/bench.md 2> $L/bench.log
echo "bench rc=$? $(( $(date +%s)-T1 )) s" >> $OUT/summary.txt
tar -cf $OUT/call.tar -C $OUT logs $( [ -d $OUT/bench ] && echo bench ) && rm -rf $L $OUT/bench
