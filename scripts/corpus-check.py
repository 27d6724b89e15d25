#!/usr/bin/env python3
"""Runs clang-astra over a tree of CUDA files and summarizes what it sees.

usage: corpus-check.py [options] PATH... [-- FLAGS...]

Each PATH is a .cu file or a folder (searched for .cu files). Every file gets
`clang-astra list --format=json FILE` with the flags after `--` (or `-p BUILD`),
in a process of its own with a time limit, so one file that hangs or crashes
clang cannot stop the check; with --compile, every file that parsed also gets
`clang-astra compile --emit=ptx`. The summary says, per PATH and in total:
how many files there are, how many need a third-party library that is not
installed (a header not found that is not part of the tree: these are not
counted), how many parse, how many list kernels, how many kernels, how many
compile to PTX, the median and largest `list` time, and the failures grouped
by their first error.

Options:
  --file-dir-include   add -I<the file's folder> to each file's flags
                       (how the cuda-samples and PolyBench Makefiles build)
  -p BUILD             read flags from BUILD/compile_commands.json
  --compile            also compile each parsed file to PTX (the gate)
  -j N                 files at a time (default: the number of cores)
  --timeout S          seconds per command (default 120)
  --clang-astra PATH   the binary (default: clang-astra beside this script's
                       build, then on PATH)
  --json FILE          write every file's result as JSON (and each one to
                       FILE + "l", one line each, as soon as it is known)
  --extra ARGS         more clang-astra options for every command, e.g.
                       "--no-nvcc-compat" (split at spaces)
  --min-parsed PCT     exit 1 unless at least PCT percent of the counted files
                       parse with kernels listed (per PATH)
  --require-compiled   exit 1 unless every parsed file compiles to PTX
  --max-median-list S  exit 1 unless the median `list` time is at most S
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def find_tool(explicit):
    if explicit:
        return explicit
    here = os.path.dirname(os.path.abspath(__file__))
    for c in (os.path.join(here, "..", "build", "bin", "clang-astra"),
              os.path.join(here, "..", "bin", "clang-astra")):
        if os.access(c, os.X_OK):
            return os.path.abspath(c)
    found = shutil.which("clang-astra")
    if not found:
        sys.exit("corpus-check: no clang-astra binary found; pass --clang-astra")
    return found


def cu_files(path):
    if os.path.isfile(path):
        return [os.path.abspath(path)]
    out = []
    for root, dirs, files in os.walk(path):
        dirs.sort()
        for f in sorted(files):
            if f.endswith(".cu"):
                out.append(os.path.abspath(os.path.join(root, f)))
    return out


ERROR_RE = re.compile(r"^(?P<loc>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+): "
                      r"(?P<kind>fatal error|error): (?P<msg>.*)$")
NOT_FOUND_RE = re.compile(r"'(?P<hdr>[^']+)' file not found")


def first_error(stderr):
    r"""The first clang diagnostic of \p stderr: (file, line, message), else
    the first clang-astra error line."""
    for line in stderr.splitlines():
        m = ERROR_RE.match(line)
        if m:
            return m.group("loc"), int(m.group("line")), m.group("msg")
    for line in stderr.splitlines():
        if "error:" in line:
            return "", 0, line.split("error:", 1)[1].strip()
    return "", 0, stderr.strip().splitlines()[-1] if stderr.strip() else "no output"


def in_tree(header, roots):
    r"""Whether a file named like \p header (a path suffix) is in the tree."""
    for root in roots:
        for dirpath, _, files in os.walk(root):
            cand = os.path.join(dirpath, os.path.basename(header))
            if os.path.basename(header) in files and cand.endswith(header):
                return True
    return False


def run(cmd, timeout):
    r"""Runs \p cmd: (exit code or None on timeout, stdout, stderr, wall
    seconds, CPU seconds). The CPU time (user + system of the process) is
    what a file costs on a machine other jobs share; the wall time is what
    the user waits for."""
    start = time.monotonic()
    with tempfile.TemporaryFile() as o, tempfile.TemporaryFile() as e:
        p = subprocess.Popen(cmd, stdout=o, stderr=e)
        deadline = start + timeout
        rc = None
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                rc = os.waitstatus_to_exitcode(status)
                break
            if time.monotonic() > deadline:
                p.kill()
                _, status, ru = os.wait4(p.pid, 0)
                break
            time.sleep(0.05)
        p.returncode = rc if rc is not None else -9
        wall = time.monotonic() - start
        cpu = ru.ru_utime + ru.ru_stime
        o.seek(0)
        e.seek(0)
        out = o.read().decode(errors="replace")
        err = e.read().decode(errors="replace")
    return rc, out, err, wall, cpu


def check_file(tool, f, args, flags):
    file_flags = list(flags)
    if args.file_dir_include:
        file_flags = ["-I" + os.path.dirname(f)] + file_flags
    common = args.extra.split() if args.extra else []
    if args.p:
        common += ["-p", args.p]
    dash = ["--"] + file_flags if (file_flags or not args.p) else []
    r = {"file": f}
    rc, out, err, secs, cpu = run([tool, "list", "--format=json", *common, f, *dash],
                                  args.timeout)
    r["list_seconds"] = round(secs, 2)
    r["list_cpu_seconds"] = round(cpu, 2)
    if rc is None:
        r["parsed"] = False
        r["cause"] = "list timed out after %d s" % args.timeout
        return r
    r["parsed"] = rc == 0
    if rc == 0:
        try:
            kernels = sum(len(x.get("kernels", [])) for x in json.loads(out)["files"])
        except (ValueError, KeyError):
            kernels = 0
        r["kernels"] = kernels
        warn = [l for l in err.splitlines() if "warning:" in l and "clang-astra" in l]
        if warn:
            r["warnings"] = warn
    else:
        loc, line, msg = first_error(err)
        r["error"] = "%s:%d: %s" % (loc, line, msg) if loc else msg
        m = NOT_FOUND_RE.search(msg)
        r["missing_header"] = m.group("hdr") if m else None
        r["cause"] = msg
    if args.compile and r["parsed"]:
        rc, _, err, secs, _ = run([tool, "compile", "--emit=ptx", *common, f, *dash],
                                  args.timeout)
        r["compile_seconds"] = round(secs, 2)
        r["compiled"] = rc == 0
        if rc is None:
            r["compile_error"] = "compile timed out after %d s" % args.timeout
        elif rc != 0:
            loc, line, msg = first_error(err)
            r["compile_error"] = "%s:%d: %s" % (loc, line, msg) if loc else msg
    return r


def main():
    argv = sys.argv[1:]
    flags = []
    if "--" in argv:
        i = argv.index("--")
        argv, flags = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--file-dir-include", action="store_true")
    ap.add_argument("-p")
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--clang-astra")
    ap.add_argument("--json")
    ap.add_argument("--extra", default="")
    ap.add_argument("--min-parsed", type=float)
    ap.add_argument("--require-compiled", action="store_true")
    ap.add_argument("--max-median-list", type=float)
    args = ap.parse_args(argv)
    tool = find_tool(args.clang_astra)

    groups = []
    for p in args.paths:
        if not os.path.exists(p):
            sys.exit("corpus-check: %s: no such file or folder" % p)
        groups.append((p, cu_files(p)))
    # Where a header that is not found may still be: the trees checked (a
    # file's folder for a file) and the CUDA toolkit's include folder, whose
    # headers (CCCL's cuda/std/... under include/cccl) are the toolkit's,
    # not a third-party library's: a file that misses one counts.
    roots = [os.path.abspath(p if os.path.isdir(p) else os.path.dirname(p))
             for p, _ in groups]
    cuda = os.environ.get("CUDA_PATH", "/usr/local/cuda")
    if os.path.isdir(os.path.join(cuda, "include")):
        roots.append(os.path.join(cuda, "include"))
    roots = sorted(set(roots))
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.j)) as ex:
        futs = {ex.submit(check_file, tool, f, args, flags): f
                for _, files in groups for f in files}
        # Each result is also appended to FILE.jsonl as it comes: a check cut
        # short by an outer time limit keeps what it finished.
        progress = open(args.json + "l", "w") if args.json else None
        for fut in concurrent.futures.as_completed(futs):
            results[futs[fut]] = fut.result()
            if progress:
                progress.write(json.dumps(results[futs[fut]]) + "\n")
                progress.flush()
    # A header that is not found and not part of the tree belongs to a
    # library this machine does not have: such files are not counted.
    missing_cache = {}
    for r in results.values():
        h = r.get("missing_header")
        if h:
            if h not in missing_cache:
                missing_cache[h] = not in_tree(h, roots)
            r["not_installed"] = missing_cache[h]

    ok = True
    totals = {"files": 0, "not_installed": 0, "counted": 0, "parsed": 0,
              "with_kernels": 0, "kernels": 0, "compiled": 0, "times": []}
    out = sys.stdout

    def summarize(name, files):
        nonlocal ok
        rs = [results[f] for f in files]
        n = len(rs)
        ni = [r for r in rs if r.get("not_installed")]
        counted = [r for r in rs if not r.get("not_installed")]
        parsed = [r for r in counted if r["parsed"]]
        with_k = [r for r in parsed if r.get("kernels", 0) > 0]
        kernels = sum(r.get("kernels", 0) for r in parsed)
        compiled = [r for r in parsed if r.get("compiled")]
        times = [r["list_seconds"] for r in counted]
        cpu_times = [r["list_cpu_seconds"] for r in counted]
        out.write("%s\n" % name)
        out.write("  files: %d\n" % n)
        if ni:
            libs = {}
            for r in ni:
                libs[r["missing_header"]] = libs.get(r["missing_header"], 0) + 1
            out.write("  need a library that is not installed: %d (%s)\n" % (
                len(ni), ", ".join("%s %d" % kv for kv in sorted(libs.items()))))
        pct = 100.0 * len(with_k) / len(counted) if counted else 100.0
        out.write("  parsed: %d of %d (%.1f%%), with kernels listed: %d (%.1f%%); kernels: %d\n" % (
            len(parsed), len(counted),
            100.0 * len(parsed) / len(counted) if counted else 100.0,
            len(with_k), pct, kernels))
        if args.compile:
            out.write("  compiled to PTX: %d of %d parsed\n" % (len(compiled), len(parsed)))
        if times:
            out.write("  list time: median %.2f s, max %.2f s (wall); median %.2f s, "
                      "max %.2f s (CPU)\n" % (statistics.median(times), max(times),
                                               statistics.median(cpu_times), max(cpu_times)))
        failures = {}
        for r in counted:
            if not r["parsed"]:
                failures.setdefault("parse: " + r["cause"], []).append(r["file"])
            elif args.compile and not r.get("compiled"):
                msg = r.get("compile_error", "")
                failures.setdefault("compile: " + re.sub(r"^.*?: (fatal error|error): ", "", msg),
                                    []).append(r["file"])
        if failures:
            out.write("  failures by cause:\n")
            for cause, fs in sorted(failures.items(), key=lambda kv: (-len(kv[1]), kv[0])):
                shown = ", ".join(os.path.relpath(f, os.path.dirname(os.path.abspath(name)))
                                  for f in fs[:4])
                more = " ..." if len(fs) > 4 else ""
                out.write("    %3d  %s\n         %s%s\n" % (len(fs), cause, shown, more))
        if args.min_parsed is not None and pct < args.min_parsed:
            out.write("  FAIL: %.1f%% parse with kernels listed, below %.1f%%\n" % (pct, args.min_parsed))
            ok = False
        if args.require_compiled and args.compile and len(compiled) != len(parsed):
            out.write("  FAIL: %d parsed files do not compile to PTX\n" % (len(parsed) - len(compiled)))
            ok = False
        if args.max_median_list is not None and times and statistics.median(times) > args.max_median_list:
            out.write("  FAIL: median list time %.2f s is above %.2f s\n" % (
                statistics.median(times), args.max_median_list))
            ok = False
        totals["files"] += n
        totals["not_installed"] += len(ni)
        totals["counted"] += len(counted)
        totals["parsed"] += len(parsed)
        totals["with_kernels"] += len(with_k)
        totals["kernels"] += kernels
        totals["compiled"] += len(compiled)
        totals["times"] += times

    for name, files in groups:
        summarize(name, files)
    if len(groups) > 1:
        t = totals
        out.write("total\n  files: %d, not installed: %d, parsed: %d of %d, with kernels: %d, "
                  "kernels: %d%s\n" % (t["files"], t["not_installed"], t["parsed"], t["counted"],
                                       t["with_kernels"], t["kernels"],
                                       (", compiled: %d" % t["compiled"]) if args.compile else ""))
        if t["times"]:
            out.write("  list time: median %.2f s\n" % statistics.median(t["times"]))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump([results[f] for _, fs in groups for f in fs], fh, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
