#!/usr/bin/env bash
# Type-checks and lints the library crates and warden-cli for macOS (aarch64-apple-darwin and
# x86_64-apple-darwin) on Linux: `cargo clippy -- -D warnings` of each (its type check too).
# Nothing is linked or run; the app is left out (its notification crate compiles
# Objective-C against Apple's SDK, which no Linux machine has).
#
# How: rustup cannot add these targets on machines like CI's, so Debian's
# compiler (rustc-web 1.96, with its standard library's sources) builds `std` for them
# (`-Zbuild-std`, allowed by RUSTC_BOOTSTRAP=1); rustup's older compiler fails on those
# sources, so Debian's cargo and rustc are called by path. C code that build scripts compile
# (cc-rs) goes through zig, from the `ziglang` PyPI package in .venv, behind
# scripts/cross/zig-cc.
#
# The target dir ($WARDEN_CROSS_TARGET_DIR, by default target/cross, ~1.1 GB) is kept: a
# second run only re-checks what changed. Prints how long it took. Measured on 2 cores shared
# with other builds (load 5-7): cold about 11 min (std and the dependencies for each target:
# ~6 min aarch64, ~4 min x86_64), after an edit of a library crate about 1.5 min (clippy ~35 s per
# target), with nothing changed 4 s; zig's install once ~10 s, 0.4 GB in .venv.
# scripts/cross.sh (Windows) calls it.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
start=$(date +%s)

# Debian's compiler, its std sources and clippy.
APT_PACKAGES=(rustc-web cargo-web rust-web-src rust-web-clippy)
. scripts/apt-missing.sh
apt_missing cross-macos "${APT_PACKAGES[@]}"

# zig, the C compiler for Apple targets, into the repo's .venv (as setup.sh makes it).
if [ ! -x .venv/bin/python ]; then
  echo "cross-macos: creating .venv"
  python3 -m venv .venv
fi
# `python -m pip`: the venv's own pip, even in a copied venv whose scripts name another.
if ! .venv/bin/python -c 'import ziglang' 2>/dev/null; then
  echo "cross-macos: pip install ziglang"
  .venv/bin/python -m pip install -q --disable-pip-version-check ziglang
fi
zig_dir=$(.venv/bin/python -c 'import os, ziglang; print(os.path.dirname(ziglang.__file__))')
export WARDEN_ZIG="$zig_dir/zig"
[ -x "$WARDEN_ZIG" ] || { echo "cross-macos: no zig binary in $zig_dir" >&2; exit 1; }

export RUSTC_BOOTSTRAP=1
export RUSTC=/usr/bin/rustc
# rustup's rustc-wrapper or clippy would be the wrong compiler: Debian's clippy-driver.
unset RUSTC_WRAPPER RUSTC_WORKSPACE_WRAPPER
export PATH="/usr/bin:$PATH"
export CARGO_TARGET_DIR="${WARDEN_CROSS_TARGET_DIR:-$root/target/cross}"
# zig's caches beside the target dir (it writes to ~/.cache otherwise).
export ZIG_GLOBAL_CACHE_DIR="$CARGO_TARGET_DIR/zig-cache"
export ZIG_LOCAL_CACHE_DIR="$CARGO_TARGET_DIR/zig-cache"

TARGETS=(aarch64-apple-darwin x86_64-apple-darwin)
for target in "${TARGETS[@]}"; do
  t=${target//-/_}
  export "CC_$t=$root/scripts/cross/zig-cc"
  export "AR_$t=$root/scripts/cross/zig-ar"
done

# clippy is the type check too (it fails on what `cargo check` fails on): one pass each.
for target in "${TARGETS[@]}"; do
  echo "== cargo clippy ($target): the library crates, warden-cli"
  /usr/bin/cargo clippy -Zbuild-std=std,panic_abort --target "$target" --locked \
    -p warden-wire -p warden-config -p warden-control -p warden-bridge -p warden-clients -p warden-rpc -p warden-registry -p warden-supervisor -p warden-cli -- -D warnings
done
echo "cross-macos: done in $(( $(date +%s) - start )) s"
