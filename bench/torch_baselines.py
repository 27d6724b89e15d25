#!/usr/bin/env python3
"""PyTorch peers of the benchmark suite: the same operators on the same shape
sets (read from the kernels' specs), in eager mode and under torch.compile,
timed the way clang-astra times a kernel: warm-up runs, then >= 50 timed
runs, each preceded by an L2 flush and bracketed by its own pair of CUDA
events (the flush is outside them), reported as the median.

Runs on the GPU machine (PyTorch with CUDA; torch_geometric is used for SAGE
mean aggregation when present). Prints one JSON object per line:

  {"kernel": "silu_and_mul<__nv_bfloat16>", "shape_set": "prefill",
   "eager_us": 262.5, "compile_us": 94.6, "bytes": 270532608, "impl": "..."}

compile_us is null where torch.compile fails for the operator (the error is
in "compile_error"). fp32 matmul and convolution run without TF32, the
semantics the fp32 kernels have.

usage: python3 bench/torch_baselines.py [--suite sglang] [--kernel NAME]
           [--shape NAME] [--runs 50] [--warmup 10] [--no-compile] [--out FILE]
"""
import argparse
import glob
import json
import os
import statistics
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = os.path.join(HERE, "..", "kernels")
sys.path.insert(0, KERNELS)
from astra_spec import evaluate, load_spec, split_call  # noqa: E402

DTYPES = {
    "f32": torch.float32, "f64": torch.float64, "f16": torch.float16,
    "bf16": torch.bfloat16, "fp8_e4m3": torch.float8_e4m3fn, "i8": torch.int8,
    "u8": torch.uint8, "i16": torch.int16, "i32": torch.int32, "i64": torch.int64,
}
DEV = "cuda"


# --- inputs ------------------------------------------------------------------

def csr_rowptr(rows, avg, max_degree):
    """Degrees as the engine draws them (exponential around avg, capped),
    nudged to sum to rows * avg."""
    u = torch.rand(rows, device=DEV, dtype=torch.float64)
    deg = torch.clamp((-avg * torch.log1p(-u)).round(), max=max_degree).to(torch.int64)
    diff = rows * avg - int(deg.sum())
    while diff != 0:
        pick = torch.randint(0, rows, (min(abs(diff), rows),), device=DEV).unique()
        room = deg[pick] < max_degree if diff > 0 else deg[pick] > 0
        pick = pick[room][: abs(diff)]
        deg[pick] += 1 if diff > 0 else -1
        diff -= len(pick) if diff > 0 else -len(pick)
    return torch.cat([torch.zeros(1, dtype=torch.int64, device=DEV), deg.cumsum(0)])


def csr_colind(rowptr, n, count):
    """Column indices for rowptr, distinct and sorted within each row: row r
    of degree d takes d sorted draws from [0, n - d] plus 0, 1, ..., d - 1."""
    rows = rowptr.numel() - 1
    deg = rowptr[1:] - rowptr[:-1]
    nnz = int(rowptr[-1])
    seg = torch.repeat_interleave(torch.arange(rows, device=DEV), deg)
    v = (torch.rand(nnz, device=DEV, dtype=torch.float64) * (n - deg[seg] + 1)).floor().to(torch.int64)
    v = torch.sort(seg * (n + 1) + v).values - seg * (n + 1)
    col = v + torch.arange(nnz, device=DEV) - rowptr[:-1][seg]
    slack = torch.randint(0, n, (count - nnz,), device=DEV)
    return torch.cat([col, slack])


def make_input(init, count, dtype, shape, made):
    """One buffer per its spec generator (the values matter little to the
    timing; the structure of indices does)."""
    name, args = split_call(init)
    if name == "csr_colind":
        return csr_colind(made[args[0]], evaluate(args[1], shape), count)
    a = [evaluate(x, shape) for x in args]
    if name == "normal":
        t = torch.randn(count, device=DEV) * a[1] + a[0]
    elif name == "uniform":
        t = torch.rand(count, device=DEV) * (a[1] - a[0]) + a[0]
    elif name == "randint":
        t = torch.randint(a[0], a[1] + 1, (count,), device=DEV)
    elif name == "indices_into":
        t = torch.randint(0, a[0], (count,), device=DEV)
    elif name == "sorted":
        t = torch.randint(a[0], a[1] + 1, (count,), device=DEV).sort().values
    elif name == "constant":
        t = torch.full((count,), a[0], device=DEV)
    elif name == "arange":
        t = torch.arange(count, device=DEV)
    elif name == "permutation":
        t = torch.randperm(a[0], device=DEV)[:count]
    elif name == "csr_rowptr":
        t = csr_rowptr(a[0], a[1], a[2])
    else:
        raise ValueError(f"unknown generator {init}")
    return t.to(dtype)


# --- the operators, as a PyTorch user writes them ----------------------------
# Each takes the spec's buffers by argument name (flat tensors, as the kernels
# see them) and the shape variables, and returns its results.

def silu_and_mul(a, s):
    x = a["input"].view(s["T"], 2 * s["d"])
    return F.silu(x[:, : s["d"]]) * x[:, s["d"]:]


def gelu_tanh_and_mul(a, s):
    x = a["input"].view(s["T"], 2 * s["d"])
    return F.gelu(x[:, : s["d"]], approximate="tanh") * x[:, s["d"]:]


def _rms(x, w, eps=1e-6):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * w


def rmsnorm(a, s):
    return _rms(a["input"].view(s["T"], s["H"]), a["weight"])


def fused_add_rmsnorm(a, s):
    r = a["input"].view(s["T"], s["H"]) + a["residual"].view(s["T"], s["H"])
    return _rms(r, a["weight"]), r


def merge_attn_states(a, s):
    T, H, D = s["T"], s["H"], s["D"]
    sa, sb = a["s_a"].view(T, H), a["s_b"].view(T, H)
    m = torch.maximum(sa, sb)
    wa, wb = torch.exp(sa - m), torch.exp(sb - m)
    w = wa + wb
    va, vb = a["v_a"].view(T, H, D).float(), a["v_b"].view(T, H, D).float()
    v = (wa[..., None] * va + wb[..., None] * vb) / w[..., None]
    return v.to(a["v_a"].dtype), m + torch.log(w)


def rotary_embedding(a, s):
    T, D, rot = s["T"], s["D"], s["rot"]
    cache = a["cos_sin_cache"].view(-1, rot)[a["positions"]]
    cos, sin = cache[:, None, : rot // 2], cache[:, None, rot // 2:]

    def rotate(x, heads):
        x = x.view(T, heads, D)
        x1, x2 = x[..., : rot // 2], x[..., rot // 2: rot]
        return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin, x[..., rot:]], dim=-1)
    return rotate(a["query"], s["Hq"]), rotate(a["key"], s["Hkv"])


def topk_softmax(a, s):
    probs = torch.softmax(a["gating_output"].view(s["T"], s["E"]).float(), dim=-1)
    w, idx = torch.topk(probs, s["k"], dim=-1)
    if s["renorm"]:
        w = w / w.sum(-1, keepdim=True)
    return w, idx.to(torch.int32)


def per_token_quant_fp8(a, s):
    x = a["input"].view(s["T"], s["H"]).float()
    scale = (x.abs().amax(-1, keepdim=True) / 448.0).clamp(min=1e-10)
    return (x / scale).clamp(-448.0, 448.0).to(torch.float8_e4m3fn), scale


def softmax(a, s):
    return torch.softmax(a["x"].view(s["rows"], s["cols"]), dim=1)


def layernorm(a, s):
    return F.layer_norm(a["x"].view(s["rows"], s["cols"]), (s["cols"],), a["weight"], a["bias"], 1e-5)


def sum_rows(a, s):
    return a["x"].view(s["rows"], s["cols"]).sum(dim=-1)


def mean_dim(a, s):
    return a["x"].view(s["B"], s["R"], s["C"]).mean(dim=1)


def argmax(a, s):
    return a["x"].view(s["rows"], s["cols"]).argmax(dim=-1)


def gelu(a, s):
    return F.gelu(a["x"])


def matvec(a, s):
    return a["A"].view(s["M"], s["K"]) @ a["x"]


def transpose(a, s):
    return a["in"].view(s["rows"], s["cols"]).t().contiguous()


def conv1d(a, s):
    x = a["x"].view(s["B"], s["IC"], s["L"])
    return F.conv1d(x, a["weight"].view(s["OC"], s["IC"], s["K"]), a["bias"])


def sgemm(a, s):
    return a["A"].view(s["M"], s["K"]) @ a["B"].view(s["K"], s["N"])


def cumsum(a, s):
    return torch.cumsum(a["x"].view(s["rows"], s["cols"]), dim=1)


def sample_neighbors(a, s):
    """Uniform sampling without replacement in plain PyTorch: every edge of
    every seed gets a random key, edges are sorted by (seed, key), and the
    first fanout of each seed are kept (-1 padded), the layout of the kernel."""
    rowptr, col, nodes, fanout = a["rowptr"], a["col"], a["nodes"], s["fanout"]
    n = nodes.numel()
    start = rowptr[nodes]
    deg = rowptr[nodes + 1] - start
    seg = torch.repeat_interleave(torch.arange(n, device=nodes.device), deg)
    first = torch.cumsum(deg, 0) - deg
    offset = torch.arange(seg.numel(), device=nodes.device) - first[seg]
    key = seg.double() + torch.rand(seg.numel(), device=nodes.device, dtype=torch.float64)
    order = torch.argsort(key)
    seg, offset = seg[order], offset[order]
    rank = torch.arange(seg.numel(), device=nodes.device) - first[seg]
    keep = rank < fanout
    out = torch.full((n, fanout), -1, dtype=torch.int64, device=nodes.device)
    out[seg[keep], rank[keep]] = col[start[seg[keep]] + offset[keep]]
    return out


def gather_features(a, s):
    return a["x"].view(s["N"], s["F"]).index_select(0, a["index"])


def sage_mean(a, s):
    rows, F_ = s["rows"], s["F"]
    rowptr, col = a["rowptr"], a["col"]
    deg = rowptr[1:] - rowptr[:-1]
    dst = torch.repeat_interleave(torch.arange(rows, device=col.device), deg)
    msg = a["x"].view(-1, F_)[col[: dst.numel()]]
    if _pyg_scatter is not None:
        return _pyg_scatter(msg, dst, dim=0, dim_size=rows, reduce="mean")
    out = torch.zeros(rows, F_, device=col.device).index_add_(0, dst, msg)
    return out / deg.clamp(min=1)[:, None]


def scatter_add(a, s):
    return a["out"].view(s["N"], s["F"]).index_add_(0, a["index"], a["src"].view(s["E"], s["F"]))


try:
    from torch_geometric.utils import scatter as _pyg_scatter
except Exception:  # noqa: BLE001 (any import problem: fall back to index_add_)
    _pyg_scatter = None

OPS = {f.__name__: f for f in [
    silu_and_mul, gelu_tanh_and_mul, rmsnorm, fused_add_rmsnorm, merge_attn_states,
    rotary_embedding, topk_softmax, per_token_quant_fp8, softmax, layernorm, sum_rows,
    mean_dim, argmax, gelu, matvec, transpose, conv1d, sgemm, cumsum, sample_neighbors,
    gather_features, sage_mean, scatter_add]}

IMPL = {
    "sage_mean": lambda: "torch_geometric.utils.scatter(mean)" if _pyg_scatter else "index_add_ / degree",
    "sample_neighbors": lambda: "random keys + argsort per seed (no GPU sampler in PyG here)",
    "scatter_add": lambda: "index_add_ (in place)",
    "gather_features": lambda: "index_select",
}


# --- timing --------------------------------------------------------------------

class Timer:
    def __init__(self, warmup, runs):
        self.warmup, self.runs = warmup, runs
        # Larger than the H100's 50 MB L2: writing it evicts the operands.
        self.flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.float32, device=DEV)

    def median_us(self, fn):
        for _ in range(self.warmup):
            fn()
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(self.runs)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(self.runs)]
        for i in range(self.runs):
            self.flush.zero_()
            starts[i].record()
            fn()
            ends[i].record()
        torch.cuda.synchronize()
        return statistics.median(s.elapsed_time(e) * 1000.0 for s, e in zip(starts, ends))


def spec_files(suite):
    pattern = os.path.join(KERNELS, suite or "*", "*.cu.astra.json")
    return sorted(glob.glob(pattern))


def bench_one(kernel, kspec, shape_name, shape, timer, do_compile):
    base = kernel.split("<")[0]
    op = OPS[base]
    args, made = {}, {}
    for name, a in kspec["args"].items():
        if "value" in a:
            continue
        count = evaluate(a["count"], shape)
        dtype = DTYPES[a["dtype"]]
        if a["role"] in ("input", "inout"):
            args[name] = make_input(a.get("init", "normal(0, 1)"), count, dtype, shape, made)
            made[name] = args[name]
    row = {"kernel": kernel, "shape_set": shape_name}
    try:
        row["bytes"] = evaluate(kspec.get("bytes", "auto"), shape) if kspec.get("bytes", "auto") != "auto" \
            else sum(evaluate(a["count"], shape) * torch.empty(0, dtype=DTYPES[a["dtype"]]).element_size()
                     * (2 if a["role"] == "inout" else 1)
                     for a in kspec["args"].values() if "count" in a and a["role"] != "scratch")
    except Exception:  # noqa: BLE001
        row["bytes"] = None
    if base in IMPL:
        row["impl"] = IMPL[base]()
    with torch.no_grad():
        row["eager_us"] = round(timer.median_us(lambda: op(args, shape)), 2)
        row["compile_us"] = None
        if do_compile:
            try:
                torch._dynamo.reset()
                compiled = torch.compile(op, dynamic=False)
                row["compile_us"] = round(timer.median_us(lambda: compiled(args, shape)), 2)
            except Exception as e:  # noqa: BLE001 (report, go on with the next)
                row["compile_error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
    if row.get("bytes"):
        for key in ("eager_us", "compile_us"):
            if row.get(key):
                row[key.replace("_us", "_gbps")] = round(row["bytes"] / (row[key] * 1e3), 1)
    args = made = None
    torch.cuda.empty_cache()
    return row


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--suite", choices=["sglang", "kernelbench", "gnn"])
    p.add_argument("--kernel", help="spec kernel name or its base name (e.g. silu_and_mul)")
    p.add_argument("--shape", help="only this shape set")
    p.add_argument("--runs", type=int, default=50)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--no-compile", action="store_true")
    p.add_argument("--out", help="also write all rows to this file as a JSON array")
    opts = p.parse_args()
    if opts.runs < 50:
        p.error("--runs must be at least 50 (the engine's minimum)")
    if not torch.cuda.is_available():
        print("torch_baselines.py: no CUDA device", file=sys.stderr)
        return 1
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(0)
    timer = Timer(opts.warmup, opts.runs)
    rows = []
    for path in spec_files(opts.suite):
        spec = load_spec(path)
        for kernel, kspec in spec["kernels"].items():
            if opts.kernel and opts.kernel not in (kernel, kernel.split("<")[0]):
                continue
            for shape_name, shape in kspec["shapes"].items():
                if opts.shape and opts.shape != shape_name:
                    continue
                row = bench_one(kernel, kspec, shape_name, shape, timer, not opts.no_compile)
                rows.append(row)
                print(json.dumps(row), flush=True)
    if opts.out:
        with open(opts.out, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
