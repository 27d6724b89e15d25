#!/bin/sh
# The main job on the bundled kernels: `clang-astra optimize` over a copy of
# kernels/sglang (the originals are never touched). With an NVIDIA GPU it
# verifies and times candidates and shows the diff of the verified winners;
# without one it runs in --static mode: the passes and the NVPTX compile,
# printing what it would try.
set -e
astra="$1"
cd "$(dirname "$0")/.."
work="${DEMO_DIR:-build/demo}"
rm -rf "$work" && mkdir -p "$work/sglang" "$work/common"
cp kernels/common/*.cuh "$work/common/"
cp kernels/sglang/silu_and_mul.cu kernels/sglang/silu_and_mul.cu.astra.json \
   kernels/sglang/fused_add_rmsnorm.cu kernels/sglang/fused_add_rmsnorm.cu.astra.json \
   "$work/sglang/"
files="$work/sglang/silu_and_mul.cu $work/sglang/fused_add_rmsnorm.cu"
if "$astra" devices >/dev/null 2>&1; then
  echo "clang-astra demo: optimizing $files on the GPU (report in $work/report)"
  # shellcheck disable=SC2086
  exec "$astra" optimize --diff --report "$work/report" --rounds 2 --candidates 3 $files
fi
echo "clang-astra demo: no NVIDIA GPU here; static mode (passes and NVPTX compile only)"
# shellcheck disable=SC2086
exec "$astra" optimize --static $files
