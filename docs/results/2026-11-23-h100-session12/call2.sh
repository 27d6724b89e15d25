#!/bin/bash
# Session 12, call 2 (binary: ddf322f's code): delinearize + thread-coarsen
# on conv1d. Each pipeline is written by `rewrite -i` (the spec follows),
# verified (adversarial runs included) for the first, and profiled against
# the original on every shape set (10 runs).
set -u
R=$(pwd)
mkdir -p /tmp/astra-bundle && tar -xJf dist/clang-astra-*.tar.xz -C /tmp/astra-bundle || exit 1
A=$(ls -d /tmp/astra-bundle/clang-astra-*)
export ASTRA_TOOLS_DIR=$A/bin PATH=$A/bin:$PATH ASTRA_CACHE_DIR=/tmp/astra-cache PYTHONUNBUFFERED=1
L=$OUT/logs && mkdir -p $L
clang-astra --version > $L/version.txt 2>&1
T0=$(date +%s)
cd $A/kernels/kernelbench
W=/tmp/v && mkdir -p $W
mk() { # name pipeline opts...
  local n=$1 p=$2; shift 2
  mkdir -p $W/$n && cp conv1d.cu conv1d.cu.astra.json $W/$n/
  clang-astra rewrite --passes=$p "$@" -i $W/$n/conv1d.cu >> $L/rewrite.log 2>&1
  echo "== $n rc=$?" >> $L/rewrite.log
}
TC="--pass-opt=thread-coarsen.y"
mk y8x2 restrict-const,delinearize,thread-coarsen,index32,launch-bounds $TC=8 --pass-opt=thread-coarsen.x=2
mk y8x2-no32 restrict-const,delinearize,thread-coarsen,launch-bounds $TC=8 --pass-opt=thread-coarsen.x=2
mk y4x2 restrict-const,delinearize,thread-coarsen,index32,launch-bounds $TC=4 --pass-opt=thread-coarsen.x=2
mk y8x1 restrict-const,delinearize,thread-coarsen,index32,launch-bounds $TC=8
mk y4x4 restrict-const,delinearize,thread-coarsen,index32,launch-bounds --pass-opt=delinearize.x=256 --pass-opt=delinearize.y=4 $TC=4 --pass-opt=thread-coarsen.x=4
mk y2x2 restrict-const,delinearize,thread-coarsen,index32,launch-bounds --pass-opt=delinearize.y=2 $TC=2 --pass-opt=thread-coarsen.x=2
mk grid3 restrict-const,delinearize,index32,launch-bounds
cp -r $W $OUT/variants
timeout 200 clang-astra verify conv1d.cu --candidate $W/y8x2/conv1d.cu > $L/verify-y8x2.txt 2>&1
echo "verify rc=$? $(( $(date +%s)-T0 )) s" >> $L/verify-y8x2.txt
for v in y8x2 y4x2 y8x1 y4x4 y2x2 y8x2-no32 grid3; do
  [ $(( $(date +%s) - T0 )) -gt 520 ] && break
  echo "== $v" >> $L/profiles.txt
  T1=$(date +%s)
  timeout 90 clang-astra profile conv1d.cu --candidate $W/$v/conv1d.cu --runs 10 >> $L/profiles.txt 2>&1
  echo "   rc=$? $(( $(date +%s)-T1 )) s" >> $L/profiles.txt
done
echo "total $(( $(date +%s)-T0 )) s" >> $L/profiles.txt
tar -cJf $OUT/variants.tar.xz -C $OUT variants && rm -rf $OUT/variants
