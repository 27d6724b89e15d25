#!/usr/bin/env python3
"""Runs a command while the scripted OpenAI server plays a script.

usage: with_fake_server.py SCRIPT.json [--stats FILE] -- COMMAND ARGS...

Starts test/llm/fake_openai_server.py with SCRIPT.json, replaces "{port}" in
the command's arguments with the server's port, runs the command (its
stdout and stderr pass through), optionally writes the server's /stats JSON
to FILE, stops the server and exits with the command's exit code. Lit tests
use it, since lit's shell cannot run a server in the background.
"""

import json
import os
import subprocess
import sys
import urllib.request


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        sys.exit(__doc__)
    cut = argv.index("--")
    opts, command = argv[:cut], argv[cut + 1:]
    script = opts[0]
    stats = opts[opts.index("--stats") + 1] if "--stats" in opts else None
    server_py = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                             "fake_openai_server.py")
    server = subprocess.Popen([sys.executable, server_py, "--script", script],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        line = server.stdout.readline().decode()
        if not line.startswith("PORT "):
            sys.exit("with_fake_server.py: the server did not start: %r" % line)
        port = line.split()[1]
        command = [a.replace("{port}", port) for a in command]
        rc = subprocess.call(command)
        if stats:
            with urllib.request.urlopen("http://127.0.0.1:%s/stats" % port) as r:
                data = json.load(r)
            with open(stats, "w") as f:
                json.dump(data, f, indent=1)
        return rc
    finally:
        server.stdin.close()
        server.wait(timeout=10)


if __name__ == "__main__":
    sys.exit(main())
