//! The fake server's tools that differ per system: UNIX sockets, signals and stdin as a
//! pipe of the event loop on Unix; on Windows the same calls answer "not on Windows".

/// What only Unix has: its sockets, signals and stdin as a pipe of the event loop.
#[cfg(unix)]
mod unix {
    use std::io::{BufRead, Write};

    pub fn unix_socket(path: &str, send: Option<&str>) -> std::io::Result<String> {
        std::os::unix::net::UnixStream::connect(path).and_then(|s| talk(s, send))
    }

    #[cfg(target_os = "linux")]
    pub fn abstract_socket(name: &str) -> std::io::Result<String> {
        use std::os::linux::net::SocketAddrExt as _;
        std::os::unix::net::SocketAddr::from_abstract_name(name)
            .and_then(|a| std::os::unix::net::UnixStream::connect_addr(&a))
            .and_then(|s| talk(s, None))
    }

    #[cfg(not(target_os = "linux"))]
    pub fn abstract_socket(_: &str) -> std::io::Result<String> {
        Err(std::io::ErrorKind::Unsupported.into())
    }

    /// Sends `line` (if any) on a connected socket and answers its first line back, else
    /// `connected`.
    fn talk(stream: std::os::unix::net::UnixStream, line: Option<&str>) -> std::io::Result<String> {
        let Some(line) = line else {
            return Ok("connected".to_owned());
        };
        let mut writer = stream.try_clone()?;
        writer.write_all(format!("{line}\n").as_bytes())?;
        let mut answer = String::new();
        std::io::BufReader::new(stream).read_line(&mut answer)?;
        Ok(answer.trim_end().to_owned())
    }

    /// Elsewhere than Linux: no `/proc` to read them from.
    #[cfg(not(target_os = "linux"))]
    pub fn sockets() -> std::io::Result<String> {
        Err(std::io::ErrorKind::Unsupported.into())
    }

    /// The sockets among this process's descriptors, one line each: `FD unix peer=self|other`,
    /// `FD inet` (with ` listening` for a listener) or `FD DOMAIN` (Linux: `/proc`).
    #[cfg(target_os = "linux")]
    #[allow(unsafe_code)]
    pub fn sockets() -> std::io::Result<String> {
        let mut lines = Vec::new();
        for e in std::fs::read_dir("/proc/self/fd")?.flatten() {
            let Some(fd) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
                continue;
            };
            let Ok(target) = std::fs::read_link(e.path()) else {
                continue;
            };
            if !target.to_string_lossy().starts_with("socket:") {
                continue;
            }
            let opt = |name: libc::c_int| {
                let mut v: libc::c_int = 0;
                let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
                // SAFETY: getsockopt into a c_int of the length given.
                let r = unsafe {
                    libc::getsockopt(
                        fd,
                        libc::SOL_SOCKET,
                        name,
                        (&raw mut v).cast(),
                        &raw mut len,
                    )
                };
                (r == 0).then_some(v)
            };
            let domain = opt(libc::SO_DOMAIN).unwrap_or(-1);
            let line = if domain == libc::AF_UNIX {
                let mut cred = libc::ucred {
                    pid: 0,
                    uid: 0,
                    gid: 0,
                };
                let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
                // SAFETY: getsockopt into a ucred of the length given.
                unsafe {
                    libc::getsockopt(
                        fd,
                        libc::SOL_SOCKET,
                        libc::SO_PEERCRED,
                        (&raw mut cred).cast(),
                        &raw mut len,
                    );
                }
                let own = i32::try_from(std::process::id()).unwrap_or(-1);
                let peer = if cred.pid == own { "self" } else { "other" };
                format!("{fd} unix peer={peer}")
            } else if domain == libc::AF_INET || domain == libc::AF_INET6 {
                let listening = opt(libc::SO_ACCEPTCONN) == Some(1);
                format!("{fd} inet{}", if listening { " listening" } else { "" })
            } else {
                format!("{fd} {domain}")
            };
            lines.push(line);
        }
        Ok(lines.join("\n"))
    }

    /// What this process's descriptor `fd` is: a regular file's text (its first 4 KiB, from
    /// its start), else its kind; an error when it has no such descriptor.
    #[allow(unsafe_code)]
    pub fn descriptor(fd: i64) -> std::io::Result<String> {
        let fd = libc::c_int::try_from(fd).map_err(|_| std::io::ErrorKind::InvalidInput)?;
        // SAFETY: fstat into a zeroed stat of its own type (EBADF for a descriptor this
        // process does not have).
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::fstat(fd, &mut st) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let kind = match st.st_mode & libc::S_IFMT {
            libc::S_IFREG => {
                let mut buf = vec![0u8; 4096];
                // SAFETY: pread into a buffer of the length given.
                let n = unsafe { libc::pread(fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
                let n = usize::try_from(n).map_err(|_| std::io::Error::last_os_error())?;
                buf.truncate(n);
                return Ok(String::from_utf8_lossy(&buf).into_owned());
            }
            libc::S_IFSOCK => "socket",
            libc::S_IFIFO => "pipe",
            libc::S_IFCHR => "character device",
            libc::S_IFDIR => "folder",
            _ => "other",
        };
        Ok(kind.to_owned())
    }

    /// SIGTERM to `pid`.
    #[allow(unsafe_code)]
    pub fn signal(pid: i64) -> std::io::Result<String> {
        let pid = libc::pid_t::try_from(pid).map_err(|_| std::io::ErrorKind::InvalidInput)?;
        // SAFETY: a plain system call.
        if unsafe { libc::kill(pid, libc::SIGTERM) } == 0 {
            Ok("signalled".to_owned())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }

    /// SIGTERM is ignored while the handle lives.
    pub fn ignore_sigterm() -> std::io::Result<tokio::signal::unix::Signal> {
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
    }

    /// On SIGTERM: writes `sigterm` to `file` and exits 0.
    pub fn on_sigterm(file: String) {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("SIGTERM handler");
        tokio::spawn(async move {
            term.recv().await;
            let _ = std::fs::write(&file, "sigterm");
            std::process::exit(0);
        });
    }

    /// Stdin as a pipe the runtime reads, when it is one.
    pub fn stdin_pipe() -> Option<tokio::io::BufReader<tokio::net::unix::pipe::Receiver>> {
        let fd = std::os::fd::AsFd::as_fd(&std::io::stdin()).try_clone_to_owned();
        fd.ok()
            .and_then(|fd| tokio::net::unix::pipe::Receiver::from_owned_fd(fd).ok())
            .map(tokio::io::BufReader::new)
    }
}

/// Windows has none of Unix's sockets and signals: those tools answer an error, and the flags
/// that handle SIGTERM do nothing (a Job Object ends the server without a signal).
#[cfg(windows)]
mod win {
    fn unsupported() -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::Unsupported, "not on Windows")
    }

    pub fn unix_socket(_: &str, _: Option<&str>) -> std::io::Result<String> {
        Err(unsupported())
    }

    pub fn abstract_socket(_: &str) -> std::io::Result<String> {
        Err(unsupported())
    }

    pub fn sockets() -> std::io::Result<String> {
        Err(unsupported())
    }

    pub fn descriptor(_: i64) -> std::io::Result<String> {
        Err(unsupported())
    }

    pub fn signal(_: i64) -> std::io::Result<String> {
        Err(unsupported())
    }

    /// What Unix's handle stands for: there is no SIGTERM to ignore.
    pub struct NoSignal;

    pub fn ignore_sigterm() -> NoSignal {
        NoSignal
    }

    pub fn on_sigterm(_: String) {}
}

#[cfg(unix)]
pub use unix::*;
#[cfg(windows)]
pub use win::*;
