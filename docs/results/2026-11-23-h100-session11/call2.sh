#!/bin/bash
# Session 11, call 2 (flat-vectorize: float atomic adds as one vector atomic):
#  1. the passes/ GPU tests (flat-vectorize.test now also verifies
#     scatter_add, with a control that must fail);
#  2. scatter_add rewritten by restrict-const, grid-stride, flat-vectorize,
#     grid-coarsen (-i, the spec follows) timed against the original with
#     `profile`;
#  3. bench of scatter_add (the default acceptance rule).
set -u
mkdir -p /tmp/astra-bundle && tar -xJf dist/clang-astra-*.tar.xz -C /tmp/astra-bundle || exit 1
A=$(ls -d /tmp/astra-bundle/clang-astra-*)
export ASTRA_TOOLS_DIR=$A/bin PATH=$A/bin:$PATH ASTRA_CACHE_DIR=/tmp/astra-cache PYTHONUNBUFFERED=1
clang-astra --version > $OUT/version.txt 2>&1
T0=$(date +%s)
(cd $A/test/gpu && timeout 240 env PYTHONPATH=$A/lit python3 -c 'import sys; from lit.main import main; sys.argv[0]="lit"; main()' -v -j 4 --filter 'passes/' . > $OUT/gpu-tests.log 2>&1)
echo "tests rc=$? $(( $(date +%s)-T0 )) s" >> $OUT/summary.txt
W=/tmp/w; mkdir -p $W/fv
cp $A/kernels/gnn/scatter_add.cu* $W/fv/
clang-astra rewrite --passes=restrict-const,grid-stride,flat-vectorize,grid-coarsen -i $W/fv/scatter_add.cu >> $OUT/rewrite.log 2>&1
timeout 90 clang-astra profile $A/kernels/gnn/scatter_add.cu --candidate $W/fv/scatter_add.cu --candidate-spec $W/fv/scatter_add.cu.astra.json --runs 30 >> $OUT/profile.txt 2>&1
echo "rc=$? t=$(( $(date +%s)-T0 ))" >> $OUT/profile.txt
cd $A
ARGS="--torch bench/results/h100-torch.json --rounds 2 --candidates 2 --time-budget 30"
T1=$(date +%s)
timeout $(( 585 - (T1 - T0) )) clang-astra bench kernels/gnn/scatter_add.cu --report $OUT/sa $ARGS > $OUT/sa.md 2> $OUT/sa.log
echo "bench sa rc=$? $(( $(date +%s)-T1 )) s" >> $OUT/summary.txt
tar -cf $OUT/reports.tar -C $OUT sa && rm -rf $OUT/sa
cat $OUT/summary.txt; grep -E "^(PASS|FAIL|UNSUPPORTED|UNRESOLVED)" $OUT/gpu-tests.log
