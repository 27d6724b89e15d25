"""Exits 1 unless two report.json files hold the same kernels with the same
attempts and verdicts (their timings may differ)."""
import json
import sys


def verdicts(path):
    d = json.load(open(path))
    return [(k.get("file"), k.get("kernel"), k.get("error", ""),
             [(a.get("id"), (a.get("evaluation") or {}).get("status"),
               (a.get("evaluation") or {}).get("seeds"))
              for a in k.get("attempts", [])])
            for k in d["kernels"]]


a, b = verdicts(sys.argv[1]), verdicts(sys.argv[2])
if a != b:
    print("different verdicts:\n%s\n%s" % (a, b))
    sys.exit(1)
print("same verdicts: %d kernels" % len(a))
