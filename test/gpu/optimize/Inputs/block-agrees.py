"""Prints the factors by which sgemm.cu's launch divides its block's x and y
and the block its spec says, for thread-coarsen.test: the spec's block must
be 32 x 32 divided by the code's factors (1 when no coarsened winner was
written)."""
import json
import re
import sys

code = open(sys.argv[1]).read()
m = re.search(r"const dim3 block\(([^;]*)\);", code)
args = [a.strip() for a in m.group(1).split(",")]
def factor(arg):
    d = re.fullmatch(r"\(kTile\) / (\d+)", arg)
    return int(d.group(1)) if d else (1 if arg == "kTile" else -1)
fx, fy = factor(args[0]), factor(args[1])
text = open(sys.argv[2]).read()
# JSON with comments and trailing commas, as the spec format allows.
text = re.sub(r"//[^\n]*", "", text)
text = re.sub(r",(\s*[}\]])", r"\1", text)
spec = json.loads(text)
(entry,) = spec["kernels"].values()
bx, by = (int(v) for v in entry["launch"]["block"][:2])
same = fx > 0 and fy > 0 and bx * fx == 32 and by * fy == 32
print(f"agree: code /{fx} x /{fy}, spec block {bx} x {by}, "
      f"{'same' if same else 'DIFFERENT'}")
