//! One host per socket: the lock a host holds for its life, on each system.
//!
//! On Unix the lock is `<socket>.tray.lock`, beside the socket in its private directory (checked as
//! the socket's is, 0700 and the user's, before the lock is taken), held with `flock`. It is opened
//! without following links (`O_NOFOLLOW`), so a link planted in its place is refused, and
//! close-on-exec, so the window's process, which the host starts, does not inherit it. A host that
//! finds the lock held tries again every 50 ms for up to [`LOCK_WAIT`] (5 s; a quitting host exits
//! within 3 s), then gives up: another host serves.
//!
//! On Windows the lock is the same file opened without sharing, which no other process can open
//! while it is held; for a named pipe (`\\.\pipe\...`) it is `<pipe name>.tray.lock` in Warden's
//! state folder. On either system the lock goes when the process ends, however it ends.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a host waits for the lock another host holds (a quitting one exits within 3 s).
const LOCK_WAIT: Duration = Duration::from_secs(5);

/// The lock one host per socket holds for its life (`<socket>.tray.lock`, beside the socket
/// in its private directory; the name earlier versions' tray used, so that one of them and
/// this host never serve together): `None` when another host still holds it after
/// [`LOCK_WAIT`] (one that is quitting lets go sooner; `waiting` is called each time it is
/// still held). The kernel drops it when the process ends, however it ends.
#[cfg(unix)]
pub(super) fn one_host(
    socket: &Path,
    mut waiting: impl FnMut(),
) -> Result<Option<std::fs::File>, String> {
    use rustix::fs::{Mode, OFlags};
    let mut path = socket.as_os_str().to_owned();
    path.push(".tray.lock");
    let path = PathBuf::from(path);
    // The socket's own rule (`bind`'s), checked before the lock is taken: another user must
    // not be able to hold the lock, or plant a link in its place, and so keep this host from
    // starting.
    let dir = path.parent().unwrap_or(Path::new("."));
    warden_control::socket::private_dir(dir).map_err(|e| e.to_string())?;
    let flags = OFlags::CREATE | OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let file = rustix::fs::open(&path, flags, Mode::from_raw_mode(0o600))
        .map(std::fs::File::from)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let deadline = Instant::now() + LOCK_WAIT;
    loop {
        match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return Ok(Some(file)),
            Err(rustix::io::Errno::WOULDBLOCK) if Instant::now() < deadline => {
                waiting();
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(rustix::io::Errno::WOULDBLOCK) => return Ok(None),
            Err(e) => return Err(format!("cannot lock {}: {e}", path.display())),
        }
    }
}

/// [`one_host`] on Windows: the lock is the file opened without sharing, which no other
/// process can open while this one holds it (the system closes it when the process ends,
/// however it ends). Beside the socket when the socket is a path; for the named pipe
/// (`\\.\pipe\...`), in Warden's state folder.
#[cfg(windows)]
pub(super) fn one_host(
    socket: &Path,
    mut waiting: impl FnMut(),
) -> Result<Option<std::fs::File>, String> {
    use std::os::windows::fs::OpenOptionsExt as _;
    /// `ERROR_SHARING_VIOLATION`: another process has the file open.
    const HELD: i32 = 32;
    let text = socket.to_string_lossy();
    let path = match text.strip_prefix(r"\\.\pipe\") {
        Some(pipe) => warden_config::paths::state_dir().join(format!("{pipe}.tray.lock")),
        None => PathBuf::from(format!("{text}.tray.lock")),
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    warden_control::socket::private_dir(dir).map_err(|e| e.to_string())?;
    let deadline = Instant::now() + LOCK_WAIT;
    loop {
        let opened = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .share_mode(0)
            .open(&path);
        match opened {
            Ok(file) => return Ok(Some(file)),
            Err(e) if e.raw_os_error() == Some(HELD) && Instant::now() < deadline => {
                waiting();
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) if e.raw_os_error() == Some(HELD) => return Ok(None),
            Err(e) => return Err(format!("cannot open {}: {e}", path.display())),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    #[cfg(unix)]
    use std::os::unix::fs::PermissionsExt as _;

    /// The lock is taken only in a directory the socket could be bound in: one other users
    /// can write to could hold a host back, so it is refused, saying what to do.
    #[cfg(unix)]
    #[test]
    fn the_lock_is_refused_in_a_directory_open_to_others() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = one_host(&dir.path().join("control.sock"), || {}).unwrap_err();
        assert!(e.contains("chmod 700"), "{e}");
    }

    /// A link planted where the lock goes is not followed.
    #[cfg(unix)]
    #[test]
    fn a_link_in_place_of_the_lock_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::os::unix::fs::symlink(&elsewhere, dir.path().join("control.sock.tray.lock")).unwrap();
        let e = one_host(&dir.path().join("control.sock"), || {}).unwrap_err();
        assert!(e.contains("cannot open") && !elsewhere.exists(), "{e}");
    }

    /// A host started while another quits waits for its lock instead of giving up (and the
    /// window for its supervisor).
    #[test]
    fn a_lock_let_go_within_the_wait_is_taken() {
        let dir = tempfile::tempdir().unwrap();
        #[cfg(unix)]
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let socket = dir.path().join("control.sock");
        let quitting = one_host(&socket, || {}).unwrap().unwrap();
        let (waiting, waits) = std::sync::mpsc::channel();
        let next = std::thread::spawn({
            let socket = socket.clone();
            move || {
                one_host(&socket, || {
                    let _ = waiting.send(());
                })
                .unwrap()
            }
        });
        // Let go only once the other host has found the lock held.
        waits.recv().unwrap();
        drop(quitting);
        assert!(next.join().unwrap().is_some());
    }
}
