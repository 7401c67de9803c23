//! What Warden did to which entry, in `$WARDEN_STATE_DIR/clients/ledger.json`:
//! - wrap records, so unwrap can remove an `args` that wrap added and restore a command
//!   literal that had to be re-quoted (everything else is undone from the file alone);
//! - entries the user unwrapped, so the watcher does not wrap them again;
//! - how values moved to the keychain were written (never the values), so unwrap writes
//!   the same bytes back;
//! - what `warden servers add | disable` did (`managed`): the edits that undo it while the
//!   file is as Warden left it, an entry taken out of a file whose client has no on/off
//!   switch (its exact bytes), and whether a switch's key was added. Older ledgers, without
//!   it, load as before.
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
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    managed: Vec<ManagedRecord>,
}

/// What `warden servers add | disable` did to one entry of a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ManagedRecord {
    pub entry: EntryRef,
    pub kind: ManagedKind,
    /// The file's fingerprint right after the edit: the undo applies only to that text.
    pub after: String,
    /// Edits of that text (start, end, old bytes) that give back the text before.
    pub undo: Vec<(usize, usize, String)>,
    /// `Stashed`: the entry's own bytes, put back at the end of the list when the file
    /// changed meanwhile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
    /// `Switched`: Warden added the switch's key (enable takes it out).
    #[serde(default)]
    pub key_added: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ManagedKind {
    /// Added by `servers add`.
    Added,
    /// Turned off with the client's own switch.
    Switched,
    /// Taken out of the file by `servers disable` (the client has no switch).
    Stashed,
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

    /// The `servers add | disable` records of a file.
    pub fn managed_for(&self, real: &Path) -> Vec<ManagedRecord> {
        self.file(real)
            .map(|f| f.managed.clone())
            .unwrap_or_default()
    }

    /// Every file with an entry taken out by `servers disable`, with those records.
    pub fn stashed(&self) -> Vec<(PathBuf, Vec<ManagedRecord>)> {
        self.data
            .files
            .iter()
            .filter_map(|(k, f)| {
                let s: Vec<ManagedRecord> = f
                    .managed
                    .iter()
                    .filter(|r| r.kind == ManagedKind::Stashed)
                    .cloned()
                    .collect();
                (!s.is_empty()).then(|| (PathBuf::from(k), s))
            })
            .collect()
    }

    /// Keeps `record` (replacing one of the same entry and kind).
    pub fn record_managed(&mut self, real: &Path, record: ManagedRecord) {
        let f = self.data.files.entry(Self::key(real)).or_default();
        f.managed
            .retain(|r| !(r.entry == record.entry && r.kind == record.kind));
        f.managed.push(record);
    }

    /// Forgets the records of `entry` (of `kind`, or all).
    pub fn forget_managed(&mut self, real: &Path, entry: &EntryRef, kind: Option<ManagedKind>) {
        if let Some(f) = self.data.files.get_mut(&Self::key(real)) {
            f.managed
                .retain(|r| !(r.entry == *entry && kind.is_none_or(|k| r.kind == k)));
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
