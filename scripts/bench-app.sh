#!/usr/bin/env bash
# Idle memory and CPU of the app (at rest: the host alone; window open; window closed), how fast
# its window shows, and the size of its .deb → docs/bench/app-idle.md, which docs/BENCHMARKS.md
# includes. Builds the .deb first (and with it the release app, stripped as shipped); needs
# xvfb-run when there is no display. Runs in the test venv (python-xlib), which setup makes.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/package.sh --deb
if [ -n "${DISPLAY:-}" ]; then
  .venv/bin/python scripts/bench-app.py "$@"
else
  xvfb-run -a .venv/bin/python scripts/bench-app.py "$@"
fi
