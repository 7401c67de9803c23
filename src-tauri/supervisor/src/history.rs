//! The event history: the last [`MEMORY_CAP`] entries in memory, and every entry appended to
//! `$WARDEN_STATE_DIR/history.jsonl` (rotated by size, see [`JsonlLog`]) by a writer thread,
//! so that a restarted supervisor loads the last [`Options::horizon`](super::Options) of it.

use std::collections::VecDeque;
use std::io::{self, BufRead};
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use super::api::HistoryEntry;
use warden_wire::events::{JsonlLog, numbered};

/// Entries kept in memory.
pub const MEMORY_CAP: usize = 20_000;
/// Size of one history file before it rotates, and how many rotated files are kept.
pub const FILE_MAX_BYTES: u64 = 8 << 20;
pub const FILE_KEEP: u32 = 3;

pub struct History {
    entries: VecDeque<HistoryEntry>,
    writer: Option<mpsc::Sender<HistoryEntry>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl History {
    /// In memory only.
    pub fn in_memory() -> History {
        History {
            entries: VecDeque::new(),
            writer: None,
            thread: None,
        }
    }

    /// Loads the entries of `path` (and its rotated files) not older than `since_ms`, and
    /// appends new ones to it. An unreadable line is skipped (a crash may have cut the last
    /// one); an unwritable file is reported once and the history stays in memory.
    pub fn open(path: &Path, since_ms: u64) -> io::Result<History> {
        let mut entries = VecDeque::new();
        for n in (1..=FILE_KEEP).rev() {
            load(&numbered(path, n), since_ms, &mut entries);
        }
        load(path, since_ms, &mut entries);
        end_with_newline(path)?;
        let log = JsonlLog::open(path, FILE_MAX_BYTES, FILE_KEEP)?;
        let (tx, rx) = mpsc::channel::<HistoryEntry>();
        let shown = path.display().to_string();
        let thread = std::thread::Builder::new()
            .name("warden-history".into())
            .spawn(move || write_loop(log, rx, shown))?;
        Ok(History {
            entries,
            writer: Some(tx),
            thread: Some(thread),
        })
    }

    /// Adds an entry (in memory, and to the file when there is one).
    pub fn push(&mut self, entry: HistoryEntry) {
        if let Some(tx) = &self.writer
            && tx.send(entry.clone()).is_err()
        {
            self.writer = None;
        }
        if self.entries.len() == MEMORY_CAP {
            self.entries.pop_front();
        }
        self.entries.push_back(entry);
    }

    /// Writes what is queued to the file and stops writing (at shutdown); later entries stay
    /// in memory.
    pub fn close(&mut self) {
        self.writer = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &HistoryEntry> {
        self.entries.iter()
    }

    /// The newest `limit` entries matching, oldest first.
    pub fn query(
        &self,
        server: Option<&str>,
        since_ms: Option<u64>,
        limit: usize,
    ) -> Vec<HistoryEntry> {
        let mut out: Vec<HistoryEntry> = self
            .entries
            .iter()
            .rev()
            .filter(|e| server.is_none_or(|s| e.server == s))
            .take_while(|e| since_ms.is_none_or(|t| e.event.ts_ms >= t))
            .take(limit)
            .cloned()
            .collect();
        out.reverse();
        out
    }
}

/// A line cut by a crash must not swallow the next one.
fn end_with_newline(path: &Path) -> io::Result<()> {
    use std::io::{Read, Seek, SeekFrom, Write};
    let Ok(mut file) = std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .open(path)
    else {
        return Ok(());
    };
    if file.metadata()?.len() == 0 {
        return Ok(());
    }
    file.seek(SeekFrom::End(-1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    if last[0] != b'\n' {
        file.write_all(b"\n")?;
    }
    Ok(())
}

fn write_loop(mut log: JsonlLog, rx: mpsc::Receiver<HistoryEntry>, shown: String) {
    let mut warned = false;
    while let Ok(entry) = rx.recv() {
        if let Err(e) = log.append(&entry)
            && !warned
        {
            tracing::warn!(
                "cannot write the event history to {shown}: {e}; it is kept in memory only (check the disk and WARDEN_STATE_DIR)"
            );
            warned = true;
        }
    }
}

fn load(path: &Path, since_ms: u64, into: &mut VecDeque<HistoryEntry>) {
    let Ok(file) = std::fs::File::open(path) else {
        return;
    };
    for line in io::BufReader::new(file).split(b'\n') {
        let Ok(line) = line else { return };
        let Ok(entry) = serde_json::from_slice::<HistoryEntry>(&line) else {
            continue;
        };
        if entry.event.ts_ms >= since_ms {
            if into.len() == MEMORY_CAP {
                into.pop_front();
            }
            into.push_back(entry);
        }
    }
}

/// Every history entry on disk (all files), oldest first, without a supervisor: for
/// `warden probe --server` when none runs.
pub fn read_all(path: &Path) -> Vec<HistoryEntry> {
    let mut entries = VecDeque::new();
    for n in (1..=FILE_KEEP).rev() {
        load(&numbered(path, n), 0, &mut entries);
    }
    load(path, 0, &mut entries);
    entries.into()
}

/// `$WARDEN_STATE_DIR/history.jsonl`.
pub fn default_path() -> PathBuf {
    warden_config::paths::state_dir().join("history.jsonl")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use warden_wire::events::Event;

    fn entry(server: &str, ts: u64) -> HistoryEntry {
        HistoryEntry {
            server: server.into(),
            session: Some("1-2".into()),
            event: Event {
                ts_ms: ts,
                ..Event::new("restart")
            },
            command: None,
        }
    }

    #[test]
    fn persists_and_reloads_within_the_horizon() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.jsonl");
        {
            let mut h = History::open(&path, 0).unwrap();
            for ts in 1..=10 {
                h.push(entry(if ts % 2 == 0 { "a" } else { "b" }, ts));
            }
            assert_eq!(h.query(Some("a"), None, 2).len(), 2);
            assert_eq!(h.query(Some("a"), None, 2)[1].event.ts_ms, 10);
            assert_eq!(h.query(None, Some(8), 100).len(), 3);
            h.close();
        }
        assert_eq!(read_all(&path).len(), 10, "close writes what is queued");
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .and_then(|mut f| std::io::Write::write_all(&mut f, b"{\"cut"))
            .unwrap();
        let mut h = History::open(&path, 5).unwrap();
        assert_eq!(
            h.len(),
            6,
            "entries older than the horizon and a cut line are skipped"
        );
        assert_eq!(h.iter().next().unwrap().event.ts_ms, 5);
        h.push(entry("a", 11));
        drop(h);
        let start = std::time::Instant::now();
        while read_all(&path).len() < 11 {
            assert!(
                start.elapsed().as_secs() < 10,
                "the entry after a cut line is kept"
            );
            std::thread::yield_now();
        }
    }
}
