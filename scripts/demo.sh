#!/bin/sh
# The main job on the bundled kernels. Until the optimizer lands this lists
# the kernels it will work on.
set -e
astra="$1"
cd "$(dirname "$0")/.."
files=$(find kernels -name '*.cu' | sort)
if [ -z "$files" ]; then
  echo "clang-astra: no bundled kernels under kernels/" >&2
  exit 1
fi
# shellcheck disable=SC2086
exec "$astra" list $files
