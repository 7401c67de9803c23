//! Server-sent events, as Streamable HTTP uses them: each event's `data` lines joined by `\n`
//! are one JSON-RPC message; `id`, `event`, `retry` and comments carry nothing the relay needs.

use std::io::BufRead;

/// The longest event read; a longer one ends the stream (the server is not answering as MCP
/// servers do).
const MAX_EVENT: usize = 64 << 20;

/// Calls `each` with the data of every event in `reader`, until it ends or `each` says stop.
pub(crate) fn events(
    mut reader: impl BufRead,
    mut each: impl FnMut(&str) -> bool,
) -> std::io::Result<()> {
    let mut data = String::new();
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            if !data.is_empty() {
                each(&data);
            }
            return Ok(());
        }
        let text = line.trim_end_matches(['\n', '\r']);
        if text.is_empty() {
            if !data.is_empty() && !each(&data) {
                return Ok(());
            }
            data.clear();
            continue;
        }
        let (field, value) = match text.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (text, ""),
        };
        if field == "data" {
            if !data.is_empty() {
                data.push('\n');
            }
            data.push_str(value);
            if data.len() > MAX_EVENT {
                return Err(std::io::Error::other(format!(
                    "an event of the server's stream is over {MAX_EVENT} bytes"
                )));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str) -> Vec<String> {
        let mut got = Vec::new();
        events(text.as_bytes(), |d| {
            got.push(d.to_owned());
            true
        })
        .unwrap_or_default();
        got
    }

    #[test]
    fn each_events_data_lines_are_one_message() {
        let stream = "event: message\nid: 1\ndata: {\"a\":\ndata: 1}\n\n: a comment\n\ndata:{\"b\":2}\r\n\r\n";
        assert_eq!(all(stream), vec!["{\"a\":\n1}", "{\"b\":2}"]);
    }

    #[test]
    fn an_event_cut_by_the_end_of_the_stream_still_counts() {
        assert_eq!(all("data: {\"c\":3}"), vec!["{\"c\":3}"]);
    }
}
