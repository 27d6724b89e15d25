"""Prints whether a captured argument's blob holds the given bytes.

usage: check-blob.py CAPTURE_DIR KERNEL ARG_INDEX EXPECTED_FILE

The kernel is found by a substring of its mangled name; the blob is that of
its most launched configuration that has one. Prints "same N bytes" when the
first N bytes of the blob (N: the expected file's size) are the expected
ones, "differ" otherwise.
"""
import glob
import json
import os
import sys

cap, kernel, arg, expected = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
want = open(expected, "rb").read()
for manifest in sorted(glob.glob(os.path.join(cap, "launches-*.json"))):
    for k in json.load(open(manifest))["kernels"]:
        if kernel not in k["name"]:
            continue
        for c in sorted(k["configs"], key=lambda c: -c["launches"]):
            contents = c["args"][arg].get("contents")
            if contents:
                got = open(os.path.join(cap, contents["blob"]), "rb").read()
                print("same %d bytes" % len(want) if got[:len(want)] == want else "differ")
                sys.exit(0)
print("no blob")
