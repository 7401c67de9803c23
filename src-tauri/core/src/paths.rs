//! Where Warden keeps its files.

use std::path::PathBuf;

/// `$WARDEN_STATE_DIR`, else the user's state directory (`~/.local/state/warden` on Linux),
/// else the local data directory, else a directory under the temp dir.
pub fn state_dir() -> PathBuf {
    std::env::var_os("WARDEN_STATE_DIR")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            dirs::state_dir()
                .or_else(dirs::data_local_dir)
                .map(|d| d.join("warden"))
        })
        .unwrap_or_else(|| std::env::temp_dir().join("warden"))
}

/// The JSONL event log of one server.
pub fn event_log(server: &str) -> PathBuf {
    state_dir()
        .join("logs")
        .join(format!("{}.jsonl", file_stem(server)))
}

/// A server name made safe as a file name: anything but `[A-Za-z0-9._-]` becomes `_`.
pub fn file_stem(server: &str) -> String {
    let stem: String = server
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    match stem.trim_start_matches('.') {
        "" => "_".to_owned(),
        s => s.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_are_safe() {
        assert_eq!(file_stem("rg"), "rg");
        assert_eq!(file_stem("../../etc/passwd"), "_.._etc_passwd");
        assert_eq!(file_stem(""), "_");
        assert_eq!(file_stem("my server/ü"), "my_server__");
    }
}
