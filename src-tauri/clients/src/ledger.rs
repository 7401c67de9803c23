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
//! A missing ledger is an empty one. One that cannot be read or parsed is never written
//! over: every command that would change it refuses ([`ClientError::LedgerUnreadable`]),
//! since it may hold the only copy of an entry `disable` took out of a file; views (lists,
//! the watcher's checks) go on without it, with a warning.
//!
//! Every read-modify-write holds the ledger's lock ([`Ledger::lock`]: Warden's lock of the
//! file, `fsutil.rs`) from before it is read until it is saved; a command takes it before
//! the lock of any client file it writes, never after (one order, no deadlock). It is saved
//! (0600, fsynced with its directory) before the file it describes changes
//! ([`Ledger::commit`]), and put back when that write then does not happen
//! ([`Ledger::finish`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::doc::EntryRef;
use super::edit::WrapRecord;
use super::model::ClientError;
use super::secrets::SecretRecord;

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
struct Data {
    #[serde(default)]
    files: BTreeMap<String, FileRecords>,
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
struct FileRecords {
    #[serde(default)]
    wrapped: Vec<WrapRecord>,
    #[serde(default)]
    user_unwrapped: Vec<EntryRef>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    secrets: Vec<SecretRecord>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    managed: Vec<ManagedRecord>,
    /// Warden created the file (it was not there): the directories it created for it,
    /// deepest first. A set's remove deletes the file (and those directories, if empty)
    /// when it gives the file back as Warden created it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    created: Option<Vec<PathBuf>>,
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
    /// `Added` by `warden sets apply` for this set (its remove takes out exactly these).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set: Option<String>,
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
    /// Held from before the ledger was read: it may be saved.
    lock: Option<warden_config::fsutil::Lock>,
    /// What it was before the commits of a file write not yet settled.
    before: Option<Data>,
}

impl Ledger {
    fn file_path(state_dir: &Path) -> PathBuf {
        state_dir.join("clients").join("ledger.json")
    }

    /// Takes the ledger's lock, then reads it: for a command that changes it or writes a
    /// client's file by its records. Held until dropped. Refuses a ledger that exists but
    /// cannot be read or parsed.
    pub fn lock(state_dir: &Path) -> Result<Ledger, ClientError> {
        let path = Self::file_path(state_dir);
        let lock = warden_config::fsutil::lock(state_dir, &path)
            .map_err(|e| ClientError::lock_failed(state_dir, &path, e))?;
        let data = Self::read(state_dir, &path)?;
        private(&path);
        Ok(Ledger {
            path,
            data,
            lock: Some(lock),
            before: None,
        })
    }

    /// Reads the ledger for a look (no lock; it is replaced whole, so never seen half
    /// written). One that cannot be read counts as empty, with a warning.
    pub fn view(state_dir: &Path) -> Ledger {
        let path = Self::file_path(state_dir);
        let data = Self::read(state_dir, &path).unwrap_or_else(|e| {
            tracing::warn!("{e}");
            Data::default()
        });
        Ledger {
            path,
            data,
            lock: None,
            before: None,
        }
    }

    fn read(state_dir: &Path, path: &Path) -> Result<Data, ClientError> {
        let unreadable = |detail: String| ClientError::LedgerUnreadable {
            path: path.to_owned(),
            backups: super::backup::dir(state_dir),
            detail,
        };
        match std::fs::read(path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| unreadable(e.to_string())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Data::default()),
            Err(e) => Err(unreadable(e.to_string())),
        }
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

    /// Every file with an entry `warden sets apply` added, with those records.
    pub fn of_sets(&self) -> Vec<(PathBuf, Vec<ManagedRecord>)> {
        self.data
            .files
            .iter()
            .filter_map(|(k, f)| {
                let s: Vec<ManagedRecord> = f
                    .managed
                    .iter()
                    .filter(|r| r.set.is_some())
                    .cloned()
                    .collect();
                (!s.is_empty()).then(|| (PathBuf::from(k), s))
            })
            .collect()
    }

    /// The directories Warden created for the file it created (deepest first), if it did.
    pub fn created(&self, real: &Path) -> Option<Vec<PathBuf>> {
        self.file(real).and_then(|f| f.created.clone())
    }

    /// Records that Warden created the file (with `dirs`), or forgets it (`None`).
    pub fn record_created(&mut self, real: &Path, dirs: Option<Vec<PathBuf>>) {
        match dirs {
            Some(d) => self.data.files.entry(Self::key(real)).or_default().created = Some(d),
            None => {
                if let Some(f) = self.data.files.get_mut(&Self::key(real)) {
                    f.created = None;
                }
            }
        }
    }

    /// Forgets the records of `entry` (of `kind`, or all).
    pub fn forget_managed(&mut self, real: &Path, entry: &EntryRef, kind: Option<ManagedKind>) {
        if let Some(f) = self.data.files.get_mut(&Self::key(real)) {
            f.managed
                .retain(|r| !(r.entry == *entry && kind.is_none_or(|k| r.kind == k)));
        }
    }

    /// The error of a record that does not fit its file (a damaged or forged ledger).
    pub fn damaged(&self, detail: String) -> ClientError {
        let state_dir = self.path.parent().and_then(Path::parent);
        ClientError::LedgerUnreadable {
            path: self.path.clone(),
            backups: super::backup::dir(state_dir.unwrap_or(Path::new("."))),
            detail,
        }
    }

    /// Makes `change` and saves the ledger, before the file it describes changes (so that
    /// no change of a file is ever without its undo on disk). A commit made again before
    /// the write finishes replaces the one before. The file write then
    /// [`finish`](Self::finish)es it, also after a failed save (which may have left an
    /// earlier commit on disk).
    pub fn commit(&mut self, change: impl FnOnce(&mut Ledger)) -> Result<(), ClientError> {
        // Again for the same file (its write redone on new contents): from the same start.
        let before = self.before.take().unwrap_or_else(|| self.data.clone());
        self.data = before.clone();
        change(self);
        let saved = self.save();
        if saved.is_err() {
            self.data = before.clone();
        }
        self.before = Some(before);
        saved
    }

    /// After the file write the commits were for: kept when it `landed`, else taken back
    /// (the ledger as before the first of them).
    pub fn finish(&mut self, landed: bool) {
        let Some(before) = self.before.take() else {
            return;
        };
        if !landed {
            self.data = before;
            if let Err(e) = self.save() {
                tracing::warn!("{e}");
            }
        }
    }

    /// Writes the ledger: a 0600 temporary file, fsynced, renamed over it, the directory
    /// fsynced. Only under its lock.
    fn save(&self) -> Result<(), ClientError> {
        let io = |e| {
            ClientError::io(
                "save",
                &self.path,
                "check that WARDEN_STATE_DIR is writable and the disk is not full",
                e,
            )
        };
        if self.lock.is_none() {
            return Err(io(std::io::Error::other(
                "the ledger was read without its lock",
            )));
        }
        let json = serde_json::to_vec_pretty(&self.data)
            .map_err(std::io::Error::from)
            .map_err(io)?;
        warden_config::fsutil::replace(&self.path, &json, private_mode()).map_err(io)
    }
}

/// 0600: the ledger holds the commands and paths of the user's servers, and the exact bytes
/// of each entry `disable` took out of its file, `env` values (tokens, say) included.
#[cfg(unix)]
fn private_mode() -> Option<std::fs::Permissions> {
    use std::os::unix::fs::PermissionsExt;
    Some(std::fs::Permissions::from_mode(0o600))
}

#[cfg(not(unix))]
fn private_mode() -> Option<std::fs::Permissions> {
    None
}

/// Makes an existing ledger 0600 (earlier versions wrote it with the umask's mode).
fn private(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let (Ok(meta), Some(mode)) = (std::fs::symlink_metadata(path), private_mode())
            && meta.is_file()
            && meta.permissions().mode() & 0o077 != 0
        {
            let _ = std::fs::set_permissions(path, mode);
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}
