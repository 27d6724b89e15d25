#!/usr/bin/env python3
"""PolyBench-ACC in the offline optimizer's benchmark (kernels/polybench/).

The sources are third-party and not in the repository: give the folder that
holds PolyBench-ACC's CUDA/ tree (the folder itself or its CUDA/). The specs
in kernels/polybench/ mirror that tree: kernels/polybench/<P>.astra.json is
the spec of <corpus>/CUDA/<P>.

PolyBench fixes its sizes at compile time (the dataset macros of each .cuh),
so one build has one workload. Every dataset asked for gets its own copy of
the tree under the work folder (<work>/<dataset>/), compiled with
-D<DATASET>_DATASET through a compile database, with each spec cut down to
the shape sets of that dataset (named `<dataset>` or `<dataset>_<what>`).
A shape variable named like one of the dataset's macros must equal it: a
spec that disagrees with the code is an error before anything runs.

  polybench.py prepare --corpus DIR --work DIR [--datasets standard,large] [--only W,...]
  polybench.py bench   --corpus DIR --report DIR [--datasets ...] [--only W,...]
                       [--work DIR] [--clang-astra BIN] [--resume] [--stop-after S]
                       [-- bench options]
  polybench.py summary REPORT_DIR
  polybench.py static  --corpus DIR [--clang-astra BIN] [--datasets standard]

`bench` runs `clang-astra bench` over the copies (the GPU machine) and then
`summary`: per kernel and dataset the speedup over the baseline measured in
the same run, the passes of the winner, and the geometric means. `static`
(no GPU) runs every pass with --explain over every kernel and prints which
apply and, for those that do not, the first reason (issue 27's question:
which missing passes would pay).
"""
import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "kernels"))
from astra_spec import load_spec  # noqa: E402

DATASETS = ("mini", "small", "standard", "large", "extralarge")


class Fail(Exception):
    pass


def cuda_root(corpus):
    for cand in (os.path.join(corpus, "CUDA"), corpus):
        if os.path.isdir(os.path.join(cand, "utilities")):
            return os.path.abspath(cand)
    raise Fail(f"{corpus}: no PolyBench-ACC CUDA tree (expected CUDA/utilities "
               "under it or in it)")


def spec_files(specs, only=None):
    """The specs under `specs`, relative to it; with `only` (comma-separated
    words), those whose path contains one of them."""
    out = []
    for d, _, files in os.walk(specs):
        out += [os.path.join(d, f) for f in files if f.endswith(".cu.astra.json")]
    if not out:
        raise Fail(f"{specs}: no .cu.astra.json specs")
    out = sorted(os.path.relpath(p, specs) for p in out)
    if only:
        words = [w for w in only.split(",") if w]
        out = [p for p in out if any(w in p for w in words)]
        if not out:
            raise Fail(f"--only {only}: no spec under {specs} matches")
    return out


def dataset_macros(cuh, dataset):
    """The #defines of the `#ifdef <DATASET>_DATASET` block of a .cuh."""
    text = open(cuh).read()
    m = re.search(r"#\s*ifdef\s+%s_DATASET\b(.*?)#\s*endif" % dataset.upper(), text, re.S)
    if not m:
        raise Fail(f"{cuh}: no {dataset.upper()}_DATASET block")
    return {k: int(v) for k, v in re.findall(r"#\s*define\s+(\w+)\s+(\d+)\b", m.group(1))}


def cut_spec(spec, dataset, spec_name, macros):
    """The spec with only the dataset's shape sets, checked against its macros."""
    out = json.loads(json.dumps(spec))
    for kernel, entry in out["kernels"].items():
        shapes = {n: s for n, s in entry.get("shapes", {}).items()
                  if n == dataset or n.startswith(dataset + "_")}
        if not shapes:
            raise Fail(f"{spec_name}: kernel '{kernel}' has no shape set for the "
                       f"{dataset} dataset (a set named '{dataset}' or '{dataset}_...')")
        for name, shape in shapes.items():
            for var, value in shape.items():
                if var in macros and macros[var] != value:
                    raise Fail(f"{spec_name}: kernel '{kernel}', shape set '{name}': "
                               f"{var}={value}, but the {dataset} dataset defines "
                               f"{var} {macros[var]}")
        entry["shapes"] = shapes
        if "weights" in entry:
            entry["weights"] = {n: w for n, w in entry["weights"].items() if n in shapes}
    return out


def prepare(corpus, work, datasets, specs, only=None):
    """Copies of the tree per dataset with the cut specs beside the sources,
    and <work>/compile_commands.json; returns the .cu files, relative to work."""
    root = cuda_root(corpus)
    names = spec_files(specs, only)
    os.makedirs(work, exist_ok=True)
    database, files = [], []
    for ds in datasets:
        dst = os.path.join(work, ds)
        if os.path.exists(dst):
            shutil.rmtree(dst)
        shutil.copytree(root, dst)
        for name in names:
            cu = name[: -len(".astra.json")]
            src = os.path.join(dst, cu)
            if not os.path.isfile(src):
                raise Fail(f"{os.path.join(specs, name)}: no source {cu} in {root}")
            cuh = os.path.splitext(src)[0] + ".cuh"
            macros = dataset_macros(cuh, ds)
            spec = cut_spec(load_spec(os.path.join(specs, name)), ds, name, macros)
            with open(src + ".astra.json", "w") as f:
                json.dump(spec, f, indent=1)
                f.write("\n")
            # The directory is the work folder, where bench runs: clang-astra
            # reads a relative file name against it after the parse as well.
            database.append({
                "directory": os.path.abspath(work),
                "file": os.path.abspath(src),
                "arguments": ["clang++", "-x", "cuda", "-I" + os.path.join(os.path.abspath(dst), "utilities"),
                              "-D%s_DATASET" % ds.upper(), "-c", os.path.abspath(src)],
            })
            files.append(os.path.join(ds, cu))
    with open(os.path.join(work, "compile_commands.json"), "w") as f:
        json.dump(database, f, indent=1)
    return files


def parse_datasets(text):
    out = [d.strip().lower() for d in text.split(",") if d.strip()]
    for d in out:
        if d not in DATASETS:
            raise Fail(f"--datasets: unknown dataset '{d}' (one of {', '.join(DATASETS)})")
    if not out:
        raise Fail("--datasets: none given")
    return out


def find_tool(arg):
    tool = arg or shutil.which("clang-astra") or os.path.join(TOP, "build", "bin", "clang-astra")
    if not os.path.isfile(tool):
        raise Fail(f"no clang-astra at {tool} (give --clang-astra)")
    return os.path.abspath(tool)


def cmd_prepare(a):
    files = prepare(a.corpus, a.work, parse_datasets(a.datasets), a.specs, a.only)
    print(f"{len(files)} files under {a.work} (compile database: "
          f"{os.path.join(a.work, 'compile_commands.json')})")
    for f in files:
        print("  " + f)


def cmd_bench(a, extra):
    datasets = parse_datasets(a.datasets)
    tool = find_tool(a.clang_astra)
    report = os.path.abspath(a.report)
    work = os.path.abspath(a.work or os.path.join(report, "work"))
    files = prepare(a.corpus, work, datasets, a.specs, a.only)
    cmd = [tool, "bench", *(files if a.only else datasets), "--report", report, "-p", work]
    if a.resume:
        cmd.append("--resume")
    if a.stop_after:
        cmd += ["--stop-after", str(a.stop_after)]
    cmd += extra
    print("polybench: " + " ".join(cmd), file=sys.stderr, flush=True)
    rc = subprocess.call(cmd, cwd=work)
    board = os.path.join(report, "scoreboard.json")
    if os.path.exists(board):
        print(summary(board))
    return rc


def summary(board_path):
    board = json.load(open(board_path))
    rows = board.get("rows", [])
    changes, slower = {}, set()
    for r in rows:
        key = (r["file"], r["kernel"])
        if r.get("changes") and r["changes"] != "-":
            changes.setdefault(key, set()).add(r["changes"])
        if r.get("speedup") and r["speedup"] < 1.0:
            slower.add(key)
    lines = [f"PolyBench-ACC: {board.get('device', '?')}, {board.get('tool', '?')}",
             "", "| dataset | source | kernel | speedup | slowest set | winner's passes |",
             "|---|---|---|---:|---:|---|"]
    by_ds, failed = {}, []
    for k in board.get("kernels", []):
        parts = k["file"].split("/")
        ds, src = parts[0], "/".join(parts[1:])
        key = (k["file"], k["kernel"])
        if not k.get("ok"):
            failed.append(key)
            lines.append(f"| {ds} | {src} | {k['kernel']} | error | | {k.get('error', '')} |")
            continue
        by_ds.setdefault(ds, []).append(k["speedup"])
        lines.append(f"| {ds} | {src} | {k['kernel']} | {k['speedup']:.2f}x | "
                     f"{k['min_speedup']:.2f}x | {', '.join(sorted(changes.get(key, []))) or '-'} |")

    def gm(v):
        return math.exp(sum(math.log(max(x, 1e-12)) for x in v) / len(v)) if v else 0.0

    every = [x for v in by_ds.values() for x in v]
    lines.append("")
    for ds, v in sorted(by_ds.items()):
        lines.append(f"- {ds}: geometric mean {gm(v):.2f}x over {len(v)} kernels")
    lines.append(f"- all: geometric mean {gm(every):.2f}x over {len(every)} kernels; "
                 f"slower on some shape set: {len(slower)}; errors: {len(failed)}")
    lines.append("- issue 27's target: geometric mean at least 3x, none slower")
    return "\n".join(lines)


def cmd_summary(a):
    print(summary(os.path.join(a.report, "scoreboard.json")))


EXPLAIN = re.compile(r"^(.*?):(\d+):(\d+): ([a-z0-9-]+): (fired|not applied): (.*)$")


def cmd_static(a):
    datasets = parse_datasets(a.datasets)
    tool = find_tool(a.clang_astra)
    work = tempfile.mkdtemp(prefix="polybench-static-")
    try:
        files = prepare(a.corpus, work, datasets, a.specs, a.only)
        passes = subprocess.run([tool, "rewrite", "--list-passes"], capture_output=True,
                                text=True, check=True).stdout
        passes = ",".join(line.split()[0] for line in passes.splitlines() if line.strip())
        print("| source | kernel | applies | refuses (first reason) |")
        print("|---|---|---|---|")
        for f in files:
            spec = json.load(open(os.path.join(work, f + ".astra.json")))
            for kernel in spec["kernels"]:
                # Passes run in order, each on the one before's output: a pass
                # that fired changes what the later ones see. A second run
                # without the passes that fired gives the others' view of the
                # original kernel (what the planner's probe, one pass at a
                # time, sees).
                fired, refused, error = [], {}, None
                todo = passes.split(",")
                while todo and error is None:
                    p = subprocess.run([tool, "rewrite", "--passes=" + ",".join(todo), "--explain",
                                        "--kernel", kernel, "-p", work, f], cwd=work,
                                       capture_output=True, text=True)
                    if p.returncode != 0:
                        error = (p.stderr.strip().splitlines() or ["?"])[-1]
                        break
                    now = []
                    for line in p.stderr.splitlines():
                        m = EXPLAIN.match(line)
                        if not m:
                            continue
                        name, what, why = m.group(4), m.group(5), m.group(6)
                        if what == "fired":
                            if name not in fired:
                                fired.append(name)
                                now.append(name)
                        else:
                            refused[name] = f"{why} (line {m.group(2)})"
                    todo = [n for n in todo if n not in fired] if now else []
                if error is not None:
                    print(f"| {f.split('/', 1)[1]} | {kernel} | error | {error} |")
                    continue
                ref = "; ".join(f"**{n}**: {w}" for n, w in refused.items() if n not in fired)
                print(f"| {f.split('/', 1)[1]} | {kernel} | {', '.join(fired) or '-'} | {ref} |",
                      flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv):
    extra = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    specs_default = os.path.join(TOP, "kernels", "polybench")
    for name in ("prepare", "bench", "static"):
        p = sub.add_parser(name)
        p.add_argument("--corpus", required=True,
                       help="PolyBench-ACC's folder (holding CUDA/) or its CUDA/")
        p.add_argument("--specs", default=specs_default,
                       help="the specs' tree (default: kernels/polybench beside this script)")
        p.add_argument("--datasets", default="standard" if name == "static" else "standard,large",
                       help="comma-separated PolyBench datasets")
        p.add_argument("--only", help="comma-separated words: only the specs whose path "
                       "holds one (e.g. gesummv,bicg)")
        if name == "prepare":
            p.add_argument("--work", required=True)
        if name in ("bench", "static"):
            p.add_argument("--clang-astra", help="the clang-astra binary (default: on PATH, "
                           "then build/bin)")
        if name == "bench":
            p.add_argument("--report", required=True, help="bench's report folder")
            p.add_argument("--work", help="the copies' folder (default: <report>/work)")
            p.add_argument("--resume", action="store_true",
                           help="continue the scoreboard in --report (bench --resume)")
            p.add_argument("--stop-after", type=int, default=0,
                           help="bench --stop-after SECONDS")
    p = sub.add_parser("summary")
    p.add_argument("report", help="a bench report folder (its scoreboard.json)")
    a = ap.parse_args(argv)
    if extra and a.cmd != "bench":
        ap.error("options after -- are for `bench` only")
    try:
        if a.cmd == "prepare":
            cmd_prepare(a)
        elif a.cmd == "bench":
            return cmd_bench(a, extra)
        elif a.cmd == "summary":
            cmd_summary(a)
        else:
            cmd_static(a)
    except (Fail, OSError, ValueError) as e:
        print(f"polybench: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
