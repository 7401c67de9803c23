//! FrameReader: arbitrary bytes, split into arbitrary reads (some of which are not ready,
//! and then the pending `next()` is dropped, as a `select!` would), with an arbitrary line
//! limit and, sometimes, streaming of large lines.
//!
//! Invariants:
//! - no panic, and every call of `next()` makes progress (no endless Pending with data left);
//! - the frames do not depend on how the input was split into reads, nor on cancelled
//!   `next()` calls: they equal what a plain reference model of the framing rules says
//!   (one frame per non-blank line, `\r` and the stream-start BOM trimmed, lines over the
//!   limit reported as `Oversize` with their length, head and tail);
//! - so every complete line within the limit comes out verbatim.
#![no_main]

use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use arbitrary::{Arbitrary, Unstructured};
use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use tokio::io::{AsyncRead, ReadBuf};
use warden_wire::protocol::{Frame, FrameReader, HEAD_KEEP, TAIL_KEEP};

#[derive(Debug)]
struct Input {
    max: usize,
    stream_over: Option<usize>,
    /// Sizes of successive reads (cycled); 0 means "not ready this time".
    reads: Vec<u8>,
    data: Vec<u8>,
}

impl<'a> Arbitrary<'a> for Input {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        // Limits of at least 3 bytes, so that a leading BOM is whole before a line can
        // cross them (real limits are 1 KiB and up).
        let max = match u.int_in_range(0u8..=3)? {
            0 => u.int_in_range(3..=8)?,
            1 => u.int_in_range(3..=64)?,
            2 => u.int_in_range(3..=600)?,
            _ => usize::MAX / 2,
        };
        let stream_over = if u.ratio(1u8, 4)? {
            Some(u.int_in_range(3..=max.min(600))?)
        } else {
            None
        };
        let n = u.int_in_range(1u8..=8)?;
        let mut reads = Vec::with_capacity(n.into());
        for _ in 0..n {
            reads.push(u.arbitrary()?);
        }
        Ok(Input {
            max,
            stream_over,
            reads,
            data: u.bytes(u.len())?.to_vec(),
        })
    }
}

/// Hands out `data` in reads of the given sizes; a 0 is one `Pending` (after a wake-up).
struct Chunked<'a> {
    data: &'a [u8],
    reads: &'a [u8],
    i: usize,
    /// The last poll was `Pending`: the next one reads (so all-zero sizes still progress).
    was_pending: bool,
}

impl AsyncRead for Chunked<'_> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let size = self.reads[self.i % self.reads.len()];
        self.i += 1;
        if size == 0 && !self.data.is_empty() && !self.was_pending {
            self.was_pending = true;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        self.was_pending = false;
        let n = usize::from(size.max(1))
            .min(self.data.len())
            .min(buf.remaining());
        let (now, rest) = self.data.split_at(n);
        buf.put_slice(now);
        self.data = rest;
        Poll::Ready(Ok(()))
    }
}

/// What the reader must report for one line (streamed lines are reassembled).
#[derive(Debug, PartialEq, Eq)]
enum Line {
    Message(Vec<u8>),
    Oversize {
        head: Vec<u8>,
        tail: Vec<u8>,
        len: u64,
    },
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The framing rules, written as plainly as possible.
fn model(data: &[u8], max: usize) -> Vec<Line> {
    let mut out = Vec::new();
    let mut pieces: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    if pieces.last().is_some_and(|p| p.is_empty()) {
        pieces.pop(); // the input ended with a terminator (or was empty)
    }
    for (i, mut line) in pieces.into_iter().enumerate() {
        if let Some(l) = line.strip_suffix(b"\r") {
            line = l;
        }
        if i == 0
            && let Some(l) = line.strip_prefix(BOM)
        {
            line = l;
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if line.len() > max {
            out.push(Line::Oversize {
                head: line[..line.len().min(HEAD_KEEP)].to_vec(),
                tail: line[line.len().saturating_sub(TAIL_KEEP)..].to_vec(),
                len: line.len() as u64,
            });
        } else {
            out.push(Line::Message(line.to_vec()));
        }
    }
    out
}

/// Polls `next()` once; a `Pending` future is dropped (cancelled) and `None` returned.
fn poll_once(reader: &mut FrameReader<Chunked<'_>>) -> Option<Option<Frame>> {
    let mut cx = Context::from_waker(Waker::noop());
    let fut = std::pin::pin!(reader.next());
    match fut.poll(&mut cx) {
        Poll::Ready(r) => Some(r.expect("in-memory reads do not fail")),
        Poll::Pending => None,
    }
}

fn run(input: &Input) -> Vec<Line> {
    let src = Chunked {
        data: &input.data,
        reads: &input.reads,
        i: 0,
        was_pending: false,
    };
    let mut reader = FrameReader::new(src, input.max);
    reader.set_streaming(input.stream_over);
    let mut out = Vec::new();
    let mut streamed: Option<Vec<u8>> = None;
    // Each call reads at least one byte or ends a frame, so this bounds the loop.
    let budget = 4 * (input.data.len() + 2) * (input.reads.len() + 1);
    for _ in 0..budget {
        let Some(frame) = poll_once(&mut reader) else {
            continue;
        };
        match frame {
            None => {
                assert!(streamed.is_none(), "stream ended inside a streamed line");
                return out;
            }
            Some(Frame::Message(b)) => {
                assert!(streamed.is_none(), "a message inside a streamed line");
                out.push(Line::Message(b.to_vec()));
            }
            Some(Frame::Begin(b)) => {
                assert!(input.stream_over.is_some(), "Begin without streaming");
                assert!(streamed.is_none(), "Begin inside a streamed line");
                streamed = Some(b.to_vec());
            }
            Some(Frame::Part { bytes, end }) => {
                let line = streamed.as_mut().expect("Part without Begin");
                line.extend_from_slice(&bytes);
                if end {
                    let line = streamed.take().unwrap_or_default();
                    // A blank line may be streamed (whether it is depends on the reads).
                    if !blank(&line) {
                        out.push(Line::Message(line));
                    }
                }
            }
            Some(Frame::Oversize { head, tail, len }) => {
                let was_streamed = streamed.take().is_some();
                let whole = len <= HEAD_KEEP as u64;
                if !(was_streamed && whole && blank(&head)) {
                    out.push(oversize(&head, &tail, len));
                }
            }
        }
    }
    panic!("the reader made no progress in {budget} polls");
}

fn blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

fn oversize(head: &Bytes, tail: &Bytes, len: u64) -> Line {
    Line::Oversize {
        head: head.to_vec(),
        tail: tail.to_vec(),
        len,
    }
}

fuzz_target!(|input: Input| {
    let want = model(&input.data, input.max);
    let got = run(&input);
    assert_eq!(
        got, want,
        "max {} stream_over {:?} reads {:?}",
        input.max, input.stream_over, input.reads
    );
});
