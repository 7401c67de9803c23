//! The bridge's own stdin and stdout, made non-blocking where they are pipes or sockets.
//!
//! tokio's `stdin()`/`stdout()` hand every read and write to a blocking thread, which costs a
//! thread hop per message. IDEs connect stdio through pipes (or socketpairs, as Node does), so
//! the bridge registers those with the reactor directly and keeps the blocking path only for
//! terminals and files.

use std::pin::Pin;

use tokio::io::{AsyncRead, AsyncWrite};

pub type Reader = Pin<Box<dyn AsyncRead + Send>>;
pub type Writer = Pin<Box<dyn AsyncWrite + Send>>;

/// The client's stdin and stdout, and a second handle on stdout where it is driven by the
/// reactor (a pipe or socket not shared with stderr), for splicing into it.
#[cfg(unix)]
pub fn client_io() -> (Reader, Writer, Option<Stream>) {
    use std::os::fd::AsFd;
    let reader = unix::async_fd(std::io::stdin().as_fd(), true)
        .and_then(|s| s.into_reader())
        .unwrap_or_else(|| Box::pin(tokio::io::stdin()));
    // stdout shared with stderr (`2>&1`) stays blocking: O_NONBLOCK would reach stderr too.
    // The client's pipe to us is usually 64 KiB: a bigger one moves large results in fewer
    // wake-ups of the client.
    super::child::sys::grow_pipe(std::os::fd::AsRawFd::as_raw_fd(&std::io::stdout()));
    let writer = (!unix::same_file(std::io::stdout().as_fd(), std::io::stderr().as_fd()))
        .then(|| unix::async_fd(std::io::stdout().as_fd(), false))
        .flatten()
        .and_then(|s| s.into_writer());
    let second = writer
        .as_ref()
        .and_then(|_| unix::async_fd(std::io::stdout().as_fd(), false));
    let writer = writer.unwrap_or_else(|| Box::pin(tokio::io::stdout()));
    (reader, writer, second)
}

#[cfg(unix)]
pub use unix::Stream;

#[cfg(not(unix))]
pub fn client_io() -> (Reader, Writer, Option<()>) {
    (
        Box::pin(tokio::io::stdin()),
        Box::pin(tokio::io::stdout()),
        None,
    )
}

#[cfg(unix)]
mod unix {
    use std::os::fd::{BorrowedFd, OwnedFd};
    use std::os::unix::fs::{FileTypeExt, MetadataExt};

    use super::{Reader, Writer};

    pub enum Stream {
        PipeIn(tokio::net::unix::pipe::Receiver),
        PipeOut(tokio::net::unix::pipe::Sender),
        Socket(tokio::net::UnixStream),
    }

    impl Stream {
        pub fn into_reader(self) -> Option<Reader> {
            match self {
                Stream::PipeIn(r) => Some(Box::pin(r)),
                Stream::Socket(s) => Some(Box::pin(s)),
                Stream::PipeOut(_) => None,
            }
        }
        pub fn into_writer(self) -> Option<Writer> {
            match self {
                Stream::PipeOut(w) => Some(Box::pin(w)),
                Stream::Socket(s) => Some(Box::pin(s)),
                Stream::PipeIn(_) => None,
            }
        }
    }

    fn meta(fd: BorrowedFd<'_>) -> Option<std::fs::Metadata> {
        let owned: OwnedFd = fd.try_clone_to_owned().ok()?;
        std::fs::File::from(owned).metadata().ok()
    }

    pub fn same_file(a: BorrowedFd<'_>, b: BorrowedFd<'_>) -> bool {
        match (meta(a), meta(b)) {
            (Some(a), Some(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }

    /// A reactor-registered duplicate of `fd` if it is a pipe or a socket.
    pub fn async_fd(fd: BorrowedFd<'_>, read: bool) -> Option<Stream> {
        let kind = meta(fd)?.file_type();
        let owned = fd.try_clone_to_owned().ok()?;
        if kind.is_fifo() {
            if read {
                tokio::net::unix::pipe::Receiver::from_owned_fd(owned)
                    .ok()
                    .map(Stream::PipeIn)
            } else {
                tokio::net::unix::pipe::Sender::from_owned_fd(owned)
                    .ok()
                    .map(Stream::PipeOut)
            }
        } else if kind.is_socket() {
            let std = std::os::unix::net::UnixStream::from(owned);
            std.set_nonblocking(true).ok()?;
            tokio::net::UnixStream::from_std(std)
                .ok()
                .map(Stream::Socket)
        } else {
            None
        }
    }
}
