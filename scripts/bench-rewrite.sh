#!/bin/sh
# Times `clang-astra rewrite` against `clang-astra list` of the same file,
# in the same run, on generated CUDA files of 1,000 and 5,000 lines (many
# small kernels with the loops, math and pointers the passes rewrite), and
# prints wall time and peak memory of each. `list` is one parse of the file:
# what rewrite costs beyond it is the passes and their re-parses.
#
# usage: scripts/bench-rewrite.sh [CLANG-ASTRA] [PASS-PAIR ...]
#   CLANG-ASTRA  the binary (default build/bin/clang-astra)
#   PASS-PAIR    e.g. restrict-const,fast-math (default: four pairs)
# Results are recorded in docs/results/rewrite-speed.md.
set -eu
top="$(cd "$(dirname "$0")/.." && pwd)"
astra="${1:-$top/build/bin/clang-astra}"
[ $# -gt 0 ] && shift
pairs="${*:-restrict-const,fast-math hoist,unroll ldg,launch-bounds vectorize,grid-stride}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# One kernel of 20 lines per step: a grid-stride loop with float math, a
# small constant loop, pointers that can be __restrict__ and const.
gen() {
  python3 - "$1" <<'EOF'
import sys
lines = int(sys.argv[1])
out = ["#include <cuda_runtime.h>", ""]
i = 0
while len(out) < lines - 20:
    out += [
        f"__global__ void k{i}(float *out, float *in, float *w, int n) {{",
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;",
        "  if (i >= n) return;",
        "  float acc = 0.0f;",
        "  for (int j = 0; j < 4; ++j) {",
        "    float x = in[i] * w[j];",
        "    acc += expf(-x) / (1.0f + sqrtf(x * x));",
        "  }",
        "  float s = 0.0f;",
        "  for (int j = i; j < n; j += blockDim.x * gridDim.x)",
        "    s += logf(1.0f + in[j]) * 0.5;",
        "  out[i] = acc + s / n;",
        "}",
        f"void launch{i}(float *o, float *x, float *w, int n) {{",
        f"  k{i}<<<(n + 255) / 256, 256>>>(o, x, w, n);",
        "}",
        "",
    ]
    i += 1
while len(out) < lines:
    out.append("")
print("\n".join(out))
EOF
}

# Wall seconds and peak RSS (MiB) of one command, on one line.
measure() {
  /usr/bin/time -f '%e %M' -o "$work/time" "$@" >/dev/null 2>"$work/err" ||
    { cat "$work/err" >&2; exit 1; }
  awk '{ printf "%6.2f s %7.0f MiB", $1, $2 / 1024 }' "$work/time"
}

echo "clang-astra: $("$astra" --version | head -1)"
# --version names the commit the build was configured at; the source's is
# what was built when the build is up to date.
echo "source: $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$top" diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
echo "machine: $(nproc) cores, $(uname -m); load: $(cut -d' ' -f1-3 /proc/loadavg)"
for lines in 1000 5000; do
  f="$work/k$lines.cu"
  gen "$lines" >"$f"
  echo "--- $lines lines ($(grep -c __global__ "$f") kernels)"
  # Untimed: the first run reads the binary and clang's headers from disk
  # (it took 1.8 s where the next took 0.5 s).
  "$astra" list "$f" >/dev/null 2>&1 || true
  printf '  %-34s %s\n' "list" "$(measure "$astra" list "$f")"
  for p in $pairs; do
    printf '  %-34s %s\n' "rewrite --passes=$p" \
      "$(measure "$astra" rewrite --passes="$p" "$f")"
  done
done
