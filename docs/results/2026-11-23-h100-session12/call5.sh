#!/bin/bash
# Session 12, call 5: block shapes x thread-coarsen patches of the planner's
# conv1d pipeline (restrict-const, delinearize, hoist, ldg, index32,
# thread-coarsen, launch-bounds), `profile` against the original on every
# set (20 runs): which patch keeps the 5.5 us set at 1.02x or better and
# gains most on kb and large.
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
P=restrict-const,delinearize,hoist,ldg,index32,thread-coarsen,launch-bounds
for v in "d128x4-y4x1 128 4 4 1" "d128x4-y4x2 128 4 4 2" "d256x4-y4x2 256 4 4 2" "d128x8-y8x1 128 8 8 1" "d256x2-y2x2 256 2 2 2" "d64x8-y8x1 64 8 8 1" "d256x4-y4x1 256 4 4 1" "d128x4-y2x1 128 4 2 1"; do
  set -- $v
  [ $(( $(date +%s) - T0 )) -gt 540 ] && break
  mkdir -p $W/$1 && cp conv1d.cu conv1d.cu.astra.json $W/$1/
  clang-astra rewrite --passes=$P --pass-opt=delinearize.x=$2 --pass-opt=delinearize.y=$3 --pass-opt=thread-coarsen.y=$4 --pass-opt=thread-coarsen.x=$5 -i $W/$1/conv1d.cu >> $L/rewrite.log 2>&1
  echo "== $1" >> $L/profiles.txt
  T1=$(date +%s)
  timeout 80 clang-astra profile conv1d.cu --candidate $W/$1/conv1d.cu --runs 20 >> $L/profiles.txt 2>&1
  echo "   rc=$? $(( $(date +%s)-T1 )) s" >> $L/profiles.txt
done
echo "total $(( $(date +%s)-T0 )) s" >> $L/profiles.txt
