"""Prints the block size fused_add_rmsnorm.cu launches with and the one its
spec says, and whether they are the same (block-size.test)."""
import json
import re
import sys

code = open(sys.argv[1]).read()
threads = re.search(r"const int threads = (\d+);", code).group(1)
text = open(sys.argv[2]).read()
# JSON with comments and trailing commas, as the spec format allows.
text = re.sub(r"//[^\n]*", "", text)
text = re.sub(r",(\s*[}\]])", r"\1", text)
spec = json.loads(text)
(entry,) = spec["kernels"].values()
block = str(entry["launch"]["block"])
print(f"agree: threads {threads}, spec block {block}, "
      f"{'same' if threads == block else 'DIFFERENT'}")
