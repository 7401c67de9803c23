//! The IDE and agent config files as the API shows them: the clients report, the changes
//! of wrap, unwrap and restore, and what the config watcher saw.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use warden_clients::{Backup, ClientId, Notice, PlannedFile, ServerEntry};

/// `Request::Clients`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ClientsReport {
    pub files: Vec<ClientFile>,
    /// Whether new stdio servers are wrapped as they appear.
    pub auto_rewrite: bool,
    /// With auto-rewrite on: wrap them without asking first.
    pub without_asking: bool,
    /// With auto-rewrite on and asking: the unwrapped servers that await the user's approval
    /// (or "keep unwrapped"), each with its exact command and what deserves a look.
    pub awaiting: Vec<AwaitingServer>,
    /// Whether the IDE configs' servers are probed before they are used; `null` when this
    /// supervisor never does (`warden daemon` without `--probe-ide`).
    pub probe_ide: Option<bool>,
    /// Whether the watcher runs (it does in the tray app and `warden daemon`).
    pub watching: bool,
    /// The `warden` binary written into wrapped entries.
    pub warden: Option<PathBuf>,
    /// Whether a server can run sandboxed here (`sandbox = "on"`: bubblewrap works).
    #[serde(default)]
    pub sandbox_works: bool,
}

/// An unwrapped server auto-rewrite asks about.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AwaitingServer {
    pub client: ClientId,
    pub client_name: String,
    pub path: PathBuf,
    pub server: ServerEntry,
}

/// One detected config file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ClientFile {
    pub client: ClientId,
    pub client_name: String,
    pub path: PathBuf,
    /// `json`, `jsonc`, `toml` or `yaml`.
    pub format: String,
    /// The project directory of a project-level file.
    pub project: Option<PathBuf>,
    /// Whether the client reads this file.
    pub active: bool,
    pub exists: bool,
    pub servers: Vec<ServerEntry>,
    /// Entries `disable` took out of this file (a client without a switch of its own) and
    /// Warden keeps until they are enabled again (`enabled: false`).
    #[serde(default)]
    pub kept_aside: Vec<ServerEntry>,
    /// Why the file cannot be read or parsed (it is then left alone).
    pub error: Option<String>,
    /// What the client needs after Warden changes this file (restart, approval, reload).
    pub notices: Vec<Notice>,
    /// The client kept reverting Warden's edits: the watcher leaves the file alone.
    pub given_up: bool,
}

/// What wrapping or unwrapping did (or, in a dry run, would do) to one file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FileChangeView {
    pub client: ClientId,
    pub path: PathBuf,
    /// Servers changed.
    pub changed: Vec<String>,
    /// Servers left alone, with the reason.
    pub skipped: Vec<SkippedEntry>,
    /// Unified diff; empty when nothing changes.
    pub diff: String,
    pub written: bool,
    /// The id of the backup taken before writing.
    pub backup: Option<String>,
    /// Values moved into the OS keychain (wrap) or written back (unwrap): `SERVER/VAR`.
    pub secrets: Vec<String>,
    pub notices: Vec<Notice>,
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SkippedEntry {
    pub name: String,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RestoreView {
    pub backup: Backup,
    pub written: bool,
    /// The backup taken of the contents that were replaced.
    pub previous: Option<String>,
    pub diff: String,
}

/// What the IDE config watcher saw or did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum ClientChangeKind {
    /// New stdio servers run unwrapped.
    NewServers,
    /// New stdio servers await the user's approval before auto-rewrite wraps them.
    Awaiting,
    /// Servers were wrapped automatically.
    Wrapped,
    /// The client put back the original command of wrapped servers.
    Reverted,
    /// The client keeps reverting: the file is left alone.
    GaveUp,
    /// A file could not be read, parsed or written.
    Failed,
}

/// The sandbox the Add flow asks for (`sandbox = "on"`). The network is off unless asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AddSandbox {
    /// Its runner's package registry only (the preset of `flows::add::runner_preset`), where the
    /// command starts a package runner; on unless unticked.
    #[serde(default = "yes")]
    pub registry: bool,
    /// The network for the first start only (the package runner downloads the package).
    #[serde(default)]
    pub first_start: bool,
    /// The network kept on (a server that calls an API).
    #[serde(default)]
    pub keep: bool,
}

fn yes() -> bool {
    true
}

/// The network of the first start, as it goes: allowed for that start alone, then gone with
/// it (config.toml never holds it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum FirstStartNetwork {
    Allowed,
    Taken,
}

/// What the workflow is doing, as it happens (`ApiEvent::AddProgress`; the CLI prints it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "step", rename_all = "snake_case")]
pub enum AddStep {
    /// The clients' files were written (each change, as the answer will have it).
    Written { changes: Vec<FileChangeView> },
    /// The first start began.
    FirstStart,
    /// The first start's network changed.
    Network { state: FirstStartNetwork },
}

/// What `ServerAdd` did (or, in a dry run, would do).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AddAnswer {
    pub changes: Vec<FileChangeView>,
    pub risks: Vec<warden_clients::Risk>,
    /// The `sandbox_network` preset of its package runner (`@npm`, `@pypi`), if it has one:
    /// with a sandbox, the network is that registry only unless asked otherwise.
    #[serde(default)]
    pub preset: Option<String>,
    /// The first start's report (`start`, once every file was written).
    #[serde(default)]
    pub probe: Option<super::reports::ProbeReport>,
    /// The first start's network at the end, when it was allowed for that start only.
    #[serde(default)]
    pub network: Option<FirstStartNetwork>,
}

impl From<&warden_clients::FileChange> for FileChangeView {
    fn from(c: &warden_clients::FileChange) -> FileChangeView {
        FileChangeView {
            client: c.file.client,
            path: c.file.path.clone(),
            changed: c.changed.iter().map(|e| e.name.clone()).collect(),
            skipped: c
                .skipped
                .iter()
                .map(|(e, reason)| SkippedEntry {
                    name: e.name.clone(),
                    reason: reason.clone(),
                })
                .collect(),
            diff: c.diff.clone(),
            written: c.written,
            backup: c.backup.clone(),
            secrets: c.secrets.clone(),
            notices: c.notices.clone(),
            error: c.error.as_ref().map(|e| e.coded()),
        }
    }
}

impl FileChangeView {
    /// The change without its diff: what an event may carry (every subscriber gets events,
    /// and a diff holds the file's text, its neighbours' values too).
    pub fn without_diff(c: &warden_clients::FileChange) -> FileChangeView {
        FileChangeView {
            diff: String::new(),
            ..FileChangeView::from(c)
        }
    }
}

impl From<warden_clients::FileChange> for FileChangeView {
    fn from(c: warden_clients::FileChange) -> FileChangeView {
        FileChangeView::from(&c)
    }
}

/// What `SetApply` or `SetRemove` did (or, in a dry run, would do).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SetAnswer {
    pub files: Vec<SetFileView>,
    /// The clients asked for that have no project file Warden knows of (nothing written).
    pub skipped: Vec<ClientId>,
    /// A dry run's plan: sent back with the request, it writes exactly what was shown, only
    /// while every file reads as it did then (else `W-CLIENT-CHANGED`, nothing written).
    pub plan: Vec<PlannedFile>,
    /// Apply into a project: its entries run this Warden by its absolute path (`warden` on
    /// PATH is not this one), and why that matters.
    pub warning: Option<String>,
}

/// One file of a set's apply or remove.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SetFileView {
    /// The change; `changed` names the set's servers added (apply) or taken out (remove).
    pub change: FileChangeView,
    /// Apply: the set's servers already in the file, left as they are.
    pub kept: Vec<String>,
    /// Apply: the file is (would be) created; remove: it is (would be) deleted, as Warden
    /// created it.
    pub whole_file: bool,
}
