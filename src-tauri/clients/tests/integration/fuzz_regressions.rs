//! Regression tests for what the cargo-fuzz targets in `fuzz/` found (docs/FUZZING.md).
//! Each test is the minimised input of one finding, through the public API.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use tokio::io::{AsyncRead, ReadBuf};
use warden_clients::{Dialect, EntryRef, unwrap_text, wrap_text};
use warden_wire::protocol::{Frame, FrameReader, HEAD_KEEP, find_id_in_fragments};

const WARDEN: &str = "/opt/warden/bin/warden";

/// Hands out `data` in reads of at most `size` bytes, like a pipe under load.
struct Trickle {
    data: Vec<u8>,
    size: usize,
}

impl AsyncRead for Trickle {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let n = self.size.min(self.data.len()).min(buf.remaining());
        let now: Vec<u8> = self.data.drain(..n).collect();
        buf.put_slice(&now);
        Poll::Ready(Ok(()))
    }
}

async fn frames(data: &[u8], size: usize, max: usize, stream_over: Option<usize>) -> Vec<Frame> {
    let mut reader = FrameReader::new(
        Trickle {
            data: data.to_vec(),
            size,
        },
        max,
    );
    reader.set_streaming(stream_over);
    let mut out = Vec::new();
    while let Some(f) = reader.next().await.unwrap() {
        out.push(f);
    }
    out
}

fn oversize(line: &[u8]) -> Frame {
    Frame::Oversize {
        head: Bytes::copy_from_slice(&line[..line.len().min(HEAD_KEEP)]),
        tail: Bytes::copy_from_slice(line),
        len: line.len() as u64,
    }
}

/// A line that crossed the limit in a small read kept only that read as its head, so the
/// `id` near its start could not be found and the waiting request was never answered.
#[tokio::test]
async fn fuzz_oversize_head_is_the_line_start_whatever_the_reads() {
    let line = br#"{"jsonrpc":"2.0","id":42,"result":{"text":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}}"#;
    let mut input = line.to_vec();
    input.push(b'\n');
    for size in [1, 3, 7, 64] {
        let got = frames(&input, size, 20, None).await;
        assert_eq!(got, vec![oversize(line)], "reads of {size}");
        let Frame::Oversize { head, tail, .. } = &got[0] else {
            unreachable!()
        };
        assert_eq!(
            find_id_in_fragments(head, tail),
            Some(warden_wire::protocol::Id::Num(42))
        );
    }
}

/// A streamed line that went over the limit lost the streamed bytes from its tail.
#[tokio::test]
async fn fuzz_streamed_oversize_keeps_its_tail() {
    let line = b"0123456789abcdefghij";
    let input = [&line[..], b"\n{}\n"].concat();
    let got = frames(&input, 4, 10, Some(3)).await;
    let last_two: Vec<&Frame> = got.iter().rev().take(2).collect();
    assert_eq!(*last_two[1], oversize(line), "{got:?}");
    assert_eq!(*last_two[0], Frame::Message(Bytes::from_static(b"{}")));
}

/// The same line over the limit is reported the same whatever the reads: a `\r\n` split
/// across reads counted the `\r`, a blank line over the limit became an `Oversize`, and a
/// BOM before an over-limit first line was counted (and then stripped from line two).
#[tokio::test]
async fn fuzz_oversize_lines_do_not_depend_on_the_reads() {
    let cases: [(&[u8], Vec<Frame>); 3] = [
        (
            b"0123456789\r\n{}\n",
            vec![oversize(b"0123456789"), msg("{}")],
        ),
        (b"           \n{}\n", vec![msg("{}")]),
        (
            b"\xEF\xBB\xBF0123456789\n\xEF\xBB\xBF{}\n",
            vec![
                oversize(b"0123456789"),
                Frame::Message(Bytes::from_static(b"\xEF\xBB\xBF{}")),
            ],
        ),
    ];
    for (input, want) in cases {
        for size in [1, 2, 5, 1000] {
            assert_eq!(
                frames(input, size, 8, None).await,
                want,
                "{:?} in reads of {size}",
                String::from_utf8_lossy(input)
            );
        }
    }
}

/// A streamed line ending in `\r\n` handed the `\r` out when the reads split the two.
#[tokio::test]
async fn fuzz_streamed_line_drops_its_cr_whatever_the_reads() {
    let input = b"abcdefgh\r\n";
    for size in [1, 2, 9, 100] {
        let mut line = Vec::new();
        for f in frames(input, size, 100, Some(3)).await {
            match f {
                Frame::Begin(b) | Frame::Part { bytes: b, .. } | Frame::Message(b) => {
                    line.extend_from_slice(&b)
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(line, b"abcdefgh", "reads of {size}");
    }
}

fn msg(s: &'static str) -> Frame {
    Frame::Message(Bytes::from_static(s.as_bytes()))
}

fn all(_: &EntryRef) -> bool {
    true
}

/// A server whose name starts with `-` was wrapped as `--server -x`, which the bridge's
/// argument parser reads as an unknown option (the client could not start it).
#[test]
fn fuzz_server_name_starting_with_a_dash_is_one_argument() {
    let text = "{\n  \"servers\": {\n    \"--server=x0\": { \"command\": \"npx\" },\n    \"-y\": { \"command\": \"uvx\", \"args\": [\"a\"] }\n  }\n}\n";
    let w = wrap_text(Dialect::Vscode, text, WARDEN, &all).expect("wrapped");
    assert_eq!(w.changed.len(), 2, "{}", w.text);
    assert!(
        w.text
            .contains(r#"["bridge", "--server=--server=x0", "--", "npx"]"#),
        "{}",
        w.text
    );
    assert!(
        w.text
            .contains(r#"["bridge", "--server=-y", "--", "uvx", "a"]"#),
        "{}",
        w.text
    );
    let u = unwrap_text(Dialect::Vscode, &w.text, &all, &w.records).unwrap();
    assert_eq!(u.text, text);
    let goose = "extensions:\n  -x:\n    cmd: npx\n    args:\n    - a\n";
    let w = wrap_text(Dialect::Goose, goose, WARDEN, &all).expect("wrapped");
    assert!(
        w.text
            .contains("    - bridge\n    - \"--server=-x\"\n    - --\n    - npx\n"),
        "{}",
        w.text
    );
}

/// A YAML block list on the last line of a CRLF file without a final newline got its new
/// items with bare LF line ends.
#[test]
fn fuzz_crlf_file_without_final_newline_keeps_crlf() {
    let text = "\u{feff}extensions: # c\r\n  zzzzzz0:\r\n    cmd: '''' # c\r\n    args:\r\n    - '--server=x' # c";
    let w = wrap_text(Dialect::Goose, text, WARDEN, &all).expect("wrapped");
    assert_eq!(
        w.text.matches('\n').count(),
        w.text.matches("\r\n").count(),
        "{:?}",
        w.text
    );
    let u = unwrap_text(Dialect::Goose, &w.text, &all, &w.records).unwrap();
    assert_eq!(u.text, text);
}

/// Valid TOML in the wrong shape was reported as "not valid TOML … correct the syntax".
#[test]
fn fuzz_config_of_the_wrong_shape_is_not_a_syntax_error() {
    use warden_config::{Config, ConfigError, Origin};
    let path = std::path::Path::new("/x/config.toml");
    for (text, key, line) in [
        ("defaults = 5\n", "defaults", 1),
        ("# c\n[servers]\nrg = 1\n", "servers.rg", 3),
        ("servers = [1]\n", "servers", 1),
        ("[[defaults]]\nretries = 1\n", "defaults", 1),
    ] {
        let err = Config::parse(path, text).unwrap_err();
        let shown = err.to_string();
        match err {
            ConfigError::Invalid {
                origin: Origin::File { line: l, .. },
                key: k,
                ..
            } => assert_eq!((k.as_str(), l), (key, line), "{shown}"),
            other => panic!("{text:?}: {other:?}"),
        }
        assert!(
            shown.contains("must be a table") && shown.contains("Fix:"),
            "{shown}"
        );
    }
    assert!(matches!(
        Config::parse(path, "defaults = [\n"),
        Err(ConfigError::Syntax { .. })
    ));
}

/// The id search of an oversized line cut a number at its first non-digit: a message
/// with id `1e2` (or `1.5`) was taken for request 1, which would then be failed.
#[test]
fn fuzz_fragment_id_is_the_whole_number() {
    use warden_wire::protocol::Id;
    // (line, its id, whether the id closes the line so the tail alone finds it)
    for (line, want, last) in [
        (&b"{\"id\"\n :\r1e2\r\n}"[..], Id::Other("1e2".into()), true),
        (
            b"{\"id\":1.5,\"result\":{}}",
            Id::Other("1.5".into()),
            false,
        ),
        (b"{\"result\":{},\"id\":-7}", Id::Num(-7), true),
    ] {
        let shown = String::from_utf8_lossy(line);
        assert_eq!(
            find_id_in_fragments(line, b""),
            Some(want.clone()),
            "{shown}"
        );
        let from_tail = find_id_in_fragments(b"", line);
        assert_eq!(from_tail, last.then_some(want), "{shown}");
    }
}

/// A head that ends inside the id's number named a different id (its prefix).
#[test]
fn fuzz_fragment_id_cut_at_the_end_of_the_head_is_no_id() {
    let line = br#"{"id":123456789,"result":{}}"#;
    assert_eq!(
        find_id_in_fragments(&line[..10], b""),
        None,
        "the head ends inside the number"
    );
    assert_eq!(
        find_id_in_fragments(&line[..16], b""),
        Some(warden_wire::protocol::Id::Num(123_456_789))
    );
}

/// A repeated key inside `params` ("duplicate field `task`") made the peek refuse a
/// message serde_json (and `JSON.parse`) reads, so the bridge could not route it; a
/// repeated `params` kept what the first one set.
#[test]
fn fuzz_peek_takes_the_last_of_repeated_keys() {
    use warden_wire::protocol::{Id, Kind, Peek};
    let line = br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"task":"t1","task":{},"name":"a","name":"b","_meta":{"progressToken":1,"progressToken":2}}}"#;
    let p = Peek::parse(line).expect("valid JSON");
    assert_eq!(p.kind(), Kind::Request);
    assert!(p.task_augmented);
    assert_eq!(p.name.as_deref(), Some("b"));
    assert_eq!(p.progress_token, Some(Id::Num(2)));
    let p = Peek::parse(br#"{"id":1,"method":"x","params":{"name":"a"},"params":[]}"#).unwrap();
    assert_eq!((p.name, p.params.is_none()), (None, true));
}

/// The tail search took the end of a key with an escaped quote (`"\"id"`) for the key
/// `id`, naming an id the message does not have.
#[test]
fn fuzz_fragment_id_not_from_a_key_ending_in_an_escaped_quote() {
    let line = br#"{"result":{},"\"id":-8}"#;
    assert_eq!(find_id_in_fragments(b"", line), None);
    assert_eq!(find_id_in_fragments(line, b""), None);
    // The tail starts at the quote: the backslash before it may be in the lost middle.
    assert_eq!(find_id_in_fragments(br#"{"xxxx\"#, br#""id":-6}"#), None);
    let line = br#"{"result":{},"a\\","id":-8}"#;
    assert_eq!(
        find_id_in_fragments(b"", line),
        Some(warden_wire::protocol::Id::Num(-8))
    );
}
