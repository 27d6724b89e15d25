"""Prints the factor by which gelu.cu's launch divides its grid and the one
its spec's grid says, for grid-coarsen.test: they must be the same (1 when
no grid-coarsen winner was written)."""
import json
import re
import sys

code = open(sys.argv[1]).read()
m = re.search(r"gelu<<<\(\(blocks\) \+ (\d+)\) / (\d+),", code)
code_f = int(m.group(2)) if m else 1
if m and int(m.group(1)) != code_f - 1:
    code_f = -1  # Not a round-up division.
text = open(sys.argv[2]).read()
# JSON with comments and trailing commas, as the spec format allows.
text = re.sub(r"//[^\n]*", "", text)
text = re.sub(r",(\s*[}\]])", r"\1", text)
spec = json.loads(text)
(entry,) = spec["kernels"].values()
grid = str(entry["launch"]["grid"])
s = re.fullmatch(r"cdiv\(cdiv\(n, 256\), (\d+)\)", grid)
spec_f = int(s.group(1)) if s else (1 if grid == "cdiv(n, 256)" else -1)
print(f"agree: code /{code_f}, spec /{spec_f}")
