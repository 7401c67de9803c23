//! Backups of config files, taken before every write, in `$WARDEN_STATE_DIR/backups/`.
//!
//! Each backup is two files: `<id>.bak` (the exact old bytes) and `<id>.json` (where they
//! came from). Ids sort by time: `20260314T093015.123Z-cursor-mcp.json-1a2b3c4d`. The
//! newest [`KEEP_PER_FILE`] backups of each file are kept; a backup identical to the newest
//! one of its file is not taken twice.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::model::{ClientError, ClientId};
use warden_wire::events::now_ms;

/// Backups kept per config file.
pub const KEEP_PER_FILE: usize = 10;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Backup {
    pub id: String,
    /// The backup's own file (`<id>.bak`).
    pub file: PathBuf,
    /// The config file it is a copy of.
    pub original: PathBuf,
    pub client: Option<ClientId>,
    pub created_unix_ms: u64,
    /// `created_unix_ms` as UTC, e.g. `2026-03-14T09:30:15.123Z`.
    pub created: String,
    pub size: u64,
}

#[derive(Debug, Serialize, Deserialize)]
struct Meta {
    original: PathBuf,
    client: Option<ClientId>,
    created_unix_ms: u64,
    size: u64,
}

pub(crate) fn dir(state_dir: &Path) -> PathBuf {
    state_dir.join("backups")
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian (H. Hinnant).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (
        y,
        u32::try_from(m).unwrap_or(1),
        u32::try_from(d).unwrap_or(1),
    )
}

fn parts(ms: u64) -> (i64, u32, u32, u64, u64, u64, u64) {
    let secs = ms / 1000;
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let (y, mo, d) = civil(days);
    let rem = secs % 86_400;
    (y, mo, d, rem / 3600, rem % 3600 / 60, rem % 60, ms % 1000)
}

pub(crate) fn rfc3339(ms: u64) -> String {
    let (y, mo, d, h, mi, s, f) = parts(ms);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{f:03}Z")
}

fn compact(ms: u64) -> String {
    let (y, mo, d, h, mi, s, f) = parts(ms);
    format!("{y:04}{mo:02}{d:02}T{h:02}{mi:02}{s:02}.{f:03}Z")
}

fn read_meta(meta_path: &Path) -> Option<Meta> {
    let text = std::fs::read_to_string(meta_path).ok()?;
    serde_json::from_str(&text).ok()
}

/// All backups, newest first.
pub fn backups(state_dir: &Path) -> Result<Vec<Backup>, ClientError> {
    let dir = dir(state_dir);
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(ClientError::io(
                "list backups in",
                &dir,
                "check that WARDEN_STATE_DIR is readable",
                e,
            ));
        }
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let Some(id) = path.file_stem().and_then(|s| s.to_str()).map(str::to_owned) else {
            continue;
        };
        let file = dir.join(format!("{id}.bak"));
        let Some(meta) = read_meta(&path) else {
            continue;
        };
        if !file.is_file() {
            continue;
        }
        out.push(Backup {
            file,
            original: meta.original,
            client: meta.client,
            created: rfc3339(meta.created_unix_ms),
            created_unix_ms: meta.created_unix_ms,
            size: meta.size,
            id,
        });
    }
    out.sort_by(|a, b| b.id.cmp(&a.id));
    Ok(out)
}

/// Saves `bytes` as a backup of `original`; returns its id.
pub(crate) fn save(
    state_dir: &Path,
    client: ClientId,
    original: &Path,
    bytes: &[u8],
) -> Result<String, ClientError> {
    let dir = dir(state_dir);
    let fix = "check that WARDEN_STATE_DIR is writable (nothing was changed)";
    std::fs::create_dir_all(&dir).map_err(|e| ClientError::io("create", &dir, fix, e))?;
    let mine: Vec<Backup> = backups(state_dir)?
        .into_iter()
        .filter(|b| b.original == original)
        .collect();
    if let Some(newest) = mine.first()
        && std::fs::read(&newest.file).ok().as_deref() == Some(bytes)
    {
        return Ok(newest.id.clone());
    }
    let ms = now_ms();
    let name = original.file_name().map_or_else(
        || "config".to_owned(),
        |n| warden_config::paths::safe_name(&n.to_string_lossy()),
    );
    let base = format!(
        "{}-{client}-{name}-{}",
        compact(ms),
        warden_config::fsutil::path_hash(original)
    );
    let mut id = base.clone();
    let mut n = 1;
    while dir.join(format!("{id}.bak")).exists() {
        n += 1;
        id = format!("{base}-{n}");
    }
    let bak = dir.join(format!("{id}.bak"));
    write_private(&bak, bytes).map_err(|e| ClientError::io("write the backup", &bak, fix, e))?;
    let meta = Meta {
        original: original.to_owned(),
        client: Some(client),
        created_unix_ms: ms,
        size: bytes.len() as u64,
    };
    let meta_path = dir.join(format!("{id}.json"));
    let json = serde_json::to_vec_pretty(&meta).unwrap_or_default();
    write_private(&meta_path, &json)
        .map_err(|e| ClientError::io("write the backup", &meta_path, fix, e))?;
    // Retention: the newest KEEP_PER_FILE of this file (the new one included).
    for old in mine.iter().skip(KEEP_PER_FILE.saturating_sub(1)) {
        let _ = std::fs::remove_file(&old.file);
        let _ = std::fs::remove_file(dir.join(format!("{}.json", old.id)));
    }
    Ok(id)
}

/// Backups hold secrets from `env` blocks: readable by the user only.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    use std::io::Write;
    // No fsync: a backup lost in a crash is rare and the config file itself is written
    // durably; skipping it keeps the edit loop short when a client writes often.
    opts.open(path)?.write_all(bytes)
}

/// Finds a backup by id (or a unique prefix of one).
pub fn find(state_dir: &Path, id: &str) -> Result<Backup, ClientError> {
    let all = backups(state_dir)?;
    if let Some(b) = all.iter().find(|b| b.id == id) {
        return Ok(b.clone());
    }
    let id = id.trim_end_matches(".bak").trim_end_matches(".json");
    let id = Path::new(id)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(id);
    let matching: Vec<&Backup> = all.iter().filter(|b| b.id.starts_with(id)).collect();
    match matching.as_slice() {
        [one] => Ok((*one).clone()),
        _ => Err(ClientError::NoSuchBackup {
            id: id.to_owned(),
            dir: dir(state_dir),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(compact(1_773_480_615_123), "20260314T093015.123Z");
    }
}
