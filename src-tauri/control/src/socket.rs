//! Where the control socket lives and how it is kept private to the user.
//!
//! [`socket_path`] takes, in order: `$WARDEN_SOCKET`; `/run/user/<uid>/warden/control.sock` when
//! that directory exists and belongs to the real uid; `$XDG_RUNTIME_DIR/warden/control.sock` when
//! the variable is absolute (these two on Linux only: [`warden_config::paths::runtime_dir`]); else
//! `<temp dir>/warden-<uid>/control.sock`. `/run/user/<uid>` comes before `$XDG_RUNTIME_DIR`
//! because an MCP SDK client starts its servers with a bare environment (only `HOME`, `LOGNAME`,
//! `PATH`, `SHELL`, `TERM` and `USER`): a bridge started so must find the same socket as the
//! supervisor, started with the user's whole environment.
//!
//! The socket's directory is 0700 and the socket 0600; [`accept`] and [`connect`] check the peer's
//! uid. A [`Peer`] is judged by its process: on Linux 6.5+ through the pidfd the kernel gives for
//! it (`SO_PEERPIDFD`), so a process that got the pid after the peer exited cannot pass for it;
//! elsewhere by its pid alone. [`Peer::origin`] compares the peer's user and pid namespaces with
//! the supervisor's (`/proc/<pid>/ns`): a peer without a pid, or whose `/proc` entry cannot be
//! read, counts as foreign, and a foreign peer may watch but not act (`W-CONTROL-FOREIGN`). Without
//! namespaces (macOS, the BSDs) every peer of the user's uid is the user's.

use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use tokio::net::{UnixListener, UnixStream};

/// The channel's types and calls, the same names on every platform (Windows: `pipe.rs`).
pub type Listener = UnixListener;
pub type Stream = UnixStream;
pub type ReadHalf = tokio::net::unix::OwnedReadHalf;
pub type WriteHalf = tokio::net::unix::OwnedWriteHalf;

/// The connection's reading and writing halves.
pub fn split(stream: Stream) -> (ReadHalf, WriteHalf) {
    stream.into_split()
}

/// Whether a supervisor's socket is there (it may still be a stale one).
pub fn exists(path: &Path) -> bool {
    path.exists()
}

/// The peer's pid, as the kernel gives it (`SO_PEERCRED`, in our pid namespace).
pub fn peer_pid(stream: &Stream) -> Option<u32> {
    stream
        .peer_cred()
        .ok()
        .and_then(|c| c.pid())
        .and_then(|p| u32::try_from(p).ok())
}

/// A peer of the control socket as the kernel saw it connect: its pid (in our pid namespace)
/// and, on Linux 6.5+ (`SO_PEERPIDFD`), a pidfd of that very process. A pid may be another
/// process's by the time it is looked at (the peer exited and its number was reused); a pidfd
/// cannot. Where the kernel gives no pidfd (Linux before 6.5, macOS) the peer is judged by its
/// pid alone, which that race can fool.
#[derive(Debug, Clone)]
pub struct Peer {
    pid: Option<u32>,
    #[cfg(target_os = "linux")]
    pidfd: Option<std::sync::Arc<std::os::fd::OwnedFd>>,
}

impl Peer {
    pub fn of(stream: &Stream) -> Peer {
        Peer {
            pid: peer_pid(stream),
            #[cfg(target_os = "linux")]
            pidfd: pidfd::of_peer(stream).map(std::sync::Arc::new),
        }
    }

    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Whether the peer lives in the supervisor's namespaces ([`origin_of_pid`]). With a
    /// pidfd, the process must not have exited by the time its `/proc` entry was read: then
    /// that entry was its own, not that of a process that got its pid after it.
    pub fn origin(&self) -> PeerOrigin {
        let origin = origin_of_pid(self.pid.and_then(|p| i32::try_from(p).ok()));
        #[cfg(target_os = "linux")]
        if origin == PeerOrigin::Own
            && let Some(fd) = &self.pidfd
            && pidfd::exited(fd)
        {
            return PeerOrigin::Foreign("it exited while it was looked at".to_owned());
        }
        origin
    }

    /// Whether the peer still runs, by its pidfd; `None` without one (judge by its pid).
    pub fn alive(&self) -> Option<bool> {
        #[cfg(target_os = "linux")]
        return self.pidfd.as_deref().map(|fd| !pidfd::exited(fd));
        #[cfg(not(target_os = "linux"))]
        None
    }
}

/// The peer's pidfd (`SO_PEERPIDFD`) and what it says.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
mod pidfd {
    use std::os::fd::{AsRawFd, FromRawFd as _, OwnedFd};

    /// `SO_PEERPIDFD` (Linux 6.5), as `asm-generic/socket.h` has it (SPARC's own); the libc
    /// crate does not export it.
    #[cfg(not(any(target_arch = "sparc", target_arch = "sparc64")))]
    const SO_PEERPIDFD: libc::c_int = 77;
    #[cfg(any(target_arch = "sparc", target_arch = "sparc64"))]
    const SO_PEERPIDFD: libc::c_int = 0x56;

    /// A pidfd of the process that connected `stream` (close-on-exec, as the kernel makes
    /// every pidfd); `None` where the kernel has no `SO_PEERPIDFD` (ENOPROTOOPT).
    pub fn of_peer(stream: &impl AsRawFd) -> Option<OwnedFd> {
        let mut fd: libc::c_int = -1;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: getsockopt into a c_int of the length given.
        let r = unsafe {
            libc::getsockopt(
                stream.as_raw_fd(),
                libc::SOL_SOCKET,
                SO_PEERPIDFD,
                (&raw mut fd).cast(),
                &raw mut len,
            )
        };
        // SAFETY: on success the kernel installed a new descriptor, ours alone.
        (r == 0 && fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
    }

    /// Whether the process has exited (its pidfd turns readable then, zombie or reaped; an
    /// error counts as exited).
    pub fn exited(fd: &OwnedFd) -> bool {
        use rustix::event::{PollFd, PollFlags, Timespec, poll};
        let now = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        !matches!(
            poll(&mut [PollFd::new(fd, PollFlags::IN)], Some(&now)),
            Ok(0)
        )
    }
}

/// `$WARDEN_SOCKET`, else `<runtime dir>/warden/control.sock` (the runtime dir is
/// `/run/user/<uid>` when it is the user's, else `$XDG_RUNTIME_DIR` when absolute, on Linux
/// only: [`warden_config::paths::runtime_dir`]), else `<temp dir>/warden-<uid>/control.sock`.
pub fn socket_path() -> PathBuf {
    if let Some(p) = std::env::var_os("WARDEN_SOCKET").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    match warden_config::paths::runtime_dir() {
        Some(dir) => dir.join("warden").join("control.sock"),
        None => std::env::temp_dir()
            .join(format!("warden-{}", my_uid()))
            .join("control.sock"),
    }
}

/// The real uid of this process.
pub fn my_uid() -> u32 {
    warden_config::paths::real_uid()
}

/// Creates `dir` 0700 if missing; else it must be ours and closed to other users (an error
/// that says what to do otherwise).
pub fn private_dir(dir: &Path) -> io::Result<()> {
    match std::fs::metadata(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)?;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        }
        Err(e) => Err(e),
        Ok(meta) if meta.uid() != my_uid() => Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} belongs to another user; set WARDEN_SOCKET to a path in a directory of yours",
                dir.display()
            ),
        )),
        Ok(meta) if meta.mode() & 0o077 != 0 => Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} is open to other users (mode {:o}); run `chmod 700 {}` or set WARDEN_SOCKET elsewhere",
                dir.display(),
                meta.mode() & 0o777,
                dir.display()
            ),
        )),
        Ok(_) => Ok(()),
    }
}

/// Binds the socket: the directory is created 0700 (or must already be private and ours), a
/// stale socket left by a dead supervisor is replaced, a live one is an error, and the socket
/// is made 0600.
pub async fn bind(path: &Path) -> io::Result<UnixListener> {
    let dir = path.parent().unwrap_or(Path::new("."));
    private_dir(dir)?;
    if path.exists() {
        if UnixStream::connect(path).await.is_ok() {
            return Err(io::Error::new(
                io::ErrorKind::AddrInUse,
                format!(
                    "a supervisor is already running on {} (the tray app or `warden daemon`)",
                    path.display()
                ),
            ));
        }
        std::fs::remove_file(path)?;
    }
    let listener = UnixListener::bind(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(listener)
}

/// Accepts the next connection of this user; connections of other users are refused.
pub async fn accept(listener: &UnixListener) -> io::Result<UnixStream> {
    loop {
        let (stream, _) = listener.accept().await?;
        match stream.peer_cred() {
            Ok(cred) if cred.uid() == my_uid() => return Ok(stream),
            Ok(cred) => tracing::warn!(
                "control socket: refused a connection from uid {}",
                cred.uid()
            ),
            Err(e) => {
                tracing::warn!("control socket: refused a connection whose peer is unknown: {e}")
            }
        }
    }
}

/// Whether a peer of the control socket lives in the supervisor's own user and pid
/// namespaces. A program in others (a server in Warden's bubblewrap sandbox, a container)
/// has the user's uid as the kernel maps it, but is not the user's own program: the
/// supervisor lets it watch, not act (`W-CONTROL-FOREIGN`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PeerOrigin {
    Own,
    /// Why it counts as foreign, for messages: "it is in another pid namespace" …
    Foreign(String),
}

/// The namespaces compared, as `/proc/<pid>/ns/<name>` links.
#[cfg(target_os = "linux")]
const NAMESPACES: [&str; 2] = ["user", "pid"];

/// The origin of the peer of `stream` ([`Peer::origin`]). No pid (0, or none), or a `/proc`
/// entry that cannot be read, counts as foreign.
pub fn peer_origin(stream: &UnixStream) -> PeerOrigin {
    Peer::of(stream).origin()
}

/// [`peer_origin`] for a pid.
#[cfg(target_os = "linux")]
pub fn origin_of_pid(pid: Option<i32>) -> PeerOrigin {
    let links =
        |proc_dir: &Path| NAMESPACES.map(|ns| std::fs::read_link(proc_dir.join("ns").join(ns)));
    let peer = match pid.filter(|&p| p > 0) {
        Some(pid) => links(&Path::new("/proc").join(pid.to_string())),
        None => return PeerOrigin::Foreign("the kernel gives no pid for it".to_owned()),
    };
    compare_namespaces(links(Path::new("/proc/self")), peer)
}

/// Without namespaces (macOS, the BSDs) every peer of the user's uid is the user's.
#[cfg(not(target_os = "linux"))]
pub fn origin_of_pid(_pid: Option<i32>) -> PeerOrigin {
    PeerOrigin::Own
}

/// Compares our namespace links ([`NAMESPACES`]) with the peer's; any that cannot be read
/// makes the peer foreign.
#[cfg(target_os = "linux")]
fn compare_namespaces(own: [io::Result<PathBuf>; 2], peer: [io::Result<PathBuf>; 2]) -> PeerOrigin {
    for ((name, own), peer) in NAMESPACES.iter().zip(own).zip(peer) {
        match (own, peer) {
            (Ok(own), Ok(peer)) if own == peer => {}
            (Ok(_), Ok(_)) => {
                return PeerOrigin::Foreign(format!("it is in another {name} namespace"));
            }
            (Err(e), _) => {
                return PeerOrigin::Foreign(format!(
                    "the supervisor cannot read its own {name} namespace ({e})"
                ));
            }
            (_, Err(e)) => {
                return PeerOrigin::Foreign(format!("its {name} namespace cannot be read ({e})"));
            }
        }
    }
    PeerOrigin::Own
}

/// Connects to the supervisor if one runs; the socket must be ours and private.
pub async fn connect(path: &Path) -> io::Result<UnixStream> {
    let meta = std::fs::metadata(path)?;
    if meta.uid() != my_uid() || meta.mode() & 0o077 != 0 {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} is not a private socket of this user; not connecting",
                path.display()
            ),
        ));
    }
    let stream = UnixStream::connect(path).await?;
    match stream.peer_cred() {
        Ok(cred) if cred.uid() == my_uid() => Ok(stream),
        _ => Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "the supervisor runs as another user",
        )),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// The other end of a socket pair is this process: in our namespaces.
    #[tokio::test]
    async fn a_peer_in_our_namespaces_is_our_own() {
        let (a, _b) = UnixStream::pair().unwrap();
        assert_eq!(peer_origin(&a), PeerOrigin::Own);
    }

    /// A peer is judged by its process, not by its pid, which another process may have once
    /// the peer has exited (Linux 6.5+: `SO_PEERPIDFD`).
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_peer_is_its_process_not_its_pid() {
        let Some(python) = warden_config::testing::require_tool("python3") else {
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        let listener = UnixListener::bind(&path).unwrap();
        // Connects, then waits for its stdin to close.
        let mut child = tokio::process::Command::new(python)
            .arg("-c")
            .arg("import socket, sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1]); sys.stdin.read()")
            .arg(&path)
            .stdin(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let (stream, _) = listener.accept().await.unwrap();
        let peer = Peer::of(&stream);
        if peer.pidfd.is_none() {
            warden_config::testing::cannot_run("SO_PEERPIDFD (Linux 6.5) is not available");
            return;
        }
        assert_eq!(peer.pid(), child.id());
        let running = (peer.alive(), peer.origin());
        drop(child.stdin.take());
        child.wait().await.unwrap();
        // The peer gone, its pid given to a process of the user's (here this one's, as a
        // reused pid would be): judged by the pid alone, that process would pass for it.
        let reused = Peer {
            pid: Some(std::process::id()),
            pidfd: peer.pidfd.clone(),
        };
        assert_eq!(
            origin_of_pid(i32::try_from(std::process::id()).ok()),
            PeerOrigin::Own
        );
        assert_eq!(
            [running, (reused.alive(), reused.origin())],
            [
                (Some(true), PeerOrigin::Own),
                (
                    Some(false),
                    PeerOrigin::Foreign("it exited while it was looked at".to_owned())
                )
            ]
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_peer_without_a_pid_is_foreign() {
        assert!(matches!(origin_of_pid(Some(0)), PeerOrigin::Foreign(_)));
    }

    /// A pid whose /proc entry is gone (or hidden) cannot be told apart from a foreign one.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_peer_whose_proc_entry_cannot_be_read_is_foreign() {
        // Above the kernel's pid_max limit (2^22), so no process has it.
        let origin = origin_of_pid(Some(i32::MAX));
        assert!(
            matches!(&origin, PeerOrigin::Foreign(why) if why.contains("cannot be read")),
            "{origin:?}"
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn another_pid_namespace_is_foreign() {
        let link = |s: &str| Ok(PathBuf::from(s));
        let origin = compare_namespaces(
            [link("user:[1]"), link("pid:[2]")],
            [link("user:[1]"), link("pid:[3]")],
        );
        assert_eq!(
            origin,
            PeerOrigin::Foreign("it is in another pid namespace".to_owned())
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn another_user_namespace_is_foreign() {
        let link = |s: &str| Ok(PathBuf::from(s));
        let origin = compare_namespaces(
            [link("user:[1]"), link("pid:[2]")],
            [link("user:[4]"), link("pid:[2]")],
        );
        assert_eq!(
            origin,
            PeerOrigin::Foreign("it is in another user namespace".to_owned())
        );
    }

    #[tokio::test]
    async fn bind_makes_a_private_socket_and_refuses_open_directories() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w").join("control.sock");
        let listener = bind(&path).await.unwrap();
        assert_eq!(
            std::fs::metadata(path.parent().unwrap()).unwrap().mode() & 0o777,
            0o700
        );
        assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
        let accepted = tokio::spawn(async move { accept(&listener).await.map(|_| ()) });
        connect(&path).await.unwrap();
        accepted.await.unwrap().unwrap();
        // A second supervisor is refused while the first one's socket answers… (the first
        // listener is gone now, so the stale socket is replaced). A child another test of this
        // process is starting holds copies of every descriptor from its fork to its exec, the
        // listener's too, so the socket may answer for that moment: bind again until it is
        // gone (a bounded wait on that exec, not on time).
        let mut tries = 0;
        let rebound = loop {
            match bind(&path).await {
                Err(e) if e.kind() == io::ErrorKind::AddrInUse && tries < 200 => {
                    tries += 1;
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                }
                other => break other,
            }
        };
        rebound.unwrap();

        let open = dir.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
        let err = bind(&open.join("control.sock"))
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("chmod 700"), "{err}");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(
            connect(&path).await.is_err(),
            "a socket open to others is not trusted"
        );
    }
}
