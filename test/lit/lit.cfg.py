# lit configuration for clang-astra's command-line tests (test/lit).
import os
import shutil
import lit.formats

config.name = "clang-astra"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".cu", ".test", ".cuh", ".json"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)

cuda_path = os.environ.get("CUDA_PATH") or os.environ.get("CUDA_HOME") or "/usr/local/cuda"
config.environment["PATH"] = os.pathsep.join(
    [config.astra_tools_dir, config.llvm_tools_dir, os.environ.get("PATH", "")])
for var in ["HOME", "TMPDIR", "CUDA_PATH", "CUDA_HOME", "LD_LIBRARY_PATH"]:
    if var in os.environ:
        config.environment[var] = os.environ[var]
# Tests run from a neutral directory; paths in output are then absolute or
# relative to the test's own temporary directory.
config.environment["LC_ALL"] = "C"

astra = os.path.join(config.astra_tools_dir, "clang-astra")
config.substitutions.append(("%clang-astra", astra))
config.substitutions.append(("%astra-inputs-bench",
                             os.path.join(config.astra_tools_dir, "astra-inputs-bench")))
config.substitutions.append(("%FileCheck", config.filecheck))
# clang-apply-replacements (Debian's clang-tools-22, which make installs):
# the --export-fixes YAML must be what the real tool accepts.
config.substitutions.append(("%clang-apply-replacements",
                             os.path.join(os.path.dirname(config.filecheck),
                                          "clang-apply-replacements")))
config.substitutions.append(("%cuda_path", cuda_path))
ptxas = os.path.join(cuda_path, "bin", "ptxas")
config.substitutions.append(("%ptxas", ptxas))
# Compiles a .cu file's device side to PTX through clang's NVPTX backend;
# every pass test runs its output through this so no pass emits code that
# does not compile.
config.substitutions.append((
    "%nvptx-compile",
    f"{config.clang} -x cuda --cuda-device-only --cuda-gpu-arch=sm_90 "
    f"--cuda-path={cuda_path} -Wno-unknown-cuda-version -O3 -S -o -"))
# Checks host and device code of a .cu file (launch sites a pass edits are
# host code, which %nvptx-compile does not see).
config.substitutions.append((
    "%cuda-syntax-check",
    f"{config.clang} -x cuda --cuda-gpu-arch=sm_90 --cuda-path={cuda_path} "
    f"-Wno-unknown-cuda-version -std=c++17 -fsyntax-only"))
config.substitutions.append(("%python", "python3"))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))

if os.path.exists(os.path.join(cuda_path, "include", "cuda.h")):
    config.available_features.add("cuda")
if os.path.exists(ptxas):
    config.available_features.add("ptxas")
nvcc = shutil.which("nvcc") or os.path.join(cuda_path, "bin", "nvcc")
if os.path.exists(nvcc):
    config.available_features.add("nvcc")
config.substitutions.append(("%nvcc", nvcc))
if shutil.which("cmake"):
    config.available_features.add("cmake")
# pre-commit: the venv scripts/ensure-deps.sh makes, else one on PATH.
pre_commit = os.path.join(config.astra_src_root, ".tools-venv", "bin", "pre-commit")
if not os.path.exists(pre_commit):
    pre_commit = shutil.which("pre-commit") or ""
if pre_commit and shutil.which("git"):
    config.available_features.add("pre-commit")
    config.substitutions.append(("%pre-commit", pre_commit))
config.substitutions.append(("%astra_src_root", config.astra_src_root))
config.substitutions.append(("%astra_obj_root", config.astra_obj_root))
if os.getuid() == 0:
    config.available_features.add("root")
# `clang-astra capture` without a GPU: the real capture library, a CUDA
# driver and CUPTI stand-in (test/capture/FakeCuda.cpp) and a program that
# makes test/gpu/capture/Inputs/capture-prog.cu's launches through it.
fake_dir = os.path.join(config.astra_obj_root, "test", "capture", "fake")
if os.path.exists(os.path.join(fake_dir, "fake-capture-prog")) and \
        os.path.exists(os.path.join(config.astra_obj_root, "lib", "libastra-capture.so")):
    config.available_features.add("capture")
config.substitutions.append(("%fake-capture-prog", os.path.join(fake_dir, "fake-capture-prog")))
config.substitutions.append(("%fake-cupti", os.path.join(fake_dir, "libcuda.so.1")))
config.substitutions.append(("%capture-prog", os.path.join(
    config.astra_src_root, "test", "gpu", "capture", "Inputs", "capture-prog.cu")))
if shutil.which("patch"):
    config.available_features.add("patch")
# Runs a command as another uid without an account (util-linux).
if shutil.which("setpriv"):
    config.available_features.add("setpriv")
# PolyBench-ACC from the developers' corpus (not in the repository; CMake's
# ASTRA_CORPUS_DIR): the tests of kernels/polybench need its sources.
polybench = os.path.join(getattr(config, "astra_corpus_dir", ""), "polybench-acc")
if os.path.isdir(os.path.join(polybench, "CUDA", "utilities")):
    config.available_features.add("polybench-corpus")
config.substitutions.append(("%polybench", polybench))
# A single-host Slurm of the test's own (scripts/slurm-local.sh) needs the
# Debian packages slurm-wlm and munge (scripts/ensure-deps.sh installs them).
slurm_missing = [b for b in ("slurmctld", "slurmd", "sbatch", "munged")
                 if not (shutil.which(b) or os.path.exists("/usr/sbin/" + b))]
if slurm_missing:
    lit_config.note("the Slurm tests are skipped: no %s (install slurm-wlm and "
                    "munge)" % ", ".join(slurm_missing))
else:
    config.available_features.add("slurm")
config.substitutions.append(("%slurm-local", os.path.join(
    config.astra_src_root, "scripts", "slurm-local.sh")))
