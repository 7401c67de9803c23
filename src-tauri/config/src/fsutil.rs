//! File work shared by the clients' files, Warden's ledger and config.toml: Warden's own
//! cross-process lock of a file, a file replaced atomically and durably, a directory's fsync.
//!
//! The lock of a file lives in `$WARDEN_STATE_DIR/locks/`, named after the file and a hash
//! of its real path (`mcp.json-1a2b3c4d.lock`), not beside the file: the clients' files sit
//! in the user's home and in projects (a `.vscode/mcp.json.warden-lock` would show up in
//! `git status`), while the state directory is Warden's own, private and writable. Every
//! Warden process of the user (the app's host and window, the CLI, `warden daemon`) finds
//! the same lock there. On Unix it is an exclusive `flock` of the lock file (what std's
//! `File::lock` does there; that is stable only since Rust 1.89, newer than the workspace's
//! rust-version); on Windows, the lock file opened with no sharing. Either way the system
//! lets go of it when its holder exits or dies, so a lock file left behind is never stale,
//! and lock files are never removed (removing one races with a process that opened it to
//! wait). Two opens in one process exclude each other too, so the lock also keeps a command
//! and the watcher of one process apart. Two paths whose hashes collide share a lock: they
//! are written one after the other, nothing worse.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a writer waits for another Warden process's lock before giving up (a holder
/// may be waiting for the OS keychain, which allows 20 s per call).
pub const LOCK_TIMEOUT: Duration = Duration::from_secs(30);

/// FNV-1a of a path: a stable short hash (the backups' ids and the locks' names use it).
pub fn path_hash(path: &Path) -> String {
    let mut h: u32 = 0x811c_9dc5;
    for b in path.to_string_lossy().bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    format!("{h:08x}")
}

/// Where `path` really is: symlinks resolved, or (a file not there yet) its directory's
/// resolved, so that a file and the one created there later share a lock.
pub(crate) fn real_path(path: &Path) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    match (path.parent(), path.file_name()) {
        (Some(dir), Some(name)) => std::fs::canonicalize(dir)
            .map(|d| d.join(name))
            .unwrap_or_else(|_| path.to_owned()),
        _ => path.to_owned(),
    }
}

/// The lock file of `path` under `state_dir`.
pub fn lock_file(state_dir: &Path, path: &Path) -> PathBuf {
    let real = real_path(path);
    let name = real
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    state_dir
        .join("locks")
        .join(format!("{name}-{}.lock", path_hash(&real)))
}

/// Warden's lock of a file, held until dropped (closing the lock file lets go of it).
#[derive(Debug)]
pub struct Lock {
    _file: File,
}

/// Takes Warden's lock of `path` (waiting for another holder at most [`LOCK_TIMEOUT`]).
/// A timeout is an error of kind `TimedOut` that names the lock file.
pub fn lock(state_dir: &Path, path: &Path) -> std::io::Result<Lock> {
    lock_within(state_dir, path, LOCK_TIMEOUT)
}

/// [`lock`], waiting at most `timeout` (a sign-in that waits for a browser holds it longer).
pub fn lock_within(state_dir: &Path, path: &Path, timeout: Duration) -> std::io::Result<Lock> {
    let lock = lock_file(state_dir, path);
    if let Some(dir) = lock.parent() {
        create_private_dir(dir)?;
    }
    let started = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        if let Some(file) = try_lock(&lock)? {
            return Ok(Lock { _file: file });
        }
        if started.elapsed() >= timeout {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!(
                    "another Warden process held its lock ({}) for {} s",
                    lock.display(),
                    timeout.as_secs()
                ),
            ));
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

/// The lock file, opened and locked; `None` while another holds it.
#[cfg(unix)]
fn try_lock(path: &Path) -> std::io::Result<Option<File>> {
    use rustix::fs::{FlockOperation, flock};
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)?;
    match flock(&file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(Some(file)),
        Err(e) if e == rustix::io::Errno::WOULDBLOCK => Ok(None),
        Err(e) => Err(e.into()),
    }
}

#[cfg(not(unix))]
fn try_lock(path: &Path) -> std::io::Result<Option<File>> {
    use std::os::windows::fs::OpenOptionsExt;
    /// ERROR_SHARING_VIOLATION: another handle has it open.
    const SHARING_VIOLATION: i32 = 32;
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .share_mode(0)
        .open(path);
    match opened {
        Ok(file) => Ok(Some(file)),
        Err(e) if e.raw_os_error() == Some(SHARING_VIOLATION) => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

/// Replaces `path` with `bytes`: a uniquely named temporary file in the same directory
/// (`mode`, else the mode of the file it replaces, else 0600), fsynced, renamed over it, and
/// the directory fsynced, so that a reader sees the old or the new file, and a crash leaves
/// one of them.
pub fn replace(
    path: &Path,
    bytes: &[u8],
    mode: Option<std::fs::Permissions>,
) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}.warden-"))
        .suffix(".tmp")
        .tempfile_in(dir)?;
    let mode = mode.or_else(|| std::fs::metadata(path).ok().map(|m| m.permissions()));
    if let Some(mode) = mode {
        tmp.as_file().set_permissions(mode)?;
    }
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    sync_dir(path);
    Ok(())
}

/// Fsyncs the directory holding `path`, so that a rename into it survives a crash (Unix;
/// best effort).
pub fn sync_dir(path: &Path) {
    #[cfg(unix)]
    if let Some(dir) = path.parent()
        && let Ok(d) = File::open(dir)
    {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = path;
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_lock_excludes_another_handle_until_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mcp.json");
        let held = lock(dir.path(), &file).unwrap();
        let err = lock_within(dir.path(), &file, Duration::from_millis(30)).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::TimedOut, "{err}");
        assert!(err.to_string().contains("locks"), "{err}");
        drop(held);
        drop(lock_within(dir.path(), &file, Duration::from_millis(30)).unwrap());
    }

    #[test]
    fn a_file_and_one_created_there_later_share_a_lock() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mcp.json");
        let before = lock_file(dir.path(), &file);
        std::fs::write(&file, "{}").unwrap();
        assert_eq!(lock_file(dir.path(), &file), before);
    }
}
