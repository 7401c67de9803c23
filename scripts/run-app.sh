#!/usr/bin/env bash
# Sets up and runs MCP Warden: builds the web UI, the `warden` CLI and the app (release), then
# starts the app (its host, and the window). It hosts the supervisor, watches your IDEs' MCP configs (nothing is
# changed until you wrap servers on the Clients page) and sits in the tray; closing the window
# keeps it there, Quit in the tray menu ends it. Without a display it runs under Xvfb.
# `scripts/demo.py` still shows the bridge alone in front of a real server.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
(cd ui && npm run --silent build)
cargo build --release -p warden-cli -p warden-app --locked
app="$PWD/target/release/warden-app"
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  exec "$app" "$@"
fi
echo "run-app: no display (DISPLAY is not set): running the app under Xvfb, where its window is not visible." >&2
echo "run-app: its supervisor still serves \`warden status\`; run this from a desktop session to see the window." >&2
exec xvfb-run -a "$app" "$@"
