#!/usr/bin/env bash
# Sets up and runs MCP Warden. Until the tray app lands, "the app" is the `warden` bridge:
# this builds it and shows it at work in front of a real MCP server (server-everything),
# driven by the real Python SDK client.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo build --release -p warden-cli --locked
exec .venv/bin/python scripts/demo.py "$PWD/target/release/warden"
