//! What MCP Warden says and how: the JSON-RPC frames and envelopes of the stdio links
//! ([`protocol`]), the stable error codes ([`codes`]), the events bridges log and send
//! ([`events`]), and the rules for showing text that came from elsewhere ([`redact`],
//! [`text`]). Every other crate of the workspace builds on it; it depends on none of them.

pub mod codes;
pub mod events;
pub mod protocol;
pub mod redact;
pub mod text;

/// Checks that a generated file of the repository (`docs/config.md`, `docs/errors.md`) is
/// `want`; `UPDATE_DOCS=1` rewrites it first. `command` is the test command that regenerates
/// it. For the crates' tests.
#[doc(hidden)]
#[allow(clippy::unwrap_used)]
pub fn assert_generated(repo_path: &str, want: &str, command: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(repo_path);
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&path, want).unwrap();
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "{repo_path} is stale: run `UPDATE_DOCS=1 {command}`"
    );
}
