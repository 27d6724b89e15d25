"""Writes the hostile specs of spec-limits.test into the folder argv[1]."""
import json
import os
import sys

out = sys.argv[1]


def spec(count='n', shapes=None, extra_args=None, grid="cdiv(n, 256)"):
    args = {"out": {"dtype": "f32", "count": count, "role": "output"},
            "a": {"dtype": "f32", "count": "n"},
            "n": {"value": "n"}}
    args.update(extra_args or {})
    return {"version": 1, "kernels": {"add": {
        "shapes": shapes or {"s": {"n": 1024}},
        "args": args,
        "launch": {"grid": grid, "block": 256}}}}


def write(name, obj):
    with open(os.path.join(out, name), "w") as f:
        f.write(obj if isinstance(obj, str) else json.dumps(obj))


# 2000 deep: 4001 characters, under the length limit, so the depth limit
# is what stops it (5000 deep is over the length limit; long.json checks it).
write("parens.json", spec("(" * 2000 + "n" + ")" * 2000))
write("chain.json", spec("1+" * 1500 + "n"))
write("unary.json", spec("-" * 3000 + "n"))
write("long.json", spec("n" + " + 0" * 2000))
write("deep-json.json",
      '{"version": 1, "kernels": {"add": ' + "[" * 40000 + "]" * 40000 + "}}")
write("count-1e15.json", spec("1e15"))
write("count-1e16.json", spec("1e16"))
write("count-number.json", spec(1e15))
# A fixed grid: cdiv(n, 256) would be refused first, as more blocks than
# CUDA allows, and the sizes would not be looked at.
write("shape-1e16.json", spec("n", {"s": {"n": 1e16}}, grid=1024))
write("sets-2000.json",
      spec("n", {"s%d" % i: {"n": 1024} for i in range(2000)}))
write("sets-2M.json",
      spec("n", {"s%d" % i: {"n": 1024} for i in range(2000000)}))
write("vars-300.json",
      spec("n", {"s": dict({"n": 1024}, **{"v%d" % i: 1 for i in range(300)})}))
