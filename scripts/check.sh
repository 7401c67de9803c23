#!/usr/bin/env bash
# The quick loop (CONTRIBUTING.md): the web UI's type check and unit tests, formatting, lints,
# and the unit tests of the library crates and the CLI. A few minutes on a warm build; run it before
# every commit. scripts/test.sh runs it first, then everything else.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== web UI: type check and unit tests"
(cd ui && npm run --silent check && npm test --silent)
# The app embeds ui/dist: clippy of the workspace needs one (an old one will do here).
[[ -f ui/dist/index.html ]] || (cd ui && npm run --silent build)
echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "== unit tests of the library crates and the CLI"
cargo test --workspace --lib --locked
cargo test -p warden-cli --bins --locked
