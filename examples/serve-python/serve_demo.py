#!/usr/bin/env python3
"""Drive `cua-host serve` from Python with the standard library only.

The app holds serve's stdin/stdout (JSON-RPC 2.0, one object per line) and reaches each
session through its endpoint (a unix socket speaking MCP as newline-delimited JSON-RPC).
It creates two sessions in two trust domains, checks that they run in different workers on
different private displays, makes one session type into a terminal (the file the terminal
writes is the oracle), answers a consent request, revokes one session and shows the other
still works, then closes stdin and checks that every worker, proxy, display and endpoint
is gone.

    python3 examples/serve-python/serve_demo.py --bin ./cua-host [--out DIR]

Exit status 0 when every step held.
"""

import argparse
import json
import os
import queue
import socket
import subprocess
import sys
import tempfile
import threading
import time


class Serve:
    """A running `cua-host serve` and its control stream."""

    def __init__(self, argv, env=None):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0, env=env)
        self.lock = threading.Lock()
        self.next_id = 0
        self.waiting = {}
        self.notes = queue.Queue()
        self.consents = []
        self.grant = True
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _send(self, obj):
        with self.lock:
            self.proc.stdin.write((json.dumps(obj) + "\n").encode())
            self.proc.stdin.flush()

    def _read(self):
        for line in self.proc.stdout:
            msg = json.loads(line)
            if "id" in msg and ("result" in msg or "error" in msg):
                slot = self.waiting.pop(msg["id"], None)
                if slot is not None:
                    slot.put(msg)
            elif msg.get("method") == "consent_request":
                req = msg["params"]
                self.consents.append(req)
                log(f"  consent_request #{req['id']}: {req['session']} wants {req['operation']} on {req['resource']} ({req['tool']}) → {'grant' if self.grant else 'deny'}")
                self.call_async("consent_decision", {"id": req["id"], "granted": self.grant})
            else:
                self.notes.put(msg)

    def call_async(self, method, params=None):
        with self.lock:
            self.next_id += 1
            rid = self.next_id
        slot = queue.Queue(1)
        self.waiting[rid] = slot
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self._send(msg)
        return slot

    def call(self, method, params=None, timeout=30):
        msg = self.call_async(method, params).get(timeout=timeout)
        if "error" in msg:
            raise RuntimeError(f"{method}: {msg['error']['code']} {msg['error']['message']}")
        return msg["result"]

    def wait_note(self, method, pred=lambda p: True, timeout=10):
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                msg = self.notes.get(timeout=max(0.01, deadline - time.time()))
            except queue.Empty:
                break
            if msg.get("method") == method and pred(msg.get("params", {})):
                return msg["params"]
        raise RuntimeError(f"no {method} notification within {timeout}s")

    def close(self, timeout=10):
        self.proc.stdin.close()
        return self.proc.wait(timeout=timeout)


class MCPSession:
    """One MCP session on a session endpoint (newline-delimited JSON-RPC on a unix socket)."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(60)
        self.sock.connect(path)
        self.file = self.sock.makefile("rwb", buffering=0)
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "serve_demo.py", "version": "1"}})
        self._write({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _write(self, obj):
        self.file.write((json.dumps(obj) + "\n").encode())

    def request(self, method, params):
        self.next_id += 1
        self._write({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            line = self.file.readline()
            if not line:
                raise ConnectionError("the endpoint closed the connection")
            msg = json.loads(line)
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg["result"]

    def tool(self, name, args=None):
        res = self.request("tools/call", {"name": name, "arguments": args or {}})
        sc = res.get("structuredContent") or {}
        outcome = (res.get("_meta") or {}).get("cua-host/outcome")
        text = " ".join(c.get("text", "") for c in res.get("content", []) if c.get("type") == "text")
        log(f"  {name} → {outcome}{' (error)' if res.get('isError') else ''}: {text[:100]!r}")
        return res, sc, outcome

    def close(self):
        self.file.close()
        self.sock.close()


def log(s):
    print(s, flush=True)


def alive(pid):
    """True when pid runs and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def check(cond, what):
    if not cond:
        raise AssertionError(what)
    log(f"✓ {what}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.environ.get("CUA_HOST_BIN", "cua-host"))
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="serve-demo-")
    os.makedirs(out, exist_ok=True)

    # The terminal's shell starts in a fresh HOME, so that no start-up file of yours can
    # hold it up before it reads what the session types.
    home = os.path.join(out, "home")
    os.makedirs(home, exist_ok=True)
    serve = Serve([args.bin, "serve", "--log-file", os.path.join(out, "serve.log"), "--consent-timeout", "20s"],
                  env=dict(os.environ, HOME=home))
    log("→ create_session red/alpha and blue/beta (private displays)")
    alpha = serve.call("create_session", {"label": "alpha", "trust_domain": "red", "display": "private"})
    beta = serve.call("create_session", {"label": "beta", "trust_domain": "blue", "display": "private", "http": True})
    status = serve.call("status")
    workers = {w["trust_domain"]: w for w in status["workers"]}
    displays = {d["trust_domain"]: d for d in status["displays"]}
    check(workers["red"]["pid"] != workers["blue"]["pid"], f"two workers: red pid {workers['red']['pid']}, blue pid {workers['blue']['pid']}")
    check(displays["red"]["name"] != displays["blue"]["name"] and displays["red"]["server_pid"] != displays["blue"]["server_pid"],
          f"two private displays: red {displays['red']['name']}, blue {displays['blue']['name']}")
    check(os.stat(os.path.dirname(alpha["endpoint"]["unix"])).st_mode & 0o777 == 0o700, "the endpoint directory is 0700")
    check(beta["endpoint"]["http"]["url"].startswith("http://127.0.0.1:") and len(beta["endpoint"]["http"]["token"]) >= 32,
          "beta has a loopback HTTP endpoint with a minted token")
    pids = [workers["red"]["pid"], workers["blue"]["pid"], alpha["proxy_pid"], beta["proxy_pid"]]
    pids += displays["red"]["pids"] + displays["blue"]["pids"]

    log("→ alpha: launch a terminal and type into it")
    a = MCPSession(alpha["endpoint"]["unix"])
    _, launched, _ = a.tool("launch_app", {"name": "xterm"})
    target = {"pid": launched["pid"], "window_id": launched["window_ids"][0]}
    marker = os.path.join(out, "alpha.txt")
    a.tool("type_text", dict(target, text=f"echo hello-from-alpha > {marker}"))
    a.tool("press_key", dict(target, key="Return"))
    deadline = time.time() + 15
    while time.time() < deadline and not (os.path.exists(marker) and open(marker).read().strip()):
        time.sleep(0.05)
    check(os.path.exists(marker) and open(marker).read().strip() == "hello-from-alpha", f"the terminal on alpha's display wrote {marker}")

    log("→ beta: read the clipboard (needs consent: the app is asked)")
    b = MCPSession(beta["endpoint"]["unix"])
    b.tool("clipboard_write", {"text": "from-beta"})
    _, read, read_outcome = b.tool("clipboard_read", {"include_text": True})
    check(any(c["session"] == "beta" for c in serve.consents), "a consent_request for beta reached the app and was answered")
    check(read_outcome == "completed" and "from-beta" in json.dumps(read), "the granted clipboard_read completed with beta's text")

    log("→ revoke alpha")
    serve.call("revoke_session", {"session": "alpha"})
    ended = serve.wait_note("session_ended", lambda p: p["session"] == "alpha")
    check(ended["reason"] == "revoked", "session_ended(alpha, revoked)")
    check(not os.path.exists(alpha["endpoint"]["unix"]), "alpha's socket is gone")
    try:
        a.tool("get_screen_size")
        refused = False
    except (ConnectionError, OSError, RuntimeError):
        refused = True
    check(refused, "alpha's open connection no longer answers")
    try:
        MCPSession(alpha["endpoint"]["unix"])
        reconnected = True
    except OSError:
        reconnected = False
    check(not reconnected, "alpha's endpoint refuses new connections")
    check(not alive(workers["red"]["pid"]), "red's worker (its last session ended) is gone")
    _, _, size_outcome = b.tool("get_screen_size")
    check(size_outcome == "completed", "beta still works")

    log("→ close stdin")
    b.close()
    code = serve.close()
    check(code == 0, "serve exited 0 after end-of-file")
    time.sleep(0.2)
    left = [p for p in pids if alive(p)]
    check(not left, f"no worker, proxy or display process left (checked {len(pids)} pids)")
    check(not os.path.exists(os.path.dirname(alpha["endpoint"]["unix"])), "the endpoint directory is gone")
    log("ok")


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # noqa: BLE001 - the demo reports any failure the same way
        log(f"✗ {type(e).__name__}: {e}")
        sys.exit(1)
