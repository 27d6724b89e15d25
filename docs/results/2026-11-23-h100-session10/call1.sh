#!/bin/bash
# Session 10, call 1: hand-written variants of merge_attn_states,
# rotary_embedding and gelu timed against the originals (profile, in one
# process, interleaved) to choose what the next pass should produce.
set -u
mkdir -p /tmp/astra-bundle && tar -xJf dist/clang-astra-*.tar.xz -C /tmp/astra-bundle || exit 1
A=$(ls -d /tmp/astra-bundle/clang-astra-*)
export ASTRA_TOOLS_DIR=$A/bin PATH=$A/bin:$PATH ASTRA_CACHE_DIR=/tmp/astra-cache PYTHONUNBUFFERED=1
clang-astra --version > $OUT/version.txt 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv >> $OUT/version.txt 2>&1
T0=$(date +%s)
for v in exp/sglang/mas_*.cu; do
  echo "== $v" >> $OUT/mas.txt
  timeout 60 clang-astra profile kernels/sglang/merge_attn_states.cu --kernel 'merge_attn_states<__nv_bfloat16>' --candidate $v --candidate-spec $v.astra.json --runs 30 >> $OUT/mas.txt 2>&1
  echo "rc=$? t=$(( $(date +%s)-T0 ))" >> $OUT/mas.txt
done
for v in exp/sglang/rot_*.cu; do
  echo "== $v" >> $OUT/rot.txt
  timeout 60 clang-astra profile kernels/sglang/rotary_embedding.cu --kernel 'rotary_embedding<__nv_bfloat16>' --candidate $v --candidate-spec $v.astra.json --runs 30 >> $OUT/rot.txt 2>&1
  echo "rc=$? t=$(( $(date +%s)-T0 ))" >> $OUT/rot.txt
done
echo "== gelu_v4" >> $OUT/gelu.txt
timeout 90 clang-astra profile kernels/kernelbench/gelu.cu --candidate exp/kernelbench/gelu_v4.cu --candidate-spec exp/kernelbench/gelu_v4.cu.astra.json --runs 20 >> $OUT/gelu.txt 2>&1
echo "rc=$? t=$(( $(date +%s)-T0 ))" >> $OUT/gelu.txt
