#!/bin/sh
# Installs the Debian packages clang-astra needs, and only those missing.
# Without root it prints the exact command to run and fails.
# usage: scripts/ensure-deps.sh [extra packages...]
set -e
top="$(cd "$(dirname "$0")/.." && pwd)"
PACKAGES="clang-22 clang-tools-22 libclang-22-dev llvm-22-dev llvm-22-tools libpolly-22-dev
cmake ninja-build g++ make git python3 python3-venv rapidjson-dev
libcurl4-openssl-dev libgtest-dev zlib1g-dev libzstd-dev xz-utils python3-numpy
libclang-rt-22-dev slurm-wlm munge $*"

missing=""
for p in $PACKAGES; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done

if [ -n "$missing" ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "clang-astra: error: missing Debian packages:$missing" >&2
    echo "clang-astra: install them with:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends$missing" >&2
    exit 1
  fi
  echo "clang-astra: installing:$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $missing
fi

# CUDA is not a Debian package; the tool needs its headers and libdevice to
# parse and compile kernels (ptxas too, for resource reports).
cuda="${CUDA_PATH:-${CUDA_HOME:-/usr/local/cuda}}"
if [ ! -f "$cuda/include/cuda.h" ]; then
  echo "clang-astra: error: no CUDA toolkit at $cuda (set CUDA_PATH, or install CUDA 12 or 13 from NVIDIA to /usr/local/cuda)" >&2
  exit 1
fi

# pre-commit, from PyPI into a venv of its own (.tools-venv, ignored by git):
# the tests of .pre-commit-hooks.yaml run the real thing. Debian's package is
# older than the version the hooks are tested with. Without network access
# the pre-commit tests are skipped (lit feature `pre-commit`), nothing fails.
PRE_COMMIT_VERSION=4.2.0
venv="$top/.tools-venv"
if ! "$venv/bin/pre-commit" --version 2>/dev/null | grep -q " $PRE_COMMIT_VERSION\$"; then
  echo "clang-astra: installing pre-commit $PRE_COMMIT_VERSION into $venv"
  if ! { /usr/bin/python3 -m venv "$venv" &&
         "$venv/bin/pip" install -q --disable-pip-version-check "pre-commit==$PRE_COMMIT_VERSION"; }; then
    echo "clang-astra: warning: pre-commit could not be installed from PyPI; the pre-commit tests will be skipped" >&2
  fi
fi
