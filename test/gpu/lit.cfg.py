# lit configuration for the GPU tests (ctest label `gpu`). They run on a
# machine with an NVIDIA GPU, either from a build tree (ctest) or from the
# portable bundle (scripts/gpu-run.sh sets ASTRA_TOOLS_DIR).
import os
import shutil
import lit.formats

config.name = "clang-astra-gpu"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".cu", ".test"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)

# From a build tree lit.site.cfg.py sets these; from the portable bundle
# (lit run on <bundle>/test/gpu directly) the bundle is the source root and
# ASTRA_TOOLS_DIR (default <bundle>/bin) holds clang-astra and FileCheck.
bundle = os.path.dirname(os.path.dirname(config.test_source_root))
if not getattr(config, "astra_src_root", None):
    config.astra_src_root = bundle
tools = os.environ.get("ASTRA_TOOLS_DIR",
                       getattr(config, "astra_tools_dir", None) or
                       os.path.join(bundle, "bin"))
path = [tools]
if getattr(config, "llvm_tools_dir", None):
    path.append(config.llvm_tools_dir)
config.environment["PATH"] = os.pathsep.join(path + [os.environ.get("PATH", "")])
for var in ["HOME", "TMPDIR", "CUDA_PATH", "CUDA_HOME", "LD_LIBRARY_PATH",
            "ASTRA_CACHE_DIR", "ASTRA_RESOURCE_DIR", "ASTRA_HOST_VERIFY"]:
    if var in os.environ:
        config.environment[var] = os.environ[var]
config.environment["LC_ALL"] = "C"
config.substitutions.append(("%clang-astra", os.path.join(tools, "clang-astra")))
config.substitutions.append(("%src", config.astra_src_root))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
config.substitutions.append(("%python", "python3"))
config.available_features.add("gpu")
# PolyBench-ACC's sources (third-party, in neither the repository nor the
# bundle) for the tests that rewrite them: POLYBENCH_CORPUS names the
# folder holding CUDA/ (scripts/gpu-session.sh: the carried
# .corpus/polybench-acc).
polybench = os.environ.get("POLYBENCH_CORPUS", "")
if polybench and os.path.isdir(os.path.join(polybench, "CUDA", "utilities")):
    config.available_features.add("polybench")
else:
    lit_config.note("the PolyBench-ACC tests are skipped: POLYBENCH_CORPUS "
                    "does not name a PolyBench-ACC checkout")
config.substitutions.append(("%polybench", polybench))
# nvcc, for tests that build a user's program (its own harness).
cuda_path = os.environ.get("CUDA_PATH") or os.environ.get("CUDA_HOME") or "/usr/local/cuda"
nvcc = shutil.which("nvcc") or os.path.join(cuda_path, "bin", "nvcc")
if os.path.exists(nvcc):
    config.available_features.add("nvcc")
config.substitutions.append(("%nvcc", nvcc))
# How many GPUs the driver shows (through the driver, as clang-astra counts
# them): the tests of --gpus 2 need two.
def _gpu_count():
    import ctypes
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
        n = ctypes.c_int(0)
        if cuda.cuInit(0) != 0 or cuda.cuDeviceGetCount(ctypes.byref(n)) != 0:
            return 0
        return n.value
    except OSError:
        return 0
_gpus = _gpu_count()
if _gpus >= 2:
    config.available_features.add("two-gpus")
else:
    lit_config.note("the --gpus 2 tests are skipped: the driver shows %d GPU(s)" % _gpus)
