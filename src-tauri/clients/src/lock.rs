//! Clients' own locks. Only Cline has one: a `<file>.lock` directory that is published
//! populated (a staging directory holding an `owner.<token>` file is renamed into place),
//! considered stale after 10 s, and released by deleting the owner file and then the
//! directory. Warden follows the same protocol so its writes exclude Cline's.

use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::model::ClientError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum LockKind {
    #[default]
    None,
    /// Cline's `<file>.lock` directory.
    ClineDir,
}

/// Cline treats a lock directory older than this as abandoned.
const STALE: Duration = Duration::from_secs(10);
const POLL: Duration = Duration::from_millis(25);
/// Longer than `STALE`, so a lock left by a dead process is always reclaimed in time.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(15);

/// A held lock; released on drop.
#[derive(Debug)]
pub(crate) struct Held {
    dir: Option<PathBuf>,
    owner: Option<PathBuf>,
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Some(owner) = &self.owner {
            let _ = std::fs::remove_file(owner);
        }
        if let Some(dir) = &self.dir {
            // Fails (and leaves it) if someone else's owner file is inside: not ours.
            let _ = std::fs::remove_dir(dir);
        }
    }
}

pub(crate) fn token() -> String {
    let millis = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(millis);
    h.write_u32(std::process::id());
    format!("{}.{millis}.{:016x}", std::process::id(), h.finish())
}

pub(crate) fn lock_dir(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".lock");
    PathBuf::from(s)
}

/// Takes the lock of `kind` for the file at `path` (the path the client uses).
pub(crate) fn acquire(kind: LockKind, path: &Path, timeout: Duration) -> Result<Held, ClientError> {
    match kind {
        LockKind::None => Ok(Held {
            dir: None,
            owner: None,
        }),
        LockKind::ClineDir => acquire_dir(path, timeout),
    }
}

fn acquire_dir(path: &Path, timeout: Duration) -> Result<Held, ClientError> {
    let dir = lock_dir(path);
    let token = token();
    let started = std::time::Instant::now();
    loop {
        match try_publish(&dir, &token) {
            Ok(Some(owner)) => {
                return Ok(Held {
                    dir: Some(dir),
                    owner: Some(owner),
                });
            }
            Ok(None) => {}
            Err(e) => {
                return Err(ClientError::io(
                    "take the lock",
                    &dir,
                    "check that the directory of the config file is writable",
                    e,
                ));
            }
        }
        reclaim_stale(&dir, &token);
        if started.elapsed() >= timeout {
            return Err(ClientError::LockTimeout {
                path: path.to_owned(),
                lock: dir,
                secs: timeout.as_secs(),
            });
        }
        std::thread::sleep(POLL);
    }
}

/// `Ok(Some(owner file))` when published, `Ok(None)` when someone else holds it.
fn try_publish(dir: &Path, token: &str) -> std::io::Result<Option<PathBuf>> {
    let mut staging = dir.as_os_str().to_owned();
    staging.push(format!(".tmp.{token}"));
    let staging = PathBuf::from(staging);
    let _ = std::fs::remove_dir_all(&staging);
    create_private_dir(&staging)?;
    let owner_name = format!("owner.{token}");
    if let Err(e) = std::fs::write(staging.join(&owner_name), token) {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(e);
    }
    match std::fs::rename(&staging, dir) {
        Ok(()) => Ok(Some(dir.join(owner_name))),
        Err(e) => {
            let _ = std::fs::remove_dir_all(&staging);
            // Renaming onto an existing, populated directory (or a leftover `.lock` file)
            // fails: that is contention, not an error.
            let contention = matches!(
                e.kind(),
                std::io::ErrorKind::AlreadyExists | std::io::ErrorKind::DirectoryNotEmpty
            );
            if contention || dir.symlink_metadata().is_ok() {
                Ok(None)
            } else {
                Err(e)
            }
        }
    }
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().mode(0o700).create(dir)
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir(dir)
}

fn reclaim_stale(dir: &Path, token: &str) {
    let Ok(meta) = dir.symlink_metadata() else {
        return;
    };
    let age = meta
        .modified()
        .ok()
        .and_then(|m| m.elapsed().ok())
        .unwrap_or_default();
    if age < STALE {
        return;
    }
    tracing::warn!(
        "removing the stale lock {} (age {} s)",
        dir.display(),
        age.as_secs()
    );
    let mut aside = dir.as_os_str().to_owned();
    aside.push(format!(".stale.{token}"));
    let aside = PathBuf::from(aside);
    if std::fs::rename(dir, &aside).is_ok() {
        if aside.is_dir() {
            let _ = std::fs::remove_dir_all(&aside);
        } else {
            let _ = std::fs::remove_file(&aside);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn excludes_and_releases() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("cline_mcp_settings.json");
        let held = acquire(LockKind::ClineDir, &file, TIMEOUT).unwrap();
        let lock = lock_dir(&file);
        assert!(lock.is_dir());
        assert_eq!(std::fs::read_dir(&lock).unwrap().count(), 1);
        let err = acquire(LockKind::ClineDir, &file, Duration::from_millis(100)).unwrap_err();
        assert!(matches!(err, ClientError::LockTimeout { .. }), "{err}");
        drop(held);
        assert!(!lock.exists());
        drop(acquire(LockKind::ClineDir, &file, TIMEOUT).unwrap());
    }
}
