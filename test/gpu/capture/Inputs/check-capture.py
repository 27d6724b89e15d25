"""Checks a capture of capture-prog.cu against what the program did.

usage: check-capture.py CAPTURE_DIR [small]

The program's data are deterministic (its own generators), so the captured
contents can be recomputed here: gather_add's table and the indices of its
first launch, and y as it was before that launch (so contents are taken
before the kernel runs, not after). Also checks that gather_add, launched
from a second thread on a non-blocking stream, ran on another stream than
rownorm. Prints one "ok: ..." line per check, or "FAIL: ..." and exits 1.
"""
import glob
import json
import os
import struct
import sys

cap = sys.argv[1]
small = len(sys.argv) > 2 and sys.argv[2] == "small"
table_rows, dim, nscale = (20, 8, 100) if small else (500, 64, 1)
kernels = {}
for m in sorted(glob.glob(os.path.join(cap, "launches-*.json"))):
    for k in json.load(open(m))["kernels"]:
        kernels[k["name"]] = k


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def blob(arg):
    c = arg.get("contents")
    if not c:
        fail("no contents: %s" % arg.get("contents_missing"))
    return open(os.path.join(cap, c["blob"]), "rb").read()


g = kernels.get("_Z10gather_addPfPKfPKiii")
r = kernels.get("_Z7rownormPfPKfS1_iif")
if not g or not r:
    fail("kernels recorded: %s" % sorted(kernels))

# The program's generator, in the order the program draws.
local = 777


def rand():
    global local
    local = (local * 1664525 + 1013904223) & 0xffffffff
    return local >> 8


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


# The program computes in float: the quotient is rounded before the
# subtraction (once each; double then float rounding is exact for these).
table = [f32(f32(float(rand() % 1000) / 250.0) - 2.0)
         for _ in range(table_rows * dim)]
n0 = 1000 // nscale
idx = [rand() % table_rows for _ in range(n0)]

first = min(g["configs"], key=lambda c: c["first_launch"])
n = struct.unpack("<i", bytes.fromhex(first["args"][3]["bytes"]))[0]
if n != n0:
    fail("first gather_add launch has n %d, expected %d" % (n, n0))
got_table = struct.unpack("<%df" % len(table), blob(first["args"][1])[:4 * len(table)])
if list(got_table) != table:
    bad = [i for i in range(len(table)) if got_table[i] != table[i]]
    fail("gather_add's table differs from the program's at %d of %d floats, "
         "first [%d]: captured %r, program %r" % (len(bad), len(table), bad[0],
                                                   got_table[bad[0]], table[bad[0]]))
print("ok: table is the program's (%d floats)" % len(table))
got_idx = struct.unpack("<%di" % n0, blob(first["args"][2])[:4 * n0])
if list(got_idx) != idx:
    fail("gather_add's indices differ from the program's")
print("ok: indices are the program's (%d)" % n0)
y = struct.unpack("<%df" % (n0 * dim), blob(first["args"][0])[:4 * n0 * dim])
if any(y[i] != float(i % 7) - 3.0 for i in range(len(y))):
    fail("y is not as it was before the launch")
print("ok: y as it was before the launch")
gs = {s for c in g["configs"] for s in c["streams"]}
rs = {s for c in r["configs"] for s in c["streams"]}
if gs & rs:
    fail("gather_add and rownorm share stream ids %s" % sorted(gs & rs))
print("ok: gather_add on its own stream")
