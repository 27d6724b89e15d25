#!/bin/bash
# GPU call 1 of session 5: engine GPU tests with the KernelRunner snapshot merge,
# bench --resume GPU test, verify --verbose split on the biggest shapes.
set -u
mkdir -p /tmp/astra-bundle && tar -xJf dist/clang-astra-*.tar.xz -C /tmp/astra-bundle || exit 1
A=$(ls -d /tmp/astra-bundle/clang-astra-*)
export ASTRA_TOOLS_DIR=$A/bin PATH=$A/bin:$PATH ASTRA_CACHE_DIR=/tmp/astra-cache PYTHONUNBUFFERED=1
clang-astra --version > $OUT/version.txt 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/device.txt 2>&1
T0=$(date +%s)
(cd $A/test/gpu && timeout 240 env PYTHONPATH=$A/lit python3 -c 'import sys; from lit.main import main; sys.argv[0]="lit"; main()' -v -j 3 --filter 'engine/|bench-resume' . > $OUT/gpu-tests.log 2>&1); echo "tests rc=$? $(( $(date +%s)-T0 )) s" >> $OUT/summary.txt
cd $A/kernels/kernelbench
clang-astra rewrite --passes=restrict-const,vectorize,ldg,fast-math,index32,launch-bounds softmax.cu -o softmax.cand.cu 2> $OUT/rw-softmax.err
clang-astra rewrite --passes=restrict-const,ldg,index32,launch-bounds argmax.cu -o argmax.cand.cu 2> $OUT/rw-argmax.err
T0=$(date +%s)
timeout 150 clang-astra verify softmax.cu --candidate softmax.cand.cu --shape vocab --no-adversarial --verbose > $OUT/verify-softmax.log 2>&1; echo "softmax verify rc=$? $(( $(date +%s)-T0 )) s" >> $OUT/summary.txt
T0=$(date +%s)
timeout 100 clang-astra verify argmax.cu --candidate argmax.cand.cu --shape large --no-adversarial --verbose > $OUT/verify-argmax.log 2>&1; echo "argmax verify rc=$? $(( $(date +%s)-T0 )) s" >> $OUT/summary.txt
nproc >> $OUT/summary.txt
