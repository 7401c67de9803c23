#!/usr/bin/env bash
# Soak: a randomized fault run of `warden bridge` under the real Python MCP SDK client
# (tests/soak/soak.py): crashes, hangs, huge lines, bursts, cancellations and config reloads
# at once; every request must get exactly one answer, no process may be left behind, the
# bridges' memory must stay flat. Exits non-zero on any violation.
#
#   scripts/soak.sh [--minutes N] [--seed S] [--report FILE]   # default: 10 minutes -> docs/SOAK.md
#   scripts/soak.sh --ci [--seed S]                            # ~1.5 minutes -> target/soak/SOAK-ci.md
#
# WARDEN_BIN / FAKE_SERVER_BIN pick the binaries (default: the debug build, built here).
set -euo pipefail
cd "$(dirname "$0")/.."

minutes=10
sessions=3
churn=1
report=docs/SOAK.md
seed=""
shown=(scripts/soak.sh)
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes="$2"; shown+=(--minutes "$2"); shift 2 ;;
    --seed) seed="$2"; shown+=(--seed "$2"); shift 2 ;;
    --report) report="$2"; shown+=(--report "$2"); shift 2 ;;
    --ci) minutes=1.25; sessions=3; churn=1; report=target/soak/SOAK-ci.md; shown+=(--ci); shift ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "soak.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

[ -x .venv/bin/python ] || { echo "soak.sh: .venv is missing: run scripts/setup.sh first" >&2; exit 2; }
if [ -z "${WARDEN_BIN:-}" ]; then
  echo "soak.sh: cargo build -p warden-cli (debug; set WARDEN_BIN to use another build)"
  cargo build -q -p warden-cli --locked
  export WARDEN_BIN="$PWD/target/debug/warden"
fi
export FAKE_SERVER_BIN="${FAKE_SERVER_BIN:-$(dirname "$WARDEN_BIN")/mcp-fake-server}"

args=(--minutes "$minutes" --sessions "$sessions" --churn "$churn" --report "$report" --command "${shown[*]}")
[ -n "$seed" ] && args+=(--seed "$seed")
echo "soak.sh: ${minutes} min; report: $report"
exec .venv/bin/python tests/soak/soak.py "${args[@]}"
