//! MCP Warden's core: everything but the GUI. The `warden` CLI and the tray app are thin
//! shells over this crate; it never depends on Tauri.

pub mod bridge;
pub mod clients;
pub mod codes;
pub mod config;
pub mod control;
pub mod desktop;
pub mod events;
pub mod fallback;
pub(crate) mod fsutil;
pub mod fswatch;
pub mod keychain;
#[cfg(all(test, unix))]
mod layers;
pub mod paths;
pub mod pins;
pub mod policy;
pub mod protocol;
pub mod redact;
pub mod registry;
pub mod supervisor;
pub mod testing;
pub mod text;

/// Checks that a generated file of the repository (`docs/config.md`, `docs/errors.md`) is
/// `want`; `UPDATE_DOCS=1` rewrites it first. `filter` is the test filter that regenerates it.
#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) fn assert_generated(repo_path: &str, want: &str, filter: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(repo_path);
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&path, want).unwrap();
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "{repo_path} is stale: run `UPDATE_DOCS=1 cargo test -p warden-core {filter}`"
    );
}
