#!/bin/sh
# Runs the libFuzzer targets of test/fuzz (spec files, spec expressions, LLM
# replies), each for SECONDS, and prints per target the executions, the
# corpus size and whether anything was found.
#
# usage: scripts/fuzz.sh [SECONDS] [FUZZ-BUILD-DIR]
#   SECONDS         per target (default 60); `make check` runs 5
#   FUZZ-BUILD-DIR  where astra-fuzz-* were built (default build/fuzz)
#
# The seed corpora are test/fuzz/corpus/<target>; what a run adds goes to
# FUZZ-BUILD-DIR/corpus/<target>, crashes and slow inputs to
# FUZZ-BUILD-DIR/findings/<target>/, emptied at the start of each run
# (replay one with
# `FUZZ-BUILD-DIR/astra-fuzz-<target> <file>`). Exit status: 0 when no
# target found anything, 1 when one did, 77 when the targets are not built
# (no clang libFuzzer runtime: install libclang-rt-22-dev).
set -u
top="$(cd "$(dirname "$0")/.." && pwd)"
secs="${1:-60}"
bin="${2:-$top/build/fuzz}"
if [ -z "$bin" ] || [ ! -x "$bin/astra-fuzz-spec" ]; then
  echo "fuzz: skipped: the fuzz targets are not built (${bin:-no build}); they need clang's libFuzzer runtime (libclang-rt-22-dev)" >&2
  exit 77
fi
status=0
for t in spec expr reply; do
  corpus="$bin/corpus/$t"
  findings="$bin/findings/$t"
  rm -rf "$findings"
  mkdir -p "$corpus" "$findings"
  log="$bin/fuzz-$t.log"
  # -timeout: one input taking seconds is a finding (the readers are
  # linear); -rss_limit_mb: so is one that needs gigabytes.
  "$bin/astra-fuzz-$t" "$corpus" "$top/test/fuzz/corpus/$t" \
    -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$findings/" >"$log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  found=$(find "$findings" -type f | wc -l)
  size=$(find "$corpus" -type f | wc -l)
  printf 'fuzz: %-6s %s s, %s executions, corpus %s inputs, %s findings\n' \
    "$t" "$secs" "${runs:-?}" "$size" "$found"
  if [ "$rc" -ne 0 ] || [ "$found" -ne 0 ]; then
    echo "fuzz: $t: FOUND a problem (exit $rc); see $log and $findings" >&2
    grep -m 5 -E 'ERROR|SUMMARY|Test unit written|==[0-9]+==' "$log" >&2
    status=1
  fi
done
exit $status
