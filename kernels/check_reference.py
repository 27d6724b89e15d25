#!/usr/bin/env python3
"""Checks one baseline run of a suite kernel against its CPU reference.

usage: check_reference.py DIR REF.py [--rtol R] [--atol A]

DIR is what `clang-astra run <file> --kernel K --shape S --seed N --dump DIR`
wrote: DIR/manifest.json and raw little-endian binaries, <arg>.in.bin for the
inputs and in-outs as they were before the run and <arg>.out.bin for the
outputs and in-outs after it. The manifest gives the shape set's variables
("shape": {"T": 16, ...}) and one entry per kernel argument (docs/engine.md,
"The dump format", is the authority):

  {"name": "out", "dtype": "bf16", "count": 229376, "role": "output",
   "in": null, "out": "out.out.bin"}
  {"name": "d", "dtype": "i32", "value": 14336}      (scalar arguments)

(the file names may also be spelled "in_file"/"out_file" or be absent, in
which case <name>.in.bin / <name>.out.bin are used). dtypes are decoded with
numpy: bf16 is the upper half of a float32, f16 is IEEE half, fp8 e4m3/e5m2
go through a 256-entry table; every floating dtype reaches the reference as
float32.

REF.py defines `reference(args, shape)`: args maps each argument name to its
values before the run (numpy arrays; scalars as Python numbers when the
manifest has them), shape maps each shape variable to an int. It returns a
dict naming every output and in-out buffer, each mapped to either
  - the expected values (any numpy array with the right number of elements),
    compared element by element: |actual - expected| <= atol + rtol*|expected|
    (integers exactly), or
  - a function actual -> None when the values are valid, or a string saying
    what is wrong, for outputs that have more than one right answer
    (sampling, ties).
REF.py may set TOLERANCE = {"name": (rtol, atol)} for outputs whose error
grows with the shape (long fp32 sums); --rtol/--atol override everything.
Default tolerances per dtype: f32 1e-5 relative + 1e-6 absolute, bf16 and f16
1e-2 (f16 atol 1e-3), fp8 half a step of the format.

Prints PASS or FAIL with the first mismatch; exits 0 on PASS, 1 on FAIL or on
any error (a missing file, a reference that does not cover an output).
"""
import argparse
import importlib.util
import json
import math
import os
import sys

import numpy as np

# (rtol, atol) per dtype when neither the command line nor the reference
# module says otherwise. fp8: half a step of the format relative to the value
# (e4m3 has 3 mantissa bits, e5m2 2), absolute half the smallest subnormal.
DEFAULT_TOLERANCE = {
    "f64": (1e-7, 1e-9),
    "f32": (1e-5, 1e-6),
    "bf16": (1e-2, 1e-2),
    "f16": (1e-2, 1e-3),
    "fp8_e4m3": (2.0 ** -4 * 1.001, 2.0 ** -10),
    "fp8_e5m2": (2.0 ** -3 * 1.001, 2.0 ** -17),
}

INT_DTYPES = {
    "i8": np.int8, "u8": np.uint8, "i16": np.int16, "u16": np.uint16,
    "i32": np.int32, "u32": np.uint32, "i64": np.int64, "u64": np.uint64,
}
ELEMENT_SIZE = {"f64": 8, "f32": 4, "bf16": 2, "f16": 2,
                "fp8_e4m3": 1, "fp8_e5m2": 1}
ELEMENT_SIZE.update({k: np.dtype(v).itemsize for k, v in INT_DTYPES.items()})


class CheckError(Exception):
    """A problem with the dump or the reference (not a mismatch)."""


def _fp8_table(exp_bits, man_bits, bias, e4m3):
    """float32 value of each of the 256 codes of an fp8 format."""
    table = np.zeros(256, dtype=np.float32)
    for code in range(256):
        sign = -1.0 if code & 0x80 else 1.0
        exp = (code >> man_bits) & ((1 << exp_bits) - 1)
        man = code & ((1 << man_bits) - 1)
        if e4m3 and exp == 0xF and man == 0x7:
            value = math.nan  # e4m3 has no infinities; S.1111.111 is NaN
        elif not e4m3 and exp == 0x1F:
            value = math.inf if man == 0 else math.nan
        elif exp == 0:
            value = man / (1 << man_bits) * 2.0 ** (1 - bias)
        else:
            value = (1 + man / (1 << man_bits)) * 2.0 ** (exp - bias)
        table[code] = sign * value
    return table


FP8_E4M3 = _fp8_table(4, 3, 7, True)
FP8_E5M2 = _fp8_table(5, 2, 15, False)


def decode(raw, dtype):
    """Raw little-endian bytes of `dtype` -> numpy array (float32 for floats)."""
    if dtype not in ELEMENT_SIZE:
        raise CheckError(f"unknown dtype '{dtype}'")
    if len(raw) % ELEMENT_SIZE[dtype]:
        raise CheckError(f"{len(raw)} bytes is not a whole number of {dtype}")
    if dtype == "f32":
        return np.frombuffer(raw, dtype="<f4").astype(np.float32)
    if dtype == "f64":
        return np.frombuffer(raw, dtype="<f8").astype(np.float64)
    if dtype == "f16":
        return np.frombuffer(raw, dtype="<f2").astype(np.float32)
    if dtype == "bf16":
        bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
        return bits.view(np.float32)
    if dtype == "fp8_e4m3":
        return FP8_E4M3[np.frombuffer(raw, dtype=np.uint8)]
    if dtype == "fp8_e5m2":
        return FP8_E5M2[np.frombuffer(raw, dtype=np.uint8)]
    return np.frombuffer(raw, dtype=np.dtype(INT_DTYPES[dtype]).newbyteorder("<")).astype(INT_DTYPES[dtype])


def _file_for(entry, which):
    for key in (which, which + "_file", which + "_path"):
        if entry.get(key):
            return entry[key]
    files = entry.get("files")
    if isinstance(files, dict) and files.get(which):
        return files[which]
    return f"{entry['name']}.{which}.bin"


def load_dump(directory):
    """Returns (manifest, shape, buffers, scalars); buffers maps name ->
    {"entry", "before", "after"} with decoded arrays (None where absent)."""
    path = os.path.join(directory, "manifest.json")
    try:
        with open(path) as f:
            manifest = json.load(f)
    except OSError as e:
        raise CheckError(f"cannot read {path}: {e.strerror}")
    except ValueError as e:
        raise CheckError(f"{path}: not JSON: {e}")
    shape = None
    for key in ("shape", "shape_vars", "variables", "vars"):
        if isinstance(manifest.get(key), dict):
            shape = manifest[key]
            break
    if shape is None:
        raise CheckError(f"{path}: no shape variables (expected \"shape\": {{...}})")
    shape = {k: (int(v) if float(v).is_integer() else float(v)) for k, v in shape.items()}
    entries = manifest.get("args", manifest.get("arguments"))
    if not isinstance(entries, list):
        raise CheckError(f"{path}: no argument list (expected \"args\": [...])")

    buffers, scalars = {}, {}
    for entry in entries:
        name = entry.get("name")
        if not name:
            raise CheckError(f"{path}: an argument without a name")
        if "role" not in entry:
            if "value" in entry:
                scalars[name] = entry["value"]
                continue
            raise CheckError(f"{path}: argument '{name}' has neither a role nor a value")
        if "dtype" not in entry or "count" not in entry:
            raise CheckError(f"{path}: buffer '{name}' needs a dtype and a count")
        dtype, role = entry["dtype"], entry["role"]
        count = int(entry["count"])
        buf = {"entry": entry, "before": None, "after": None}
        stages = []
        if role in ("input", "inout"):
            stages.append(("in", "before"))
        if role in ("output", "inout"):
            stages.append(("out", "after"))
        for which, slot in stages:
            fpath = os.path.join(directory, _file_for(entry, which))
            try:
                with open(fpath, "rb") as f:
                    raw = f.read()
            except OSError as e:
                raise CheckError(f"cannot read {fpath} ({role} '{name}'): {e.strerror}")
            values = decode(raw, dtype)
            if values.size != count:
                raise CheckError(f"{fpath}: {values.size} elements of {dtype}, "
                                 f"the manifest says {count}")
            buf[slot] = values
        buffers[name] = buf
    return manifest, shape, buffers, scalars


def load_reference(path):
    spec = importlib.util.spec_from_file_location("astra_reference", path)
    if spec is None:
        raise CheckError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except OSError as e:
        raise CheckError(f"cannot read {path}: {e.strerror}")
    if not callable(getattr(module, "reference", None)):
        raise CheckError(f"{path} defines no function reference(args, shape)")
    return module


def _fmt(v):
    return repr(v.item()) if hasattr(v, "item") else repr(v)


def compare(name, dtype, actual, expected, rtol, atol):
    """None when every element is within tolerance, else a message naming the
    first mismatch."""
    expected = np.asarray(expected)
    if expected.size != actual.size:
        return (f"{name}: the reference gave {expected.size} elements, "
                f"the kernel wrote {actual.size}")
    expected = expected.reshape(-1)
    if dtype in INT_DTYPES:
        bad = actual.astype(np.int64) != expected.astype(np.int64)
        diff = None
    else:
        a = actual.astype(np.float64)
        e = expected.astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            diff = np.abs(a - e)
            ok = diff <= atol + rtol * np.abs(e)
        ok |= (np.isnan(a) & np.isnan(e)) | (np.isinf(e) & (a == e))
        bad = ~ok
    count = int(np.count_nonzero(bad))
    if count == 0:
        return None
    i = int(np.argmax(bad))
    msg = f"{name}[{i}] = {_fmt(actual[i])}, expected {_fmt(expected[i])}"
    if diff is not None:
        msg += f" (|diff| {diff[i]:.3g} > {atol:.3g} + {rtol:.3g} * |expected|)"
    return msg + f"; {count} of {actual.size} elements differ"


def check(directory, ref_path, rtol=None, atol=None, out=sys.stdout):
    """Runs the check; returns True on PASS. Raises CheckError on errors."""
    manifest, shape, buffers, scalars = load_dump(directory)
    module = load_reference(ref_path)
    args = {n: b["before"] for n, b in buffers.items() if b["before"] is not None}
    args.update(scalars)
    result = module.reference({k: (v.copy() if isinstance(v, np.ndarray) else v)
                               for k, v in args.items()}, dict(shape))
    if not isinstance(result, dict):
        raise CheckError(f"{ref_path}: reference() returned {type(result).__name__}, not a dict")
    written = [n for n, b in buffers.items() if b["after"] is not None]
    missing = [n for n in written if n not in result]
    if missing:
        raise CheckError(f"{ref_path}: reference() gives nothing for "
                         f"{', '.join(missing)} (every output and in-out needs an expectation)")
    unknown = [n for n in result if n not in written]
    if unknown:
        raise CheckError(f"{ref_path}: reference() returned {', '.join(unknown)}, "
                         f"which the dump has no output for")
    tolerances = getattr(module, "TOLERANCE", {})
    label = f"{manifest.get('kernel', '?')} [{manifest.get('shape_set', manifest.get('shape_name', '?'))}]"
    passed = True
    for name in written:
        entry = buffers[name]["entry"]
        dtype = entry["dtype"]
        actual = buffers[name]["after"]
        expected = result[name]
        if callable(expected):
            problem = expected(actual)
            if problem:
                print(f"FAIL: {label}: {name}: {problem}", file=out)
                passed = False
            else:
                print(f"ok: {name} ({dtype}, {actual.size} elements): valid", file=out)
            continue
        r, a = DEFAULT_TOLERANCE.get(dtype, (0.0, 0.0))
        if name in tolerances:
            r, a = tolerances[name]
        r = rtol if rtol is not None else r
        a = atol if atol is not None else a
        problem = compare(name, dtype, actual, expected, r, a)
        if problem:
            print(f"FAIL: {label}: {problem}", file=out)
            passed = False
            continue
        note = ""
        if dtype not in INT_DTYPES:
            e = np.abs(np.asarray(expected, dtype=np.float64))
            if e.size and np.all(e <= a):
                note = " (warning: every expected value is within atol of 0; zeros would pass)"
        print(f"ok: {name} ({dtype}, {actual.size} elements){note}", file=out)
    print(("PASS: " if passed else "FAIL: ") + label, file=out)
    return passed


def main(argv=None):
    p = argparse.ArgumentParser(description="Check a `clang-astra run --dump` "
                                "directory against a CPU reference.")
    p.add_argument("dump_dir")
    p.add_argument("reference")
    p.add_argument("--rtol", type=float, default=None)
    p.add_argument("--atol", type=float, default=None)
    opts = p.parse_args(argv)
    try:
        ok = check(opts.dump_dir, opts.reference, opts.rtol, opts.atol)
    except CheckError as e:
        print(f"FAIL: {e}")
        return 1
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
