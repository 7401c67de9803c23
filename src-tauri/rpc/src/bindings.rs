//! Generated TypeScript bindings: how a file is written, and the check that the committed
//! one is up to date (the API's here, the desktop app's in [`warden_supervisor::desktop`]).

/// A bindings file: `header`, then each declaration `export`ed.
pub fn bindings_file(header: &str, decls: &[String]) -> String {
    let mut out = header.to_owned();
    for d in decls {
        out.push_str("\nexport ");
        out.push_str(d);
        out.push('\n');
    }
    out
}

/// Whether the committed bindings at `path` are `want`; with `UPDATE_BINDINGS` set, writes
/// them first. The error says which command regenerates them.
pub fn check_bindings(path: &std::path::Path, want: &str, regenerate: &str) -> Result<(), String> {
    if std::env::var_os("UPDATE_BINDINGS").is_some() {
        std::fs::write(path, want).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    match std::fs::read_to_string(path) {
        Ok(have) if have == want => Ok(()),
        _ => Err(format!(
            "{} is out of date: run `UPDATE_BINDINGS=1 {regenerate}` and commit it",
            path.display()
        )),
    }
}
