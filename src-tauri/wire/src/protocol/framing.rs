//! Line framing without a size cliff.
//!
//! MCP over stdio is one JSON-RPC message per line. Real relays died on this in two ways: a
//! fixed line limit (asyncio's 64 KiB `readline`) that kills the reader on the first large
//! result, and a read loop that handled one message per wake-up and stranded the rest of a burst
//! in its buffer. [`FrameReader`] scans each byte once (no quadratic rescans), returns every
//! complete line already buffered before it reads again, and turns a line over the limit into a
//! [`Frame::Oversize`] while streaming it away, keeping only its head and tail so the waiting
//! request can still be found and answered. A [`StreamGate`] lets the router say when the next
//! line must be held whole (up to a limit of its own) instead of streamed: an answer it must
//! read.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt};

/// How much of an oversized line's start is kept to find its `id`.
pub const HEAD_KEEP: usize = 4096;
/// How much of an oversized line's end is kept (SDKs often serialise `id` last).
pub const TAIL_KEEP: usize = 4096;
/// Smallest free space offered to a read; pipes hand out at most their capacity per read.
const MIN_READ: usize = 64 * 1024;
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One unit read off a stdio stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// A complete line: no terminator, no trailing `\r`, no BOM; never blank.
    Message(Bytes),
    /// A line longer than the limit. Its bytes were discarded; `len` counts them all. If the
    /// line was being streamed (`Begin`/`Part`), its start was already handed out.
    Oversize { head: Bytes, tail: Bytes, len: u64 },
    /// With streaming on: the start of a line too large to hold whole; `Part`s follow.
    Begin(Bytes),
    /// The next part of a streamed line; `end` when it completes the line (terminator
    /// excluded).
    Part { bytes: Bytes, end: bool },
}

/// The length, head and tail of a line too large to hold (or being streamed). Its frame
/// follows the rules of a line held whole (trailing `\r` not counted, blank lines skipped),
/// whatever the reads that brought it.
#[derive(Debug, Default)]
struct Discard {
    /// The first `HEAD_KEEP` bytes of the line.
    head: Vec<u8>,
    /// The last `TAIL_KEEP + 1` bytes (one more, in case the last is a `\r` to drop).
    tail: Vec<u8>,
    len: u64,
    nonblank: bool,
    /// Parts of the line were handed out: its end must be reported even if it is blank.
    streamed: bool,
}

impl Discard {
    fn push(&mut self, data: &[u8]) {
        self.len += data.len() as u64;
        push_head(&mut self.head, data);
        push_tail(&mut self.tail, data, TAIL_KEEP + 1);
        self.nonblank = self.nonblank || !data.iter().all(u8::is_ascii_whitespace);
    }

    /// The `Oversize` frame of the line, `None` for a blank line nobody saw.
    fn finish(mut self) -> Option<Frame> {
        if self.tail.last() == Some(&b'\r') {
            self.tail.pop();
            self.len -= 1;
            if self.head.len() as u64 > self.len {
                self.head.pop();
            }
        }
        if self.tail.len() > TAIL_KEEP {
            self.tail.drain(..self.tail.len() - TAIL_KEEP);
        }
        (self.nonblank || self.streamed).then(|| Frame::Oversize {
            head: Bytes::from(self.head),
            tail: Bytes::from(self.tail),
            len: self.len,
        })
    }
}

/// Completes a line's head up to `HEAD_KEEP` bytes. The head holds every byte seen so far
/// until it is full, so appending keeps it the line's true start: a line that crossed the
/// limit in a small read still keeps a full head (fuzzing found heads of one byte).
fn push_head(head: &mut Vec<u8>, data: &[u8]) {
    let room = HEAD_KEEP.saturating_sub(head.len());
    head.extend_from_slice(&data[..room.min(data.len())]);
}

fn push_tail(tail: &mut Vec<u8>, data: &[u8], keep: usize) {
    if data.len() >= keep {
        tail.clear();
        tail.extend_from_slice(&data[data.len() - keep..]);
    } else {
        tail.extend_from_slice(data);
        if tail.len() > keep {
            tail.drain(..tail.len() - keep);
        }
    }
}

fn oversize_of(line: &[u8]) -> Frame {
    let mut tail = Vec::with_capacity(TAIL_KEEP);
    push_tail(&mut tail, line, TAIL_KEEP);
    Frame::Oversize {
        head: Bytes::copy_from_slice(&line[..line.len().min(HEAD_KEEP)]),
        tail: Bytes::from(tail),
        len: line.len() as u64,
    }
}

/// `bytes` with every carriage return (`\r`) made a space: what a server wrote, as the client
/// may read it. Java's `readLine`, .NET's `ReadLine`, Node's `readline` and Python's universal
/// newlines end a line at a lone `\r` too, so a `\r` inside a line would let a client see a
/// message in the middle of one that Warden judged whole (a hostile server puts an answer to a
/// `tools/list` of the client's there, unchecked). In valid JSON a raw `\r` can only be
/// whitespace between tokens (inside a string it must be escaped), so a space means the same;
/// one inside a string (not valid JSON) reads as if the server had sent a space, which gives
/// it nothing it could not send itself. One memchr pass; no copy when there is no `\r`.
pub fn blank_carriage_returns(bytes: Bytes) -> Bytes {
    let Some(first) = memchr::memchr(b'\r', &bytes) else {
        return bytes;
    };
    let mut owned = BytesMut::from(&bytes[..]);
    for at in memchr::memchr_iter(b'\r', &bytes[first..]) {
        owned[first + at] = b' ';
    }
    owned.freeze()
}

/// Shared between the router and a reader that streams: while any reason to hold is set, a
/// line over the stream threshold is held whole instead of streamed, up to the larger of the
/// reader's limit and [`StreamGate::set_max_held`]'s. Read once per line that crosses the
/// threshold or the limit, never for ordinary lines.
#[derive(Debug, Default)]
pub struct StreamGate {
    /// One bit per reason to hold (the router's pending requests, its own).
    reasons: AtomicU8,
    max_held: AtomicUsize,
}

impl StreamGate {
    /// Sets or clears reason `bit` (0 to 7) to hold lines whole.
    pub fn hold(&self, bit: u8, on: bool) {
        let mask = 1u8 << bit;
        if on {
            self.reasons.fetch_or(mask, Ordering::SeqCst);
        } else {
            self.reasons.fetch_and(!mask, Ordering::SeqCst);
        }
    }

    /// Whether lines are held whole now.
    pub fn holds(&self) -> bool {
        self.reasons.load(Ordering::SeqCst) != 0
    }

    /// The limit of a line held whole while the gate holds.
    pub fn set_max_held(&self, max: usize) {
        self.max_held.store(max, Ordering::Relaxed);
    }

    fn max_held(&self) -> usize {
        self.max_held.load(Ordering::Relaxed)
    }
}

/// Reads [`Frame`]s from a byte stream. Cancel-safe between calls of [`FrameReader::next`] only
/// in the sense that no complete frame is ever lost: partial data stays buffered.
#[derive(Debug)]
pub struct FrameReader<R> {
    inner: R,
    buf: BytesMut,
    /// Bytes at the start of `buf` already known to hold no `\n`.
    scanned: usize,
    max: usize,
    at_start: bool,
    discard: Option<Discard>,
    eof: bool,
    /// Lines longer than this are handed out in parts as they arrive (cut-through).
    stream_over: Option<usize>,
    /// The line being streamed: its length so far, head and tail (for the id if it
    /// overflows the limit and becomes an `Oversize`).
    streaming: Option<Discard>,
    /// When set and holding: no streaming, and the limit is raised to its own.
    gate: Option<Arc<StreamGate>>,
}

/// Reads while streaming: big enough that a large line moves in few steps, small enough
/// that the parts in flight stay within the bridge's budget for them (1 MiB).
const STREAM_READ: usize = 256 * 1024;

impl<R: AsyncRead + Unpin> FrameReader<R> {
    /// `max` is the largest line (without terminator) returned as a message.
    pub fn new(inner: R, max: usize) -> Self {
        Self {
            inner,
            buf: BytesMut::with_capacity(MIN_READ),
            scanned: 0,
            max,
            at_start: true,
            discard: None,
            eof: false,
            stream_over: None,
            streaming: None,
            gate: None,
        }
    }

    /// Lets `gate` stop streaming and raise the limit while it holds.
    pub fn set_gate(&mut self, gate: Option<Arc<StreamGate>>) {
        self.gate = gate;
    }

    fn holding(&self) -> bool {
        self.gate.as_ref().is_some_and(|g| g.holds())
    }

    /// Whether a line of `len` bytes held whole is over the limit (the gate's, while it holds).
    fn over_limit(&self, len: usize) -> bool {
        len > self.max
            && !self
                .gate
                .as_ref()
                .is_some_and(|g| g.holds() && len <= g.max_held())
    }

    /// Hands out lines longer than `over` bytes in parts as they arrive ([`Frame::Begin`],
    /// [`Frame::Part`]) instead of holding them whole; `None` turns this off.
    pub fn set_streaming(&mut self, over: Option<usize>) {
        self.stream_over = over;
    }

    /// Changes the limit for lines not yet started.
    pub fn set_max(&mut self, max: usize) {
        self.max = max;
    }

    /// The limit for lines not yet started.
    pub fn max(&self) -> usize {
        self.max
    }

    /// While a line is being streamed and every byte of it read so far was handed out: its
    /// length so far. The rest of it may then move past this reader ([`Self::passed`]).
    pub fn streamed_drained(&self) -> Option<u64> {
        self.streaming
            .as_ref()
            .filter(|_| self.buf.is_empty())
            .map(|s| s.len)
    }

    /// Bytes of the line being streamed that the caller moved from the stream itself
    /// (splice): they count as handed out, for the limit and the line's head and tail.
    pub fn passed(&mut self, bytes: &[u8]) {
        if let Some(streamed) = &mut self.streaming {
            streamed.push(bytes);
        }
    }

    /// The next frame, or `None` at end of stream. A last line without a terminator is still
    /// returned as a frame.
    pub async fn next(&mut self) -> std::io::Result<Option<Frame>> {
        loop {
            if let Some(frame) = self.take_buffered() {
                return Ok(Some(frame));
            }
            if self.eof {
                return Ok(self.take_rest());
            }
            let min_read = if self.streaming.is_some() {
                STREAM_READ
            } else {
                MIN_READ
            };
            if self.buf.capacity() - self.buf.len() < min_read {
                // Grow geometrically so a huge line costs amortised O(n) copies.
                self.buf.reserve(min_read.max(self.buf.len()));
            }
            if self.inner.read_buf(&mut self.buf).await? == 0 {
                self.eof = true;
            }
        }
    }

    /// A complete frame from the buffer, if one is there; otherwise prepares for the next read.
    fn take_buffered(&mut self) -> Option<Frame> {
        loop {
            if self.at_start && self.buf.len() >= BOM.len() {
                // Decided here, not only in `frame_of`: a first line may never be held whole.
                self.at_start = false;
                if self.buf.starts_with(BOM) {
                    let _ = self.buf.split_to(BOM.len());
                    self.scanned = self.scanned.saturating_sub(BOM.len());
                }
            }
            let Some(pos) = memchr::memchr(b'\n', &self.buf[self.scanned..]) else {
                self.scanned = self.buf.len();
                return self.no_line_end_yet();
            };
            let mut line = self.buf.split_to(self.scanned + pos + 1);
            self.scanned = 0;
            let body = &line[..line.len() - 1];
            if let Some(mut discard) = self.discard.take() {
                discard.push(body);
                match discard.finish() {
                    Some(frame) => return Some(frame),
                    None => continue,
                }
            }
            if let Some(mut streamed) = self.streaming.take() {
                line.truncate(line.len() - 1);
                let cr = usize::from(line.last() == Some(&b'\r'));
                if streamed.len + (line.len() - cr) as u64 > self.max as u64 {
                    // `finish` drops the `\r`.
                    streamed.push(&line);
                    return streamed.finish();
                }
                line.truncate(line.len() - cr);
                return Some(Frame::Part {
                    bytes: line.freeze(),
                    end: true,
                });
            }
            if let Some(frame) = self.frame_of(line.freeze()) {
                return Some(frame);
            }
        }
    }

    /// No line end in the buffer: hand out a part of a streamed line, start streaming, or
    /// spill an over-limit line.
    fn no_line_end_yet(&mut self) -> Option<Frame> {
        // A `\r` at the end may be half of the line's `\r\n`: not counted or handed out yet.
        let ready = self.buf.len() - usize::from(self.buf.last() == Some(&b'\r'));
        if let Some(streamed) = &mut self.streaming {
            self.scanned = 0;
            if ready == 0 {
                return None;
            }
            if streamed.len + ready as u64 > self.max as u64 {
                streamed.push(&self.buf);
                self.buf.clear();
                self.discard = self.streaming.take();
                return None;
            }
            let part = self.buf.split_to(ready);
            streamed.push(&part);
            return Some(Frame::Part {
                bytes: part.freeze(),
                end: false,
            });
        }
        let stream = self.stream_over.is_some_and(|over| ready > over) && !self.holding();
        if self.discard.is_none() && stream && ready <= self.max {
            self.at_start = false;
            let part = self.buf.split_to(ready);
            let mut streamed = Discard {
                streamed: true,
                ..Discard::default()
            };
            streamed.push(&part);
            self.streaming = Some(streamed);
            self.scanned = self.buf.len();
            return Some(Frame::Begin(part.freeze()));
        }
        self.spill_if_over_limit();
        None
    }

    /// While a line is longer than the limit, its bytes are streamed away.
    fn spill_if_over_limit(&mut self) {
        if let Some(discard) = &mut self.discard {
            discard.push(&self.buf);
            self.buf.clear();
            self.scanned = 0;
        } else if self.over_limit(self.buf.len() - usize::from(self.buf.last() == Some(&b'\r'))) {
            self.at_start = false;
            let mut discard = Discard::default();
            discard.push(&self.buf);
            self.discard = Some(discard);
            self.buf.clear();
            self.scanned = 0;
        }
    }

    fn take_rest(&mut self) -> Option<Frame> {
        if let Some(discard) = self.discard.take() {
            return discard.finish();
        }
        if self.streaming.take().is_some() {
            self.scanned = 0;
            let mut bytes = self.buf.split().freeze();
            if bytes.last() == Some(&b'\r') {
                bytes.truncate(bytes.len() - 1);
            }
            return Some(Frame::Part { bytes, end: true });
        }
        if self.buf.is_empty() {
            return None;
        }
        self.scanned = 0;
        let rest = self.buf.split().freeze();
        self.frame_of(rest)
    }

    /// Trims terminator, `\r` and a leading BOM; skips blank lines.
    fn frame_of(&mut self, mut line: Bytes) -> Option<Frame> {
        if line.last() == Some(&b'\n') {
            line.truncate(line.len() - 1);
        }
        if line.last() == Some(&b'\r') {
            line.truncate(line.len() - 1);
        }
        if std::mem::take(&mut self.at_start) && line.starts_with(BOM) {
            let _ = line.split_to(BOM.len());
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        if self.over_limit(line.len()) {
            return Some(oversize_of(&line));
        }
        Some(Frame::Message(line))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use tokio::io::AsyncWriteExt;

    async fn frames(input: &[u8], max: usize) -> Vec<Frame> {
        let mut reader = FrameReader::new(input, max);
        let mut out = Vec::new();
        while let Some(f) = reader.next().await.unwrap() {
            out.push(f);
        }
        out
    }

    fn msg(s: &str) -> Frame {
        Frame::Message(Bytes::copy_from_slice(s.as_bytes()))
    }

    #[tokio::test]
    async fn splits_lines_and_tolerates_crlf_bom_and_blank_lines() {
        let input = b"\xEF\xBB\xBF{\"a\":1}\r\n\n  \r\n{\"b\":2}\n{\"c\":3}";
        assert_eq!(
            frames(input, 1024).await,
            vec![msg("{\"a\":1}"), msg("{\"b\":2}"), msg("{\"c\":3}")]
        );
    }

    #[tokio::test]
    async fn bom_only_stripped_at_stream_start() {
        let input = b"{}\n\xEF\xBB\xBF{}\n";
        let got = frames(input, 1024).await;
        assert_eq!(
            got[1],
            Frame::Message(Bytes::from_static(b"\xEF\xBB\xBF{}"))
        );
    }

    #[tokio::test]
    async fn a_burst_in_one_read_yields_every_message_without_more_input() {
        // The writer keeps the pipe open: a reader that waits for more input before handing
        // out the second and third message would hang here.
        let (mut tx, rx) = tokio::io::duplex(1 << 16);
        tx.write_all(b"{\"id\":1}\n{\"method\":\"x\"}\n{\"id\":2}\n")
            .await
            .unwrap();
        let mut reader = FrameReader::new(rx, 1024);
        for want in ["{\"id\":1}", "{\"method\":\"x\"}", "{\"id\":2}"] {
            assert_eq!(reader.next().await.unwrap(), Some(msg(want)));
        }
        drop(tx);
        assert_eq!(reader.next().await.unwrap(), None);
    }

    #[tokio::test]
    async fn large_line_passes_whole() {
        let big = format!("{{\"x\":\"{}\"}}", "a".repeat(5 << 20));
        let input = format!("{big}\n{{}}\n");
        let got = frames(input.as_bytes(), 16 << 20).await;
        assert_eq!(got, vec![msg(&big), msg("{}")]);
    }

    #[tokio::test]
    async fn oversize_line_is_streamed_away_keeping_head_and_tail() {
        let body = "b".repeat(300_000);
        let line = format!("{{\"jsonrpc\":\"2.0\",\"result\":\"{body}\",\"id\":7}}");
        let input = format!("{line}\n{{\"ok\":1}}\n");
        let (mut tx, rx) = tokio::io::duplex(8192);
        let writer = tokio::spawn(async move { tx.write_all(input.as_bytes()).await.unwrap() });
        let mut reader = FrameReader::new(rx, 100_000);
        let Some(Frame::Oversize { head, tail, len }) = reader.next().await.unwrap() else {
            panic!("expected oversize");
        };
        assert_eq!(len, line.len() as u64);
        assert!(head.starts_with(b"{\"jsonrpc\""));
        assert_eq!(head.len(), HEAD_KEEP);
        assert!(tail.ends_with(b"\"id\":7}"));
        assert!(tail.len() <= TAIL_KEEP);
        assert_eq!(reader.next().await.unwrap(), Some(msg("{\"ok\":1}")));
        // Streaming: the reader never held more than a few reads' worth of the line.
        assert!(
            reader.buf.capacity() < 1 << 20,
            "capacity {}",
            reader.buf.capacity()
        );
        writer.await.unwrap();
    }

    #[tokio::test]
    async fn oversize_line_arriving_in_one_piece_and_at_eof() {
        let got = frames(b"0123456789\n{}\nabcdefghijk", 5).await;
        assert_eq!(got.len(), 3);
        assert!(matches!(&got[0], Frame::Oversize { len: 10, .. }));
        assert_eq!(got[1], msg("{}"));
        assert!(matches!(&got[2], Frame::Oversize { len: 11, .. }));
    }

    #[tokio::test]
    async fn streaming_hands_out_a_large_line_in_parts() {
        let big = "s".repeat(3_000_000);
        let input = format!("{{\"a\":1}}\n{big}\r\n{{\"b\":2}}\n");
        let (mut tx, rx) = tokio::io::duplex(64 * 1024);
        let writer = tokio::spawn(async move { tx.write_all(input.as_bytes()).await.unwrap() });
        let mut reader = FrameReader::new(rx, 10_000_000);
        reader.set_streaming(Some(1_000_000));
        assert_eq!(reader.next().await.unwrap(), Some(msg("{\"a\":1}")));
        let mut got = Vec::new();
        let mut parts = 0;
        loop {
            match reader.next().await.unwrap() {
                Some(Frame::Begin(b)) => {
                    assert!(got.is_empty() && b.len() > 1_000_000);
                    got.extend_from_slice(&b);
                }
                Some(Frame::Part { bytes, end }) => {
                    parts += 1;
                    got.extend_from_slice(&bytes);
                    if end {
                        break;
                    }
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(got, big.as_bytes());
        assert!(parts >= 1);
        assert!(
            reader.buf.capacity() <= 4 << 20,
            "held {} bytes",
            reader.buf.capacity()
        );
        assert_eq!(reader.next().await.unwrap(), Some(msg("{\"b\":2}")));
        writer.await.unwrap();
    }

    #[tokio::test]
    async fn a_streamed_line_over_the_limit_becomes_oversize() {
        let line = format!("{{\"id\":9,\"x\":\"{}\"}}", "q".repeat(5_000_000));
        let input = format!("{line}\n{{}}\n");
        let (mut tx, rx) = tokio::io::duplex(64 * 1024);
        let writer = tokio::spawn(async move { tx.write_all(input.as_bytes()).await.unwrap() });
        let mut reader = FrameReader::new(rx, 2_000_000);
        reader.set_streaming(Some(100_000));
        let mut streamed = 0;
        loop {
            match reader.next().await.unwrap().unwrap() {
                Frame::Begin(b)
                | Frame::Part {
                    bytes: b,
                    end: false,
                } => streamed += b.len(),
                Frame::Oversize { head, len, .. } => {
                    assert_eq!(len, line.len() as u64);
                    assert!(head.starts_with(b"{\"id\":9"));
                    break;
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        assert!(streamed <= 2_000_000);
        assert_eq!(reader.next().await.unwrap(), Some(msg("{}")));
        writer.await.unwrap();
    }

    /// While the gate holds, a line over the stream threshold is held whole up to the gate's
    /// limit (past the reader's own), and one over that is still cut off.
    #[tokio::test]
    async fn a_holding_gate_stops_streaming_and_raises_the_limit() {
        let line = |n: usize| format!("{{\"id\":1,\"x\":\"{}\"}}", "h".repeat(n));
        let (small, large) = (line(3_000_000), line(5_000_000));
        let input = format!("{small}\n{large}\n{{}}\n");
        let (mut tx, rx) = tokio::io::duplex(64 * 1024);
        let writer = tokio::spawn(async move { tx.write_all(input.as_bytes()).await.unwrap() });
        let mut reader = FrameReader::new(rx, 2_000_000);
        reader.set_streaming(Some(100_000));
        let gate = Arc::new(StreamGate::default());
        gate.set_max_held(4_000_000);
        gate.hold(1, true);
        reader.set_gate(Some(gate.clone()));
        assert_eq!(reader.next().await.unwrap(), Some(msg(&small)));
        let Some(Frame::Oversize { len, .. }) = reader.next().await.unwrap() else {
            panic!("expected oversize");
        };
        assert_eq!(len, large.len() as u64);
        assert_eq!(reader.next().await.unwrap(), Some(msg("{}")));
        writer.await.unwrap();
    }

    /// Every `\r` becomes a space; a line without one is the same buffer, not a copy.
    #[test]
    fn carriage_returns_are_blanked() {
        let line = Bytes::from_static(b"{\"a\":\r{\"id\":6}\r\r}");
        assert_eq!(&blank_carriage_returns(line)[..], b"{\"a\": {\"id\":6}  }");
        let clean = Bytes::from_static(b"{\"id\":1}");
        let same = blank_carriage_returns(clean.clone());
        assert_eq!(same.as_ptr(), clean.as_ptr());
    }

    #[tokio::test]
    async fn partial_line_then_eof_is_returned() {
        assert_eq!(
            frames(b"{\"id\":1}\n{\"id\":", 1024).await,
            vec![msg("{\"id\":1}"), msg("{\"id\":")]
        );
    }
}
