"""Exits 1 with a diff unless two bench report folders hold the same
scoreboard and report, but for what may differ between two runs: the date,
the command line and the seconds a file took."""
import difflib
import json
import re
import sys


def markdown(path):
    out = []
    for line in open(path):
        if line.startswith(("- date:", "- command:", "| bench time |")):
            continue
        out.append(re.sub(r"\| [0-9.]+ s \|$", "| N s |", line.rstrip("\n")))
    return out


def report_json(path):
    data = json.load(open(path))
    for key in ("date", "command"):
        data.pop(key, None)
    return json.dumps(data, indent=1, sort_keys=True).splitlines()


def scoreboard_json(path):
    data = json.load(open(path))
    text = json.dumps(data, indent=1, sort_keys=True)
    text = re.sub(r'"(date|command)": "[^"]*"', r'"\1": "-"', text)
    text = re.sub(r'"(file_seconds|bench_seconds|seconds)": [0-9.e+-]+',
                  r'"\1": 0', text)
    return text.splitlines()


a, b = sys.argv[1], sys.argv[2]
bad = False
for name, read in (("scoreboard.md", markdown), ("report.md", markdown),
                   ("report.json", report_json),
                   ("scoreboard.json", scoreboard_json)):
    x, y = read(f"{a}/{name}"), read(f"{b}/{name}")
    if x != y:
        bad = True
        sys.stdout.writelines(
            l + "\n" for l in difflib.unified_diff(x, y, f"{a}/{name}",
                                                   f"{b}/{name}",
                                                   lineterm=""))
sys.exit(1 if bad else 0)
