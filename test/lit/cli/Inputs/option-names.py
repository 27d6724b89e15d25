"""Every option a clang-astra message names exists.

Collects the options of every subcommand from `clang-astra <sub>
--help-hidden`, then scans the string literals of the tool's sources for
`--name` (and `-x` single-letter options in tools/clang-astra) and prints
each one that no subcommand has, with the file it is in. Options of other
programs that messages mention on purpose (nvcc's, clang's, pip's) are
listed in EXTERNAL below.

usage: option-names.py SOURCE-ROOT CLANG-ASTRA
"""
import os
import re
import subprocess
import sys

src, astra = sys.argv[1], sys.argv[2]

# Flags of other tools that messages and comments-in-strings name.
EXTERNAL = {
    # nvcc and clang flags the compile-flag translation reports on
    "--use_fast_math", "--cuda-gpu-arch", "--cuda-path", "--offload-arch",
    "--options-file", "--relocatable-device-code", "--generate-code",
    "--gpu-architecture", "--gpu-code", "--compiler-options", "--std",
    "--cuda-device-only", "--cuda-host-only", "--expt-relaxed-constexpr",
    "--expt-extended-lambda", "--extended-lambda", "--ptxas-options",
    "--maxrregcount", "--fmad", "--ftz", "--prec-div", "--prec-sqrt",
    "--include-path", "--define-macro", "--system-include", "--output-file",
    "--compile", "--device-c", "--dependency-output", "--keep", "--verbose",
    "--threads", "--forward-unknown-to-host-compiler", "--linker-options",
    "--x", "--no-cuda-version-check", "--cuda-gpu-arch", "--save-temps",
    # ptxas, compute-sanitizer and ncu, run by the engine
    "--gpu-name", "--tool", "--leak-check", "--error-exitcode", "--metrics",
    "--csv", "--target-processes", "--launch-count", "--kernel-name",
    "--print-units", "--page", "--nvtx", "--kernel-name-base",
    "--check-exit-code", "--print-limit", "--report-api-errors",
    "--racecheck-report", "--show-backtrace", "--print-summary",
    "--log-file", "--force-overwrite", "--export", "--quiet",
    # nvcc flags the compile-command reader knows (lib/Frontend)
    "--allow-unsupported-compiler", "--archive-options", "--compiler-bindir",
    "--cudadevrt", "--cudart", "--debug", "--default-stream",
    "--device-debug", "--diag-default", "--diag-error", "--diag-suppress",
    "--diag-warn", "--diag_suppress", "--disable-warnings",
    "--display-error-number", "--fatbin-options", "--forward-unknown-opts",
    "--generate-dependencies-with-compile", "--generate-line-info",
    "--generate-nonsystem-dependencies-with-compile", "--keep-dir",
    "--library", "--library-path", "--no-display-error-number",
    "--nvlink-options", "--optimize", "--output-directory", "--pre-include",
    "--resource-usage", "--shared", "--source-in-ptx", "--split-compile",
    "--static-global-template-stub", "--undefine-macro", "--use-fast-math",
    "--restrict", "--expt",
    # clang's driver mode, which picks nvcc's reading of the flags after --
    "--driver-mode",
    # ncu's report sections
    "--section",
    # bench/torch_baselines.py, a script of this repository
    "--out",
    # sbatch, run by the Slurm executor (lib/Exec), and the user's
    # --slurm-args in its help
    "--job-name", "--output", "--parsable", "--time", "--gres",
    # pip, apt, cp, git, sh
    "--disable-pip-version-check", "--no-install-recommends",
    "--remove-destination", "--no-deps", "-c",
}


def options_of(args):
    out = subprocess.run([astra] + args + ["--help-hidden"],
                         capture_output=True, text=True).stdout
    return out, set(re.findall(r"^\s+(--?[A-Za-z][\w-]*)", out, re.M))


top, known = options_of([])
subs = [l.split()[0] for l in
        top.split("SUBCOMMANDS:")[1].split("OPTIONS:")[0].splitlines()
        if " - " in l]
for s in subs:
    known |= options_of([s])[1]
known = {k.lstrip("-") for k in known}

literal = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
long_opt = re.compile(r"(?<![\w-])--([a-z][a-z0-9_-]*[a-z0-9])")
short_opt = re.compile(r"(?<![\w-])-([a-z])\b(?![=.-])")
bad = []
for root in ["tools/clang-astra", "lib", "passes"]:
    for d, _, files in os.walk(os.path.join(src, root)):
        for f in sorted(files):
            if not f.endswith((".cpp", ".h")):
                continue
            path = os.path.join(d, f)
            rel = os.path.relpath(path, src)
            for lit in literal.findall(open(path, encoding="utf-8").read()):
                for name in long_opt.findall(lit):
                    if name not in known and "--" + name not in EXTERNAL:
                        bad.append((rel, "--" + name))
                if rel.startswith("tools/"):
                    for name in short_opt.findall(lit):
                        if name not in known and "-" + name not in EXTERNAL:
                            bad.append((rel, "-" + name))
for rel, opt in sorted(set(bad)):
    print(f"{rel}: names {opt}, which no subcommand has")
print(f"checked against {len(known)} options of {len(subs)} subcommands")
