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
#                     verdicts in $OUT/paths.txt; $PATHS_DEVICE_TIMEOUT (default 300)
#                     and $PATHS_OPT_TIMEOUT (default 330) bound the two paths' optimize
#           polybench `scripts/polybench.py bench` over kernels/polybench against the
#                     PolyBench-ACC sources in $POLYBENCH_CORPUS (default: the
#                     repository's git-ignored .corpus/polybench-acc, carried to the
#                     machine), datasets $POLYBENCH_DATASETS (default standard),
#                     the specs whose path holds a word of $POLYBENCH_ONLY (all if unset),
#                     extra bench options $POLYBENCH_ARGS; the report folder packed as
#                     $OUT/polybench.tar, $POLYBENCH_RESUME_FROM resuming as for bench
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
    done
    for path in device host; do
      host=0; limit=${PATHS_DEVICE_TIMEOUT:-300}; [ "$path" = host ] && host=1 limit=${PATHS_OPT_TIMEOUT:-330}
      mkdir -p "$d/$path/sglang" && cp -r kernels/common "$d/$path/common"
      cp kernels/sglang/silu_and_mul.cu* "$d/$path/sglang/"
      t0=$(date +%s.%N)
      ASTRA_HOST_VERIFY=$host timeout "$limit" clang-astra optimize "$d/$path/sglang/silu_and_mul.cu" \
        --seed 1 --no-cache --report "$d/$path/report" > "$OUT/paths-optimize-$path.txt" 2>&1
      rc=$?; t1=$(date +%s.%N)
      echo "optimize $path: $(awk "BEGIN{printf \"%.1f\", $t1 - $t0}") s, exit $rc (124: stopped at $limit s)" >> "$OUT/paths.txt"
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
  *) echo "unknown stage $stage" >&2; exit 2 ;;
  esac
  echo "$stage: $(( $(date +%s) - start )) s"
done
