"""Verifies each named planted fault of this folder on the device path and
on the host path (ASTRA_HOST_VERIFY=1) with the same seed, and fails unless
both print the same verdict and messages. Prints one line per fault:
`same <fault>: <the FAIL (kind) line>`.

usage: both-paths.py <clang-astra> <seed> <fault>...
"""
import os
import subprocess
import sys

tool, seed, faults = sys.argv[1], sys.argv[2], sys.argv[3:]
here = os.path.dirname(os.path.abspath(__file__))
for fault in faults:
    outs = []
    for host in ("0", "1"):
        env = dict(os.environ, ASTRA_HOST_VERIFY=host)
        p = subprocess.run([tool, "verify", os.path.join(here, "rmsnorm.cu"),
                            "--candidate", os.path.join(here, "rmsnorm-%s.cu" % fault),
                            "--seed", seed], env=env, capture_output=True, text=True)
        outs.append((p.returncode, p.stdout))
    if outs[0] != outs[1]:
        sys.exit("paths differ on %s:\n--- device (exit %d)\n%s--- host (exit %d)\n%s"
                 % (fault, outs[0][0], outs[0][1], outs[1][0], outs[1][1]))
    kind = [l for l in outs[0][1].splitlines() if l.startswith("FAIL (")]
    print("same %s: exit %d %s" % (fault, outs[0][0], kind[0] if kind else ""))
