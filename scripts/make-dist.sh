#!/bin/sh
# Packs a portable build into a tarball that runs on a machine with no LLVM:
#   clang-astra-<ver>/bin/clang-astra            static, stripped
#   clang-astra-<ver>/bin/FileCheck              (astra-filecheck, for the GPU lit tests)
#   clang-astra-<ver>/bin/astra-inputs-bench     (times input generation, docs/engine.md)
#   clang-astra-<ver>/bin/astra-device-check     (device kernels against host mirrors, docs/engine.md)
#   clang-astra-<ver>/lib/clang/<major>/include  clang's resource headers
#   clang-astra-<ver>/kernels/                   the benchmark suite
#   clang-astra-<ver>/test/gpu/, lit/            the GPU tests and a lit to run them
# usage: make-dist.sh <portable build dir> <tarball>
set -e
build="$1"; tarball="$2"
top="$(cd "$(dirname "$0")/.." && pwd)"
name="$(basename "$tarball" .tar.xz)"
name="${name%-linux-x86_64}"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
root="$stage/$name"
DESTDIR="$root" cmake --install "$build" --prefix / >/dev/null
cp -r "$top/kernels" "$root/kernels"
cp -r "$top/bench" "$root/bench"
find "$root/kernels" "$root/bench" -name "__pycache__" -prune -exec rm -rf {} +
mkdir -p "$root/test"
cp -r "$top/test/gpu" "$root/test/gpu"
# The loopback OpenAI server the LLM-mode GPU test talks to.
cp -r "$top/test/llm" "$root/test/llm"
cp -r "$(dirname "$(readlink -f /usr/lib/llvm-22/bin/lit)")/../utils/lit" "$root/lit" 2>/dev/null ||
  cp -r /usr/lib/llvm-22/utils/lit "$root/lit"
find "$root/lit" -name '__pycache__' -prune -exec rm -rf {} +
rm -rf "$root/lit/tests" "$root/lit/examples" 2>/dev/null || true
mkdir -p "$(dirname "$tarball")"
tar -C "$stage" -cf - "$name" | xz -T0 -9 > "$tarball.tmp"
mv "$tarball.tmp" "$tarball"
echo "clang-astra: wrote $tarball ($(du -h "$tarball" | cut -f1))"
