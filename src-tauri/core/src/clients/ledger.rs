//! What Warden did to which entry, in `$WARDEN_STATE_DIR/clients/ledger.json`:
//! - wrap records, so unwrap can remove an `args` that wrap added and restore a command
//!   literal that had to be re-quoted (everything else is undone from the file alone);
//! - entries the user unwrapped, so the watcher does not wrap them again;
//! - how values moved to the keychain were written (never the values), so unwrap writes
//!   the same bytes back.
//!
//! A missing or unreadable ledger only makes those two cases less exact.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::doc::EntryRef;
use super::edit::WrapRecord;
use super::secrets::SecretRecord;

#[derive(Debug, Default, Serialize, Deserialize)]
struct Data {
    #[serde(default)]
    files: BTreeMap<String, FileRecords>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct FileRecords {
    #[serde(default)]
    wrapped: Vec<WrapRecord>,
    #[serde(default)]
    user_unwrapped: Vec<EntryRef>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    secrets: Vec<SecretRecord>,
}

#[derive(Debug)]
pub(crate) struct Ledger {
    path: PathBuf,
    data: Data,
}

impl Ledger {
    pub fn load(state_dir: &Path) -> Ledger {
        let path = state_dir.join("clients").join("ledger.json");
        let data = match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).unwrap_or_else(|e| {
                tracing::warn!(
                    "ignoring {}: {e} (unwrap stays exact except for entries that had no args)",
                    path.display()
                );
                Data::default()
            }),
            Err(_) => Data::default(),
        };
        Ledger { path, data }
    }

    fn key(real: &Path) -> String {
        real.to_string_lossy().into_owned()
    }

    fn file(&self, real: &Path) -> Option<&FileRecords> {
        self.data.files.get(&Self::key(real))
    }

    pub fn records_for(&self, real: &Path) -> Vec<WrapRecord> {
        self.file(real)
            .map(|f| f.wrapped.clone())
            .unwrap_or_default()
    }

    pub fn secrets_for(&self, real: &Path) -> Vec<SecretRecord> {
        self.file(real)
            .map(|f| f.secrets.clone())
            .unwrap_or_default()
    }

    pub fn record_secrets(&mut self, real: &Path, records: &[SecretRecord]) {
        let f = self.data.files.entry(Self::key(real)).or_default();
        for r in records {
            f.secrets
                .retain(|s| !(s.entry == r.entry && s.var == r.var));
            f.secrets.push(r.clone());
        }
    }

    pub fn user_unwrapped(&self, real: &Path, entry: &EntryRef) -> bool {
        self.file(real)
            .is_some_and(|f| f.user_unwrapped.contains(entry))
    }

    pub fn record_wrapped(&mut self, real: &Path, records: &[WrapRecord]) {
        let f = self.data.files.entry(Self::key(real)).or_default();
        for r in records {
            f.wrapped.retain(|w| w.entry != r.entry);
            f.user_unwrapped.retain(|e| *e != r.entry);
            f.wrapped.push(r.clone());
        }
    }

    pub fn record_unwrapped(&mut self, real: &Path, entries: &[EntryRef]) {
        let f = self.data.files.entry(Self::key(real)).or_default();
        for e in entries {
            f.wrapped.retain(|w| w.entry != *e);
            f.secrets.retain(|s| s.entry != *e);
            if !f.user_unwrapped.contains(e) {
                f.user_unwrapped.push(e.clone());
            }
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes the ledger (atomically: a temporary file renamed over it).
    pub fn save(&self) -> std::io::Result<()> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let json = serde_json::to_vec_pretty(&self.data)?;
        let tmp = dir.join(format!(".ledger.{}.tmp", super::lock::token()));
        std::fs::write(&tmp, json)?;
        std::fs::rename(&tmp, &self.path).inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
    }
}
