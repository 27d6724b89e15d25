#!/bin/bash
# Times one pass's rewrite of each kernel file against the original, on a
# machine with a GPU: `clang-astra rewrite --passes=PASS` into a scratch
# copy, then `clang-astra profile FILE --candidate COPY`, which verifies the
# candidate and times baseline and candidate interleaved in one process on
# every shape set of the file's spec. A file the pass does not change is
# reported as such and not timed.
#   usage: scripts/profile-pass.sh PASS OUTDIR FILE.cu...
#   (clang-astra on PATH; each file's spec beside it as FILE.cu.astra.json)
set -u
pass="$1"; out="$2"; shift 2
mkdir -p "$out"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for f in "$@"; do
  name=$(basename "$f" .cu)
  dir="$scratch/$name"
  mkdir -p "$dir"
  cp "$(dirname "$f")"/"$name".* "$dir"/
  if ! clang-astra rewrite --passes="$pass" -i "$dir/$name.cu" \
       > "$out/$name.rewrite.log" 2>&1; then
    echo "$name: rewrite failed (see $name.rewrite.log)"; continue
  fi
  if cmp -s "$f" "$dir/$name.cu"; then
    echo "$name: $pass changed nothing"; continue
  fi
  diff -u "$f" "$dir/$name.cu" > "$out/$name.diff"
  clang-astra profile "$f" --candidate "$dir/$name.cu" --runs 20 \
    > "$out/$name.profile.txt" 2>&1
  echo "$name: profile exit $?"
  grep -E "speedup|FAIL|PASS" "$out/$name.profile.txt" | sed "s/^/  /"
done
