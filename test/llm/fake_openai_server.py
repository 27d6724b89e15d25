#!/usr/bin/env python3
"""A scripted OpenAI-compatible chat-completions server for the LLM client tests.

Listens on 127.0.0.1 on a free port and prints "PORT <n>" on stdout once it
accepts connections. Every POST to a path ending in /chat/completions plays
the next entry of the script (a JSON file):

  {
    "api_key": "sk-...",        # optional: require "Authorization: Bearer <key>"
                                # (a mismatch gets a 401, and consumes no entry)
    "replies": [
      {"content": "text", "usage": {"prompt_tokens": 3, "completion_tokens": 5},
       "finish_reason": "stop"},                       # a normal completion
      {"tool_calls": [{"id": "call_1", "name": "apply_passes",
                       "arguments": {"passes": ["fast-math"]}}]},
      {"status": 429, "headers": {"retry-after-ms": "300"},
       "body": {"error": {"message": "slow down"}}},   # any status, headers, body
      {"malformed": "<html>not json</html>"},          # 200 with this raw text
      {"delay": 3, "content": "late"},                 # sleep before answering
      {"status": 500, "times": 10}                     # play an entry N times
    ]
  }

When the script runs out, requests get a 500 that says so. GET /stats returns
{"requests": <chat requests seen>, "log": [{"time", "path", "authorization",
"body"} ...]} so tests can check what was sent and when. The server exits when
its stdin closes, so a test that dies never leaves it behind.

Only the Python standard library is used.
"""

import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Script:
    """The replies still to play, and what the server has seen."""

    def __init__(self, spec):
        self.api_key = spec.get("api_key")
        self.queue = []
        for entry in spec.get("replies", []):
            self.queue.extend([entry] * int(entry.get("times", 1)))
        self.lock = threading.Lock()
        self.log = []

    def next_reply(self):
        with self.lock:
            if self.queue:
                return self.queue.pop(0)
        return {"status": 500,
                "body": {"error": {"message": "fake server: script exhausted"}}}

    def record(self, path, authorization, body):
        with self.lock:
            self.log.append({"time": time.time(), "path": path,
                             "authorization": authorization, "body": body})

    def stats(self):
        with self.lock:
            return {"requests": len(self.log), "log": list(self.log)}


def completion(entry, model):
    """A chat.completion object from a script entry's content/tool_calls."""
    message = {"role": "assistant", "content": entry.get("content")}
    calls = []
    for i, call in enumerate(entry.get("tool_calls", [])):
        args = call.get("arguments", {})
        calls.append({
            "id": call.get("id", "call_%d" % i),
            "type": "function",
            "function": {"name": call["name"],
                         "arguments": args if isinstance(args, str)
                         else json.dumps(args)},
        })
    if calls:
        message["tool_calls"] = calls
    usage = dict(entry.get("usage", {"prompt_tokens": 10, "completion_tokens": 20}))
    usage.setdefault("total_tokens",
                     usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0))
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message,
                     "finish_reason": entry.get("finish_reason",
                                                "tool_calls" if calls else "stop")}],
        "usage": usage,
    }


def make_handler(script, verbose):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, fmt, *args):
            if verbose:
                sys.stderr.write("fake_openai_server: " + fmt % args + "\n")

        def send(self, status, body, headers=None):
            data = body.encode() if isinstance(body, str) else body
            try:
                self.send_response(status)
                ctype = "application/json"
                for name, value in (headers or {}).items():
                    if name.lower() == "content-type":
                        ctype = value
                    else:
                        self.send_header(name, str(value))
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # The client gave up (a timeout test).

        def do_GET(self):
            if self.path == "/stats":
                self.send(200, json.dumps(script.stats()))
            else:
                self.send(404, json.dumps({"error": {"message": "no such path"}}))

        def do_POST(self):
            length = int(self.headers.get("Content-Length", 0))
            raw = self.rfile.read(length).decode("utf-8", "replace")
            if not self.path.endswith("/chat/completions"):
                self.send(404, json.dumps(
                    {"error": {"message": "Unknown path %s" % self.path}}))
                return
            try:
                body = json.loads(raw)
            except ValueError:
                self.send(400, json.dumps(
                    {"error": {"message": "request body is not JSON"}}))
                return
            auth = self.headers.get("Authorization")
            script.record(self.path, auth, body)
            if script.api_key is not None and auth != "Bearer " + script.api_key:
                self.send(401, json.dumps({"error": {
                    "message": "Incorrect API key provided.",
                    "type": "invalid_request_error", "code": "invalid_api_key"}}))
                return
            entry = script.next_reply()
            if entry.get("delay"):
                time.sleep(float(entry["delay"]))
            if "malformed" in entry:
                self.send(entry.get("status", 200), entry["malformed"],
                          entry.get("headers"))
                return
            if "body" in entry or "status" in entry:
                payload = entry.get("body", {})
                self.send(entry.get("status", 200),
                          payload if isinstance(payload, str) else json.dumps(payload),
                          entry.get("headers"))
                return
            self.send(200, json.dumps(completion(entry, body.get("model", ""))),
                      entry.get("headers"))

    return Handler


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--script", required=True, help="JSON script of replies")
    parser.add_argument("--verbose", action="store_true", help="log requests")
    args = parser.parse_args()
    with open(args.script) as f:
        script = Script(json.load(f))

    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(script, args.verbose))
    server.daemon_threads = True

    def exit_when_stdin_closes():
        try:
            while sys.stdin.buffer.read(4096):
                pass
        finally:
            os._exit(0)

    threading.Thread(target=exit_when_stdin_closes, daemon=True).start()
    print("PORT %d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
