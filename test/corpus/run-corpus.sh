#!/bin/sh
# The corpus check on the developers' corpus of third-party CUDA code
# (../shared/corpus, not in the repository): every cuda-samples and
# PolyBench-ACC file, with only -I<file's folder> -I<common folder>, must
# meet the targets of docs/results/corpus.md: at least 95% of the files whose
# libraries are installed parse with kernels listed (PolyBench-ACC: all),
# every file that parses compiles to PTX, and the median `list` takes at most
# 2 s. Exits 77 (skipped) when the corpus is not there, as in CI.
# usage: run-corpus.sh <python3> <corpus dir> <clang-astra> [<torch include>]
python="$1"; corpus="$2"; tool="$3"; torch="$4"
here="$(cd "$(dirname "$0")" && pwd)"
check="$here/../../scripts/corpus-check.py"
if [ ! -d "$corpus/cuda-samples" ] || [ ! -d "$corpus/polybench-acc" ]; then
  echo "skipped: no corpus at $corpus (set ASTRA_CORPUS_DIR when configuring)"
  exit 77
fi
# Each run gets a cache of its own: the PTX of an earlier run proves nothing.
ASTRA_CACHE_DIR="$(mktemp -d)"
export ASTRA_CACHE_DIR
trap 'rm -rf "$ASTRA_CACHE_DIR"' EXIT
status=0
"$python" "$check" --clang-astra "$tool" --compile --file-dir-include \
  --min-parsed 95 --require-compiled --max-median-list 2 \
  "$corpus/cuda-samples" -- "-I$corpus/cuda-samples/Common" || status=1
"$python" "$check" --clang-astra "$tool" --compile --file-dir-include \
  --min-parsed 100 --require-compiled --max-median-list 2 \
  "$corpus/polybench-acc" -- "-I$corpus/polybench-acc/CUDA/utilities" || status=1
exit $status
