//! The tasks that move bytes: a pump reads frames from one side and routes them, a writer
//! drains the queues towards one side, the stderr pump keeps the server's stderr, the watchdog
//! wakes the router at its next deadline.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::sync::mpsc;

use super::links::{Line, Links, PART_BUDGET_KIB, ServerQueues, Side, Tagged};
use warden_wire::protocol::{Frame, FrameReader, HEAD_KEEP, TAIL_KEEP, blank_carriage_returns};

/// The stderr tail kept per server process, for the error messages of its end.
pub(super) const STDERR_TAIL: usize = 8 * 1024;
/// The stderr tail the supervisor shows on a server's page.
const RECENT_STDERR: usize = 4 * 1024;

/// Lines from the server longer than this are relayed as they arrive (cut-through) instead of
/// being held whole: a 100 MB result costs one pipe transfer of time, not two, and little
/// memory. Such a line is not parsed whole; its id comes from its head or tail. Never while
/// the router awaits an answer it must read (its [`warden_wire::protocol::StreamGate`] holds): those
/// are held whole up to `max_list_bytes` and checked. A streamed line that turns out to answer
/// no request the router waits for, or that ends while such an answer is awaited, is spoilt
/// at its end so the client drops it (`Router::streamed`). No `\r` of it reaches the client
/// ([`blank_carriage_returns`]; the splicer stops at one and leaves it to the reader): a
/// client that also ends lines at a lone `\r` would read the pieces between them as messages
/// the router never saw.
const STREAM_OVER: usize = 1 << 20;

/// What moves the rest of a streamed line past the reader (Linux: splice); nothing elsewhere
/// (a unit struct, not `()`: clippy's `unit_arg` refuses a `()` argument).
#[cfg(target_os = "linux")]
pub(super) type Cut = Option<super::splice::Splicer>;
#[cfg(not(target_os = "linux"))]
pub(super) struct Cut;

/// No cut-through (the client's side).
pub(super) fn no_cut() -> Cut {
    #[cfg(target_os = "linux")]
    return None;
    #[cfg(not(target_os = "linux"))]
    Cut
}

pub(super) async fn pump<R: AsyncRead + Send + Unpin>(
    input: R,
    max: usize,
    links: Links,
    side: Side,
    #[cfg_attr(not(target_os = "linux"), allow(unused_mut, unused_variables))] mut cut: Cut,
) -> std::io::Result<()> {
    let mut reader = FrameReader::new(input, max);
    let mut streaming = Streamed::default();
    if side == Side::Server {
        reader.set_streaming(Some(STREAM_OVER));
        reader.set_gate(Some(links.router().stream_gate()));
    }
    while let Some(frame) = reader.next().await? {
        let Some(frame) = streaming.relay(frame, &links).await else {
            #[cfg(target_os = "linux")]
            cut_through(&mut cut, &mut reader, &mut streaming, &links).await;
            continue;
        };
        if let Frame::Message(line) = &frame {
            links.sink.debug(
                if side == Side::Client {
                    "client"
                } else {
                    "server"
                },
                line,
            );
        }
        let (mut new_max, mut soft_cap, mut began) = (max, 0, false);
        links
            .route(side, |router, out| {
                match side {
                    Side::Client => {
                        let before = router.pending_requests();
                        router.from_client(frame, Instant::now(), out);
                        began = router.pending_requests() > before;
                    }
                    Side::Server => router.from_server(frame, Instant::now(), out),
                }
                new_max = router.limits().max_message_bytes;
                soft_cap = router.limits().result_soft_cap_bytes;
            })
            .await;
        if began {
            links.started.notify_one();
        }
        reader.set_max(new_max);
        if side == Side::Server {
            // A result that may have to be cut must be held whole.
            reader.set_streaming((soft_cap == 0).then_some(STREAM_OVER));
        }
    }
    Ok(())
}

/// Once every byte of a streamed line read so far went out: the rest of it, up to the
/// limit, goes from the server's pipe to the client's by splice, with the client writer's
/// pipe lent for the time. The reader then takes the line's end as usual.
#[cfg(target_os = "linux")]
async fn cut_through<R: AsyncRead + Unpin>(
    cut: &mut Cut,
    reader: &mut FrameReader<R>,
    streaming: &mut Streamed,
    links: &Links,
) {
    let (Some(splicer), Some(len)) = (cut.as_mut(), reader.streamed_drained()) else {
        return;
    };
    let room = (reader.max() as u64).saturating_sub(len);
    if room == 0 {
        return;
    }
    let (lent, lent_rx) = tokio::sync::oneshot::channel();
    let (_give_back, given_back) = tokio::sync::oneshot::channel();
    if links
        .to_client
        .send((0, Line::Lease(lent, given_back)))
        .await
        .is_err()
        || lent_rx.await.is_err()
    {
        return;
    }
    let moved = splicer
        .relay(room, |bytes| {
            reader.passed(bytes);
            streaming.push(bytes);
        })
        .await;
    streaming.spliced += moved.bytes;
    if !moved.usable {
        *cut = None;
    }
}

/// The head and tail of a line being relayed in parts: where its id is.
#[derive(Default)]
struct Streamed {
    active: bool,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    len: u64,
    /// Of `len`, the bytes spliced (debug log).
    spliced: u64,
}

impl Streamed {
    /// Relays the parts of a line streamed to the client as they arrive; when the line ends,
    /// the router learns its id. Other frames are handed back for routing.
    async fn relay(&mut self, frame: Frame, links: &Links) -> Option<Frame> {
        match frame {
            Frame::Begin(bytes) => {
                let bytes = blank_carriage_returns(bytes);
                *self = Streamed {
                    active: true,
                    ..Streamed::default()
                };
                self.push(&bytes);
                send_part(links, bytes).await;
                None
            }
            Frame::Part { bytes, end } => {
                let bytes = blank_carriage_returns(bytes);
                self.push(&bytes);
                send_part(links, bytes).await;
                if end {
                    let note = format!(
                        r#"{{"streamed_line_bytes":{},"spliced":{}}}"#,
                        self.len, self.spliced
                    );
                    links.sink.debug("server", &Bytes::from(note));
                    let mut done = std::mem::take(self);
                    let tail = done.tail.make_contiguous();
                    // What the router says goes out after the line's end (the client writer
                    // takes nothing else while inside a line).
                    let mut whole = false;
                    links.route_now(|r, out| {
                        whole = r.streamed(&done.head, tail, done.len, Instant::now(), out);
                    });
                    if !whole {
                        // No JSON text ends with a comma: the client drops the line as invalid.
                        let spoil = Line::Part(Bytes::from_static(b","), None);
                        let _ = links.to_client.send((0, spoil)).await;
                    }
                    let _ = links.to_client.send((0, Line::End)).await;
                }
                None
            }
            // A streamed line went over the limit: end the client's copy of it (the client
            // drops it as invalid), then the request gets its error as for any oversize line.
            oversize @ Frame::Oversize { .. } if self.active => {
                *self = Streamed::default();
                let _ = links.to_client.send((0, Line::End)).await;
                Some(oversize)
            }
            frame => Some(frame),
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        self.len += bytes.len() as u64;
        let room = HEAD_KEEP.saturating_sub(self.head.len());
        self.head.extend_from_slice(&bytes[..room.min(bytes.len())]);
        let take = bytes.len().min(TAIL_KEEP);
        self.tail.extend(&bytes[bytes.len() - take..]);
        let excess = self.tail.len().saturating_sub(TAIL_KEEP);
        self.tail.drain(..excess);
    }
}

/// Queues a part for the client once the in-flight budget has room for it (a part larger
/// than the whole budget waits for all of it).
async fn send_part(links: &Links, bytes: Bytes) {
    let kib = u32::try_from(bytes.len().div_ceil(1024))
        .unwrap_or(u32::MAX)
        .min(PART_BUDGET_KIB);
    let permit = links.part_budget.clone().acquire_many_owned(kib).await.ok();
    let _ = links.to_client.send((0, Line::Part(bytes, permit))).await;
}

pub(super) type BoxWriter = Pin<Box<dyn AsyncWrite + Send>>;

pub(super) async fn client_writer(
    out: BoxWriter,
    mut data: mpsc::Receiver<Tagged>,
    mut side: mpsc::UnboundedReceiver<Tagged>,
) -> std::io::Result<()> {
    write_loop(out, &mut data, &mut side, |_, line| Some(line)).await
}

/// Writes the lines routed for generation `generation`; a line routed for another one goes
/// back to the router.
pub(super) async fn server_writer(
    out: BoxWriter,
    queues: Arc<tokio::sync::Mutex<ServerQueues>>,
    generation: u64,
    links: Links,
) -> std::io::Result<()> {
    let mut queues = queues.lock().await;
    let ServerQueues { data, side } = &mut *queues;
    write_loop(out, data, side, |tag, line| {
        if tag == generation {
            return Some(line);
        }
        if let Line::Data(bytes) = line {
            links.route_now(|r, out| r.undelivered(bytes, Instant::now(), out));
        }
        None
    })
    .await
}

async fn write_loop<W: AsyncWrite + Send + ?Sized>(
    out: Pin<Box<W>>,
    data: &mut mpsc::Receiver<Tagged>,
    side: &mut mpsc::UnboundedReceiver<Tagged>,
    mut accept: impl FnMut(u64, Line) -> Option<Line>,
) -> std::io::Result<()> {
    let mut out = BufWriter::with_capacity(64 * 1024, out);
    let mut finishing = false;
    // Inside a line relayed in parts, nothing may be written between its parts.
    let mut in_line = false;
    loop {
        let (tag, line) = tokio::select! {
            biased;
            Some(item) = side.recv(), if !finishing && !in_line => item,
            Some(item) = data.recv() => item,
            else => break,
        };
        let mut next = accept(tag, line);
        loop {
            match next.take() {
                Some(Line::Data(bytes)) => write_line(&mut out, &bytes).await?,
                Some(Line::Part(bytes, _budget)) => {
                    in_line = true;
                    out.write_all(&bytes).await?;
                }
                Some(Line::End) => {
                    in_line = false;
                    out.write_all(b"\n").await?;
                }
                Some(Line::Finish) => finishing = true,
                #[cfg(target_os = "linux")]
                Some(Line::Lease(lent, given_back)) => {
                    out.flush().await?;
                    if lent.send(()).is_ok() {
                        let _ = given_back.await;
                    }
                }
                None => {}
            }
            // Batch whatever else is ready into the same flush.
            let ready = if in_line {
                data.try_recv()
            } else {
                side.try_recv().or_else(|_| data.try_recv())
            };
            next = match ready {
                Ok((tag, line)) => accept(tag, line),
                Err(_) => break,
            };
        }
        out.flush().await?;
        if finishing && data.is_empty() {
            break;
        }
    }
    out.flush().await?;
    out.shutdown().await
}

async fn write_line<W: AsyncWrite + Unpin>(out: &mut W, line: &[u8]) -> std::io::Result<()> {
    out.write_all(line).await?;
    out.write_all(b"\n").await
}

pub(super) async fn pump_stderr<R: AsyncRead + Unpin>(
    mut input: R,
    links: Links,
    tail: Arc<Mutex<VecDeque<u8>>>,
) {
    let mut buf = vec![0u8; 8 * 1024];
    let mut lines = WholeLines::default();
    loop {
        let n = match input.read(&mut buf).await {
            Ok(0) | Err(_) => {
                let rest = lines.rest();
                if !rest.is_empty() {
                    links.route_now(|r, out| r.on_stderr(Instant::now(), &rest, out));
                }
                return;
            }
            Ok(n) => n,
        };
        let whole = lines.feed(&buf[..n]);
        links.route_now(|r, out| r.on_stderr(Instant::now(), &whole, out));
        links.sink.stderr(Bytes::copy_from_slice(&buf[..n]));
        keep_tail(
            &mut tail.lock().unwrap_or_else(PoisonError::into_inner),
            &buf[..n],
            STDERR_TAIL,
        );
        let mut recent = links
            .recent_stderr
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        recent.0 += 1;
        keep_tail(&mut recent.1, &buf[..n], RECENT_STDERR);
    }
}

/// The whole lines of a stream read in chunks that may end mid-line: a server's `eprintln!`
/// can be several writes, and the stderr rules (`sandbox_denied`, `installing`) read a line
/// whole. A line longer than [`WholeLines::HELD`] is given as it is.
#[derive(Default)]
struct WholeLines {
    partial: Vec<u8>,
}

impl WholeLines {
    const HELD: usize = 8 * 1024;

    /// The lines `chunk` completes, with the start held from before; keeps what follows the
    /// last newline for the next chunk.
    fn feed(&mut self, chunk: &[u8]) -> Vec<u8> {
        self.partial.extend_from_slice(chunk);
        let cut = match self.partial.iter().rposition(|&b| b == b'\n') {
            Some(i) => i + 1,
            None if self.partial.len() > Self::HELD => self.partial.len(),
            None => 0,
        };
        let rest = self.partial.split_off(cut);
        std::mem::replace(&mut self.partial, rest)
    }

    /// What is held at the end of the stream: a last line without its newline.
    fn rest(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.partial)
    }
}

fn keep_tail(tail: &mut VecDeque<u8>, bytes: &[u8], max: usize) {
    tail.extend(bytes);
    let excess = tail.len().saturating_sub(max);
    tail.drain(..excess);
}

pub(super) async fn watchdog(links: Links) {
    loop {
        let mut next = None;
        links.route_now(|r, out| next = r.tick(Instant::now(), out));
        match next {
            Some(at) => {
                tokio::select! {
                    _ = tokio::time::sleep_until(at.into()) => {}
                    _ = links.wake.notified() => {}
                }
            }
            None => links.wake.notified().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line written in pieces reaches the stderr rules whole, once.
    #[test]
    fn a_line_read_in_pieces_is_given_whole() {
        let mut lines = WholeLines::default();
        assert_eq!(lines.feed(b"fake server: cannot write '"), b"");
        assert_eq!(
            lines.feed(b"/x.txt': Read-only file system\nnext: "),
            b"fake server: cannot write '/x.txt': Read-only file system\n"
        );
        assert_eq!(lines.rest(), b"next: ");
        let long = vec![b'a'; WholeLines::HELD + 1];
        assert_eq!(
            lines.feed(&long),
            long,
            "a line too long to hold goes as it is"
        );
    }
}
