#!/usr/bin/env python3
"""Runs the suite's baseline kernels straight from PTX, without clang-astra:
a cross-check of the kernels, specs and references that does not depend on
the engine, and a first measurement of the baselines.

Two steps, on two machines:

  # here (clang 22): compile every kernels/*/*.cu to PTX, with a map from each
  # spec kernel name to its PTX entry and parameter types
  python3 bench/run_baselines_ptx.py make-ptx build-kernels/ptx

  # on the GPU machine (PyTorch, numpy): load the PTX with the CUDA driver
  # API (ctypes), fill the spec's buffers with PyTorch, launch with the spec's
  # launch configuration
  python3 bench/run_baselines_ptx.py run build-kernels/ptx [--check] [--time]
          [--suite S] [--kernel K] [--shape S] [--dump-dir DIR]

--check runs each kernel on its smallest shape set, writes a dump in the
format check_reference.py reads and checks it against the kernel's
reference. --time times every shape set the way the engine does (warm-up,
50 runs, L2 flushed before each, median of per-run CUDA events). One JSON
object per line on stdout.
"""
import argparse
import ctypes
import glob
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
KERNELS = os.path.join(ROOT, "kernels")
sys.path.insert(0, KERNELS)
sys.path.insert(0, HERE)
from astra_spec import evaluate, load_spec  # noqa: E402

CLANG = ["clang++-22", "-x", "cuda", "--cuda-device-only", "--cuda-gpu-arch=sm_90",
         "--cuda-path=/usr/local/cuda", "-Wno-unknown-cuda-version", "-O3", "-S"]


# --- here: PTX and the entry map ------------------------------------------------

def make_ptx(outdir):
    entries = {}
    for cu in sorted(glob.glob(os.path.join(KERNELS, "*", "*.cu"))):
        rel = os.path.relpath(cu, KERNELS)
        ptx = os.path.join(outdir, rel[:-3] + ".ptx")
        os.makedirs(os.path.dirname(ptx), exist_ok=True)
        subprocess.run(CLANG + ["-o", ptx, cu], check=True)
        names = re.findall(r"\.entry\s+(\w+)\(", open(ptx).read())
        demangled = subprocess.run(["llvm-cxxfilt-22"] + names, capture_output=True,
                                   text=True, check=True).stdout.split("\n")
        for mangled, pretty in zip(names, demangled):
            # "void silu_and_mul<__nv_bfloat16>(__nv_bfloat16*, __nv_bfloat16 const*, int)"
            m = re.match(r"(?:void )?(.*?)\((.*)\)$", pretty.strip())
            kernel, params = m.group(1), [p.strip() for p in m.group(2).split(",")]
            entries[f"{rel}:{kernel}"] = {"ptx": rel[:-3] + ".ptx", "entry": mangled,
                                         "params": params}
    with open(os.path.join(outdir, "entries.json"), "w") as f:
        json.dump(entries, f, indent=1)
    print(f"wrote {len(entries)} entries to {outdir}/entries.json")


# --- there: the driver API ----------------------------------------------------

class Driver:
    def __init__(self):
        import torch
        torch.cuda.init()
        torch.zeros(1, device="cuda")  # makes the primary context current
        self.cuda = ctypes.CDLL("libcuda.so.1")
        self.modules = {}

    def check(self, rc, what):
        if rc != 0:
            msg = ctypes.c_char_p()
            self.cuda.cuGetErrorString(rc, ctypes.byref(msg))
            raise RuntimeError(f"{what}: CUDA error {rc} ({msg.value.decode() if msg.value else '?'})")

    def function(self, ptx_path, entry):
        if ptx_path not in self.modules:
            mod = ctypes.c_void_p()
            data = open(ptx_path, "rb").read() + b"\0"
            self.check(self.cuda.cuModuleLoadData(ctypes.byref(mod), data), f"load {ptx_path}")
            self.modules[ptx_path] = mod
        fn = ctypes.c_void_p()
        self.check(self.cuda.cuModuleGetFunction(ctypes.byref(fn), self.modules[ptx_path],
                                                 entry.encode()), f"function {entry}")
        return fn

    def launch(self, fn, grid, block, shmem, args, stream):
        holders = (ctypes.c_void_p * len(args))(*[ctypes.cast(ctypes.pointer(a), ctypes.c_void_p)
                                                  for a in args])
        self.check(self.cuda.cuLaunchKernel(fn, *grid, *block, shmem, ctypes.c_void_p(stream),
                                            holders, None), "launch")


SCALAR_CTYPES = {"int": ctypes.c_int, "float": ctypes.c_float, "long": ctypes.c_int64,
                 "unsigned long": ctypes.c_uint64, "bool": ctypes.c_bool,
                 "double": ctypes.c_double, "unsigned int": ctypes.c_uint32}


def dims(v, shape):
    v = v if isinstance(v, list) else [v]
    v = [int(evaluate(x, shape)) for x in v] + [1, 1]
    return v[:3]


def prepare(kspec, info, shape, torch, tb):
    """Buffers (torch tensors by name) and the launch argument list."""
    bufs, made, args = {}, {}, []
    for (name, a), ctype in zip(kspec["args"].items(), info["params"]):
        if "value" in a:
            value = evaluate(a["value"], shape)
            args.append(SCALAR_CTYPES[ctype](value))
            continue
        count = int(evaluate(a["count"], shape))
        dtype = tb.DTYPES[a["dtype"]]
        if a["role"] in ("input", "inout"):
            t = tb.make_input(a.get("init", "normal(0, 1)"), count, dtype, shape, made)
        else:  # outputs start as 0x7f / 0x5a bytes (huge or NaN floats): unwritten elements show
            t = torch.empty(count, dtype=dtype, device="cuda")
            t.view(torch.uint8).fill_(0x7F if dtype.is_floating_point else 0x5A)
        bufs[name] = made[name] = t
        args.append(ctypes.c_void_p(t.data_ptr()))
    return bufs, args


def raw_bytes(t, torch):
    return t.contiguous().view(torch.uint8).cpu().numpy().tobytes()


def run(ptxdir, opts):
    import torch
    import torch_baselines as tb
    import check_reference as cr
    drv = Driver()
    entries = json.load(open(os.path.join(ptxdir, "entries.json")))
    timer = tb.Timer(10, 50)
    stream = torch.cuda.current_stream().cuda_stream
    failures = 0
    for spec_path in tb.spec_files(opts.suite):
        rel_cu = os.path.relpath(spec_path, KERNELS)[: -len(".astra.json")]
        spec = load_spec(spec_path)
        for kernel, kspec in spec["kernels"].items():
            if opts.kernel and opts.kernel not in (kernel, kernel.split("<")[0]):
                continue
            info = entries[f"{rel_cu}:{kernel}"]
            fn = drv.function(os.path.join(ptxdir, info["ptx"]), info["entry"])
            shapes = list(kspec["shapes"].items())
            if opts.shape:
                shapes = [s for s in shapes if s[0] == opts.shape]
            smallest = min(kspec["shapes"].items(), key=lambda s: sum(
                evaluate(a["count"], s[1]) for a in kspec["args"].values() if "count" in a))[0]
            for shape_name, shape in shapes:
                torch.manual_seed(1)
                bufs, args = prepare(kspec, info, shape, torch, tb)
                grid = dims(kspec["launch"]["grid"], shape)
                block = dims(kspec["launch"]["block"], shape)
                shmem = int(evaluate(kspec["launch"].get("shmem", "0"), shape))
                row = {"kernel": kernel, "shape_set": shape_name}
                if opts.check and shape_name == smallest:
                    before = {n: raw_bytes(t, torch) for n, t in bufs.items()
                              if kspec["args"][n]["role"] in ("input", "inout")}
                    drv.launch(fn, grid, block, shmem, args, stream)
                    torch.cuda.synchronize()
                    d = os.path.join(opts.dump_dir, re.sub(r"\W+", "_", kernel))
                    os.makedirs(d, exist_ok=True)
                    manifest = {"version": 1, "kernel": kernel, "shape_name": shape_name, "shape": shape,
                                "seed": 1, "args": []}
                    for name, a in kspec["args"].items():
                        if "value" in a:
                            manifest["args"].append({"name": name,
                                                     "value": evaluate(a["value"], shape)})
                            continue
                        item = {"name": name, "dtype": a["dtype"], "role": a["role"],
                                "count": bufs[name].numel()}
                        if name in before:
                            item["in"] = name + ".in.bin"
                            open(os.path.join(d, item["in"]), "wb").write(before[name])
                        if a["role"] in ("output", "inout"):
                            item["out"] = name + ".out.bin"
                            open(os.path.join(d, item["out"]), "wb").write(raw_bytes(bufs[name], torch))
                        manifest["args"].append(item)
                    json.dump(manifest, open(os.path.join(d, "manifest.json"), "w"))
                    ref = os.path.join(KERNELS, rel_cu[:-3] + ".ref.py")
                    import io
                    out = io.StringIO()
                    try:
                        ok = cr.check(d, ref, out=out)
                    except cr.CheckError as e:
                        ok, out = False, io.StringIO(f"FAIL: {e}")
                    row["check"] = "PASS" if ok else "FAIL"
                    row["check_output"] = out.getvalue().strip().splitlines()[-3:]
                    failures += not ok
                if opts.time:
                    row["baseline_us"] = round(timer.median_us(
                        lambda: drv.launch(fn, grid, block, shmem, args, stream)), 2)
                    b = kspec.get("bytes", "auto")
                    nbytes = (evaluate(b, shape) if b != "auto" else
                              sum(bufs[n].numel() * bufs[n].element_size() *
                                  (2 if kspec["args"][n]["role"] == "inout" else 1)
                                  for n in bufs if kspec["args"][n]["role"] != "scratch"))
                    row["bytes"] = int(nbytes)
                    row["baseline_gbps"] = round(nbytes / (row["baseline_us"] * 1e3), 1)
                    if "flops" in kspec:
                        row["baseline_tflops"] = round(
                            evaluate(kspec["flops"], shape) / (row["baseline_us"] * 1e6), 2)
                if len(row) > 2:
                    print(json.dumps(row), flush=True)
                bufs = args = None
                torch.cuda.empty_cache()
    return 1 if failures else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    mk = sub.add_parser("make-ptx")
    mk.add_argument("outdir")
    r = sub.add_parser("run")
    r.add_argument("ptxdir")
    r.add_argument("--check", action="store_true")
    r.add_argument("--time", action="store_true")
    r.add_argument("--suite", choices=["sglang", "kernelbench", "gnn"])
    r.add_argument("--kernel")
    r.add_argument("--shape")
    r.add_argument("--dump-dir", default="/tmp/astra-baseline-dumps")
    opts = p.parse_args()
    if opts.cmd == "make-ptx":
        make_ptx(opts.outdir)
        return 0
    return run(opts.ptxdir, opts)


if __name__ == "__main__":
    sys.exit(main())
