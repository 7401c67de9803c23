//! Server-sent events, as Streamable HTTP uses them: each event's `data` lines joined by `\n`
//! are one JSON-RPC message; `id`, `retry` and comments carry nothing the relay needs, and
//! `event` only the deprecated HTTP+SSE transport reads (its first event is `endpoint`).
//! Every line is read with a bound, so a server that never ends a line cannot grow memory.

use std::io::{BufRead, Read};

/// Calls `each` with the data of every event in `reader`, until it ends or `each` says stop.
/// `room(n)` is asked before an event's data grows by `n` bytes; `false` ends the stream with an
/// error (the relay's shared budget). A line over `max` bytes ends it too.
pub(crate) fn events(
    reader: impl BufRead,
    max: usize,
    room: &mut dyn FnMut(usize) -> bool,
    each: &mut dyn FnMut(&mut Vec<u8>) -> bool,
) -> std::io::Result<()> {
    named_events(reader, max, room, &mut |_, data| each(data))
}

/// As [`events`], with each event's name (`message` when it gives none).
pub(crate) fn named_events(
    mut reader: impl BufRead,
    max: usize,
    room: &mut dyn FnMut(usize) -> bool,
    each: &mut dyn FnMut(&str, &mut Vec<u8>) -> bool,
) -> std::io::Result<()> {
    let mut data: Vec<u8> = Vec::new();
    let mut name = String::new();
    let mut line: Vec<u8> = Vec::new();
    loop {
        line.clear();
        let read = (&mut reader)
            .take(max as u64 + 1)
            .read_until(b'\n', &mut line)?;
        if line.len() > max {
            return Err(std::io::Error::other(format!(
                "a line of the server's event stream is over {max} bytes"
            )));
        }
        if read == 0 {
            if !data.is_empty() {
                each(event_name(&name), &mut data);
            }
            return Ok(());
        }
        while line.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
            line.pop();
        }
        if line.is_empty() {
            if !data.is_empty() && !each(event_name(&name), &mut data) {
                return Ok(());
            }
            data.clear();
            name.clear();
            continue;
        }
        let (field, value) = match line.iter().position(|b| *b == b':') {
            Some(at) => {
                let value = &line[at + 1..];
                (&line[..at], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (&line[..], &b""[..]),
        };
        if field == b"data" {
            if data.len() + value.len() + 1 > max || !room(value.len() + 1) {
                return Err(std::io::Error::other(format!(
                    "an event of the server's stream is over {max} bytes, or the relay holds too much already"
                )));
            }
            if !data.is_empty() {
                data.push(b'\n');
            }
            data.extend_from_slice(value);
        } else if field == b"event" {
            name = String::from_utf8_lossy(value).into_owned();
        }
    }
}

fn event_name(name: &str) -> &str {
    if name.is_empty() { "message" } else { name }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str, max: usize) -> (Vec<String>, bool) {
        let mut got = Vec::new();
        let ok = events(text.as_bytes(), max, &mut |_| true, &mut |d| {
            got.push(String::from_utf8_lossy(d).into_owned());
            true
        })
        .is_ok();
        (got, ok)
    }

    #[test]
    fn each_events_data_lines_are_one_message() {
        let stream = "event: message\nid: 1\ndata: {\"a\":\ndata: 1}\n\n: a comment\n\ndata:{\"b\":2}\r\n\r\n";
        assert_eq!(all(stream, 1024).0, vec!["{\"a\":\n1}", "{\"b\":2}"]);
    }

    #[test]
    fn each_event_has_its_name() {
        let stream = "event: endpoint\ndata: /messages/?session_id=1\n\ndata: {}\n\n";
        let mut got = Vec::new();
        named_events(stream.as_bytes(), 1024, &mut |_| true, &mut |name, d| {
            got.push((name.to_owned(), String::from_utf8_lossy(d).into_owned()));
            true
        })
        .expect("a well-formed stream");
        assert_eq!(
            got,
            vec![
                ("endpoint".to_owned(), "/messages/?session_id=1".to_owned()),
                ("message".to_owned(), "{}".to_owned())
            ]
        );
    }

    #[test]
    fn an_event_cut_by_the_end_of_the_stream_still_counts() {
        assert_eq!(all("data: {\"c\":3}", 1024).0, vec!["{\"c\":3}"]);
    }

    #[test]
    fn a_line_that_never_ends_is_cut_off_at_the_bound() {
        let endless = format!(": {}", "x".repeat(10_000));
        assert!(!all(&endless, 1024).1);
    }
}
