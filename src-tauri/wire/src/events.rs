//! Session events as JSON lines: metadata only (method, id, tool, duration, outcome, sizes),
//! never message contents. One file per server, rotated by size.
//!
//! Several bridges of one server share one log ([`JsonlLog`]): each line is one append `write`, and
//! when the file grows past its size only the writer whose file is still the current one at its
//! path (the same device and inode, on Unix) renames it; the others open the new file.

use std::borrow::Cow;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// One event. Fields that do not apply are left out of the JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct Event {
    pub ts_ms: u64,
    pub kind: Cow<'static, str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Cow<'static, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes_in: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes_out: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The stable failure code (`crate::codes`) of a failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<Cow<'static, str>>,
    /// `spawn_failed`: the server's command line as given (program and arguments).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// `spawn_failed`: why it failed, in one line for a person.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    /// `spawn_failed`: the end of the server's stderr (redacted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr_tail: Option<String>,
    /// `spawn_failed`: what to do about it, in one line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
    /// `network_denied`: the destination's host, as the sandboxed server asked for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// `network_denied`: the destination's port.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// `approval_*`: who answered (`client` or `supervisor`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// `approval_given`: the tool is allowed from now on, while its definition is unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub always: Option<bool>,
}

impl Event {
    pub fn new(kind: &'static str) -> Event {
        Event {
            ts_ms: now_ms(),
            kind: Cow::Borrowed(kind),
            ..Event::default()
        }
    }

    pub fn detail(mut self, detail: impl Into<String>) -> Event {
        self.detail = Some(detail.into());
        self
    }

    pub fn code(mut self, code: crate::codes::Code) -> Event {
        self.code = Some(Cow::Borrowed(code.as_str()));
        self
    }
}

/// An append-only JSONL file that rotates to `.1`, `.2`, … when it grows past `max_bytes`.
/// Several bridges of one server may append to the same file: each line is one `write`, and
/// only the writer whose file is still current renames it.
pub struct JsonlLog {
    path: PathBuf,
    file: File,
    size: u64,
    max_bytes: u64,
    keep: u32,
}

impl JsonlLog {
    pub const DEFAULT_MAX_BYTES: u64 = 8 << 20;
    pub const DEFAULT_KEEP: u32 = 3;

    pub fn open(path: &Path, max_bytes: u64, keep: u32) -> io::Result<JsonlLog> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let file = open_append(path)?;
        let size = file.metadata()?.len();
        Ok(JsonlLog {
            path: path.to_owned(),
            file,
            size,
            max_bytes,
            keep,
        })
    }

    /// Appends records in one write (appends of whole lines stay atomic between processes).
    pub fn append_all<'a, T: Serialize + 'a>(
        &mut self,
        records: impl IntoIterator<Item = &'a T>,
    ) -> io::Result<()> {
        let mut buf = Vec::new();
        for record in records {
            serde_json::to_writer(&mut buf, record)?;
            buf.push(b'\n');
        }
        if buf.is_empty() {
            return Ok(());
        }
        self.file.write_all(&buf)?;
        self.size += buf.len() as u64;
        if self.size > self.max_bytes {
            self.rotate()?;
        }
        Ok(())
    }

    /// Appends one record (a line is added).
    pub fn append(&mut self, record: &impl Serialize) -> io::Result<()> {
        let mut line = serde_json::to_vec(record)?;
        line.push(b'\n');
        self.file.write_all(&line)?;
        self.size += line.len() as u64;
        if self.size > self.max_bytes {
            self.rotate()?;
        }
        Ok(())
    }

    fn rotate(&mut self) -> io::Result<()> {
        if self.is_current() {
            for n in (1..self.keep).rev() {
                let _ = std::fs::rename(numbered(&self.path, n), numbered(&self.path, n + 1));
            }
            std::fs::rename(&self.path, numbered(&self.path, 1))?;
        }
        self.file = open_append(&self.path)?;
        self.size = self.file.metadata()?.len();
        Ok(())
    }

    #[cfg(unix)]
    fn is_current(&self) -> bool {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(&self.path), self.file.metadata()) {
            (Ok(a), Ok(b)) => a.ino() == b.ino() && a.dev() == b.dev(),
            _ => false,
        }
    }

    #[cfg(not(unix))]
    fn is_current(&self) -> bool {
        true
    }
}

/// One line of a server's event log as the bridge writes it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct LogLine {
    pub server: String,
    /// The pid of the bridge that wrote it.
    pub session: u32,
    #[serde(flatten)]
    pub event: Event,
}

/// The last lines of `path`, oldest first: at most `max_lines`, read from at most its last
/// `max_bytes` (a line cut by that bound is left out). A missing file has none.
pub fn tail_lines(path: &Path, max_lines: usize, max_bytes: u64) -> io::Result<Vec<Vec<u8>>> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let len = file.metadata()?.len();
    // One byte before the bound tells whether the first line read is whole.
    let start = len.saturating_sub(max_bytes.saturating_add(1));
    file.seek(SeekFrom::Start(start))?;
    let mut buf = Vec::new();
    file.take(len - start).read_to_end(&mut buf)?;
    let mut text = &buf[..];
    if len > max_bytes {
        text = match memchr::memchr(b'\n', text) {
            Some(i) => &text[i + 1..],
            None => &[],
        };
    }
    let lines: Vec<&[u8]> = text
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    let skip = lines.len().saturating_sub(max_lines);
    Ok(lines[skip..].iter().map(|l| l.to_vec()).collect())
}

fn open_append(path: &Path) -> io::Result<File> {
    OpenOptions::new().create(true).append(true).open(path)
}

/// `path` with `.n` appended: the name of its `n`th rotated file.
pub fn numbered(path: &Path, n: u32) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(format!(".{n}"));
    PathBuf::from(s)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn rotates_and_keeps_a_bounded_number_of_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("logs/x.jsonl");
        let mut log = JsonlLog::open(&path, 1000, 2).unwrap();
        for i in 0..200 {
            log.append(&Event::new("request").detail(format!("n{i}")))
                .unwrap();
        }
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 3, "{names:?}");
        for p in [path.clone(), numbered(&path, 1), numbered(&path, 2)] {
            assert!(std::fs::metadata(&p).unwrap().len() <= 1100);
            for line in std::fs::read_to_string(&p).unwrap().lines() {
                let v: Value = serde_json::from_str(line).unwrap();
                assert_eq!(v["kind"], "request");
            }
        }
        let last = std::fs::read_to_string(&path).unwrap();
        assert!(last.contains("n199"));
    }
}
