#!/usr/bin/env bash
# Builds the installable packages: a .deb and an AppImage of the app (warden-app: the host and,
# in a process of its own, the window), with the `warden` CLI (bridge, daemon, status …)
# bundled beside it as its sidecar (src-tauri/app/tauri.bundle.json, merged into the root
# tauri.conf.json here so that plain cargo builds do not need it), the icons and a desktop
# entry. The .deb links warden-tray, the program earlier versions' start-at-login entry runs,
# to warden-app (src-tauri/app/deb/).
# Output: target/release/bundle/{deb,appimage}/. `--deb` builds only the .deb (the AppImage
# bundler downloads linuxdeploy from GitHub, which needs internet access).
set -euo pipefail
cd "$(dirname "$0")/.."
bundles="deb,appimage"
[ "${1:-}" = "--deb" ] && bundles="deb"

scripts/setup.sh
echo "package: building the UI and the release warden CLI"
(cd ui && npm run --silent build)
# Whole-program LTO in one unit: the layout of src-tauri/cli/warden.order (build.rs) names
# functions as such a build does (scripts/order-symbols.sh).
CARGO_PROFILE_RELEASE_LTO=fat CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1 cargo build --release -p warden-cli --locked
triple=$(rustc -vV | sed -n 's/^host: //p')
mkdir -p src-tauri/app/binaries
# The release profile keeps line tables for profiling; the shipped CLI does not need them.
strip -o "src-tauri/app/binaries/warden-$triple" target/release/warden
# `warden registry` runs the registry's HTTP client from beside `warden` (kept out of it).
strip -o "src-tauri/app/binaries/warden-registry-$triple" target/release/warden-registry
# `warden bridge --remote URL` runs the remote relay (HTTP, TLS) from beside `warden`, too.
strip -o "src-tauri/app/binaries/warden-remote-$triple" target/release/warden-remote
echo "package: tauri build, strip, then bundle ($bundles)"
rm -rf target/release/bundle
# The app is built for size: whole-program LTO, one codegen unit, opt-level "s" (its own work
# is a few events a second; the bridge's hot path is the CLI above, which keeps the release
# profile). `-p warden-app`: only the app (the workspace's default members include the CLI).
export CARGO_PROFILE_RELEASE_OPT_LEVEL=s CARGO_PROFILE_RELEASE_LTO=fat CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1
ui/node_modules/.bin/tauri build --config src-tauri/app/tauri.bundle.json --no-bundle --ci -- -p warden-app
# The bundler ships the binary as built; its symbols and line tables are 4/5 of it.
strip target/release/warden-app
status=0
ui/node_modules/.bin/tauri bundle --config src-tauri/app/tauri.bundle.json --bundles "$bundles" --ci || status=$?
# Tauri's .deb is gzip-compressed; xz at its highest setting (dpkg's default is xz -6) makes it
# about half as large (installing needs the 65 MiB of xz -9's dictionary to unpack it).
for deb in target/release/bundle/deb/*.deb; do
  [ -f "$deb" ] || continue
  tree=$(mktemp -d)
  dpkg-deb -R "$deb" "$tree/root"
  dpkg-deb --root-owner-group -Zxz -z9 -Sextreme -b "$tree/root" "$deb" > /dev/null
  rm -rf "$tree"
done
built=$(find target/release/bundle -maxdepth 2 \( -name '*.deb' -o -name '*.AppImage' \) 2>/dev/null)
if [ "$status" -ne 0 ] && [ -n "$built" ] && [[ "$bundles" == *appimage* ]] && [[ "$built" != *.AppImage* ]]; then
  echo "package: the AppImage bundler could not download linuxdeploy/AppRun (from GitHub); the .deb is built. Run with internet access for the AppImage, or use --deb." >&2
fi
[ -n "$built" ] || { echo "package: nothing was built (tauri build exited $status)" >&2; exit 1; }
echo "package: built:"
echo "$built"
[ "$status" -eq 0 ] || exit "$status"
