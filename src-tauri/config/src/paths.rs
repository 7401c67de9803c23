//! Where Warden keeps its files.
//!
//! The user's directories come from the `directories` crate, read at call time: nothing is cached,
//! so each call sees the environment as it is then. [`state_dir`] is `$WARDEN_STATE_DIR`, else the
//! per-OS state directory (on Linux `$XDG_STATE_HOME/warden`, by default `~/.local/state/warden`),
//! else the local data directory (macOS, Windows), else a folder in the temp dir. The config file
//! is `$WARDEN_CONFIG`, else `<`[`config_dir`]`>/warden/config.toml` ([`crate::default_path`]). An
//! empty variable counts as unset. [`runtime_dir`] (Linux only) holds the control socket.
//!
//! A server's own files and folders are named by [`file_stem`], which is lossless: its
//! readable name and a hash of the exact name. [`server_path`] adopts a file of the old, lossy
//! name when it was exactly this server's; [`server_path_fresh`] never adopts one, for the
//! sandbox folder, whose old caches another server may have written.
//!
//! [`user_home`] is the real uid's home in the user database (`getpwuid_r`), whatever `$HOME`
//! says. `supervisor/src/paths_pinned.rs` pins the Linux paths, so a change of crate or of
//! fallback cannot move users' configs, backups and history.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use directories::BaseDirs;

/// The user's home directory: `$HOME`, else the user database's entry.
pub fn home_dir() -> Option<PathBuf> {
    BaseDirs::new().map(|d| d.home_dir().to_owned())
}

/// The user's config directory (`$XDG_CONFIG_HOME`, by default `~/.config`, on Linux).
pub fn config_dir() -> Option<PathBuf> {
    BaseDirs::new().map(|d| d.config_dir().to_owned())
}

/// The user's runtime directory, the same for the bridges and the supervisor whatever
/// environment each got (MCP SDK clients start servers with only `HOME`, `LOGNAME`, `PATH`,
/// `SHELL`, `TERM` and `USER`): `/run/user/<uid>` of the real uid when it exists and belongs
/// to the user, else `$XDG_RUNTIME_DIR` when absolute; Linux only.
pub fn runtime_dir() -> Option<PathBuf> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::MetadataExt as _;
        let owner = |dir: &Path| {
            std::fs::metadata(dir)
                .ok()
                .filter(std::fs::Metadata::is_dir)
                .map(|m| m.uid())
        };
        choose_runtime_dir(real_uid(), owner, std::env::var_os("XDG_RUNTIME_DIR"))
    }
    #[cfg(not(target_os = "linux"))]
    None
}

/// [`runtime_dir`] as a pure function: `uid` is the real uid, `owner` the owner of a path
/// that exists and is a directory, `xdg_runtime_dir` the environment's value.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn choose_runtime_dir(
    uid: u32,
    owner: impl FnOnce(&Path) -> Option<u32>,
    xdg_runtime_dir: Option<OsString>,
) -> Option<PathBuf> {
    let run = PathBuf::from(format!("/run/user/{uid}"));
    if owner(&run) == Some(uid) {
        return Some(run);
    }
    xdg_runtime_dir
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute())
}

/// The real uid of this process (not the environment's `USER`).
#[cfg(unix)]
#[allow(unsafe_code)]
pub fn real_uid() -> u32 {
    // SAFETY: getuid has no preconditions and cannot fail.
    unsafe { libc::getuid() }
}

/// The home directory of the real uid in the user database (`getpwuid_r`), whatever `$HOME`
/// says; `None` without an entry (or with an empty home).
#[cfg(unix)]
#[allow(unsafe_code)]
pub fn user_home() -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt as _;
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    loop {
        // SAFETY: all-zero is a valid `passwd` (null pointers, zero ids).
        let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
        let mut found = std::ptr::null_mut();
        // SAFETY: every pointer is valid for the call and `buf.len()` is its size.
        let rc = unsafe {
            libc::getpwuid_r(
                real_uid(),
                &mut entry,
                buf.as_mut_ptr(),
                buf.len(),
                &mut found,
            )
        };
        if rc == libc::ERANGE && buf.len() < 1 << 20 {
            buf.resize(buf.len() * 4, 0);
            continue;
        }
        if rc != 0 || found.is_null() || entry.pw_dir.is_null() {
            return None;
        }
        // SAFETY: on success `pw_dir` points to a NUL-terminated string inside `buf`, copied
        // out before `buf` is dropped.
        let dir = unsafe { std::ffi::CStr::from_ptr(entry.pw_dir) };
        let dir = std::ffi::OsStr::from_bytes(dir.to_bytes());
        return (!dir.is_empty()).then(|| PathBuf::from(dir));
    }
}

/// `$WARDEN_STATE_DIR`, else the user's state directory (`$XDG_STATE_HOME/warden`, by default
/// `~/.local/state/warden`, on Linux), else the local data directory (macOS, Windows), else a
/// directory under the temp dir.
pub fn state_dir() -> PathBuf {
    std::env::var_os("WARDEN_STATE_DIR")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            let base = BaseDirs::new()?;
            Some(
                base.state_dir()
                    .unwrap_or(base.data_local_dir())
                    .join("warden"),
            )
        })
        .unwrap_or_else(|| std::env::temp_dir().join("warden"))
}

/// The desktop app's own log (its host's, with what its window's process printed), capped
/// in size: the file to attach to a bug report.
pub fn app_log() -> PathBuf {
    state_dir().join(APP_LOG)
}

/// The name of [`app_log`] in the state dir.
pub const APP_LOG: &str = "warden-app.log";

/// The JSONL event log of one server: `logs/<`[`file_stem`]`>.jsonl` (one of the old naming
/// adopted, [`server_path`]).
pub fn event_log(server: &str) -> PathBuf {
    let logs = state_dir().join("logs");
    let path = server_path(&logs, server, ".jsonl");
    // Beside it: its debug log and the rotated files of each.
    for suffix in [".debug.jsonl"].into_iter().map(str::to_owned).chain(
        (1..=warden_wire::events::JsonlLog::DEFAULT_KEEP)
            .flat_map(|n| [format!(".jsonl.{n}"), format!(".debug.jsonl.{n}")]),
    ) {
        server_path(&logs, server, &suffix);
    }
    path
}

/// A server's name as the name of its own files and folders (its log, pin file and sandbox
/// folder), lossless: its readable part ([`safe_name`], at most 64 characters) and the first
/// 16 hex digits of the SHA-256 of the exact name, so `github`, `.github`, `git hub` and
/// `git_hub` each get their own (`github-…`, `github-…`, `git_hub-…`, `git_hub-…`), and a
/// server never reaches another's grants, caches or pins through a shared file.
pub fn file_stem(server: &str) -> String {
    use sha2::Digest as _;
    let readable: String = safe_name(server).chars().take(64).collect();
    let hash = sha2::Sha256::digest(server.as_bytes());
    let hex = hash[..8]
        .iter()
        .fold(String::with_capacity(16), |mut s, b| {
            use std::fmt::Write as _;
            let _ = write!(s, "{b:02x}");
            s
        });
    format!("{readable}-{hex}")
}

/// A text made safe as a file name, readable but lossy: anything but `[A-Za-z0-9._-]`
/// becomes `_`, leading dots go (`_` when nothing is left). Per-server files use
/// [`file_stem`]; this names files whose name is made unique otherwise (a backup's).
pub fn safe_name(text: &str) -> String {
    let stem: String = text
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

/// `dir/<`[`file_stem`]`(server)><suffix>`, a server's own file or folder in `dir`.
///
/// Warden named these `<`[`safe_name`]`(server)><suffix>` before (lossy: `.github` and
/// `github` shared one). Such a file or folder is adopted, renamed to the new name, when the
/// server's name is its own old name (nothing in it was replaced: the old file was named for
/// exactly this server) and nothing has the new name yet: its pins and logs stay its own
/// (its sandbox folder does not: [`server_path_fresh`]). A name that was changed (`.github`, `git hub`) adopts nothing: its old file is named
/// for another server (`github`, `git_hub`), and may be that server's. So each old file goes
/// to the one server whose name it is, never to two, and a file of the new name is never
/// replaced (the rename refuses to). What adoption cannot undo is the sharing that happened
/// before: a file two colliding servers both wrote stays with the one named like it.
pub fn server_path(dir: &Path, server: &str, suffix: &str) -> PathBuf {
    let path = server_path_fresh(dir, server, suffix);
    if safe_name(server) == server {
        adopt(&dir.join(format!("{server}{suffix}")), &path);
    }
    path
}

/// `dir/<`[`file_stem`]`(server)><suffix>` as [`server_path`] names it, but never adopted: a
/// server's sandbox folder starts fresh. Its old folder (`sandbox/github`) holds caches that
/// another server whose name collided with it (`.github`, sharing the folder under the old
/// naming) may have written: an npx or uv cache planted there is code that would run with this
/// server's grants and secrets. Data is worth carrying over (pins, logs), a cache is not: it
/// fills again. The old folder is left where it is, neither renamed nor removed (Warden does
/// not remove what may be a user's files; it is under Warden's hidden state, out of every
/// sandbox's reach).
pub fn server_path_fresh(dir: &Path, server: &str, suffix: &str) -> PathBuf {
    dir.join(format!("{}{suffix}", file_stem(server)))
}

/// Renames `old` to `new` when `old` exists and `new` does not (never replacing `new`).
fn adopt(old: &Path, new: &Path) {
    if new.symlink_metadata().is_ok() || old.symlink_metadata().is_err() {
        return;
    }
    match rename_noreplace(old, new) {
        Ok(()) => tracing::info!("{} is now {}", old.display(), new.display()),
        // Another process adopted it first, or made the new one.
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::AlreadyExists
            ) => {}
        Err(e) => tracing::warn!(
            "cannot rename {} to {}: {e}; it stays where it is",
            old.display(),
            new.display()
        ),
    }
}

/// `rename(old, new)` that fails with `AlreadyExists` rather than replace `new`: atomic on
/// Linux (`RENAME_NOREPLACE`), checked just before elsewhere.
fn rename_noreplace(old: &Path, new: &Path) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{CWD, RenameFlags, renameat_with};
        match renameat_with(CWD, old, CWD, new, RenameFlags::NOREPLACE) {
            Ok(()) => return Ok(()),
            Err(e) if e == rustix::io::Errno::INVAL || e == rustix::io::Errno::NOSYS => {}
            Err(e) => return Err(e.into()),
        }
    }
    if new.symlink_metadata().is_ok() {
        return Err(std::io::ErrorKind::AlreadyExists.into());
    }
    std::fs::rename(old, new)
}

/// `name` on `$PATH` (absolute folders only), as `execvp` would find it: an executable file.
pub fn find_on_path(name: &std::ffi::OsStr) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

/// Whether `path` is a file its owner may run (any file elsewhere than Unix).
pub fn is_executable(path: &std::path::Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        path.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    path.is_file()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// `/run/user/<uid>` when it is the user's; else an absolute `$XDG_RUNTIME_DIR`; else none.
    #[test]
    #[cfg_attr(windows, ignore = "a Linux runtime dir")]
    fn runtime_dir_prefers_the_users_run_dir_then_an_absolute_xdg_runtime_dir() {
        let xdg = || Some(OsString::from("/x/run"));
        let cases: [(Option<u32>, Option<OsString>, Option<&str>); 7] = [
            (Some(7), None, Some("/run/user/7")),
            (Some(7), xdg(), Some("/run/user/7")),
            (Some(0), xdg(), Some("/x/run")),
            (None, xdg(), Some("/x/run")),
            (None, Some("rel/run".into()), None),
            (None, Some("".into()), None),
            (Some(8), None, None),
        ];
        let got: Vec<Option<PathBuf>> = cases
            .iter()
            .map(|(owner, env, _)| {
                choose_runtime_dir(
                    7,
                    |p| {
                        assert_eq!(p, Path::new("/run/user/7"));
                        *owner
                    },
                    env.clone(),
                )
            })
            .collect();
        let want: Vec<Option<PathBuf>> = cases
            .iter()
            .map(|(_, _, want)| want.map(PathBuf::from))
            .collect();
        assert_eq!(got, want);
    }

    /// The home directory in /etc/passwd for the real uid, as `getent passwd $(id -u)` shows
    /// it on a machine whose users are all in /etc/passwd.
    #[cfg(unix)]
    #[test]
    fn user_home_is_the_user_databases() {
        let uid = real_uid().to_string();
        let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
        let home = passwd.lines().find_map(|line| {
            let fields: Vec<&str> = line.split(':').collect();
            (fields.len() == 7 && fields[2] == uid && !fields[5].is_empty())
                .then(|| PathBuf::from(fields[5]))
        });
        assert_eq!(user_home(), home);
    }

    #[test]
    fn safe_names_are_safe() {
        assert_eq!(safe_name("rg"), "rg");
        assert_eq!(safe_name("../../etc/passwd"), "_.._etc_passwd");
        assert_eq!(safe_name(""), "_");
        assert_eq!(safe_name("my server/ü"), "my_server__");
    }

    /// A stem is the safe name and 16 hex digits of the exact name's hash: names that were
    /// one file before each get their own, the same every time.
    #[test]
    fn stems_are_lossless() {
        let names = [
            "github", ".github", "git hub", "git_hub", "git/hub", "GitHub",
        ];
        let stems: std::collections::BTreeSet<String> =
            names.iter().map(|n| file_stem(n)).collect();
        assert_eq!(stems.len(), names.len(), "{stems:?}");
    }

    #[test]
    fn a_stem_keeps_the_name_readable() {
        assert_eq!(
            file_stem("../x y")
                .split_once('-')
                .map(|(s, h)| (s.to_owned(), h.len())),
            Some(("_x_y".to_owned(), 16))
        );
    }

    #[test]
    fn a_long_name_makes_a_stem_of_bounded_length() {
        assert_eq!(file_stem(&"a".repeat(1000)).len(), 64 + 1 + 16);
    }

    /// Two servers whose old names collided (`github`, `.github`) get two paths.
    #[test]
    fn servers_whose_old_names_collided_get_their_own_paths() {
        let dir = tempfile::tempdir().unwrap();
        assert_ne!(
            server_path(dir.path(), "github", ".json"),
            server_path(dir.path(), ".github", ".json")
        );
    }

    /// The old file of a server named as its old name is renamed to the new name.
    #[test]
    fn the_old_file_of_exactly_this_name_is_adopted() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("github.json"), "pins").unwrap();
        let new = server_path(dir.path(), "github", ".json");
        assert_eq!(std::fs::read_to_string(new).ok().as_deref(), Some("pins"));
    }

    /// `.github`'s old file was `github.json`, which may be `github`'s: it is not adopted.
    #[test]
    fn a_name_that_was_changed_adopts_nothing() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("github.json"), "pins").unwrap();
        let new = server_path(dir.path(), ".github", ".json");
        assert!(new.symlink_metadata().is_err());
    }

    /// A file of the new name is never replaced; the old one stays where it is.
    #[test]
    fn a_new_file_is_never_replaced_by_an_old_one() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("github.json"), "old").unwrap();
        let new = dir.path().join(format!("{}.json", file_stem("github")));
        std::fs::write(&new, "new").unwrap();
        server_path(dir.path(), "github", ".json");
        let both = (
            std::fs::read_to_string(&new).unwrap(),
            std::fs::read_to_string(dir.path().join("github.json")).unwrap(),
        );
        assert_eq!(both, ("new".to_owned(), "old".to_owned()));
    }

    /// A sandbox folder starts fresh even when its name needed no change: the old folder's
    /// caches may have been written by a server whose name collided.
    #[test]
    fn an_old_sandbox_folder_is_not_adopted() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("github/npm")).unwrap();
        std::fs::write(dir.path().join("github/npm/x"), "planted").unwrap();
        let new = server_path_fresh(dir.path(), "github", "");
        assert!(new.symlink_metadata().is_err(), "{new:?}");
    }

    /// The old sandbox folder is left where it is, with what it holds.
    #[test]
    fn an_old_sandbox_folder_stays_where_it_is() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("github/npm")).unwrap();
        std::fs::write(dir.path().join("github/npm/x"), "planted").unwrap();
        server_path_fresh(dir.path(), "github", "");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("github/npm/x"))
                .ok()
                .as_deref(),
            Some("planted")
        );
    }

    /// The same name as [`server_path`] gives.
    #[test]
    fn a_fresh_path_is_named_as_any_other() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            server_path_fresh(dir.path(), "git hub", ""),
            server_path(dir.path(), "git hub", "")
        );
    }
}
