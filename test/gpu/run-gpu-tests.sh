#!/bin/sh
# Runs the GPU lit tests; exits 77 (ctest: skipped) with the reason when this
# machine has no NVIDIA driver or no GPU.
# usage: run-gpu-tests.sh <lit> <lit test dir> [lit args...]
lit="$1"; dir="$2"; shift 2
if ! ls /usr/lib/x86_64-linux-gnu/libcuda.so.1 /usr/lib64/libcuda.so.1 \
       /usr/local/nvidia/lib64/libcuda.so.1 /usr/lib/wsl/lib/libcuda.so.1 >/dev/null 2>&1 &&
   ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
  echo "SKIPPED: no NVIDIA driver on this machine (libcuda.so.1 not found); the gpu tests need an NVIDIA GPU"
  exit 77
fi
if command -v nvidia-smi >/dev/null 2>&1 && ! nvidia-smi -L >/dev/null 2>&1; then
  echo "SKIPPED: the NVIDIA driver is installed but reports no GPU (nvidia-smi -L failed)"
  exit 77
fi
exec "$lit" -v "$dir" "$@"
