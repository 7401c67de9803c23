#!/usr/bin/env bash
# Installs what building and testing MCP Warden needs on Debian/Ubuntu. Idempotent: it
# skips what is already there. Used by scripts/test.sh, scripts/run-app.sh and CI.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  ripgrep python3-venv
  # The per-server sandbox (`sandbox = "on"`) and its tests.
  bubblewrap
  # setpriv, for the test that another user's connection to the supervisor is refused.
  util-linux
  # The Tauri app (WebKitGTK, tray, icons, keyboard), and its WebDriver tests under Xvfb.
  libwebkit2gtk-4.1-dev libayatana-appindicator3-dev librsvg2-dev libxdo-dev
  xvfb xauth webkit2gtk-driver
  # A real Secret Service for the keychain tests (`--move-secrets`): each test runs its own
  # D-Bus bus and gnome-keyring; secret-tool reads what Warden stored.
  dbus-daemon gnome-keyring libsecret-tools libglib2.0-bin
  # The WebDriver tests' stand-in for the desktop's notification server (notification
  # actions), run with the system Python.
  python3-dbus python3-gi
)

. scripts/apt-missing.sh
apt_missing setup "${APT_PACKAGES[@]}"

command -v cargo >/dev/null || { echo "setup: Rust is missing: install it from https://rustup.rs" >&2; exit 1; }
command -v npm >/dev/null || { echo "setup: Node.js and npm are missing: install Node 20 or newer" >&2; exit 1; }

# Real MCP servers for the end-to-end tests, pinned by tests/e2e/package-lock.json.
if [ ! -d tests/e2e/node_modules ] || [ tests/e2e/package-lock.json -nt tests/e2e/node_modules ]; then
  echo "setup: npm ci (tests/e2e)"
  (cd tests/e2e && npm ci --no-audit --no-fund --loglevel=error)
  touch tests/e2e/node_modules
fi

# The web UI's toolchain (Vite, TypeScript, Vitest), pinned by ui/package-lock.json.
if [ ! -d ui/node_modules ] || [ ui/package-lock.json -nt ui/node_modules ]; then
  echo "setup: npm ci (ui)"
  (cd ui && npm ci --no-audit --no-fund --loglevel=error)
  touch ui/node_modules
fi

# tauri-driver: the WebDriver server the app's end-to-end tests talk to.
if ! command -v tauri-driver >/dev/null && [ ! -x "$HOME/.cargo/bin/tauri-driver" ]; then
  echo "setup: cargo install tauri-driver (takes a minute)"
  cargo install tauri-driver --locked --version '^2' --quiet
fi

# cargo-fuzz for scripts/fuzz.sh (libFuzzer builds with g++).
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "setup: cargo install cargo-fuzz (takes a minute)"
  cargo install cargo-fuzz --locked --quiet
fi

# The real Python MCP SDK client, pinned by tests/e2e/requirements.txt.
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv"
  python3 -m venv .venv
fi
if [ ! -f .venv/.installed ] || [ tests/e2e/requirements.txt -nt .venv/.installed ]; then
  echo "setup: pip install -r tests/e2e/requirements.txt"
  .venv/bin/pip install -q --disable-pip-version-check -r tests/e2e/requirements.txt
  touch .venv/.installed
fi
