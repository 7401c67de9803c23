//! Writing a client's config file safely.
//!
//! 1. Resolve symlinks and write the real file (dotfile managers keep their link).
//! 2. Take Warden's lock of the file (`fsutil.rs`: every Warden process, and the threads of
//!    one, write it one at a time), then the client's own lock where it has one. A caller
//!    that also changes the ledger holds the ledger's lock already: the ledger's is always
//!    taken first.
//! 3. Read; compute the new bytes from what was read.
//! 4. Back the old bytes up; write a temp file in the same directory, created 0600 and given
//!    the same mode before anything is written to it, fsync it.
//! 5. Run the caller's `commit` (the ledger saved: a file never changes before its undo is
//!    on disk; the caller takes it back unless the file is written).
//! 6. Read the file again just before replacing it, then `stat` it: if its contents or its
//!    identity/times changed (the client wrote it meanwhile), drop the temp file and start
//!    again from 3 (bounded).
//! 7. Rename the temp file over the real one (atomic), fsync the directory.
//!
//! A file that does not exist yet is created by [`create_file`] without ever replacing one
//! that appeared meanwhile. Without a lock shared with the client, a client write landing
//! between the final `stat` and the rename is replaced; only Cline offers such a lock.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::backup;
use super::lock::{self, LockKind};
use super::model::{ClientError, ClientId};
use warden_config::fsutil;

/// How many times the read-edit-check cycle runs before giving up on a busy file.
pub(crate) const MAX_ATTEMPTS: u32 = 20;

static TEMP_SEQ: AtomicU64 = AtomicU64::new(0);

#[cfg(test)]
type CreateHook = Option<Box<dyn FnMut(&Path)>>;

#[cfg(test)]
thread_local! {
    /// Tests: run by [`create_file`] right before the new file is put in place (a client
    /// creating the file meanwhile).
    pub(crate) static BEFORE_CREATE: std::cell::RefCell<CreateHook> =
        const { std::cell::RefCell::new(None) };
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Written {
    pub written: bool,
    pub backup: Option<String>,
    pub attempts: u32,
}

type EditFn<'a> = dyn FnMut(&[u8]) -> Result<Option<Vec<u8>>, ClientError> + 'a;
/// Runs once the new bytes are ready, before the last check and the rename (again on each
/// attempt); an error leaves the file as it was. What it saves is kept only if the file is
/// then written ([`Written::written`]).
pub(crate) type CommitFn<'a> = dyn FnMut() -> Result<(), ClientError> + 'a;

/// Replaces the contents of `path` with what `edit` makes of them (`None`: leave it).
/// `state`: the state dir (Warden's lock, the backup of the old contents) and the client.
pub(crate) fn update_file(
    path: &Path,
    lock: LockKind,
    state: (&Path, ClientId),
    edit: &mut EditFn<'_>,
    commit: &mut CommitFn<'_>,
) -> Result<Written, ClientError> {
    update_file_with(path, lock, state, edit, commit, &mut |_, _| {})
}

/// [`update_file`] with a hook run between writing the temp file and the final check
/// (tests use it to write the file "meanwhile").
pub(crate) fn update_file_with(
    path: &Path,
    lock: LockKind,
    (state_dir, client): (&Path, ClientId),
    edit: &mut EditFn<'_>,
    commit: &mut CommitFn<'_>,
    before_replace: &mut dyn FnMut(&Path, u32),
) -> Result<Written, ClientError> {
    let real = std::fs::canonicalize(path).map_err(|e| {
        ClientError::io(
            "resolve",
            path,
            "check that the file exists (a symlink must point to an existing file)",
            e,
        )
    })?;
    let _ours = fsutil::lock(state_dir, &real)
        .map_err(|e| ClientError::lock_failed(state_dir, &real, e))?;
    let _held = lock::acquire(lock, path, lock::TIMEOUT)?;
    let mut result = Written::default();
    for attempt in 1..=MAX_ATTEMPTS {
        result.attempts = attempt;
        let old = std::fs::read(&real)
            .map_err(|e| ClientError::io("read", &real, "check that the file is readable", e))?;
        let meta = std::fs::metadata(&real)
            .map_err(|e| ClientError::io("read", &real, "check that the file is readable", e))?;
        let Some(new) = edit(&old)? else {
            return Ok(result);
        };
        if new == old {
            return Ok(result);
        }
        if meta.permissions().readonly() {
            return Err(ClientError::ReadOnly { path: real });
        }
        result.backup = Some(backup::save(state_dir, client, &real, &old)?);
        let tmp = write_temp(&real, &new, &meta)?;
        // Before the last check, which must stay the last thing before the rename.
        if let Err(e) = commit() {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        before_replace(&real, attempt);
        let unchanged = match still_same(&real, &old) {
            Ok(same) => same,
            Err(e) => {
                let _ = std::fs::remove_file(&tmp);
                return Err(ClientError::io(
                    "read",
                    &real,
                    "check that the file is readable",
                    e,
                ));
            }
        };
        if !unchanged {
            let _ = std::fs::remove_file(&tmp);
            tracing::debug!(
                "{} changed while being edited; redoing the edit",
                real.display()
            );
            std::thread::sleep(Duration::from_millis(5 * u64::from(attempt)));
            continue;
        }
        if let Err(e) = rename_retrying(&tmp, &real) {
            let _ = std::fs::remove_file(&tmp);
            return Err(ClientError::io(
                "replace",
                &real,
                "check that the directory is writable and no program holds the file open",
                e,
            ));
        }
        fsutil::sync_dir(&real);
        result.written = true;
        return Ok(result);
    }
    Err(ClientError::Busy {
        path: real,
        attempts: MAX_ATTEMPTS,
    })
}

/// Whether `real` still holds `old`: its contents, then (the last thing before the rename,
/// so that the window for a client's write to slip in is one `stat` call) its identity and
/// times against those of what was read.
fn still_same(real: &Path, old: &[u8]) -> std::io::Result<bool> {
    use std::io::Read;
    let mut f = std::fs::File::open(real)?;
    let before = f.metadata()?;
    let mut now = Vec::with_capacity(old.len());
    f.read_to_end(&mut now)?;
    if now != old {
        return Ok(false);
    }
    let after = std::fs::metadata(real)?;
    Ok(same_file_state(&before, &after))
}

#[cfg(unix)]
fn same_file_state(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    (
        a.dev(),
        a.ino(),
        a.size(),
        a.mtime(),
        a.mtime_nsec(),
        a.ctime(),
        a.ctime_nsec(),
    ) == (
        b.dev(),
        b.ino(),
        b.size(),
        b.mtime(),
        b.mtime_nsec(),
        b.ctime(),
        b.ctime_nsec(),
    )
}

#[cfg(not(unix))]
fn same_file_state(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    a.len() == b.len() && a.modified().ok() == b.modified().ok()
}

/// Creates `path` (never over an existing file) readable and writable by its owner only
/// (0600) from its first moment: permissions are checked when a file is opened, so a file
/// created wider and narrowed later could be opened meanwhile and read through that
/// descriptor once written.
fn new_private(path: &Path) -> std::io::Result<std::fs::File> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    opts.open(path)
}

/// A new empty file at `tmp` with the mode of the file it will replace (`meta`'s) and, when
/// allowed, its owner, both set before anything is written: created 0600 ([`new_private`]),
/// then given that mode through its descriptor.
fn create_temp(tmp: &Path, meta: &std::fs::Metadata) -> std::io::Result<std::fs::File> {
    let f = new_private(tmp)?;
    f.set_permissions(meta.permissions())?;
    keep_owner(tmp, meta);
    Ok(f)
}

/// Writes `bytes` to a new file next to `real` with its mode (and owner, when allowed), both
/// set before the first byte is written ([`create_temp`]).
fn write_temp(real: &Path, bytes: &[u8], meta: &std::fs::Metadata) -> Result<PathBuf, ClientError> {
    let dir = real.parent().unwrap_or(Path::new("."));
    let name = real
        .file_name()
        .map_or_else(|| "config".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(
        ".{name}.warden-{}-{}.tmp",
        std::process::id(),
        TEMP_SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let fail = |e: std::io::Error, tmp: &Path| {
        let _ = std::fs::remove_file(tmp);
        ClientError::io(
            "write a temporary file in",
            dir,
            "check that the directory is writable and the disk is not full",
            e,
        )
    };
    let mut f = match create_temp(&tmp, meta) {
        Ok(f) => f,
        // Not made: nothing of ours to remove (`create_new` refused an existing file).
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(ClientError::io(
                "write a temporary file in",
                dir,
                "check that the directory is writable and the disk is not full",
                e,
            ));
        }
        Err(e) => return Err(fail(e, &tmp)),
    };
    f.write_all(bytes).map_err(|e| fail(e, &tmp))?;
    f.sync_all().map_err(|e| fail(e, &tmp))?;
    Ok(tmp)
}

#[cfg(unix)]
fn keep_owner(tmp: &Path, meta: &std::fs::Metadata) {
    use std::os::unix::fs::MetadataExt;
    if let Ok(mine) = std::fs::metadata(tmp)
        && (mine.uid() != meta.uid() || mine.gid() != meta.gid())
    {
        // Works when running as root (e.g. sudo); otherwise the file keeps our owner.
        let _ = std::os::unix::fs::chown(tmp, Some(meta.uid()), Some(meta.gid()));
    }
}

#[cfg(not(unix))]
fn keep_owner(_tmp: &Path, _meta: &std::fs::Metadata) {}

/// On Windows a rename over a file another process holds open fails for a moment.
fn rename_retrying(from: &Path, to: &Path) -> std::io::Result<()> {
    let mut last = None;
    for i in 0..5 {
        match std::fs::rename(from, to) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied && cfg!(windows) => {
                last = Some(e);
                std::thread::sleep(Duration::from_millis(50 * (i + 1)));
            }
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("rename failed")))
}

/// Creates `path` with `bytes` (mode 0600) unless a file is there: `Ok(false)` when one is
/// (there already, or appeared meanwhile, say the client's first save), which is left as it
/// is: the caller reads it and makes its edit through [`update_file`]. `commit` runs right
/// before the file appears.
pub(crate) fn create_file(
    path: &Path,
    state_dir: &Path,
    bytes: &[u8],
    commit: &mut CommitFn<'_>,
) -> Result<bool, ClientError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| {
        ClientError::io("create", dir, "check that the directory can be created", e)
    })?;
    let _ours =
        fsutil::lock(state_dir, path).map_err(|e| ClientError::lock_failed(state_dir, path, e))?;
    if path.symlink_metadata().is_ok() {
        return Ok(false);
    }
    let tmp = dir.join(format!(
        ".warden-new-{}-{}.tmp",
        std::process::id(),
        TEMP_SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let io = |e| ClientError::io("create", path, "check that the directory is writable", e);
    let written = (|| {
        let mut f = new_private(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()
    })();
    let placed = written.map_err(io).and_then(|()| {
        commit()?;
        #[cfg(test)]
        BEFORE_CREATE.with(|hook| {
            if let Some(hook) = hook.borrow_mut().as_mut() {
                hook(path);
            }
        });
        match place_new(&tmp, path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(io(e)),
        }
    });
    let _ = std::fs::remove_file(&tmp);
    if placed.as_ref().is_ok_and(|p| *p) {
        fsutil::sync_dir(path);
    }
    placed
}

/// Puts `tmp` at `path` unless something is there (`AlreadyExists`): never replaces. A
/// rename with `RENAME_NOREPLACE` on Linux; a hard link elsewhere, and where the filesystem
/// cannot do that rename (`tmp` is then removed by the caller).
fn place_new(tmp: &Path, path: &Path) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{CWD, RenameFlags, renameat_with};
        use rustix::io::Errno;
        match renameat_with(CWD, tmp, CWD, path, RenameFlags::NOREPLACE) {
            Ok(()) => return Ok(()),
            Err(e) if e == Errno::INVAL || e == Errno::NOSYS => {}
            Err(e) => return Err(e.into()),
        }
    }
    std::fs::hard_link(tmp, path)
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    fn mode(f: &std::fs::File) -> u32 {
        f.metadata().unwrap().permissions().mode() & 0o7777
    }

    /// The temp file of a private config is private before anything is in it (not the
    /// umask's 0644 until a `chmod` after the write).
    #[test]
    fn a_temp_file_is_private_before_anything_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("mcp.json");
        std::fs::write(&real, "{}").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
        let meta = std::fs::metadata(&real).unwrap();
        let f = create_temp(&dir.path().join("t"), &meta).unwrap();
        assert_eq!((mode(&f), f.metadata().unwrap().len()), (0o600, 0));
    }

    /// The temp file has the mode of the file it replaces before anything is in it.
    #[test]
    fn a_temp_file_has_its_final_mode_before_anything_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("settings.json");
        std::fs::write(&real, "{}").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
        let meta = std::fs::metadata(&real).unwrap();
        let f = create_temp(&dir.path().join("t"), &meta).unwrap();
        assert_eq!((mode(&f), f.metadata().unwrap().len()), (0o640, 0));
    }

    /// A new file is created 0600 whatever the umask would give.
    #[test]
    fn a_new_file_is_private_from_its_first_moment() {
        let dir = tempfile::tempdir().unwrap();
        let f = new_private(&dir.path().join("n")).unwrap();
        assert_eq!(mode(&f), 0o600);
    }
}
