//! The proxy's CONNECT tunnels: bytes moved both ways between the client and its checked
//! destination until both sides are done.
//!
//! On Linux the bytes go socket → pipe → socket with `splice(2)`, as pages, never copied
//! into the bridge (a download through a tunnel otherwise costs the bridge a read and a
//! write of every byte, and the bridge shares the machine's cores with the server and the
//! client). Elsewhere, and where a pipe cannot be made, tokio's copy with large buffers.
//! Either way a side that ends its sending is passed on as a half-close, and an error on
//! either side ends the tunnel.

use tokio::net::TcpStream;

/// What one step moves at most, and the size asked of each direction's pipe.
const STEP: usize = 256 * 1024;

/// Relays until both directions have ended (or one failed).
pub(super) async fn relay(mut client: TcpStream, mut upstream: TcpStream) {
    #[cfg(target_os = "linux")]
    if let (Some(up), Some(down)) = (linux::Pipe::new(), linux::Pipe::new()) {
        let _ = tokio::try_join!(up.carry(&client, &upstream), down.carry(&upstream, &client));
        return;
    }
    let _ = tokio::io::copy_bidirectional_with_sizes(&mut client, &mut upstream, STEP, STEP).await;
}

#[cfg(target_os = "linux")]
mod linux {
    use std::io::ErrorKind::WouldBlock;
    use std::os::fd::{AsFd, OwnedFd};

    use rustix::net::Shutdown;
    use rustix::pipe::{PipeFlags, SpliceFlags, fcntl_setpipe_size, pipe_with, splice};
    use tokio::io::Interest;
    use tokio::net::TcpStream;

    use super::STEP;

    /// One direction's pipe.
    pub(super) struct Pipe {
        read: OwnedFd,
        write: OwnedFd,
    }

    impl Pipe {
        pub(super) fn new() -> Option<Pipe> {
            let (read, write) = pipe_with(PipeFlags::CLOEXEC | PipeFlags::NONBLOCK).ok()?;
            // Best effort: a smaller pipe only means smaller steps.
            let _ = fcntl_setpipe_size(&write, STEP);
            Some(Pipe { read, write })
        }

        /// Moves what `from` sends to `to` until `from` ends its sending, then ends `to`'s
        /// receiving of it (a half-close). The pipe is filled only when empty and emptied
        /// whole before the next fill, so a `WouldBlock` always means the socket's side:
        /// nothing to read, or no room to write.
        pub(super) async fn carry(&self, from: &TcpStream, to: &TcpStream) -> std::io::Result<()> {
            let flags = SpliceFlags::NONBLOCK | SpliceFlags::MOVE;
            loop {
                let got = loop {
                    from.readable().await?;
                    match from.try_io(Interest::READABLE, || {
                        Ok(splice(from, None, &self.write, None, STEP, flags)?)
                    }) {
                        Err(e) if e.kind() == WouldBlock => {}
                        done => break done?,
                    }
                };
                if got == 0 {
                    rustix::net::shutdown(to.as_fd(), Shutdown::Write)?;
                    return Ok(());
                }
                let mut left = got;
                while left > 0 {
                    to.writable().await?;
                    match to.try_io(Interest::WRITABLE, || {
                        Ok(splice(&self.read, None, to, None, left, flags)?)
                    }) {
                        Err(e) if e.kind() == WouldBlock => {}
                        Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
                        sent => left -= sent?,
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    use tokio::net::{TcpListener, TcpStream};

    /// Two connected loopback sockets.
    async fn pair() -> (TcpStream, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
        let (b, _) = l.accept().await.unwrap();
        (a, b)
    }

    /// Bytes larger than a pipe go both ways whole and in order, and each side's end of
    /// sending reaches the other as the end of its reading, while the other way goes on.
    #[tokio::test]
    async fn both_ways_whole_with_half_closes() {
        let (mut client, proxy_client) = pair().await;
        let (proxy_up, mut origin) = pair().await;
        let tunnel = tokio::spawn(super::relay(proxy_client, proxy_up));
        let up: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        let down: Vec<u8> = (0..5_000_000u32).map(|i| (i % 241) as u8).collect();
        let (mut c_in, mut c_out) = client.split();
        let (mut o_in, mut o_out) = origin.split();
        let ((), (), got_up, got_down) = tokio::join!(
            async {
                c_out.write_all(&up).await.unwrap();
                c_out.shutdown().await.unwrap();
            },
            async {
                o_out.write_all(&down).await.unwrap();
                o_out.shutdown().await.unwrap();
            },
            async {
                let mut v = Vec::new();
                o_in.read_to_end(&mut v).await.unwrap();
                v
            },
            async {
                let mut v = Vec::new();
                c_in.read_to_end(&mut v).await.unwrap();
                v
            },
        );
        assert!(got_up == up && got_down == down);
        tunnel.await.unwrap();
    }
}
