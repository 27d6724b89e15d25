# usage: crlf.py <in> <out>
# Writes <in> with CRLF line ends and without its final line end, as some
# editors leave files: --test must put such a file back byte for byte.
import sys

with open(sys.argv[1], "rb") as f:
    text = f.read()
with open(sys.argv[2], "wb") as f:
    f.write(text.rstrip(b"\n").replace(b"\n", b"\r\n"))
