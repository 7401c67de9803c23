#!/usr/bin/env bash
# Sets up and runs every test: the quick loop (scripts/check.sh: the UI's checks, formatting,
# lints, unit tests), then the Rust integration tests, fuzzing, the end-to-end tests with real
# MCP servers and the real Python SDK client, the app through WebDriver, conformance and soak;
# after the quick loop, the cross-target stage (scripts/cross.sh: Windows under Wine, macOS).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh

echo "== web UI build (the app embeds ui/dist)"
(cd ui && npm run --silent build)
# The quick loop first: the UI's checks, fmt, clippy, the unit tests of core and the CLI.
scripts/check.sh
# Windows (type check and clippy of the workspace, warden.exe, core's and the bridge's tests
# under Wine) and, through scripts/cross-macos.sh when present, macOS. Prints its own time.
scripts/cross.sh
echo "== the library crates and the CLI never link a GUI stack; the app is Tauri's, with its shell plugin"
if cargo tree -p warden-wire -p warden-config -p warden-control -p warden-bridge -p warden-clients -p warden-rpc -p warden-registry -p warden-supervisor -p warden-cli -e normal --prefix none | grep -E '^(tauri|wry|webkit2gtk|gtk) ' >/dev/null; then
  echo "a library crate or warden-cli depends on a GUI stack" >&2; exit 1
fi
app_deps=$(cargo tree -p warden-app -e normal --prefix none)
for dep in tauri tauri-plugin-shell; do
  grep -q "^$dep v" <<<"$app_deps" || { echo "warden-app does not depend on $dep" >&2; exit 1; }
done
# tao, tray-icon and muda only through tauri (its runtime and menus), never directly.
if cargo tree --workspace -e normal -i tao -i tray-icon -i muda --depth 1 --prefix none 2>/dev/null | grep -E '^warden-' >/dev/null; then
  echo "a workspace package depends on tao, tray-icon or muda directly (use tauri's tray and menu)" >&2; exit 1
fi
echo "== the bridge's crate depends on no clients, registry or supervisor crate (docs/ARCHITECTURE.md, Crates)"
if cargo tree -p warden-bridge -e normal --prefix none | grep -E '^warden-(clients|registry|supervisor|rpc) ' >/dev/null; then
  echo "warden-bridge depends on a crate above it: the bridge every client starts must stay small" >&2; exit 1
fi
echo "== the registry's code and the HTTP client (ureq, rustls) are only in warden-registry and warden-remote, never in warden"
# `warden` is the bridge IDEs start for every server: its start-up, RSS and size
# (docs/BENCHMARKS.md) must not pay for them. `warden registry` and `warden install` hand over
# to warden-registry.
cargo build -p warden-cli --bin warden --bin warden-registry --bin warden-remote --locked
target_dir="${CARGO_TARGET_DIR:-target}"
if nm "$target_dir/debug/warden" | grep -E 'ureq|rustls|webpki|15warden_registry' >/dev/null; then
  echo "warden links the registry's code or ureq/rustls: only src-tauri/cli/src/bin/warden-registry/ and warden-remote/ may use them" >&2; exit 1
fi
nm "$target_dir/debug/warden-registry" | grep -E 'ureq' >/dev/null || {
  echo "warden-registry has no ureq symbols: the check above no longer looks at the right names" >&2; exit 1
}
nm "$target_dir/debug/warden-remote" | grep -E 'ureq' >/dev/null || {
  echo "warden-remote has no ureq symbols: the check above no longer looks at the right names" >&2; exit 1
}
nm "$target_dir/debug/warden-registry" | grep -E '15warden_registry' >/dev/null || {
  echo "warden-registry has no warden_registry symbols: the check above no longer looks at the right names" >&2; exit 1
}
echo "== cargo test"
# The rg-server parity test compares with the real mcp-ripgrep.
MCP_RIPGREP_BIN="$PWD/tests/e2e/node_modules/.bin/mcp-ripgrep" cargo test --workspace --locked
echo "== benchmark smoke pass (direct, bridge and the asyncio relay; checks the relay's failure report)"
cargo test -p warden-cli --bench bridge --locked
echo "== fuzzing, short CI profile (docs/FUZZING.md)"
scripts/fuzz.sh --ci
echo "== end-to-end tests (real servers, Python SDK client)"
cargo build -p warden-cli -p warden-app --locked
WARDEN_BIN="$PWD/target/debug/warden" .venv/bin/python -m pytest -q tests/e2e
echo "== the app end to end (WebDriver under Xvfb; screenshots in target/ui-screenshots)"
PATH="$HOME/.cargo/bin:$PATH" xvfb-run -a .venv/bin/python -m pytest -q tests/ui
echo "== conformance: the official MCP suite and load, directly and through the bridge"
WARDEN_BIN="$PWD/target/debug/warden" scripts/conformance.sh --ci
echo "== soak, short profile (randomized faults under the Python SDK client)"
WARDEN_BIN="$PWD/target/debug/warden" scripts/soak.sh --ci
