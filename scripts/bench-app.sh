#!/usr/bin/env bash
# Idle memory and CPU of the tray app (window open, window closed) → docs/bench/app-idle.md,
# which docs/BENCHMARKS.md includes. Builds the release app first; needs xvfb-run when there
# is no display.
set -euo pipefail
cd "$(dirname "$0")/.."
(cd ui && npm run --silent build)
cargo build --release -p warden-app --locked
if [ -n "${DISPLAY:-}" ]; then
  python3 scripts/bench-app.py "$@"
else
  xvfb-run -a python3 scripts/bench-app.py "$@"
fi
