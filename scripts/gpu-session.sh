#!/bin/bash
# Runs the GPU work on a machine with an NVIDIA GPU and no LLVM, from the
# portable tarball that `make dist` made (dist/clang-astra-*.tar.xz). Each
# stage writes its log under $OUT (default ./gpu-out) and is bounded by its
# own time limit, so one slow stage cannot take the others' results with it.
#   usage: scripts/gpu-session.sh <stage>...
#   stages: list      `clang-astra list` over the bundled kernels (compare with
#                     the same command's output on the build machine)
#           tests     the gpu lit tests of the bundle (test/gpu)
#           optimize  offline optimize of two SGLang kernels with a report
#           bench     `clang-astra bench` over kernels/ ($BENCH_ARGS, $BENCH_FILES),
#                     its report folder packed as $OUT/bench.tar;
#                     with $BENCH_RESUME_FROM (an absolute path) naming the report folder of an
#                     earlier call (fetched back, unpacked and carried to this one), the
#                     run continues that scoreboard (`bench --resume`): a suite
#                     too long for one call is measured as one scoreboard
#           paths     issue 29 part 5: silu_and_mul verified (a fast-math candidate,
#                     5 seeds) and optimized (defaults, --seed 1, --no-cache) with inputs
#                     made and outputs compared on the host (ASTRA_HOST_VERIFY=1, the
#                     old path) and on the GPU, in the same call: wall times and
#                     verdicts in $OUT/paths.txt, with each optimize's time by stage
#                     (report.json) and whether the two paths' verify maxima agree
#                     with one --seed; $PATHS_DEVICE_TIMEOUT (default 300)
#                     and $PATHS_OPT_TIMEOUT (default 330) bound the two paths' optimize
#           polybench `scripts/polybench.py bench` over kernels/polybench against the
#                     PolyBench-ACC sources in $POLYBENCH_CORPUS (default: the
#                     repository's git-ignored .corpus/polybench-acc, carried to the
#                     machine), datasets $POLYBENCH_DATASETS (default standard),
#                     the specs whose path holds a word of $POLYBENCH_ONLY (all if unset),
#                     extra bench options $POLYBENCH_ARGS; the report folder packed as
#                     $OUT/polybench.tar, $POLYBENCH_RESUME_FROM resuming as for bench
#           sglang    issue 25's SGLang check on a machine that has PyTorch (the GPU
#                     machine does; the build machine would need the wheel): the
#                     corpus's make_compile_commands.py with this machine's torch
#                     headers, -std=c++20 (that torch needs it; nvcc stops there
#                     too with c++17), then scripts/corpus-check.py over
#                     sgl-kernel/csrc with -j all cores; the corpus is
#                     $SGLANG_CORPUS (default the git-ignored .corpus/sglang),
#                     Python's headers from $SGLANG_PYINC where the machine has
#                     none (carry /usr/include/python3.X and its pyconfig.h
#                     folder); $SGLANG_TIMEOUT (default 420) s a file,
#                     $SGLANG_FILES (words of paths) to check only some; then
#                     the second `list` of each file (warm caches) the same way
set -u
top="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${OUT:-$top/gpu-out}"
mkdir -p "$OUT"
tarball=$(ls "$top"/dist/clang-astra-*-linux-x86_64.tar.xz | head -1)
root=/tmp/astra-bundle
if ! compgen -G "$root/*/bin/clang-astra" > /dev/null; then
  mkdir -p "$root" && tar -xJf "$tarball" -C "$root" || exit 1
fi
A=$(ls -d "$root"/clang-astra-*)
export PATH="$A/bin:$PATH" ASTRA_CACHE_DIR=/tmp/astra-cache PYTHONUNBUFFERED=1
cd "$A" || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem \
  --format=csv > "$OUT/device.txt" 2>&1

for stage in "$@"; do
  start=$(date +%s)
  case "$stage" in
  list)
    files=$(cd "$A" && find kernels -name '*.cu' | sort)
    # shellcheck disable=SC2086
    clang-astra list $files > "$OUT/list.txt" 2> "$OUT/list.err"
    echo "list: exit $?" ;;
  tests)
    # The PolyBench-ACC tests (test/gpu/passes/smem-tile-polybench.test) read
    # the carried corpus; lit skips them without it.
    timeout "${TESTS_TIMEOUT:-300}" env PYTHONPATH="$A/lit" \
      POLYBENCH_CORPUS="${POLYBENCH_CORPUS:-$top/.corpus/polybench-acc}" python3 -c \
      'import sys; from lit.main import main; sys.argv[0] = "lit"; main()' \
      -v ${TESTS_FILTER:+--filter "$TESTS_FILTER"} "$A/test/gpu" \
      > "$OUT/gpu-tests.log" 2>&1
    echo "tests: exit $?"; grep -E '^(PASS|FAIL|UNSUPPORTED|UNRESOLVED|XFAIL|TIMEOUT):|Passed|Failed' "$OUT/gpu-tests.log" ;;
  optimize)
    mkdir -p /tmp/opt && cp kernels/sglang/silu_and_mul.cu* kernels/sglang/fused_add_rmsnorm.cu* /tmp/opt/
    cp -r kernels/common /tmp/common
    timeout "${OPT_TIMEOUT:-300}" clang-astra optimize /tmp/opt/silu_and_mul.cu \
      /tmp/opt/fused_add_rmsnorm.cu --report "$OUT/optimize" --diff \
      > "$OUT/optimize.diff" 2> "$OUT/optimize.log"
    echo "optimize: exit $?"; tail -30 "$OUT/optimize.log" ;;
  paths)
    d=/tmp/paths && rm -rf "$d" && mkdir -p "$d/sglang" && cp -r kernels/common "$d/common"
    cp kernels/sglang/silu_and_mul.cu* "$d/sglang/"
    clang-astra rewrite "$d/sglang/silu_and_mul.cu" --passes fast-math > "$d/sglang/silu_fm.cu"
    : > "$OUT/paths.txt"
    for path in device host; do
      host=0; [ "$path" = host ] && host=1
      t0=$(date +%s.%N)
      ASTRA_HOST_VERIFY=$host clang-astra verify "$d/sglang/silu_and_mul.cu" --kernel 'silu_and_mul<__half>' \
        --candidate "$d/sglang/silu_fm.cu" --seeds 5 --verbose \
        > "$OUT/paths-verify-$path.txt" 2>&1
      rc=$?; t1=$(date +%s.%N)
      echo "verify $path: $(awk "BEGIN{printf \"%.1f\", $t1 - $t0}") s, exit $rc, $(grep -E '^(PASS|FAIL):' "$OUT/paths-verify-$path.txt" | head -1)" >> "$OUT/paths.txt"
      # The maxima of the two paths, with one seed for both (the timed
      # calls above each draw fresh seeds).
      ASTRA_HOST_VERIFY=$host clang-astra verify "$d/sglang/silu_and_mul.cu" --kernel 'silu_and_mul<__half>' \
        --candidate "$d/sglang/silu_fm.cu" --seed 11 --format=json > "$OUT/paths-verify-$path.json" 2>&1
    done
    python3 -c "import json,sys; k=lambda f: [(x['name'], x['max_abs_error'], x['max_rel_error']) for x in json.load(open(f))['runs']]
a, b = k(sys.argv[1]), k(sys.argv[2]); print('verify --seed 11: the paths report the same maxima on all %d runs' % len(a) if a == b else 'verify --seed 11: the maxima differ: %s' % [(x, y) for x, y in zip(a, b) if x != y])" \
      "$OUT/paths-verify-device.json" "$OUT/paths-verify-host.json" >> "$OUT/paths.txt" 2>&1
    for path in device host; do
      host=0; limit=${PATHS_DEVICE_TIMEOUT:-300}; [ "$path" = host ] && host=1 limit=${PATHS_OPT_TIMEOUT:-330}
      mkdir -p "$d/$path/sglang" && cp -r kernels/common "$d/$path/common"
      cp kernels/sglang/silu_and_mul.cu* "$d/$path/sglang/"
      t0=$(date +%s.%N)
      ASTRA_HOST_VERIFY=$host timeout "$limit" clang-astra optimize "$d/$path/sglang/silu_and_mul.cu" \
        --seed 1 --no-cache --report "$d/$path/report" > "$OUT/paths-optimize-$path.txt" 2>&1
      rc=$?; t1=$(date +%s.%N)
      echo "optimize $path: $(awk "BEGIN{printf \"%.1f\", $t1 - $t0}") s, exit $rc (124: stopped at $limit s)" >> "$OUT/paths.txt"
      # Where the time went (report.json's seconds and stages, docs/optimize.md).
      python3 -c "import json,sys
for k in json.load(open(sys.argv[1]))['kernels']:
    s, g = k.get('seconds', {}), k.get('stages', {})
    print('  %s: wall %.1f s: set-up %.1f, baseline %.1f, rounds %.1f, confirmation %.1f; summed over %d evaluations: coding %.1f, compile %.1f, GPU jobs %.1f (start-up %.1f, CUDA context %.1f, module load %.1f, verify %.1f, profile %.1f)' % (
        k['kernel'], s.get('wall', 0), s.get('setup', 0), s.get('baseline', 0), s.get('rounds', 0), s.get('confirmation', 0),
        len(k.get('attempts', [])) + 1, g.get('coding', 0), g.get('compile', 0), g.get('jobs', 0), g.get('startup', 0),
        g.get('context', 0), g.get('load', 0), g.get('verify', 0), g.get('profile', 0)))" \
        "$d/$path/report/report.json" >> "$OUT/paths.txt" 2>&1 || echo "  (no report: stopped before the end)" >> "$OUT/paths.txt"
    done
    if cmp -s "$d/device/sglang/silu_and_mul.cu" "$d/host/sglang/silu_and_mul.cu"; then
      echo "optimize: the two paths wrote the same file" >> "$OUT/paths.txt"
    else
      echo "optimize: the two paths wrote different files" >> "$OUT/paths.txt"
    fi
    echo "paths:"; cat "$OUT/paths.txt" ;;
  bench)
    resume=""
    if [ -n "${BENCH_RESUME_FROM:-}" ]; then
      mkdir -p "$OUT/bench" && cp -r "$BENCH_RESUME_FROM"/. "$OUT/bench"/ && resume=--resume
    fi
    # shellcheck disable=SC2086
    timeout "${BENCH_TIMEOUT:-540}" clang-astra bench ${BENCH_FILES:-kernels} $resume \
      --report "$OUT/bench" --torch bench/results/h100-torch.json ${BENCH_ARGS:-} \
      > "$OUT/bench.md" 2> "$OUT/bench.log"
    echo "bench: exit $?"; tail -40 "$OUT/bench.log"
    # The device tool returns at most 8 files per call: the report folder
    # (scoreboard.json is what --resume reads) travels as one file.
    tar -cf "$OUT/bench.tar" -C "$OUT" bench && rm -rf "$OUT/bench" ;;
  polybench)
    resume=""
    if [ -n "${POLYBENCH_RESUME_FROM:-}" ]; then
      mkdir -p "$OUT/polybench" && cp -r "$POLYBENCH_RESUME_FROM"/. "$OUT/polybench"/ && resume=--resume
    fi
    # bench's --stop-after ends the run inside the call's limit with the
    # scoreboard written; timeout is the backstop.
    # shellcheck disable=SC2086
    timeout "${BENCH_TIMEOUT:-560}" python3 "$top/scripts/polybench.py" bench \
      --corpus "${POLYBENCH_CORPUS:-$top/.corpus/polybench-acc}" --specs "$A/kernels/polybench" \
      --clang-astra "$A/bin/clang-astra" --datasets "${POLYBENCH_DATASETS:-standard}" \
      --report "$OUT/polybench" --stop-after "${POLYBENCH_STOP_AFTER:-420}" $resume \
      ${POLYBENCH_ONLY:+--only "$POLYBENCH_ONLY"} \
      -- ${POLYBENCH_ARGS:-} > "$OUT/polybench.md" 2> "$OUT/polybench.log"
    echo "polybench: exit $?"; tail -60 "$OUT/polybench.md"
    tar -cf "$OUT/polybench.tar" -C "$OUT" polybench && rm -rf "$OUT/polybench" ;;
  sglang)
    corpus="${SGLANG_CORPUS:-$top/.corpus/sglang}"
    tinc=$(python3 -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "include"))' 2>> "$OUT/sglang.log")
    if [ -z "$tinc" ] || [ ! -d "$tinc/torch" ]; then
      echo "sglang: skipped: no PyTorch with headers on this machine"
    else
      db=/tmp/sgl-build
      python3 "$corpus/make_compile_commands.py" "$tinc" "$db" >> "$OUT/sglang.log" 2>&1
      pyinc=""
      if ! compgen -G "/usr/include/python3*/Python.h" > /dev/null && [ -n "${SGLANG_PYINC:-}" ]; then
        pyinc="$SGLANG_PYINC"
      fi
      python3 - "$db/compile_commands.json" "$pyinc" <<'PY'
import json, os, sys
path, pyinc = sys.argv[1], sys.argv[2]
db = json.load(open(path))
for e in db:
    a = ["-std=c++20" if x == "-std=c++17" else x for x in e["arguments"]]
    if pyinc:
        # Debian's layout: Python.h in python3.X/, its pyconfig.h under
        # x86_64-linux-gnu/python3.X/, included from the first.
        vers = [d for d in os.listdir(pyinc) if d.startswith("python3")]
        a[1:1] = ["-isystem", os.path.join(pyinc, sorted(vers)[-1]), "-isystem", pyinc]
    e["arguments"] = a
json.dump(db, open(path, "w"), indent=1)
PY
      files="${SGLANG_FILES:-$corpus/sgl-kernel/csrc}"
      echo "sglang: torch headers $tinc ($(python3 -c 'import torch; print(torch.__version__)' 2>/dev/null)); $(nproc) cores"
      # shellcheck disable=SC2086
      timeout "${SGLANG_STAGE_TIMEOUT:-450}" python3 "$top/scripts/corpus-check.py" -j "$(nproc)" \
        --timeout "${SGLANG_TIMEOUT:-420}" --clang-astra "$A/bin/clang-astra" -p "$db" --compile \
        --json "$OUT/sglang.json" $files > "$OUT/sglang.txt" 2>> "$OUT/sglang.log"
      echo "sglang: exit $?"; head -20 "$OUT/sglang.txt"
      # The second `list` of each file, from the caches the first filled
      # (issue 25's "parse once" target).
      # shellcheck disable=SC2086
      timeout "${SGLANG_WARM_TIMEOUT:-70}" python3 "$top/scripts/corpus-check.py" -j "$(nproc)" \
        --timeout 60 --clang-astra "$A/bin/clang-astra" -p "$db" \
        --json "$OUT/sglang-warm.json" $files > "$OUT/sglang-warm.txt" 2>> "$OUT/sglang.log"
      echo "sglang (second list): exit $?"; head -8 "$OUT/sglang-warm.txt"
    fi ;;
  *) echo "unknown stage $stage" >&2; exit 2 ;;
  esac
  echo "$stage: $(( $(date +%s) - start )) s"
done
