#!/usr/bin/env bash
# Measures the fake MCP server reached directly, through `warden bridge` (release build) and
# through other relays (tests/bench/asyncio_relay.py; fastmcp and mcp-proxy from PyPI, pinned by
# tests/bench/requirements.txt), and writes docs/BENCHMARKS.md. A few minutes after the build.
# BENCH_OUT=path writes the report elsewhere; BENCH_WARDEN=path measures another warden build;
# BENCH_VENV=dir takes the registry relays from another venv; BENCH_NO_PEERS_INSTALL=1 skips
# installing them. Then the remote relay beside a direct HTTP client (tests/bench/remote.py,
# docs/bench/remote.md; BENCH_NO_REMOTE=1 skips it).
set -euo pipefail
cd "$(dirname "$0")/.."

command -v python3 >/dev/null || { echo "bench: python3 is needed for the asyncio relay" >&2; exit 1; }

venv=tests/bench/.venv
if [ -z "${BENCH_NO_PEERS_INSTALL:-}" ]; then
  if [ ! -x "$venv/bin/python" ]; then
    echo "bench: creating $venv"
    python3 -m venv "$venv"
  fi
  if [ ! -f "$venv/.installed" ] || [ tests/bench/requirements.txt -nt "$venv/.installed" ]; then
    echo "bench: pip install -r tests/bench/requirements.txt"
    "$venv/bin/pip" install -q --disable-pip-version-check -r tests/bench/requirements.txt
    touch "$venv/.installed"
  fi
fi

echo "bench: load average before the run: $(cut -d' ' -f1-3 /proc/loadavg) (other work makes the numbers noisy)"
# Built as scripts/package.sh builds the shipped CLI: whole-program LTO in one unit (the layout
# of src-tauri/cli/warden.order names functions as such a build does).
export CARGO_PROFILE_RELEASE_LTO=fat CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1
export CARGO_PROFILE_BENCH_LTO=fat CARGO_PROFILE_BENCH_CODEGEN_UNITS=1
cargo bench -p warden-cli --bench bridge "$@"

# Remote servers: the bridge and warden-remote beside a direct client over loopback HTTP, with
# the real Python SDK 2.x (the venv scripts/setup.sh makes); writes docs/bench/remote.md.
if [ -z "${BENCH_NO_REMOTE:-}" ]; then
  cargo build --release -p warden-cli --bin warden --bin warden-remote --locked
  sdk_python="${WARDEN_PYTHON:-.venv/bin/python}"
  "$sdk_python" -c 'import mcp.client' 2>/dev/null || { echo "bench: $sdk_python has no mcp 2.x: run scripts/setup.sh (or set WARDEN_PYTHON), or BENCH_NO_REMOTE=1" >&2; exit 1; }
  warden_bin="${BENCH_WARDEN:-${CARGO_TARGET_DIR:-target}/release/warden}"
  "$sdk_python" tests/bench/remote.py "$warden_bin" "$(dirname "${BENCH_OUT:-docs/BENCHMARKS.md}")/bench/remote.md" --calls 1000
fi
