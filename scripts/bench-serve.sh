#!/usr/bin/env bash
# bench-serve.sh measures `cua-host serve`: create_session latency (with a private display
# and on an existing display), a no-op tool call's round trip through a session endpoint
# against `cua-host run` on stdio, and the proportional set size (PSS, smaps_rollup) per
# idle session with N sessions in N trust domains, each on its own private desktop.
#
#   scripts/bench-serve.sh                 N=16 desktops, 200 calls
#   SESSIONS=4 CALLS=100 scripts/bench-serve.sh
#
# Needs Xvfb, openbox, dbus-daemon and python3. N private desktops on a small machine take
# a while to start; lower SESSIONS there.
set -euo pipefail
cd "$(dirname "$0")/.."
SESSIONS="${SESSIONS:-16}"
CALLS="${CALLS:-200}"
CREATES="${CREATES:-8}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
go build -o "$work/cua-host" ./cmd/cua-host
export HOME="$work"

python3 - "$work/cua-host" "$SESSIONS" "$CALLS" "$CREATES" <<'EOF'
import json, os, socket, statistics, subprocess, sys, time

bin, n_sessions, n_calls, n_creates = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])

class Serve:
    def __init__(self):
        self.p = subprocess.Popen([bin, "serve", "--log-level", "warn", "--allow-modes", "standard"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0)
        self.id = 0
    def call(self, method, params=None):
        self.id += 1
        self.p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params or {}}) + "\n").encode())
        while True:
            m = json.loads(self.p.stdout.readline())
            if m.get("id") == self.id:
                if "error" in m:
                    raise RuntimeError(m["error"])
                return m["result"]
    def close(self):
        self.p.stdin.close(); self.p.wait(10)

def mcp_lines(f, write, n, tool):
    """n tools/call round trips of tool over newline-delimited JSON-RPC; returns µs each."""
    def rt(i, method, params):
        write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n").encode())
        while True:
            m = json.loads(f.readline())
            if m.get("id") == i:
                return m
    rt(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}})
    write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    for i in range(20):  # warm up
        rt(2 + i, "tools/call", {"name": tool, "arguments": {}})
    out = []
    for i in range(n):
        t = time.perf_counter()
        rt(100 + i, "tools/call", {"name": tool, "arguments": {}})
        out.append((time.perf_counter() - t) * 1e6)
    return out

def pss_kib(pid):
    try:
        for line in open(f"/proc/{pid}/smaps_rollup"):
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except FileNotFoundError:
        pass
    return 0

def med(xs):
    return statistics.median(xs)

# 1. create_session latency.
s = Serve()
private, shared = [], []
for i in range(n_creates):
    t = time.perf_counter(); s.call("create_session", {"label": f"p{i}", "display": "private"}); private.append((time.perf_counter() - t) * 1e3)
    s.call("revoke_session", {"session": f"p{i}"})
base = s.call("create_session", {"label": "base", "trust_domain": "base", "display": "private"})
for i in range(n_creates):
    # Another session of a running domain: an endpoint, a proxy and a CreateSession.
    t = time.perf_counter(); s.call("create_session", {"label": f"s{i}", "trust_domain": "base"}); shared.append((time.perf_counter() - t) * 1e3)
    s.call("revoke_session", {"session": f"s{i}"})

# 2. no-op round trip through an endpoint (get_cursor_position: one X round trip).
sock = socket.socket(socket.AF_UNIX); sock.connect(base["endpoint"]["unix"])
f = sock.makefile("rb")
endpoint_us = mcp_lines(f, sock.sendall, n_calls, "get_cursor_position")
sock.close()
s.close()

# ... against `cua-host run` on stdio.
run = subprocess.Popen([bin, "run", "--display", "private", "--log-level", "warn"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0)
run_us = mcp_lines(run.stdout, lambda b: (run.stdin.write(b), run.stdin.flush()), n_calls, "get_cursor_position")
run.stdin.close(); run.wait(10)

# 3. PSS per idle private desktop, N sessions in N trust domains.
s = Serve()
for i in range(n_sessions):
    s.call("create_session", {"label": f"d{i}", "trust_domain": f"d{i}", "display": "private"})
time.sleep(1)
st = s.call("status")
groups = {"host (serve)": [s.p.pid], "worker": [w["pid"] for w in st["workers"]], "proxy": [x["proxy_pid"] for x in st["sessions"]]}
names = {}
for d in st["displays"]:
    for pid in d["pids"]:
        comm = open(f"/proc/{pid}/comm").read().strip()
        names.setdefault(comm, []).append(pid)
groups.update(names)
total = 0
rows = []
for name, pids in groups.items():
    kib = sum(pss_kib(p) for p in pids)
    total += kib
    rows.append((name, kib))
s.close()

print(f"create_session, new trust domain on a private display: {med(private):.1f} ms p50 ({n_creates} runs)")
print(f"create_session, another session of a running domain:   {med(shared):.2f} ms p50  (ratio {med(private)/med(shared):.0f}x)")
print(f"no-op call (get_cursor_position) through an endpoint:  {med(endpoint_us):.0f} µs p50, {sorted(endpoint_us)[int(len(endpoint_us)*.99)-1]:.0f} µs p99 (goal ≤ 1000 µs p50)")
print(f"the same through `cua-host run` on stdio:              {med(run_us):.0f} µs p50, {sorted(run_us)[int(len(run_us)*.99)-1]:.0f} µs p99  (endpoint/run {med(endpoint_us)/med(run_us):.2f})")
print(f"PSS with {n_sessions} idle sessions in {n_sessions} trust domains, per session (goal ≤ 40 MiB):")
for name, kib in rows:
    print(f"  {name:14s} {kib/1024/n_sessions:6.1f} MiB")
print(f"  {'total':14s} {total/1024/n_sessions:6.1f} MiB per session ({total/1024:.0f} MiB in all)")
EOF
