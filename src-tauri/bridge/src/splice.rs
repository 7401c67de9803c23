//! Cut-through by splice(2) for the rest of a streamed line (Linux).
//!
//! A relay that reads each byte of a large result and writes it again copies it twice, and
//! has the kernel allocate a page of the client's pipe for every 4 KiB. Here the bytes move
//! from the server's pipe to the client's as the pages they are in (`splice`); only a
//! duplicate made by `tee`, which shares those pages, is read, to find the line's end and
//! keep its head and tail. What the bridge owes the line stays the same: it is cut at its
//! `\n` (which the reader takes, as for any line), bounded by `max_message_bytes`, no `\r`
//! of it reaches the client (splicing stops before one: the reader takes it, and the pump
//! makes it a space), and nothing else is written to the client while it passes.
//!
//! The client writer lends its pipe for the time ([`Line::Lease`](super::links::Line)):
//! it writes everything queued before, then waits until the lease is given back.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::Arc;

use rustix::pipe::{PipeFlags, SpliceFlags, fcntl_setpipe_size, pipe_with, splice, tee};
use tokio::io::Interest;
use tokio::net::UnixStream;
use tokio::net::unix::pipe;

/// The most taken per step: what the duplicate pipe is asked to hold, and the buffer its
/// copy is read into.
const STEP: usize = 256 * 1024;

/// The client's end: our stdout, a pipe or a socket (Node's child processes get socket
/// pairs), registered with the reactor.
pub(super) enum Client {
    Pipe(pipe::Sender),
    Socket(UnixStream),
}

pub(super) type Target = Arc<Client>;

/// Makes the client's end a target, from a second handle on our stdout.
pub(super) fn target(stdout: super::stdio::Stream) -> Option<Target> {
    use super::stdio::Stream;
    let client = match stdout {
        Stream::PipeOut(p) => Client::Pipe(p),
        Stream::Socket(s) => Client::Socket(s),
        Stream::PipeIn(_) => return None,
    };
    Some(Arc::new(client))
}

impl Client {
    async fn writable(&self) -> std::io::Result<()> {
        match self {
            Client::Pipe(p) => p.writable().await,
            Client::Socket(s) => s.writable().await,
        }
    }

    /// Runs `f` on the fd; a `WouldBlock` from it clears the readiness.
    fn try_io<R>(
        &self,
        f: impl FnOnce(BorrowedFd<'_>) -> std::io::Result<R>,
    ) -> std::io::Result<R> {
        match self {
            Client::Pipe(p) => p.try_io(|| f(p.as_fd())),
            Client::Socket(s) => s.try_io(Interest::WRITABLE, || f(s.as_fd())),
        }
    }
}

/// Moves the parts of streamed lines from one server process's stdout to the client.
pub(super) struct Splicer {
    server: pipe::Receiver,
    client: Target,
    /// The duplicate's pipe: `tee` fills it, the read empties it at once.
    copy_in: OwnedFd,
    copy_out: OwnedFd,
    buf: Vec<u8>,
}

/// How a [`Splicer::relay`] ended.
pub(super) struct Moved {
    pub(super) bytes: u64,
    /// False when splicing failed and is not to be tried again: the reader and the writer go
    /// on as without it (and meet the same error, if it was the client's).
    pub(super) usable: bool,
}

impl Splicer {
    /// A splicer from `server` (the server's stdout) to `client`; `None` when the pipes
    /// cannot be set up.
    pub(super) fn new(server: BorrowedFd<'_>, client: &Target) -> Option<Splicer> {
        let (copy_out, copy_in) = pipe_with(PipeFlags::CLOEXEC | PipeFlags::NONBLOCK).ok()?;
        // Best effort: a smaller pipe only means smaller steps.
        let _ = fcntl_setpipe_size(&copy_in, STEP);
        let server = server.try_clone_to_owned().ok()?;
        Some(Splicer {
            server: pipe::Receiver::from_owned_fd(server).ok()?,
            client: Arc::clone(client),
            copy_in,
            copy_out,
            buf: Vec::new(),
        })
    }

    /// Moves up to `room` bytes of the line being streamed, as they arrive, and stops before
    /// its `\n` or any `\r` (the `\r` of a final `\r\n`, or a lone one, which the reader
    /// takes so that the pump blanks it), at the end of the stream, or at `room`. `seen` gets
    /// every run of bytes moved, in order.
    pub(super) async fn relay(&mut self, room: u64, mut seen: impl FnMut(&[u8])) -> Moved {
        let mut moved = 0u64;
        loop {
            let want = usize::try_from(room - moved)
                .unwrap_or(usize::MAX)
                .min(STEP);
            if want == 0 {
                return Moved {
                    bytes: moved,
                    usable: true,
                };
            }
            let Some(n) = self.duplicate(want).await else {
                return Moved {
                    bytes: moved,
                    usable: false,
                };
            };
            if n == 0 {
                // The server closed its stdout: the reader sees the end.
                return Moved {
                    bytes: moved,
                    usable: true,
                };
            }
            // A `\r` is never spliced: no client that also ends lines at a lone `\r` may
            // read a message between two of them (one scan, as for the `\n`).
            let take = memchr::memchr2(b'\n', b'\r', &self.buf[..n]).unwrap_or(n);
            let (sent, ok) = self.send(take).await;
            seen(&self.buf[..sent]);
            moved += sent as u64;
            if !ok {
                return Moved {
                    bytes: moved,
                    usable: false,
                };
            }
            if take < n {
                return Moved {
                    bytes: moved,
                    usable: true,
                };
            }
        }
    }

    /// Duplicates up to `want` bytes of the server's pipe (waiting for some) and reads the
    /// duplicate into `buf`: how many, 0 at the end of the stream, `None` on an error.
    async fn duplicate(&mut self, want: usize) -> Option<usize> {
        let n = loop {
            self.server.readable().await.ok()?;
            match self.server.try_io(|| {
                Ok(tee(
                    &self.server,
                    &self.copy_in,
                    want,
                    SpliceFlags::NONBLOCK,
                )?)
            }) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(_) => return None,
            }
        };
        self.buf.resize(n.max(self.buf.len()), 0);
        let mut got = 0;
        while got < n {
            match rustix::io::read(&self.copy_out, &mut self.buf[got..n]) {
                Ok(0) | Err(_) => return None,
                Ok(k) => got += k,
            }
        }
        Some(n)
    }

    /// Splices `len` bytes (already in the server's pipe) to the client, waiting while its
    /// pipe is full: how many went, and false on an error.
    async fn send(&mut self, len: usize) -> (usize, bool) {
        let mut sent = 0;
        while sent < len {
            if self.client.writable().await.is_err() {
                return (sent, false);
            }
            let server = self.server.as_fd();
            let flags = SpliceFlags::NONBLOCK | SpliceFlags::MOVE;
            match self
                .client
                .try_io(|fd| Ok(splice(server, None, fd, None, len - sent, flags)?))
            {
                Ok(0) => return (sent, false),
                Ok(k) => sent += k,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(_) => return (sent, false),
            }
        }
        (sent, true)
    }
}
