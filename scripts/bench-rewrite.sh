#!/bin/sh
# Times `clang-astra rewrite` against `clang-astra list` of the same file,
# in the same run, on generated CUDA files of 1,000 and 5,000 lines (many
# small kernels with the loops, math and pointers the passes rewrite), and
# prints wall time and peak memory of each, and rewrite's time as a multiple
# of list's. `list` is one parse of the file: what rewrite costs beyond it
# is the passes and their re-parses. A third file of 1,000 lines starts with
# heavy includes (thrust, CUB, cooperative groups): its first `list` builds
# the preamble PCH (docs/compile.md), the second loads it.
# The caches are in a fresh ASTRA_CACHE_DIR; the untimed first `list` of
# each file builds the runtime and preamble PCHs, as a user's first run does.
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
export ASTRA_CACHE_DIR="$work/cache"

# One kernel of 20 lines per step: a grid-stride loop with float math, a
# small constant loop, pointers that can be __restrict__ and const.
gen() {
  python3 - "$1" "${2:-}" <<'EOF'
import sys
lines = int(sys.argv[1])
out = ["#include <cuda_runtime.h>", ""]
if sys.argv[2] == "heavy":
    out = ["#include <cuda_runtime.h>", "#include <cooperative_groups.h>",
           "#include <cub/cub.cuh>", "#include <thrust/device_vector.h>",
           "#include <thrust/reduce.h>", "#include <thrust/sort.h>", ""]
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

# Wall seconds and peak RSS (MiB) of one command, on one line; the seconds
# are also left in $work/secs.
measure() {
  /usr/bin/time -f '%e %M' -o "$work/time" "$@" >/dev/null 2>"$work/err" ||
    { cat "$work/err" >&2; exit 1; }
  cut -d' ' -f1 "$work/time" >"$work/secs"
  awk '{ printf "%6.2f s %7.0f MiB", $1, $2 / 1024 }' "$work/time"
}

echo "clang-astra: $("$astra" --version | head -1)"
# --version names the commit the build was configured at; the source's is
# what was built when the build is up to date.
echo "source: $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$top" diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
echo "machine: $(nproc) cores, $(uname -m); load: $(cut -d' ' -f1-3 /proc/loadavg)"
for what in 1000 5000 1000-heavy; do
  lines="${what%-heavy}"
  kind=""
  [ "$what" != "$lines" ] && kind=heavy
  f="$work/k$what.cu"
  gen "$lines" "$kind" >"$f"
  echo "--- $lines lines${kind:+, heavy includes} ($(grep -c __global__ "$f") kernels)"
  # Untimed: the first run reads the binary and clang's headers from disk
  # (it took 1.8 s where the next took 0.5 s) and builds the PCHs.
  if [ -n "$kind" ]; then
    printf '  %-34s %s\n' "list (first: builds the PCH)" "$(measure "$astra" list "$f")"
  else
    "$astra" list "$f" >/dev/null 2>&1 || true
  fi
  printf '  %-34s %s\n' "list" "$(measure "$astra" list "$f")"
  list="$(cat "$work/secs")"
  for p in $pairs; do
    printf '  %-34s %s %s\n' "rewrite --passes=$p" \
      "$(measure "$astra" rewrite --passes="$p" "$f")" \
      "$(awk -v r="$(cat "$work/secs")" -v l="$list" \
        'BEGIN { printf "%5.1fx list", (l > 0 ? r / l : 0) }')"
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
