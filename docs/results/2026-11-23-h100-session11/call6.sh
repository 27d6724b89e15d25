#!/bin/bash
# Session 11, call 6 (flat-vectorize's inner sums): the GPU test
# passes/flat-vectorize.test (rotary_embedding, scatter_add and now
# sage_mean, each verified and with a control that must fail), and
# sage_mean rewritten by restrict-const, grid-stride, flat-vectorize,
# grid-coarsen timed against the original with `profile`.
set -u
mkdir -p /tmp/astra-bundle && tar -xJf dist/clang-astra-*.tar.xz -C /tmp/astra-bundle || exit 1
A=$(ls -d /tmp/astra-bundle/clang-astra-*)
export ASTRA_TOOLS_DIR=$A/bin PATH=$A/bin:$PATH ASTRA_CACHE_DIR=/tmp/astra-cache PYTHONUNBUFFERED=1
clang-astra --version > $OUT/version.txt 2>&1
T0=$(date +%s)
(cd $A/test/gpu && timeout 110 env PYTHONPATH=$A/lit python3 -c 'import sys; from lit.main import main; sys.argv[0]="lit"; main()' -v --filter 'passes/flat-vectorize' . > $OUT/gpu-tests.log 2>&1)
echo "tests rc=$? $(( $(date +%s)-T0 )) s" >> $OUT/summary.txt
mkdir -p /tmp/w/fv && cp $A/kernels/gnn/sage_mean.cu* /tmp/w/fv/
clang-astra rewrite --passes=restrict-const,grid-stride,flat-vectorize,grid-coarsen -i /tmp/w/fv/sage_mean.cu >> $OUT/rewrite.log 2>&1
timeout 50 clang-astra profile $A/kernels/gnn/sage_mean.cu --candidate /tmp/w/fv/sage_mean.cu --candidate-spec /tmp/w/fv/sage_mean.cu.astra.json --runs 20 >> $OUT/profile.txt 2>&1
echo "profile rc=$? $(( $(date +%s)-T0 )) s" >> $OUT/summary.txt
cat $OUT/summary.txt; grep -E "^(PASS|FAIL|UNRESOLVED|TIMEOUT)" $OUT/gpu-tests.log; grep -E "speedup" $OUT/profile.txt
