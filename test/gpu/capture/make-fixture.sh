#!/bin/bash
# Makes the committed capture fixture of test/lit/capture/Inputs on the GPU
# machine: capture-prog.cu at its `small` sizes, built with nvcc (static
# cudart), captured by the real driver and CUPTI.
#   usage: make-fixture.sh OUTDIR   (clang-astra and nvcc on PATH)
# Then replace test/lit/capture/Inputs/capture-prog-small with OUTDIR and
# drop "made without a GPU" from its README.
set -eu
out="$1"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
nvcc -O3 -arch=native -cudart static -o "$work/prog" "$here/Inputs/capture-prog.cu"
rm -rf "$out"
(cd "$work" && clang-astra capture -o "$out" -- ./prog small)
python3 "$here/Inputs/check-capture.py" "$out" small
