#!/usr/bin/env bash
# Writes src-tauri/cli/warden.order: the functions a `warden bridge` session runs, which the
# linker then lays out together at the start of the binary's code (see src-tauri/cli/build.rs).
# A bridge touches about 1 MB of the 8.7 MB of code; scattered, the kernel maps in the pages
# around each one touched, and an idle bridge held 8-9 MB of RSS; together, about 5.
# Runs one scripted session (start, handshake, listing, calls, pings, a large streamed result,
# a config edit, idle) under valgrind's callgrind (apt-get install valgrind) and keeps the
# names it saw that are functions of the binary. Rerun after large changes or a toolchain or
# dependency update (symbol names carry hashes); names no longer there are ignored.
set -euo pipefail
cd "$(dirname "$0")/.."
# As scripts/package.sh and scripts/bench.sh build it: whole-program LTO in one unit, where no
# function gets ThinLTO's `.llvm.<hash>` suffix, a name that changes with any edit of its
# module and would drop the function from the order.
export CARGO_PROFILE_RELEASE_LTO=fat CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1
command -v valgrind >/dev/null || { echo "order-symbols: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
cargo build --release --locked -p warden-cli --bin warden --bin mcp-fake-server
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 - "$PWD/target/release/warden" "$PWD/target/release/mcp-fake-server" "$work" <<'PY'
import json, os, subprocess, sys, time
warden, fake, work = sys.argv[1:4]
os.makedirs(f"{work}/run", mode=0o700)
cfg = f"{work}/config.toml"
open(cfg, "w").write("[defaults]\nidle_timeout_ms = 60000\n")
env = dict(os.environ, WARDEN_CONFIG=cfg, WARDEN_STATE_DIR=f"{work}/state", WARDEN_SOCKET=f"{work}/run/sock")
grind = ["valgrind", "--tool=callgrind", "--compress-strings=no", "--compress-pos=no",
         "--demangle=no", f"--callgrind-out-file={work}/callgrind.out"]
p = subprocess.Popen([*grind, warden, "bridge", "--server", "order", "--", fake],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
n = 0
def request(method, params=None):
    global n
    n += 1
    msg = {"jsonrpc": "2.0", "id": n, "method": method}
    if params is not None:
        msg["params"] = params
    p.stdin.write((json.dumps(msg) + "\n").encode())
    p.stdin.flush()
    while True:
        line = p.stdout.readline()
        if not line:
            sys.exit("order-symbols: the bridge closed its stdout")
        if json.loads(line).get("id") == n:
            return
request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "order", "version": "1"}})
p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
request("tools/list")
for i in range(50):
    request("tools/call", {"name": "echo", "arguments": {"text": f"hello {i}"}})
    request("ping")
request("tools/call", {"name": "big", "arguments": {"bytes": 3_000_000}})
open(cfg, "w").write("[defaults]\nidle_timeout_ms = 50000\n")
time.sleep(1.5)
for i in range(20):
    request("tools/call", {"name": "echo", "arguments": {"text": f"again {i}"}})
time.sleep(2.5)
p.stdin.close()
p.wait()
PY
# Callgrind marks recursion with a 'N suffix; only names the binary defines are kept.
grep -E '^c?fn=' "$work/callgrind.out" | sed -E "s/^c?fn=//; s/'[0-9]+$//" | sort -u > "$work/ran"
nm --defined-only target/release/warden | awk '$2 ~ /^[tTwW]$/ { print $3 }' | sort -u > "$work/defined"
comm -12 "$work/ran" "$work/defined" > src-tauri/cli/warden.order
echo "order-symbols: $(wc -l < src-tauri/cli/warden.order) functions written to src-tauri/cli/warden.order"
