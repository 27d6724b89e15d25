"""Runs a command and succeeds when it exits with the status given.

usage: exit-code.py STATUS COMMAND [ARGS...]   (stdin, stdout and stderr
are the command's)
"""
import subprocess
import sys

want = int(sys.argv[1])
got = subprocess.call(sys.argv[2:])
if got != want:
    print(f"exit-code.py: {sys.argv[2]} exited with {got}, expected {want}",
          file=sys.stderr)
    sys.exit(1)
