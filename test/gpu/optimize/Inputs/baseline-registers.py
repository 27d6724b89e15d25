"""Prints the registers of each kernel's baseline in an optimize report."""
import json
import sys

report = json.load(open(sys.argv[1]))
print("timed_compiler:", report.get("timed_compiler"))
for k in report["kernels"]:
    regs = k["baseline"].get("registers")
    print("%s: baseline registers %s (%s)" % (
        k.get("kernel", "?"), regs,
        "at most 32" if regs is not None and regs <= 32 else "more than 32"))
