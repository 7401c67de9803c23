//! The control channel on Windows: a named pipe, `\\.\pipe\warden-<user>`, with the same API
//! as the Unix socket's side (`socket.rs`) and the same protocol.
//!
//! Private to the user: the pipe's only access rule (its DACL) grants the user's own SID, so
//! the system refuses other users' connections; remote clients are refused
//! (`PIPE_REJECT_REMOTE_CLIENTS`); the first instance is created with
//! `FILE_FLAG_FIRST_PIPE_INSTANCE`, so a second supervisor (or another user's squatter) cannot
//! share the name, and a client checks that the pipe it opened belongs to its user before it
//! says a word. Windows has no pid or user namespaces: every peer of the user is its own.
#![allow(unsafe_code)]

use std::io;
use std::os::windows::io::{AsRawHandle, RawHandle};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::windows::named_pipe::{
    ClientOptions, NamedPipeClient, NamedPipeServer, PipeMode, ServerOptions,
};

const PIPE_PREFIX: &str = r"\\.\pipe\";

/// `$WARDEN_SOCKET`, else `\\.\pipe\warden-<user>`. A `$WARDEN_SOCKET` that is a file path
/// (as the tests and the Unix docs give it) names a pipe made from that path ([`pipe_name`]).
pub fn socket_path() -> PathBuf {
    if let Some(p) = std::env::var_os("WARDEN_SOCKET").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let user = std::env::var("USERNAME").unwrap_or_default();
    PathBuf::from(format!("{PIPE_PREFIX}warden-{}", sanitized(&user)))
}

/// The pipe's name for `path`: itself when it is one (`\\.\pipe\…`), else one derived from
/// the path, so that two paths name two pipes.
pub fn pipe_name(path: &Path) -> String {
    let text = path.to_string_lossy();
    if text.len() > PIPE_PREFIX.len() && text[..PIPE_PREFIX.len()].eq_ignore_ascii_case(PIPE_PREFIX)
    {
        return text.into_owned();
    }
    let mut name = format!("{PIPE_PREFIX}warden-{}", sanitized(&text));
    // A pipe's name is at most 256 characters.
    name.truncate(250);
    name
}

fn sanitized(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Creates `dir` if missing. Windows keeps a user's folders private by their inherited ACL
/// (under the profile or `%LOCALAPPDATA%`); the pipe itself needs no folder.
pub fn private_dir(dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(dir)
}

/// Whether a peer is the user's own program: always, on Windows (no namespaces; the pipe's
/// DACL already refused other users).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PeerOrigin {
    Own,
    /// Why it counts as foreign (never made on Windows).
    Foreign(String),
}

pub fn peer_origin(_: &Stream) -> PeerOrigin {
    PeerOrigin::Own
}

/// A peer of the pipe as the system gives it: its pid (`socket.rs`'s `Peer`, which holds a
/// pidfd on Linux; here the peer is judged by its pid).
#[derive(Debug, Clone)]
pub struct Peer {
    pid: Option<u32>,
}

impl Peer {
    pub fn of(stream: &Stream) -> Peer {
        Peer {
            pid: peer_pid(stream),
        }
    }

    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    pub fn origin(&self) -> PeerOrigin {
        PeerOrigin::Own
    }

    /// `None`: judged by its pid.
    pub fn alive(&self) -> Option<bool> {
        None
    }
}

pub fn origin_of_pid(_pid: Option<i32>) -> PeerOrigin {
    PeerOrigin::Own
}

/// Whether a supervisor's pipe is there, without connecting to it (a busy one is there).
pub fn exists(path: &Path) -> bool {
    let name: Vec<u16> = pipe_name(path).encode_utf16().chain([0]).collect();
    // SAFETY: a NUL-terminated name; waits at most 1 ms.
    if unsafe { sys::WaitNamedPipeW(name.as_ptr(), 1) } != 0 {
        return true;
    }
    io::Error::last_os_error().raw_os_error() == Some(sys::ERROR_SEM_TIMEOUT as i32)
}

/// One end of a connection: the supervisor's instance of the pipe, or a client's handle.
#[derive(Debug)]
pub enum Stream {
    Server(NamedPipeServer),
    Client(NamedPipeClient),
}

pub type ReadHalf = tokio::io::ReadHalf<Stream>;
pub type WriteHalf = tokio::io::WriteHalf<Stream>;

/// The connection's reading and writing halves.
pub fn split(stream: Stream) -> (ReadHalf, WriteHalf) {
    tokio::io::split(stream)
}

/// The pid of the other end, as the system gives it.
pub fn peer_pid(stream: &Stream) -> Option<u32> {
    let mut pid = 0u32;
    // SAFETY: a valid pipe handle, and `pid` is a valid out pointer.
    let ok = unsafe {
        match stream {
            Stream::Server(s) => {
                sys::GetNamedPipeClientProcessId(s.as_raw_handle() as sys::HANDLE, &mut pid)
            }
            Stream::Client(c) => {
                sys::GetNamedPipeServerProcessId(c.as_raw_handle() as sys::HANDLE, &mut pid)
            }
        }
    };
    (ok != 0 && pid != 0).then_some(pid)
}

macro_rules! either {
    ($self:ident, $s:ident => $e:expr) => {
        match $self.get_mut() {
            Stream::Server($s) => $e,
            Stream::Client($s) => $e,
        }
    };
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        either!(self, s => Pin::new(s).poll_read(cx, buf))
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        either!(self, s => Pin::new(s).poll_write(cx, buf))
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        either!(self, s => Pin::new(s).poll_flush(cx))
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        either!(self, s => Pin::new(s).poll_shutdown(cx))
    }
}

/// The supervisor's pipe: the instance the next client will connect to.
pub struct Listener {
    name: String,
    next: tokio::sync::Mutex<NamedPipeServer>,
}

fn create(name: &str, first: bool) -> io::Result<NamedPipeServer> {
    let mut options = ServerOptions::new();
    options
        .first_pipe_instance(first)
        .reject_remote_clients(true)
        .pipe_mode(PipeMode::Byte);
    let descriptor = sys::OwnDescriptor::new()?;
    let mut attributes = descriptor.attributes();
    // SAFETY: `attributes` and the descriptor it points to live across the call.
    unsafe {
        options.create_with_security_attributes_raw(
            name,
            (&raw mut attributes).cast::<std::ffi::c_void>(),
        )
    }
}

/// Creates the pipe, private to the user. A pipe of that name that exists already (a running
/// supervisor, or anyone else's) is an error: its first instance is not ours.
pub async fn bind(path: &Path) -> io::Result<Listener> {
    let name = pipe_name(path);
    let first = create(&name, true).map_err(|e| {
        if e.kind() == io::ErrorKind::PermissionDenied
            || e.raw_os_error() == Some(sys::ERROR_ACCESS_DENIED as i32)
            || e.raw_os_error() == Some(sys::ERROR_PIPE_BUSY as i32)
        {
            io::Error::new(
                io::ErrorKind::AddrInUse,
                format!(
                    "a supervisor is already running on {name} (the tray app or `warden daemon`)"
                ),
            )
        } else {
            e
        }
    })?;
    Ok(Listener {
        name,
        next: tokio::sync::Mutex::new(first),
    })
}

/// Accepts the next connection (only the user's reach it: the pipe's DACL) and makes the
/// instance the one after will connect to.
pub async fn accept(listener: &Listener) -> io::Result<Stream> {
    let mut next = listener.next.lock().await;
    let connected = next.connect().await;
    let fresh = create(&listener.name, false)?;
    let used = std::mem::replace(&mut *next, fresh);
    connected?;
    Ok(Stream::Server(used))
}

/// Connects to the supervisor if one runs; the pipe must belong to this user.
pub async fn connect(path: &Path) -> io::Result<Stream> {
    let name = pipe_name(path);
    let deadline = Instant::now() + Duration::from_secs(2);
    let client = loop {
        match ClientOptions::new().open(&name) {
            Ok(client) => break client,
            // Every instance is taken for a moment (the supervisor makes the next one).
            Err(e)
                if e.raw_os_error() == Some(sys::ERROR_PIPE_BUSY as i32)
                    && Instant::now() < deadline =>
            {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Err(e) => return Err(e),
        }
    };
    if !sys::owned_by_me(client.as_raw_handle())? {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{name} belongs to another user; not connecting"),
        ));
    }
    Ok(Stream::Client(client))
}

/// The few Win32 calls the pipe's privacy needs.
mod sys {
    use std::io;

    use super::RawHandle;
    use windows_sys::Win32::Foundation::CloseHandle;
    pub use windows_sys::Win32::Foundation::ERROR_SEM_TIMEOUT;
    pub use windows_sys::Win32::Foundation::{
        ERROR_ACCESS_DENIED, ERROR_PIPE_BUSY, HANDLE, LocalFree,
    };
    use windows_sys::Win32::Security::Authorization::{
        ConvertSidToStringSidW, ConvertStringSecurityDescriptorToSecurityDescriptorW,
        GetSecurityInfo, SDDL_REVISION_1, SE_KERNEL_OBJECT,
    };
    use windows_sys::Win32::Security::{
        EqualSid, GetTokenInformation, OWNER_SECURITY_INFORMATION, PSECURITY_DESCRIPTOR, PSID,
        SECURITY_ATTRIBUTES, TOKEN_QUERY, TOKEN_USER, TokenUser,
    };
    pub use windows_sys::Win32::System::Pipes::{
        GetNamedPipeClientProcessId, GetNamedPipeServerProcessId, WaitNamedPipeW,
    };
    use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};

    /// This process's user's SID (a copy of the token's `TOKEN_USER`).
    struct UserSid(Vec<u64>);

    impl UserSid {
        fn of_this_process() -> io::Result<UserSid> {
            let mut token: HANDLE = std::ptr::null_mut();
            // SAFETY: the current process's pseudo-handle; `token` is a valid out pointer.
            if unsafe { OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) } == 0 {
                return Err(io::Error::last_os_error());
            }
            // u64s: TOKEN_USER holds pointers, so the buffer must be aligned for them.
            let mut buf = vec![0u64; 64];
            let mut len = 0u32;
            // SAFETY: `buf` is writable for the size given; `token` is ours, closed below.
            let ok = unsafe {
                GetTokenInformation(
                    token,
                    TokenUser,
                    buf.as_mut_ptr().cast(),
                    (buf.len() * 8) as u32,
                    &mut len,
                )
            };
            let err = io::Error::last_os_error();
            // SAFETY: closes the token opened above.
            unsafe { CloseHandle(token) };
            if ok == 0 {
                return Err(err);
            }
            Ok(UserSid(buf))
        }

        fn sid(&self) -> PSID {
            // SAFETY: the buffer holds a TOKEN_USER (filled by GetTokenInformation), whose SID
            // points into the same buffer.
            unsafe { (*(self.0.as_ptr().cast::<TOKEN_USER>())).User.Sid }
        }

        fn to_string(&self) -> io::Result<String> {
            let mut text: *mut u16 = std::ptr::null_mut();
            // SAFETY: a valid SID; `text` is allocated by the call and freed below.
            if unsafe { ConvertSidToStringSidW(self.sid(), &mut text) } == 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: a NUL-terminated string from the call above.
            let s = unsafe {
                let len = (0..).take_while(|&i| *text.add(i) != 0).count();
                String::from_utf16_lossy(std::slice::from_raw_parts(text, len))
            };
            // SAFETY: allocated by ConvertSidToStringSidW with LocalAlloc.
            unsafe { LocalFree(text.cast()) };
            Ok(s)
        }
    }

    /// A security descriptor owned by the user, whose DACL grants the user alone
    /// (protected: nothing inherited).
    pub struct OwnDescriptor(PSECURITY_DESCRIPTOR);

    impl OwnDescriptor {
        pub fn new() -> io::Result<OwnDescriptor> {
            // Owned by the user too (an elevated token's default owner is Administrators), so
            // that a client can check whose pipe it opened.
            let sid = UserSid::of_this_process()?.to_string()?;
            let sddl = format!("O:{sid}D:P(A;;GA;;;{sid})");
            let wide: Vec<u16> = sddl.encode_utf16().chain([0]).collect();
            let mut sd: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
            // SAFETY: a NUL-terminated string; `sd` is allocated by the call (freed on drop).
            let ok = unsafe {
                ConvertStringSecurityDescriptorToSecurityDescriptorW(
                    wide.as_ptr(),
                    SDDL_REVISION_1,
                    &mut sd,
                    std::ptr::null_mut(),
                )
            };
            if ok == 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(OwnDescriptor(sd))
        }

        pub fn attributes(&self) -> SECURITY_ATTRIBUTES {
            SECURITY_ATTRIBUTES {
                nLength: size_of::<SECURITY_ATTRIBUTES>() as u32,
                lpSecurityDescriptor: self.0,
                bInheritHandle: 0,
            }
        }
    }

    impl Drop for OwnDescriptor {
        fn drop(&mut self) {
            // SAFETY: allocated with LocalAlloc by the conversion above.
            unsafe { LocalFree(self.0) };
        }
    }

    /// Whether the kernel object `handle` (the pipe) is owned by this process's user.
    pub fn owned_by_me(handle: RawHandle) -> io::Result<bool> {
        let me = UserSid::of_this_process()?;
        let mut owner: PSID = std::ptr::null_mut();
        let mut sd: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
        // SAFETY: a valid handle; the out pointers are valid; `sd` is freed below and `owner`
        // points into it.
        let rc = unsafe {
            GetSecurityInfo(
                handle as HANDLE,
                SE_KERNEL_OBJECT,
                OWNER_SECURITY_INFORMATION,
                &mut owner,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &mut sd,
            )
        };
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc as i32));
        }
        // SAFETY: two valid SIDs.
        let same = !owner.is_null() && unsafe { EqualSid(owner, me.sid()) } != 0;
        // SAFETY: allocated by GetSecurityInfo.
        unsafe { LocalFree(sd) };
        Ok(same)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[test]
    fn a_file_path_names_a_pipe_of_its_own() {
        assert_eq!(
            pipe_name(Path::new(r"\\.\pipe\warden-x")),
            r"\\.\pipe\warden-x"
        );
        let a = pipe_name(Path::new(r"C:\Users\a\AppData\Local\Temp\t1\control.sock"));
        let b = pipe_name(Path::new(r"C:\Users\a\AppData\Local\Temp\t2\control.sock"));
        assert!(a.starts_with(r"\\.\pipe\warden-C_"), "{a}");
        assert_ne!(a, b);
    }

    fn test_pipe(what: &str) -> PathBuf {
        PathBuf::from(format!(
            r"\\.\pipe\warden-test-{what}-{}-{}",
            std::process::id(),
            warden_wire::events::now_ms()
        ))
    }

    /// A second supervisor on the same name is refused while the first one runs.
    #[tokio::test]
    async fn the_pipe_has_one_supervisor() {
        let path = test_pipe("one");
        let _listener = bind(&path).await.unwrap();
        let err = bind(&path).await.err().unwrap();
        assert_eq!(err.kind(), io::ErrorKind::AddrInUse, "{err}");
    }

    /// Lines both ways, and each end knows the other's pid.
    #[tokio::test]
    async fn the_pipe_carries_lines_both_ways() {
        let path = test_pipe("lines");
        let listener = bind(&path).await.unwrap();
        let server = tokio::spawn(async move {
            let stream = accept(&listener).await.unwrap();
            assert!(peer_pid(&stream).is_some());
            let (mut r, mut w) = split(stream);
            let mut buf = [0u8; 5];
            r.read_exact(&mut buf).await.unwrap();
            w.write_all(b"pong\n").await.unwrap();
            buf
        });
        let client = connect(&path).await.unwrap();
        assert_eq!(peer_pid(&client), Some(std::process::id()));
        let (mut r, mut w) = split(client);
        w.write_all(b"ping\n").await.unwrap();
        let mut buf = [0u8; 5];
        r.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"pong\n");
        assert_eq!(&server.await.unwrap(), b"ping\n");
    }

    #[tokio::test]
    async fn no_pipe_is_not_found() {
        let err = connect(Path::new(r"\\.\pipe\warden-test-none-such"))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound, "{err}");
    }
}
