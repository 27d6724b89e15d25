#!/bin/bash
# Measures a program's slowdown under `clang-astra capture`: test/gpu/capture
# /Inputs/capture-prog.cu (or the program given) run plainly, captured with
# shapes only (--max-bytes 0) and captured with contents, REPS times each,
# interleaved; prints the median wall time of each and the slowdowns.
#   usage: overhead.sh [REPS] [-- program args]   (clang-astra and nvcc on PATH)
# The program's own time includes its CPU reference checks, so this is the
# slowdown a user sees on a whole run, not per launch.
set -eu
reps="${1:-5}"
shift || true
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
if [ "${1:-}" = "--" ]; then
  shift
  prog=("$@")
else
  here="$(cd "$(dirname "$0")" && pwd)"
  nvcc -O3 -arch=native -cudart static -o "$work/prog" "$here/Inputs/capture-prog.cu"
  prog=("$work/prog")
fi
now() { date +%s.%N; }
declare -a plain shapes contents
for i in $(seq "$reps"); do
  t0=$(now); "${prog[@]}" > /dev/null; t1=$(now)
  plain+=("$(awk "BEGIN{print $t1 - $t0}")")
  rm -rf "$work/cap"
  t0=$(now); clang-astra capture --max-bytes 0 -o "$work/cap" -- "${prog[@]}" > /dev/null; t1=$(now)
  shapes+=("$(awk "BEGIN{print $t1 - $t0}")")
  rm -rf "$work/cap"
  t0=$(now); clang-astra capture -o "$work/cap" -- "${prog[@]}" > /dev/null; t1=$(now)
  contents+=("$(awk "BEGIN{print $t1 - $t0}")")
  bytes=$(du -sb "$work/cap/blobs" | cut -f1)
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
p=$(median "${plain[@]}"); s=$(median "${shapes[@]}"); c=$(median "${contents[@]}")
echo "program: ${prog[*]}; $reps runs each, median wall seconds"
echo "plain:          $p s"
echo "shapes only:    $s s ($(awk "BEGIN{printf \"%.3f\", $s / $p}")x)"
echo "with contents:  $c s ($(awk "BEGIN{printf \"%.3f\", $c / $p}")x; $bytes bytes of blobs)"
