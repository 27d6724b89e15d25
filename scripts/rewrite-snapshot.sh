#!/bin/bash
# Records what `clang-astra rewrite` makes of every kernel file in kernels/:
# each pass alone, and each pipeline the offline planner builds for the file
# (`optimize --static`, its report's plans), so that a refactoring can show
# its output is byte for byte what it was:
#
#   scripts/rewrite-snapshot.sh BEFORE [CLANG-ASTRA]   (on the old commit)
#   scripts/rewrite-snapshot.sh AFTER  [CLANG-ASTRA]   (on the new one)
#   diff -r BEFORE AFTER && echo identical; cat AFTER/count
#
# Per run it keeps the printed source (FILE.PASSES.cu), the edits of source
# and spec as clang-tidy fixes YAML (FILE.PASSES.yaml, so launch changes
# written into the spec count as well), the exit status and the stderr with
# the work folder's path replaced, and per file the planner's plans
# (FILE.plans). The kernels are copied to a scratch folder first: nothing
# under kernels/ is written. Runs $JOBS (default 2) rewrites at a time;
# $SNAPSHOT_FILES (paths under kernels/) limits it to those files.
set -u
top="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:?usage: rewrite-snapshot.sh OUTDIR [CLANG-ASTRA]}"
astra="${2:-$top/build/bin/clang-astra}"
mkdir -p "$out" && out="$(cd "$out" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -r "$top/kernels" "$work/kernels"
export ASTRA_CACHE_DIR="$work/cache"
cd "$work" || exit 1
passes=$("$astra" rewrite --list-passes | awk '{print $1}')
files=${SNAPSHOT_FILES:-$(find kernels -name '*.cu' | sort)}

jobs="$work/jobs"
: > "$jobs"
for f in $files; do
  key=$(echo "$f" | tr '/' '_')
  "$astra" optimize --static "$f" --report "$work/rep-$key" > /dev/null 2> "$out/$key.plans.err"
  echo "optimize --static exit $?" >> "$out/$key.plans.err"
  python3 - "$work/rep-$key/report.json" > "$out/$key.plans" <<'EOF'
import json, sys
try:
    report = json.load(open(sys.argv[1]))
except OSError:
    sys.exit(0)
for k in report["kernels"]:
    for a in k.get("attempts", []):
        print(k["kernel"], a["plan"])
EOF
  for p in $passes; do echo "$f $p" >> "$jobs"; done
  awk '{print $2}' "$out/$key.plans" | sort -u | while read -r plan; do
    echo "$f $(echo "$plan" | tr '+' ',')" >> "$jobs"
  done
done
sort -u "$jobs" -o "$jobs"

one() { # file passes
  local key; key="$(echo "$1" | tr '/' '_').$2"
  "$ASTRA" rewrite "$1" --passes "$2" --export-fixes "$OUTDIR/$key.yaml" \
    > "$OUTDIR/$key.cu" 2> "$OUTDIR/$key.err"
  echo "exit $?" >> "$OUTDIR/$key.err"
  sed -i "s|$WORK|WORK|g" "$OUTDIR/$key.err" "$OUTDIR/$key.yaml" 2> /dev/null
  true
}
export -f one
export ASTRA="$astra" OUTDIR="$out" WORK="$work"
tr ' ' '\n' < "$jobs" | xargs -n 2 -P "${JOBS:-2}" bash -c 'one "$0" "$1"'
for f in "$out"/*.plans.err; do sed -i "s|$work|WORK|g" "$f"; done
echo "$(wc -l < "$jobs") rewrites of $(echo "$files" | wc -w) files" | tee "$out/count"
