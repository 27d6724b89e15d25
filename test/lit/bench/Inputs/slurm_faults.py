"""Runs a clang-astra command that sends jobs to Slurm and, once one of its
jobs runs, either cancels that job (cancel-one) or sends clang-astra SIGINT
(interrupt). Prints what it did; for interrupt, then checks that squeue
shows no job of the run still pending or running.

usage: slurm_faults.py cancel-one|interrupt JOBDIR -- COMMAND..."""
import os
import signal
import subprocess
import sys
import time

mode, jobdir = sys.argv[1], sys.argv[2]
cmd = sys.argv[sys.argv.index("--") + 1:]


def our_jobs():
    """(id, state) of the jobs whose name is astra-run-* (this run's)."""
    out = subprocess.run(["squeue", "-h", "-t", "all", "-o", "%i %j %T"],
                         capture_output=True, text=True, timeout=30).stdout
    jobs = []
    for line in out.splitlines():
        i, name, state = line.split()
        if name.startswith("astra-run-"):
            jobs.append((i, state))
    return jobs


seen_before = {i for i, _ in our_jobs()}
# lit's workers ignore SIGINT, and an ignored signal stays ignored across
# exec: clang-astra gets it back as a terminal would give it.
proc = subprocess.Popen(
    cmd, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
deadline = time.time() + 120
target = None
while time.time() < deadline and proc.poll() is None:
    running = [i for i, s in our_jobs() if s == "RUNNING" and i not in seen_before]
    if running:
        target = running[0]
        break
    time.sleep(0.2)
if target is None:
    proc.kill()
    print("no job of the run ever ran", flush=True)
    sys.exit(1)
if mode == "cancel-one":
    subprocess.run(["scancel", target], check=True, timeout=30)
    print("cancelled job", target, flush=True)
    sys.exit(proc.wait(timeout=600))
proc.send_signal(signal.SIGINT)
rc = proc.wait(timeout=120)
print("clang-astra ended by signal %d" % -rc if rc < 0 else "clang-astra exited %d" % rc, flush=True)
left = [(i, s) for i, s in our_jobs()
        if i not in seen_before and s in ("PENDING", "RUNNING", "CONFIGURING",
                                          "COMPLETING")]
print("jobs left: %s" % left if left else "no job left in squeue", flush=True)
sys.exit(0 if rc == -signal.SIGINT and not left else 1)
