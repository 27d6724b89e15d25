#!/bin/bash
# Session 12, call 1 (binary 2c101ef): what a conv1d rewrite would have to
# look like. `profile` of hand-written variants (conv1d/*/conv1d.cu, each
# with its spec: a 3-D grid over (l, o, b) and per-thread blocks of output
# channels x positions) against the original, large and kb sets, 10 runs.
set -u
R=$(pwd)
mkdir -p /tmp/astra-bundle && tar -xJf dist/clang-astra-*.tar.xz -C /tmp/astra-bundle || exit 1
A=$(ls -d /tmp/astra-bundle/clang-astra-*)
export ASTRA_TOOLS_DIR=$A/bin PATH=$A/bin:$PATH ASTRA_CACHE_DIR=/tmp/astra-cache PYTHONUNBUFFERED=1
L=$OUT/logs && mkdir -p $L
clang-astra --version > $L/version.txt 2>&1
nvidia-smi > $L/nvidia-smi.txt 2>&1
T0=$(date +%s)
V=$R/docs/results/2026-11-23-h100-session12/conv1d
cd $A/kernels/kernelbench
mkdir -p /tmp/pipe && cp conv1d.cu conv1d.cu.astra.json /tmp/pipe/
clang-astra rewrite --passes=restrict-const,index32 -i /tmp/pipe/conv1d.cu > $L/pipe.log 2>&1
for shape in large kb; do
  for v in o8 o4l2 o16 o8l2 grid3d o4 o8l4 pipe; do
    [ $(( $(date +%s) - T0 )) -gt 540 ] && break
    if [ $v = pipe ]; then C=/tmp/pipe/conv1d.cu; else C=$V/$v/conv1d.cu; fi
    echo "== $v $shape" >> $L/profiles.txt
    T1=$(date +%s)
    timeout 120 clang-astra profile conv1d.cu --candidate $C --shape $shape --runs 10 >> $L/profiles.txt 2>&1
    echo "   rc=$? $(( $(date +%s)-T1 )) s" >> $L/profiles.txt
  done
done
echo "total $(( $(date +%s)-T0 )) s" >> $L/profiles.txt
