#!/usr/bin/env bash
# Idle memory and CPU of the app (window open; closed: the tray alone) and the size of its .deb →
# docs/bench/app-idle.md, which docs/BENCHMARKS.md includes. Builds the .deb first (and with it
# the release app, stripped as shipped); needs xvfb-run when there is no display.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/package.sh --deb
if [ -n "${DISPLAY:-}" ]; then
  python3 scripts/bench-app.py "$@"
else
  xvfb-run -a python3 scripts/bench-app.py "$@"
fi
