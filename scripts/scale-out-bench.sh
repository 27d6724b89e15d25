#!/bin/bash
# Local GPUs and Slurm against one GPU, in one call on a machine with two
# GPUs (docs/scale-out.md): a bench of a few suite kernels with --gpus 1,
# then --gpus 2, then --executor=slurm on a single-host Slurm with
# Gres=gpu:2 (scripts/slurm-local.sh, from .deb files unpacked here), each
# into its own report folder with the same seed; prints each wall time, the
# ratios, and whether verdicts and winners are identical. Every step has a
# time limit; everything is logged under $OUT.
#
#   usage: scripts/scale-out-bench.sh
#   env:   OUT (default ./scale-out-out), BENCH_FILES (default four naive
#          kernels), BENCH_ARGS (default --rounds 1 --candidates 2
#          --time-budget 10 --seed 7), SLURM_PREFIX (default
#          .slurm-debs/prefix: make it on a machine with network with
#          `scripts/slurm-local.sh fetch-debs .slurm-debs` and carry it;
#          without it the Slurm step is skipped with the reason),
#          T1/T2/TS (seconds for each bench; default 200/120/120),
#          SCALE_STEPS (default "local slurm": which part runs; the two fit
#          one call only with short benches), SCALE_PREVIOUS (the $OUT of an
#          earlier call on the same machine kind, fetched back and carried:
#          "slurm" alone compares against its local runs)
# Uses the portable tarball as scripts/gpu-session.sh does (dist/).
set -u
top="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${OUT:-$top/scale-out-out}"
mkdir -p "$OUT"
exec > >(tee -a "$OUT/scale-out.log") 2>&1
tarball=$(ls "$top"/dist/clang-astra-*-linux-x86_64.tar.xz 2>/dev/null | head -1)
root=/tmp/astra-bundle
if ! compgen -G "$root/*/bin/clang-astra" > /dev/null; then
  if [ -z "$tarball" ]; then echo "scale-out: no dist/clang-astra-*.tar.xz (make dist)"; exit 1; fi
  mkdir -p "$root" && timeout 120 tar -xJf "$tarball" -C "$root" || exit 1
fi
A=$(ls -d "$root"/clang-astra-* | head -1)
export PATH="$A/bin:$PATH" ASTRA_CACHE_DIR=/tmp/astra-cache-scale PYTHONUNBUFFERED=1
files="${BENCH_FILES:-kernels/naive/l2norm.cu kernels/naive/rmsnorm.cu kernels/naive/softmax.cu kernels/naive/matvec.cu}"
args="${BENCH_ARGS:---rounds 1 --candidates 2 --time-budget 10 --seed 7}"
timeout 20 nvidia-smi -L > "$OUT/gpus.txt" 2>&1
echo "scale-out: $(grep -c '^GPU' "$OUT/gpus.txt") GPUs; clang-astra: $(clang-astra --version | head -1)"
cd "$A" || exit 1
# The PTX and preamble caches would favour the runs after the first: each
# run starts from an empty cache folder, which its workers then share as a
# user's runs do (with --no-cache each worker process would build the
# runtime and preamble PCHs in a folder of its own, a cost a one-GPU run
# pays once).
run() { # name seconds extra-args...
  local name="$1" limit="$2"; shift 2
  rm -rf "$OUT/$name" /tmp/astra-cache-scale
  local t0; t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  timeout --kill-after=20 "$limit" clang-astra bench $files $args \
    --report "$OUT/$name" "$@" > "$OUT/$name.md" 2> "$OUT/$name.log"
  local rc=$?
  local t1; t1=$(date +%s.%N)
  echo "$name: exit $rc, $(python3 -c "print(f'{$t1 - $t0:.1f}')") s"
  python3 -c "print(f'{$t1 - $t0:.3f}')" > "$OUT/$name.seconds"
  tail -8 "$OUT/$name.log"
}
# A run of this call, else of the earlier call named by $SCALE_PREVIOUS.
result() { # name file
  if [ -e "$OUT/$1$2" ] || [ -z "${SCALE_PREVIOUS:-}" ]; then echo "$OUT/$1$2"; else echo "$SCALE_PREVIOUS/$1$2"; fi
}
same() { # a b: identical verdicts and winners?
  python3 - "$(result "$1" /report.json)" "$(result "$2" /report.json)" <<'PY'
import json, sys
def outcome(path):
    try:
        d = json.load(open(path))
    except Exception as e:
        return "unreadable: %s" % e
    out = []
    for k in d["kernels"]:
        w = k.get("winner") or {}
        out.append((k.get("file"), k.get("kernel"), k.get("error", ""),
                    k.get("improved"), w.get("changes"),
                    [(a.get("id"), (a.get("evaluation") or {}).get("status"))
                     for a in k.get("attempts", [])]))
    return out
a, b = outcome(sys.argv[1]), outcome(sys.argv[2])
print("identical verdicts and winners" if a == b else "DIFFERENT:\n  %s\n  %s" % (a, b))
PY
}
ratio() { python3 -c "import sys; a=float(open('$(result "$1" .seconds)').read()); b=float(open('$(result "$2" .seconds)').read()); print(f'wall-time ratio $2/$1: {b/a:.3f}')"; }

steps="${SCALE_STEPS:-local slurm}"
if [[ " $steps " == *" local "* ]]; then
  run gpus1 "${T1:-200}" --gpus 1
  run gpus2 "${T2:-120}" --gpus 2
  ratio gpus1 gpus2
  same gpus1 gpus2
fi
[[ " $steps " == *" slurm "* ]] || exit 0

prefix="${SLURM_PREFIX:-$top/.slurm-debs/prefix}"
# Debian's unpacked packages name it slurmctld-wlm (slurm-local.sh links it).
if [ ! -x "$prefix/usr/sbin/slurmctld" ] && [ ! -x "$prefix/usr/sbin/slurmctld-wlm" ] &&
  ! command -v slurmctld > /dev/null; then
  echo "slurm: skipped: no Slurm at $prefix (scripts/slurm-local.sh fetch-debs .slurm-debs, then carry .slurm-debs)"
  exit 0
fi
[ -d "$prefix/usr/sbin" ] && popt="--prefix $prefix" || popt=""
# shellcheck disable=SC2086
if ! timeout 120 "$top/scripts/slurm-local.sh" start /tmp/astra-slurm --gpus 2 --lifetime 600 $popt > "$OUT/slurm-start.log" 2>&1; then
  echo "slurm: could not start:"; tail -20 "$OUT/slurm-start.log"
  cp /tmp/astra-slurm/*.log "$OUT/" 2>/dev/null
  exit 0
fi
cat "$OUT/slurm-start.log"
# shellcheck disable=SC1091
. /tmp/astra-slurm/env.sh
# No --gpus: up to 8 jobs in Slurm at once (the default), so that when a
# job ends the next is already pending and Slurm starts it at once; with
# --gpus 2 each job was submitted only when one ended, and slurmctld.log
# showed 0.4-2.8 s from a job's end to the next one's allocation.
run slurm "${TS:-120}" --executor=slurm --slurm-args '--gres=gpu:1' --job-dir /tmp/astra-jobs
ratio gpus2 slurm
same gpus1 slurm
timeout 30 squeue -t all > "$OUT/squeue.txt" 2>&1
cp /tmp/astra-slurm/*.log "$OUT/" 2>/dev/null
timeout 60 "$top/scripts/slurm-local.sh" stop /tmp/astra-slurm
