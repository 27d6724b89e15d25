"""Writes DIR/scoreboard.json (and report.json) as an earlier `bench` run
would have: one kernel of FILE, 1.5x on two shape sets, made by TOOL
(@PATH: the first line of the file PATH)."""
import json
import os
import sys

out_dir, tool, file = sys.argv[1], sys.argv[2], sys.argv[3]
if tool.startswith("@"):
    with open(tool[1:]) as f:
        tool = f.readline().strip()
os.makedirs(out_dir, exist_ok=True)
row = {"suite": "demo", "file": file, "kernel": "scale", "verified": True,
       "improved": True, "changes": "vectorize", "baseline_us": 30.0,
       "optimized_us": 20.0, "speedup": 1.5, "baseline_roofline": 0.4,
       "optimized_roofline": 0.6, "eager_us": None, "compile_us": None}
board = {
    "tool": tool, "date": "2026-11-22T17:00:00Z",
    "device": "NVIDIA H100 80GB HBM3 (driver 13.0)", "agents": "offline",
    "command": "clang-astra bench --report out " + file,
    "summary": {},
    "kernels": [{"suite": "demo", "file": file, "kernel": "scale", "ok": True,
                 "speedup": 1.5, "min_speedup": 1.5, "roofline_after": 0.6,
                 "vs_torch_compile": None}],
    "rows": [dict(row, shape="small"), dict(row, shape="large")],
}
with open(os.path.join(out_dir, "scoreboard.json"), "w") as f:
    json.dump(board, f)
with open(os.path.join(out_dir, "report.json"), "w") as f:
    f.write('{"earlier": true}\n')
