#!/usr/bin/env bash
# The cross-target stage (issue 37, docs/ARCHITECTURE.md "Platforms"): type-check and lint the
# whole workspace (the app included) for x86_64-pc-windows-gnu, build the Windows warden.exe,
# and run the library crates' unit tests and the bridge's Windows tests under Wine. Then the macOS
# part, when scripts/cross-macos.sh exists.
#
# How: rustup cannot add targets on machines like CI's (no route to its servers), so
# the build uses Debian's own compiler (rustc-web, 1.96) with its std sources and
# `-Zbuild-std`; mingw links; Wine 8 runs the tests, with a one-function shim DLL
# (scripts/cross/) for the ProcessPrng that Rust's std imports and Wine 8 lacks.
#
# Caches (a second run is quick): the target dir ($WARDEN_CROSS_TARGET_DIR, default
# target/cross beside the native one), the Wine prefix and the shim DLL under it.
#   scripts/cross.sh            everything
#   scripts/cross.sh check      only the type check and clippy for Windows
#   scripts/cross.sh test       only the build and the tests under Wine
set -euo pipefail
cd "$(dirname "$0")/.."
stage_start=$SECONDS
only="${1:-all}"

CROSS_APT_PACKAGES=(
  # Debian's Rust 1.96 with its std sources (for -Zbuild-std) and clippy.
  rustc-web cargo-web rust-web-src rust-web-clippy
  # The linker and dlltool (the windows crates' import libraries need it even to type-check).
  gcc-mingw-w64-x86-64-win32 binutils-mingw-w64-x86-64
  # Runs the Windows test executables.
  wine64
)
. scripts/apt-missing.sh
apt_missing cross "${CROSS_APT_PACKAGES[@]}"

native_target="${CARGO_TARGET_DIR:-$PWD/target}"
case "$native_target" in /*) ;; *) native_target="$PWD/$native_target" ;; esac
export CARGO_TARGET_DIR="${WARDEN_CROSS_TARGET_DIR:-$native_target/cross}"
mkdir -p "$CARGO_TARGET_DIR"

# Debian's toolchain, not rustup's: rustup's compiler fails building Debian's 1.96 std sources
# ("intrinsic safety mismatch"). RUSTC_BOOTSTRAP lets the stable compiler take -Zbuild-std.
export PATH="/usr/bin:$PATH"
export RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc RUSTC_BOOTSTRAP=1
unset RUSTUP_TOOLCHAIN RUSTC_WRAPPER RUSTC_WORKSPACE_WRAPPER 2>/dev/null || true
CARGO=/usr/bin/cargo
WIN=x86_64-pc-windows-gnu
ZFLAGS=(-Zbuild-std=std,panic_abort --target "$WIN")
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc

# The app embeds ui/dist: clippy of the workspace needs one (an old one will do).
[[ -f ui/dist/index.html ]] || (cd ui && { [ -d node_modules ] || npm ci --no-audit --no-fund --loglevel=error; } && npm run --silent build)

step() { echo "== cross: $* ($((SECONDS - stage_start)) s)"; }

# Every target but the benchmarks: they measure Linux (RSS from /proc, a poll relay).
TARGETS=(--workspace --lib --bins --tests)
if [ "$only" != test ]; then
  step "cargo check, Windows (the workspace, the app included)"
  $CARGO check "${TARGETS[@]}" --locked "${ZFLAGS[@]}"
  step "cargo clippy -D warnings, Windows"
  $CARGO clippy "${TARGETS[@]}" --locked "${ZFLAGS[@]}" -- -D warnings
fi
[ "$only" = check ] && { step "done (check only)"; exit 0; }

step "build warden.exe and mcp-fake-server.exe"
$CARGO build -p warden-cli --bin warden --bin mcp-fake-server --locked "${ZFLAGS[@]}"

# A Wine prefix of our own, under the target dir, with the ProcessPrng shim in system32.
export WINEPREFIX="$CARGO_TARGET_DIR/wine"
export WINEDEBUG="${WINEDEBUG:--all}"
# No Mono or Gecko install dialogs; no display needed.
export WINEDLLOVERRIDES="mscoree,mshtml="
unset DISPLAY WAYLAND_DISPLAY 2>/dev/null || true
if [ ! -f "$WINEPREFIX/system.reg" ]; then
  step "creating the Wine prefix $WINEPREFIX"
  wineboot -i >/dev/null 2>&1 || true
  wineserver -w
fi
shim="$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"
if [ ! -f "$shim" ] || [ scripts/cross/processprng.c -nt "$shim" ] || [ scripts/cross/bcryptprimitives.def -nt "$shim" ]; then
  step "building the ProcessPrng shim DLL"
  x86_64-w64-mingw32-gcc -O2 -shared -o "$shim" scripts/cross/processprng.c scripts/cross/bcryptprimitives.def -ladvapi32
fi
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=wine
# One wineserver for every test executable (it would start and stop for each), ended below.
wineserver -p 60
trap 'wineserver -k 2>/dev/null || true' EXIT

# What Wine 8 does not do as Windows does: skipped here (they stay tests on Windows itself).
WINE_SKIPS=(
  # notify's watcher (ReadDirectoryChangesW) reports no change under Wine: the tests hang.
  --skip tests::clients_watcher_
  # Taking Cline's lock file fails with "Access denied" under Wine.
  --skip tests::clients_waits_for_clines_lock
  # Wine creates a second first instance of a pipe (FILE_FLAG_FIRST_PIPE_INSTANCE ignored).
  --skip socket::tests::the_pipe_has_one_supervisor
)
# A test that hangs under Wine fails the stage after this long (a server tree left running
# keeps a test waiting on its pipes: this is how a missing Job Object shows), not CI's limit.
WINE_LIMIT="${WARDEN_CROSS_TEST_LIMIT:-900}"
step "the library crates' unit tests under Wine"
timeout "$WINE_LIMIT" $CARGO test -p warden-wire -p warden-config -p warden-control -p warden-bridge -p warden-clients -p warden-rpc -p warden-registry -p warden-supervisor --lib --locked "${ZFLAGS[@]}" -- "${WINE_SKIPS[@]}"
step "the bridge's Windows tests under Wine (warden.exe, mcp-fake-server.exe, warden daemon)"
timeout "$WINE_LIMIT" $CARGO test -p warden-cli --test integration --locked "${ZFLAGS[@]}" -- windows

# ---- macOS hook -------------------------------------------------------------------------
# The macOS part (type-check of the library crates and warden-cli for the Apple targets, the Seatbelt
# generator's tests) is scripts/cross-macos.sh's. It runs with this script's environment
# (Debian's toolchain, RUSTC_BOOTSTRAP, CARGO_TARGET_DIR shared with the Windows builds).
if [ -x scripts/cross-macos.sh ]; then
  step "macOS: scripts/cross-macos.sh"
  scripts/cross-macos.sh
else
  step "macOS: scripts/cross-macos.sh not present, skipped"
fi

echo "== cross: stage took $((SECONDS - stage_start)) s"
