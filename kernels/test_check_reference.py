#!/usr/bin/env python3
"""Self-test of check_reference.py and of every reference of the suite, on
synthetic dumps written here with numpy (no GPU): the checker must PASS a
right dump and FAIL a wrong one.

For every kernel entry of every kernels/*/*.cu.astra.json, on its smallest
shape set: inputs are drawn from the spec's generators, the reference's
expectation is stored in the output dtype (rounded as a GPU stores it) and
must PASS; the same dump with one output element changed must FAIL. Then
targeted cases: the dtype tables, fused_add_rmsnorm computed the way the
kernel rounds (PASS) and with its residual left unchanged (FAIL), fp8 codes
one step off, top-k ties, the neighbour sampler's validity and uniformity
checks, and broken dumps (missing file, reference without an output).

What it cannot see: a reference whose math is wrong but consistent with
itself passes the first group (its "right" dump is its own expectation).
The references' math is checked against the kernels, two independent
implementations, on the GPU (test/gpu/kernels, bench/run_baselines_ptx.py);
fused_add_rmsnorm is also checked here against an emulation of its kernel.

usage: python3 kernels/test_check_reference.py   (exit 0: all passed)
"""
import glob
import io
import json
import math
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check_reference as cr  # noqa: E402
from astra_spec import evaluate, load_spec, split_call  # noqa: E402

FAILURES = []


def expect(cond, what):
    if cond:
        print(f"  ok   {what}")
    else:
        print(f"  FAIL {what}")
        FAILURES.append(what)


# --- encoding values the way the GPU stores them ---------------------------

def _fp8_codes(table):
    """Encoder for an fp8 table: nearest finite code, ties to the even code."""
    finite = [c for c in range(0x80) if np.isfinite(table[c])]
    values = table[finite].astype(np.float64)
    order = np.argsort(values, kind="stable")
    values, codes = values[order], np.array(finite)[order]

    def encode(x):
        x = np.asarray(x, dtype=np.float64)
        a = np.minimum(np.abs(x), values[-1])
        hi = np.clip(np.searchsorted(values, a), 1, len(values) - 1)
        lo = hi - 1
        d_lo, d_hi = a - values[lo], values[hi] - a
        pick = np.where(d_lo < d_hi, lo, hi)
        pick = np.where(d_lo == d_hi, np.where(codes[lo] % 2 == 0, lo, hi), pick)
        return (codes[pick] | np.where(np.signbit(x), 0x80, 0)).astype(np.uint8)
    return encode


ENCODE_E4M3 = _fp8_codes(cr.FP8_E4M3)
ENCODE_E5M2 = _fp8_codes(cr.FP8_E5M2)


def encode(values, dtype):
    """numpy values -> raw little-endian bytes of dtype (round to nearest even)."""
    v = np.asarray(values).reshape(-1)
    if dtype == "f32":
        return v.astype("<f4").tobytes()
    if dtype == "f64":
        return v.astype("<f8").tobytes()
    if dtype == "f16":
        return v.astype("<f2").tobytes()
    if dtype == "bf16":
        bits = v.astype(np.float32).view(np.uint32).astype(np.uint64)
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
        return bits.astype("<u2").tobytes()
    if dtype == "fp8_e4m3":
        return ENCODE_E4M3(v).tobytes()
    if dtype == "fp8_e5m2":
        return ENCODE_E5M2(v).tobytes()
    return v.astype(np.dtype(cr.INT_DTYPES[dtype]).newbyteorder("<")).tobytes()


def stored(values, dtype):
    """What the values read back as after a round trip through dtype."""
    return cr.decode(encode(values, dtype), dtype)


# --- specs (kernels/astra_spec.py) and the generators of the spec format ----

def csr_rowptr(rng, rows, avg, max_degree):
    deg = np.minimum(rng.integers(0, 2 * avg + 1, rows), max_degree)
    diff = rows * avg - int(deg.sum())
    while diff:
        pick = rng.integers(0, rows, min(abs(diff), rows))
        step = np.sign(diff)
        room = (deg[pick] < max_degree) if step > 0 else (deg[pick] > 0)
        pick = np.unique(pick[room])[: abs(diff)]
        deg[pick] += step
        diff -= step * len(pick)
    return np.concatenate([[0], np.cumsum(deg)]).astype(np.int64)


def generate(rng, init, count, env, made):
    name, args = split_call(init)
    if name == "csr_colind":
        rowptr = made[args[0]]
        n = evaluate(args[1], env)
        return np.concatenate([rng.choice(n, int(rowptr[r + 1] - rowptr[r]), replace=False)
                               for r in range(len(rowptr) - 1)]).astype(np.int64)
    a = [evaluate(x, env) for x in args]
    if name == "normal":
        return rng.normal(a[0], a[1], count)
    if name == "uniform":
        return rng.uniform(a[0], a[1], count)
    if name == "randint":
        return rng.integers(a[0], a[1] + 1, count)
    if name == "constant":
        return np.full(count, a[0])
    if name == "arange":
        return np.arange(count)
    if name == "permutation":
        return rng.permutation(a[0])[:count]
    if name == "sorted":
        return np.sort(rng.integers(a[0], a[1] + 1, count))
    if name == "indices_into":
        return rng.integers(0, a[0], count)
    if name == "csr_rowptr":
        r = csr_rowptr(rng, a[0], a[1], a[2])
        assert len(r) == count, f"csr_rowptr gives {len(r)} entries, count is {count}"
        return r
    raise ValueError(f"unknown generator {init}")


def smallest_shape(kspec):
    def size(item):
        env = item[1]
        return sum(evaluate(a["count"], env) for a in kspec["args"].values() if "count" in a)
    return min(kspec["shapes"].items(), key=size)


# --- dumps -----------------------------------------------------------------

def write_dump(directory, kernel, shape_name, shape, entries):
    """entries: name -> dict(dtype, role, before, after) or name -> scalar."""
    os.makedirs(directory, exist_ok=True)
    # The engine's format (docs/engine.md, "The dump format").
    manifest = {"version": 1, "kernel": kernel, "entry": "_Z_synthetic", "source": "synthetic",
                "shape_name": shape_name, "shape": shape, "seed": 1, "device": "none", "args": []}
    for name, e in entries.items():
        if not isinstance(e, dict):
            dtype = "f32" if isinstance(e, float) else "i64"
            manifest["args"].append({"name": name, "dtype": dtype, "value": e})
            continue
        count = len(np.asarray(e["before"] if e["before"] is not None else e["after"]).reshape(-1))
        item = {"name": name, "dtype": e["dtype"], "count": count, "role": e["role"],
                "in": None, "out": None}
        if e["before"] is not None:
            item["in"] = f"{name}.in.bin"
            with open(os.path.join(directory, item["in"]), "wb") as f:
                f.write(encode(e["before"], e["dtype"]))
        if e["after"] is not None:
            item["out"] = f"{name}.out.bin"
            with open(os.path.join(directory, item["out"]), "wb") as f:
                f.write(encode(e["after"], e["dtype"]))
        manifest["args"].append(item)
    with open(os.path.join(directory, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)


def run_checker(directory, ref, *extra):
    p = subprocess.run([sys.executable, os.path.join(HERE, "check_reference.py"),
                        directory, ref, *extra], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def load_ref(path):
    return cr.load_reference(path)


# --- valid answers for outputs that are checked for validity ---------------

def floyd_sample(rowptr, col, nodes, fanout, rng):
    out = np.full((len(nodes), fanout), -1, dtype=np.int64)
    for i, v in enumerate(nodes):
        start, deg = int(rowptr[v]), int(rowptr[v + 1] - rowptr[v])
        if deg <= fanout:
            out[i, :deg] = col[start:start + deg]
            continue
        picked = []
        for j in range(deg - fanout, deg):
            t = int(rng.integers(0, j + 1))
            picked.append(j if t in picked else t)
        out[i] = col[start + np.array(picked)]
    return out.reshape(-1)


def valid_answer(kernel, name, inputs, shape, rng):
    if name == "out" and kernel == "sample_neighbors":
        return floyd_sample(inputs["rowptr"], inputs["col"], inputs["nodes"], shape["fanout"], rng)
    if name == "topk_indices":
        T, E, k = shape["T"], shape["E"], shape["k"]
        logits = inputs["gating_output"].astype(np.float64).reshape(T, E)
        return np.argsort(-logits, axis=1, kind="stable")[:, :k].reshape(-1)
    raise AssertionError(f"no valid answer for {kernel}.{name}")


def break_answer(kernel, name, answer, shape):
    """A wrong answer that the validity check must reject."""
    wrong = answer.copy()
    if kernel == "sample_neighbors":
        rows = wrong.reshape(-1, shape["fanout"])
        i = int(np.argmax((rows[:, 1] >= 0)))  # a row with 2+ samples
        rows[i, 1] = rows[i, 0]  # a repeated neighbour
        return rows.reshape(-1)
    if name == "topk_indices":
        rows = wrong.reshape(-1, shape["k"])
        rows[0, -1] = (rows[0, :].max() + 1) % shape["E"]  # an expert outside the top k
        while rows[0, -1] in rows[0, :-1]:
            rows[0, -1] = (rows[0, -1] + 1) % shape["E"]
        return rows.reshape(-1)
    raise AssertionError(kernel)


# --- the suite --------------------------------------------------------------

def suite_cases(tmp):
    specs = sorted(glob.glob(os.path.join(HERE, "*", "*.cu.astra.json")))
    expect(len(specs) >= 20, f"{len(specs)} specs found under kernels/")
    rng = np.random.default_rng(7)
    for spec_path in specs:
        ref_path = spec_path.replace(".cu.astra.json", ".ref.py")
        rel = os.path.relpath(spec_path, HERE)
        if not os.path.exists(ref_path):
            expect(False, f"{rel}: no reference {os.path.basename(ref_path)}")
            continue
        spec = load_spec(spec_path)
        module = load_ref(ref_path)
        for kernel, kspec in spec["kernels"].items():
            shape_name, shape = smallest_shape(kspec)
            base = kernel.split("<")[0]
            inputs, entries = {}, {}
            for name, a in kspec["args"].items():
                if "value" in a:
                    entries[name] = evaluate(a["value"], shape)
                    continue
                count = evaluate(a["count"], shape)
                if a["role"] in ("input", "inout"):
                    init = a.get("init", "normal(0, 1)")
                    inputs[name] = stored(generate(rng, init, count, shape, inputs), a["dtype"])
                entries[name] = {"dtype": a["dtype"], "role": a["role"], "count": count,
                                 "before": inputs.get(name), "after": None}
            result = module.reference({k: v.copy() for k, v in inputs.items()}, dict(shape))
            label = f"{rel} {kernel} [{shape_name}]"
            written = [n for n, e in entries.items()
                       if isinstance(e, dict) and e["role"] in ("output", "inout")]
            expect(sorted(result) == sorted(written),
                   f"{label}: reference covers {sorted(result)} = outputs {sorted(written)}")
            for name in written:
                e = entries[name]
                if callable(result[name]):
                    e["after"] = valid_answer(base, name, inputs, shape, rng)
                else:
                    e["after"] = np.asarray(result[name]).reshape(-1)
                expect(len(np.asarray(e["after"]).reshape(-1)) == e["count"],
                       f"{label}: {name} has the spec's count {e['count']}")
            d = os.path.join(tmp, base + "-" + re.sub(r"\W+", "_", kernel) + "-ok")
            write_dump(d, kernel, shape_name, shape, entries)
            rc, out = run_checker(d, ref_path)
            expect(rc == 0 and "PASS" in out, f"{label}: right dump passes" +
                   ("" if rc == 0 else "\n" + out))

            # One output changed in one element (or made invalid) must fail.
            name = written[0]
            e = entries[name]
            if callable(result[name]):
                e["after"] = break_answer(base, name, e["after"], shape)
            elif e["dtype"] in cr.INT_DTYPES:
                e["after"] = e["after"].copy()
                e["after"][len(e["after"]) // 2] += 1
            else:
                after = np.asarray(e["after"], dtype=np.float64).copy()
                i = len(after) // 2
                after[i] = after[i] + 0.5 + 0.25 * abs(after[i])
                e["after"] = after
            d = d[:-3] + "-wrong"
            write_dump(d, kernel, shape_name, shape, entries)
            rc, out = run_checker(d, ref_path)
            expect(rc == 1 and "FAIL" in out, f"{label}: dump with a wrong {name} fails")


# --- targeted cases ----------------------------------------------------------

def dtype_cases():
    expect(cr.decode(np.array([0x3F80, 0xC000, 0x7F80], "<u2").tobytes(), "bf16").tolist()
           == [1.0, -2.0, math.inf], "bf16 decodes 1, -2, inf")
    expect(cr.decode(np.array([1.5, -65504.0], "<f2").tobytes(), "f16").tolist() == [1.5, -65504.0],
           "f16 decodes")
    e4m3 = cr.decode(bytes([0x7E, 0x01, 0xFE, 0x38, 0x08, 0x80]), "fp8_e4m3").tolist()
    expect(e4m3 == [448.0, 2.0 ** -9, -448.0, 1.0, 2.0 ** -6, -0.0], f"fp8 e4m3 table {e4m3}")
    expect(math.isnan(cr.decode(bytes([0x7F]), "fp8_e4m3")[0]), "fp8 e4m3 0x7f is NaN")
    e5m2 = cr.decode(bytes([0x3C, 0x7B, 0x7C, 0x01]), "fp8_e5m2").tolist()
    expect(e5m2 == [1.0, 57344.0, math.inf, 2.0 ** -16], f"fp8 e5m2 table {e5m2}")
    expect(cr.decode(np.array([-5, 7], "<i8").tobytes(), "i64").tolist() == [-5, 7], "i64 decodes")
    expect(stored(np.array([1.0 + 2 ** -8, 1.0 + 3 * 2 ** -8]), "bf16").tolist() == [1.0, 1.0 + 2 ** -6],
           "bf16 stores round to nearest even")
    try:
        cr.decode(b"\x00\x00\x00", "f32")
        expect(False, "a truncated f32 file is an error")
    except cr.CheckError:
        expect(True, "a truncated f32 file is an error")


def fused_add_rmsnorm_cases(tmp):
    """The kernel stores r in bf16 and normalizes the stored r: that rounding
    must pass; a residual left unchanged (Astra's unchecked in-out) must not."""
    ref = os.path.join(HERE, "sglang", "fused_add_rmsnorm.ref.py")
    rng = np.random.default_rng(3)
    T, H = 4, 4096
    x = stored(rng.normal(0, 1, T * H), "bf16")
    r = stored(rng.normal(0, 1, T * H), "bf16")
    w = stored(rng.uniform(0.5, 1.5, H), "bf16")
    s = (x + r).astype(np.float32)
    s_bf16 = stored(s, "bf16").reshape(T, H)
    ss = (s.reshape(T, H).astype(np.float32) ** 2).sum(axis=1, dtype=np.float32)
    inv = (1.0 / np.sqrt(ss / H + np.float32(1e-6))).astype(np.float32)
    out = (s_bf16 * inv[:, None] * w).astype(np.float32)

    def dump(name, x_after, r_after):
        d = os.path.join(tmp, name)
        write_dump(d, "fused_add_rmsnorm<__nv_bfloat16>", "t", {"T": T, "H": H}, {
            "input": {"dtype": "bf16", "role": "inout", "before": x, "after": x_after},
            "residual": {"dtype": "bf16", "role": "inout", "before": r, "after": r_after},
            "weight": {"dtype": "bf16", "role": "input", "before": w, "after": None},
            "hidden": H, "eps": 1e-6})
        return run_checker(d, ref)

    rc, out_text = dump("farn-kernel-rounding", out, s_bf16)
    expect(rc == 0, "fused_add_rmsnorm rounded like the kernel passes" + ("" if rc == 0 else "\n" + out_text))
    rc, out_text = dump("farn-residual-unchanged", out, r)
    expect(rc == 1 and "residual" in out_text, "fused_add_rmsnorm with the residual not written fails")
    rc, out_text = dump("farn-no-weight", (s_bf16 * inv[:, None]).astype(np.float32), s_bf16)
    expect(rc == 1, "fused_add_rmsnorm without the weight fails")


def fp8_cases(tmp):
    ref = os.path.join(HERE, "sglang", "per_token_quant_fp8.ref.py")
    module = load_ref(ref)
    rng = np.random.default_rng(5)
    T, H = 8, 1024
    x = stored(rng.normal(0, 1, T * H), "bf16")
    q = module.reference({"input": x}, {"T": T, "H": H})
    codes = ENCODE_E4M3(q["output"]).reshape(-1)

    def dump(name, out_codes):
        d = os.path.join(tmp, name)
        write_dump(d, "per_token_quant_fp8<__nv_bfloat16>", "t", {"T": T, "H": H}, {
            "input": {"dtype": "bf16", "role": "input", "before": x, "after": None},
            "output": {"dtype": "fp8_e4m3", "role": "output", "before": None,
                       "after": cr.FP8_E4M3[out_codes]},
            "scales": {"dtype": "f32", "role": "output", "before": None, "after": q["scales"]},
            "hidden": H})
        return run_checker(d, ref)

    expect(dump("fp8-right", codes)[0] == 0, "fp8 quantization with the right codes passes")
    expect(int(np.abs(cr.FP8_E4M3[codes]).max()) == 448, "each row's largest |x| maps to 448")
    wrong = codes.copy()
    i = int(np.argmax((codes & 0x7F) == 0x30))  # a mid-range code (0.5)
    wrong[i] += 1
    expect(dump("fp8-one-step", wrong)[0] == 1, "an fp8 code one step off fails")


def topk_tie_cases(tmp):
    ref = os.path.join(HERE, "sglang", "topk_softmax.ref.py")
    module = load_ref(ref)
    T, E, k = 2, 64, 2
    logits = np.zeros((T, E), dtype=np.float32)
    logits[0, [5, 9]] = 3.0  # a tie for first place
    logits[1, 40] = 2.0
    logits[1, [3, 17]] = 1.5  # a tie for second place
    res = module.reference({"gating_output": logits.reshape(-1)},
                           {"T": T, "E": E, "k": k, "renorm": 1})
    check = res["topk_indices"]
    expect(check(np.array([5, 9, 40, 3])) is None, "top-k: the lowest-index-first order passes")
    expect(check(np.array([9, 5, 40, 17])) is None, "top-k: tied experts in the other order pass")
    expect(check(np.array([5, 7, 40, 3])) is not None, "top-k: an expert outside the top k fails")
    expect(check(np.array([5, 5, 40, 3])) is not None, "top-k: a repeated expert fails")
    expect(np.allclose(np.ravel(res["topk_weights"]), [0.5, 0.5, math.e ** 0.5 / (math.e ** 0.5 + 1),
                                             1 / (math.e ** 0.5 + 1)]),
           "top-k: renormalized weights")


def sampler_cases():
    ref = os.path.join(HERE, "gnn", "sample_neighbors.ref.py")
    module = load_ref(ref)
    rng = np.random.default_rng(11)
    N, avg, n, fanout = 3000, 30, 400, 10
    rowptr = csr_rowptr(rng, N, avg, 120)
    col = generate(rng, "csr_colind(rowptr, N)", None, {"N": N}, {"rowptr": rowptr})
    nodes = rng.integers(0, N, n)
    shape = {"N": N, "avg": avg, "maxdeg": 120, "n": n, "fanout": fanout}
    check = module.reference({"rowptr": rowptr, "col": col, "nodes": nodes}, shape)["out"]
    good = floyd_sample(rowptr, col, nodes, fanout, rng)
    expect(check(good) is None, "sampler: Floyd's samples pass")
    first = np.full((n, fanout), -1, dtype=np.int64)
    for i, v in enumerate(nodes):
        neigh = col[rowptr[v]:rowptr[v + 1]][:fanout]
        first[i, :len(neigh)] = neigh
    problem = check(first.reshape(-1))
    expect(problem is not None and "uniform" in problem,
           f"sampler: always the first neighbours fails as not uniform ({problem})")
    bad = good.reshape(n, fanout).copy()
    i = int(np.argmax(np.diff(rowptr)[nodes] > fanout))
    others = np.setdiff1d(np.arange(N), col[rowptr[nodes[i]]:rowptr[nodes[i] + 1]])
    bad[i, 3] = others[0]
    expect(check(bad.reshape(-1)) is not None, "sampler: a node that is not a neighbour fails")
    bad = good.reshape(n, fanout).copy()
    j = int(np.argmax(np.diff(rowptr)[nodes] < fanout))
    expect(np.diff(rowptr)[nodes][j] < fanout, "sampler test has a node below the fanout")
    bad[j, fanout - 1] = col[rowptr[nodes[j]]]
    expect(check(bad.reshape(-1)) is not None, "sampler: a missing -1 pad fails")
    bad = good.reshape(n, fanout).copy()
    bad[i, fanout - 1] = -1
    expect(check(bad.reshape(-1)) is not None, "sampler: too few samples fails")


def broken_dump_cases(tmp):
    ref = os.path.join(HERE, "kernelbench", "gelu.ref.py")
    x = np.linspace(-3, 3, 1000)
    y = 0.5 * x * (1 + np.array([math.erf(v / math.sqrt(2)) for v in x]))
    d = os.path.join(tmp, "gelu-ok")
    write_dump(d, "gelu", "t", {"n": 1000}, {
        "x": {"dtype": "f32", "role": "input", "before": x, "after": None},
        "y": {"dtype": "f32", "role": "output", "before": None, "after": y}, "n": 1000})
    expect(run_checker(d, ref)[0] == 0, "gelu: the right output passes")
    buf = io.StringIO()
    expect(cr.check(d, ref, out=buf) and "PASS" in buf.getvalue(), "check() called from Python passes")
    rc, out = run_checker(d, ref, "--rtol", "0", "--atol", "1e-9")
    expect(rc == 1, "gelu: --rtol/--atol override the defaults (a float32 output is not exact)")
    os.remove(os.path.join(d, "y.out.bin"))
    rc, out = run_checker(d, ref)
    expect(rc == 1 and "cannot read" in out, "a missing output file is an error (exit 1)")
    d2 = os.path.join(tmp, "gelu-zeros")
    write_dump(d2, "gelu", "t", {"n": 1000}, {
        "x": {"dtype": "f32", "role": "input", "before": x, "after": None},
        "y": {"dtype": "f32", "role": "output", "before": None, "after": np.zeros(1000)}, "n": 1000})
    expect(run_checker(d2, ref)[0] == 1, "gelu: an all-zero output fails")
    silent = os.path.join(tmp, "silent_ref.py")
    with open(silent, "w") as f:
        f.write("def reference(args, shape):\n    return {}\n")
    rc, out = run_checker(d2, silent)
    expect(rc == 1 and "nothing for y" in out, "a reference that skips an output is an error")
    with open(os.path.join(d2, "manifest.json")) as f:
        m = json.load(f)
    del m["shape"]
    with open(os.path.join(d2, "manifest.json"), "w") as f:
        json.dump(m, f)
    rc, out = run_checker(d2, ref)
    expect(rc == 1 and "shape" in out, "a manifest without shape variables is an error")
    # The comparison itself: tolerance edges, NaN, integers.
    expect(cr.compare("a", "f32", np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-5]), 1e-5, 1e-6) is None,
           "compare: within rtol passes")
    msg = cr.compare("a", "f32", np.array([1.0, 2.0]), np.array([1.0, 2.1]), 1e-5, 1e-6)
    expect(msg is not None and "a[1]" in msg and "1 of 2" in msg, f"compare: names the first mismatch ({msg})")
    expect(cr.compare("a", "f32", np.array([math.nan]), np.array([1.0]), 1e-2, 1e-2) is not None,
           "compare: NaN where a number is expected fails")
    expect(cr.compare("a", "i64", np.array([3]), np.array([3.0]), 0, 0) is None, "compare: integers")
    expect(cr.compare("a", "i64", np.array([3, 4]), np.array([3]), 0, 0) is not None,
           "compare: a wrong element count fails")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for name, fn in [("dtype tables", dtype_cases),
                         ("every kernel of the suite", lambda: suite_cases(tmp)),
                         ("fused_add_rmsnorm in-place", lambda: fused_add_rmsnorm_cases(tmp)),
                         ("fp8 codes", lambda: fp8_cases(tmp)),
                         ("top-k ties", lambda: topk_tie_cases(tmp)),
                         ("neighbour sampling", sampler_cases),
                         ("broken dumps", lambda: broken_dump_cases(tmp))]:
            print(f"== {name}")
            fn()
    print(f"\n{'FAILED' if FAILURES else 'PASSED'}: {len(FAILURES)} failure(s)")
    for f in FAILURES:
        print("  - " + f.splitlines()[0])
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
