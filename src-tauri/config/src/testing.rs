//! What tests share across the crates: how a test that needs a tool behaves where it is
//! missing. Not used by the product.

use std::path::PathBuf;

/// Whether this runs under CI (`CI` set, as CI services and `.ci/run` do).
fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !matches!(v.as_str(), "" | "0" | "false"))
}

/// Says why a test cannot run here (something it needs is missing), and lets the caller
/// return. Under CI it fails the test instead: CI installs what the tests need
/// (scripts/setup.sh), so something missing there is a broken setup.
pub fn cannot_run(why: &str) {
    assert!(!under_ci(), "{why}: CI must provide it (scripts/setup.sh)");
    eprintln!("SKIPPED: {why} (under CI this fails)");
}

/// `name` on PATH, or `None` after [`cannot_run`].
pub fn require_tool(name: &str) -> Option<PathBuf> {
    let found = crate::paths::find_on_path(name.as_ref());
    if found.is_none() {
        cannot_run(&format!("`{name}` is not on PATH"));
    }
    found
}
