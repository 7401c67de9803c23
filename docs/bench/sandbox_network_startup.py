#!/usr/bin/env python3
"""Start-up with a `sandbox_network` list against the same sandbox without one: the time from
starting `warden bridge` to the answer of `initialize` (mcp-fake-server under bubblewrap),
alternating, N runs each; prints the medians. Loopback only: nothing is contacted.

    python3 docs/bench/sandbox_network_startup.py [TARGET_DIR] [N]

TARGET_DIR holds `warden` and `mcp-fake-server` (default target/release, else target/debug).
"""
import json, os, statistics, subprocess, sys, tempfile, time

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
target = sys.argv[1] if len(sys.argv) > 1 else next(
    d for d in (os.path.join(root, "target/release"), os.path.join(root, "target/debug"))
    if os.path.exists(os.path.join(d, "warden")))
n = int(sys.argv[2]) if len(sys.argv) > 2 else 30
work = tempfile.mkdtemp(dir=os.path.join(root, "target"))
env = dict(os.environ, HOME=work, XDG_STATE_HOME=os.path.join(work, "state"),
           XDG_CONFIG_HOME=os.path.join(work, "config"), XDG_RUNTIME_DIR=os.path.join(work, "run"))
configs = {
    "none": 'sandbox_network = "none"\n',
    "list": 'sandbox_network = ["127.0.0.1:9", "@npm"]\n',
}
paths = {}
for name, extra in configs.items():
    paths[name] = os.path.join(work, f"{name}.toml")
    with open(paths[name], "w") as f:
        f.write('[defaults]\nsandbox = "on"\nsandbox_mode = "bwrap"\n' + extra)
init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "bench", "version": "0"}}}) + "\n"

def once(name):
    t = time.perf_counter()
    p = subprocess.Popen([os.path.join(target, "warden"), "bridge", "--server", "fake",
                          "--config", paths[name], "--", os.path.join(target, "mcp-fake-server")],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    p.stdin.write(init.encode()); p.stdin.flush()
    line = p.stdout.readline()
    dt = time.perf_counter() - t
    assert b'"result"' in line, line
    p.stdin.close(); p.wait()
    return dt

times = {k: [] for k in configs}
for _ in range(n):
    for k in configs:
        times[k].append(once(k))
for k, v in times.items():
    print(f"{k}: median {statistics.median(v) * 1000:.1f} ms over {n} starts")
print(f"a list adds {(statistics.median(times['list']) - statistics.median(times['none'])) * 1000:.1f} ms")
