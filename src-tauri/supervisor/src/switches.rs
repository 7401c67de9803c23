//! The switches kept in files of the state directory, read at start and written when the user
//! flips one: auto-rewrite of the IDE config watcher (`off`, `ask`, `on`) and probing the IDE
//! configs' servers (`on`, `off`).

use std::path::Path;

use super::api::{ApiError, ErrorCode};

/// The saved auto-rewrite switch and whether it wraps without asking: `off`, `ask` or `on`
/// (wrap without asking). Anything else, or no file, is off.
pub(super) fn auto_rewrite(path: Option<&Path>) -> (bool, bool) {
    let saved = path.and_then(|p| std::fs::read_to_string(p).ok());
    match saved.as_deref().map(str::trim) {
        Some("on") => (true, true),
        Some("ask") => (true, false),
        _ => (false, false),
    }
}

/// Keeps the auto-rewrite switch (without asking only when on).
pub(super) fn save_auto_rewrite(
    path: &Path,
    on: bool,
    without_asking: bool,
) -> Result<(), ApiError> {
    let saved = match (on, without_asking) {
        (false, _) => "off\n",
        (true, false) => "ask\n",
        (true, true) => "on\n",
    };
    save(path, saved)
}

/// The saved switch of probing the IDE servers: anything but `off` is on.
pub(super) fn probe_ide(path: &Path) -> bool {
    std::fs::read_to_string(path).map_or(true, |s| s.trim() != "off")
}

/// Keeps the switch of probing the IDE servers.
pub(super) fn save_probe_ide(path: &Path, on: bool) -> Result<(), ApiError> {
    save(path, if on { "on\n" } else { "off\n" })
}

/// Keeps a switch in its file in the state directory.
fn save(path: &Path, value: &str) -> Result<(), ApiError> {
    path.parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(path, value))
        .map_err(|e| {
            ApiError::new(
                ErrorCode::Io,
                format!("cannot save the switch to {}: {e}", path.display()),
            )
        })
}
