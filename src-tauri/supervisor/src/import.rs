//! Events the supervisor missed. Bridges write every event to their JSONL log
//! (`$WARDEN_STATE_DIR/logs/<stem>-<hash>.jsonl`, `warden_config::paths::event_log`; rotated
//! to `.1`, `.2` …) whether or not a supervisor runs; a bridge that could not start its server
//! writes `spawn_failed` there before it exits. At start the supervisor reads the end of each
//! log and takes in the events its history lacks, so such a server shows as down even though
//! nobody was watching. Every `*.jsonl` in the folder but the debug logs is read; each line
//! names its server.
//!
//! Bounded, so a huge log cannot stall the start: at most [`MAX_LINES`] lines and
//! [`MAX_BYTES`] per server, read from the end, none older than the history's horizon. A line
//! that is not an event is skipped with a warning.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::api::HistoryEntry;
use super::history::History;
use warden_wire::events::{JsonlLog, LogLine, numbered, tail_lines};

/// Lines read from one server's log (its current and rotated files together).
pub const MAX_LINES: usize = 5000;
/// Bytes read from one server's log.
pub const MAX_BYTES: u64 = 1 << 20;

/// How much of each log is read.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Events older than this (wall-clock ms) are not taken.
    pub since_ms: u64,
    pub max_lines: usize,
    pub max_bytes: u64,
}

#[derive(Debug, Default)]
pub struct Imported {
    /// The events the history lacks, oldest first.
    pub entries: Vec<HistoryEntry>,
    /// Lines skipped because they are not events.
    pub corrupt: usize,
}

/// The events of the logs in `dir` that are newer than the last entry `history` holds for
/// their server and not in it already (same server, time, kind and bridge pid).
pub fn missed(dir: &Path, history: &History, bounds: Bounds) -> Imported {
    let mut last: HashMap<&str, u64> = HashMap::new();
    let mut seen: HashSet<(&str, u64, &str, Option<u32>)> = HashSet::new();
    for e in history.iter() {
        let ts = e.event.ts_ms;
        let newest = last.entry(e.server.as_str()).or_insert(ts);
        *newest = (*newest).max(ts);
        seen.insert((&e.server, ts, &*e.event.kind, pid_of(e.session.as_deref())));
    }
    let floor = |server: &str| {
        last.get(server)
            .map_or(bounds.since_ms, |t| (*t).max(bounds.since_ms))
    };
    let mut out = Imported::default();
    for log in logs(dir) {
        for line in read_log(&log, bounds, &floor, &mut out.corrupt) {
            let key = (
                line.server.as_str(),
                line.event.ts_ms,
                &*line.event.kind,
                Some(line.session),
            );
            if line.event.ts_ms >= floor(&line.server) && !seen.contains(&key) {
                out.entries.push(HistoryEntry {
                    server: line.server,
                    session: Some(line.session.to_string()),
                    event: line.event,
                    command: None,
                });
            }
        }
    }
    out.entries.sort_by_key(|e| e.event.ts_ms);
    out
}

/// The bridge pid of a session id (`<pid>-<start ms>`, or `<pid>` for an imported event).
fn pid_of(session: Option<&str>) -> Option<u32> {
    session?.split('-').next()?.parse().ok()
}

/// The servers' event logs in `dir` (not the debug logs, not the rotated files).
fn logs(dir: &Path) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = read
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(".jsonl") && !n.ends_with(".debug.jsonl"))
        })
        .collect();
    out.sort();
    out
}

/// The end of one log, newest file first, then its rotated files while the budget lasts and
/// what was read is not older than `floor` of its server; oldest first.
fn read_log(
    path: &Path,
    bounds: Bounds,
    floor: &dyn Fn(&str) -> u64,
    corrupt: &mut usize,
) -> Vec<LogLine> {
    let mut lines_left = bounds.max_lines;
    let mut bytes_left = bounds.max_bytes;
    let mut files: Vec<Vec<LogLine>> = Vec::new();
    for n in 0..=JsonlLog::DEFAULT_KEEP {
        let file = if n == 0 {
            path.to_owned()
        } else {
            numbered(path, n)
        };
        let raw = match tail_lines(&file, lines_left, bytes_left) {
            Ok(raw) => raw,
            Err(e) => {
                tracing::warn!("cannot read the event log {}: {e}", file.display());
                break;
            }
        };
        if raw.is_empty() {
            break;
        }
        lines_left -= raw.len();
        bytes_left = bytes_left.saturating_sub(raw.iter().map(|l| l.len() as u64 + 1).sum());
        let mut bad = 0;
        let parsed: Vec<LogLine> = raw
            .iter()
            .filter_map(|l| {
                let line = serde_json::from_slice::<LogLine>(l).ok();
                bad += usize::from(line.is_none());
                line
            })
            .collect();
        if bad > 0 {
            tracing::warn!(
                "{}: skipped {bad} line(s) near its end that are not events",
                file.display()
            );
            *corrupt += bad;
        }
        let older = parsed
            .first()
            .is_some_and(|l| l.event.ts_ms < floor(&l.server));
        files.push(parsed);
        if older || lines_left == 0 || bytes_left == 0 {
            break;
        }
    }
    files.into_iter().rev().flatten().collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::io::Write;
    use warden_wire::events::Event;

    const NOW: u64 = 1_000_000_000;

    fn bounds() -> Bounds {
        Bounds {
            since_ms: NOW - 3_600_000,
            max_lines: MAX_LINES,
            max_bytes: MAX_BYTES,
        }
    }

    /// A line as the bridge writes it.
    fn line(server: &str, pid: u32, event: Event) -> String {
        let mut v = serde_json::to_value(&event).unwrap();
        v["server"] = server.into();
        v["session"] = pid.into();
        format!("{v}\n")
    }

    fn spawn_failed(ts: u64) -> Event {
        Event {
            ts_ms: ts,
            code: Some("W-SPAWN-NOT-FOUND".into()),
            command: Some("nosuch-server --stdio".into()),
            cause: Some("`nosuch-server` was not found on PATH (/usr/bin:/bin)".into()),
            stderr_tail: Some(String::new()),
            fix: Some("install it or give its absolute path".into()),
            ..Event::new("spawn_failed")
        }
    }

    fn at(ts: u64, kind: &'static str) -> Event {
        Event {
            ts_ms: ts,
            ..Event::new(kind)
        }
    }

    fn append(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .unwrap();
        f.write_all(text.as_bytes()).unwrap();
    }

    fn kinds(i: &Imported) -> Vec<(String, u64)> {
        i.entries
            .iter()
            .map(|e| (format!("{}:{}", e.server, e.event.kind), e.event.ts_ms))
            .collect()
    }

    #[test]
    fn takes_what_the_history_lacks_and_skips_corrupt_lines() {
        let dir = tempfile::tempdir().unwrap();
        let logs = dir.path().join("logs");
        // Written while a supervisor ran (it has them), then while none did.
        append(
            &logs.join("gh.jsonl"),
            &[
                line("gh", 7, at(NOW - 5000, "session_start")),
                line("gh", 7, at(NOW - 4000, "restart")),
                "{\"not\": \"an event\"}\n".to_owned(),
                "garbage\n".to_owned(),
                line("gh", 7, at(NOW - 3000, "server_exit")),
                line("gh", 8, spawn_failed(NOW - 3000)),
            ]
            .concat(),
        );
        // A server only ever seen in its log, and a debug log that is not read.
        append(
            &logs.join("new.jsonl"),
            &line("new", 9, spawn_failed(NOW - 10)),
        );
        append(
            &logs.join("gh.debug.jsonl"),
            "{\"ts_ms\":1,\"from\":\"client\"}\n",
        );
        // A line cut by a crash at the end.
        append(&logs.join("new.jsonl"), "{\"server\":\"new\",\"sess");

        let mut history = History::in_memory();
        for (ts, kind) in [(NOW - 5000, "session_start"), (NOW - 3000, "server_exit")] {
            history.push(HistoryEntry {
                server: "gh".into(),
                session: Some(format!("7-{}", NOW - 6000)),
                event: at(ts, kind),
                command: None,
            });
        }
        let got = missed(&logs, &history, bounds());
        assert_eq!(
            kinds(&got),
            [
                ("gh:spawn_failed".to_owned(), NOW - 3000),
                ("new:spawn_failed".to_owned(), NOW - 10)
            ],
            "older than the history's last entry, or the same event: not taken again"
        );
        assert_eq!(got.corrupt, 3, "two bad lines and a cut one");
        let e = &got.entries[1];
        assert_eq!(e.session.as_deref(), Some("9"));
        assert_eq!(e.event, spawn_failed(NOW - 10));

        // Taken in, they are not taken again.
        for e in got.entries {
            history.push(e);
        }
        assert!(missed(&logs, &history, bounds()).entries.is_empty());
    }

    #[test]
    fn reads_rotated_files_within_its_bounds_only() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("rg.jsonl");
        // Oldest in `.2`, newer in `.1`, newest in the current file: 100 events each.
        for (n, base) in [(2u32, 0u64), (1, 100), (0, 200)] {
            let text: String = (0..100)
                .map(|k| line("rg", 1, at(NOW - 300 + base + k, "request")))
                .collect();
            let path = if n == 0 {
                log.clone()
            } else {
                numbered(&log, n)
            };
            append(&path, &text);
        }
        let history = History::in_memory();
        let all = missed(dir.path(), &history, bounds());
        assert_eq!(all.entries.len(), 300);
        assert_eq!(all.entries[0].event.ts_ms, NOW - 300, "oldest first");
        assert_eq!(all.entries[299].event.ts_ms, NOW - 1);

        let lines = missed(
            dir.path(),
            &history,
            Bounds {
                max_lines: 150,
                ..bounds()
            },
        );
        assert_eq!(lines.entries.len(), 150, "the newest 150 lines");
        assert_eq!(lines.entries[0].event.ts_ms, NOW - 150);

        let one_line = line("rg", 1, at(NOW, "request")).len() as u64;
        let bytes = missed(
            dir.path(),
            &history,
            Bounds {
                max_bytes: 10 * one_line + one_line / 2,
                ..bounds()
            },
        );
        assert_eq!(
            bytes.entries.len(),
            10,
            "the newest whole lines within the bytes"
        );
        assert_eq!(bytes.corrupt, 0, "a line cut by the bound is not corrupt");

        let recent = missed(
            dir.path(),
            &history,
            Bounds {
                since_ms: NOW - 50,
                ..bounds()
            },
        );
        assert_eq!(recent.entries.len(), 50, "none older than the horizon");
    }

    #[test]
    fn stops_at_rotated_files_older_than_the_history() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("rg.jsonl");
        append(&numbered(&log, 1), "not even json\n");
        append(
            &log,
            &[
                line("rg", 1, at(NOW - 30, "request")),
                line("rg", 1, at(NOW - 5, "request")),
            ]
            .concat(),
        );
        let mut history = History::in_memory();
        history.push(HistoryEntry {
            server: "rg".into(),
            session: None,
            event: at(NOW - 20, "health"),
            command: None,
        });
        let got = missed(dir.path(), &history, bounds());
        assert_eq!(got.entries.len(), 1);
        assert_eq!(got.corrupt, 0, "the older file was not read");
    }
}
