//! Each request of the supervisor's API as a type: `op::Probe` is request `Probe`, with its
//! fields, and implements [`warden_rpc::Op`] with the answer [`pairs!`](warden_rpc::pairs)
//! declares for it (in mod.rs), so `Connection::ask(op::Probe { .. })` returns a
//! `ProbeReport` and a handler that answers `Probe` with another value does not compile.
//! [`Request`](super::Request) wraps each one (`Request::Probe(op::Probe)`), so the wire is
//! the enum's.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use warden_clients::{ClientId, PlannedFile};

use super::app::AppRequest;
use super::clients::AddSandbox;
use super::reports::PolicyKind;

fn yes() -> bool {
    true
}

/// Servers' health and live sessions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Status;

/// Events of the history, oldest first: of one server or all, newer than `since_ms`
/// (wall clock), at most `limit` (the newest ones).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct History {
    #[serde(default)]
    pub server: Option<String>,
    #[serde(default)]
    pub since_ms: Option<u64>,
    #[serde(default)]
    pub limit: Option<usize>,
}

/// Restart the server process of every live session of `server` (acknowledged by each).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Restart {
    pub server: String,
}

/// `force_fallback` of `server` in config.toml; running bridges pick it up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Fallback {
    pub server: String,
    pub on: bool,
}

/// `debug` of `server` in config.toml; running bridges pick it up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Debug {
    pub server: String,
    pub on: bool,
}

/// Probe a server: by name (its command is known from a session's hello), or a command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Probe {
    #[serde(default)]
    pub server: Option<String>,
    #[serde(default)]
    pub command: Option<Vec<String>>,
    /// Time the server has to answer each step (default 60 s).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Added to the server's environment (a new entry's `env`).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The folder it runs in, absolute (`warden probe` sends the caller's, so a relative
    /// `python3 server.py` is found); the supervisor's own when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
}

/// Server processes whose bridge is gone.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Orphans;

/// Stop these orphans (pids from [`Request::Orphans`]; others are refused).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct StopOrphans {
    pub pids: Vec<u32>,
}

/// Servers the supervisor knows, with their commands (for probes and the UI).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KnownServers;

/// On the socket: the connection becomes an event stream ([`ApiMessage::ApiEvent`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Subscribe;

/// Approves the tool definitions `server` shows now (all when `tools` is empty), as
/// `warden tools approve` does; running bridges release held-back tools.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ApproveTools {
    pub server: String,
    #[serde(default)]
    pub tools: Vec<String>,
}

/// The calls of `tools_ask` tools waiting for an answer, in every session.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Approvals;

/// Answers held call `id` ([`PendingApproval::id`]): it runs, or fails with
/// `tool_declined`. `always` (with `allow`): that tool of that server is not asked about
/// again while its definition is unchanged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ApprovalAnswer {
    pub id: String,
    pub allow: bool,
    #[serde(default)]
    pub always: bool,
}

/// Forgets the `always` answers of `server` (of one tool, or all).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ApprovalsForget {
    pub server: String,
    #[serde(default)]
    pub tool: Option<String>,
}

/// Every config key for `server`: its effective value, where it comes from, its default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Limits {
    pub server: String,
}

/// Sets `key` in `[servers.NAME]` of config.toml (or removes it: `value: null`) after
/// checking it like the bridges do; running bridges pick it up.
/// With `add` or `remove` (a list key, and no `value`): those items are added to or taken
/// out of the list config.toml holds at the time of the edit, so that two changes of one
/// list at once both land.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SetLimit {
    pub server: String,
    pub key: String,
    #[serde(default)]
    pub value: Option<Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub add: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remove: Vec<String>,
}

/// The detected IDE and agent config files and their stdio servers, wrapped or not.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Clients;

/// Wraps (or unwraps) the stdio servers of one file (all active files when `file` is
/// null), one server or all; `dry_run` computes the diff only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ClientEdit {
    pub wrap: bool,
    #[serde(default)]
    pub file: Option<PathBuf>,
    #[serde(default)]
    pub server: Option<String>,
    #[serde(default)]
    pub dry_run: bool,
    /// Wrap only: also move `env` values whose names look secret into the OS keychain.
    #[serde(default)]
    pub move_secrets: bool,
}

/// The backups taken before each write of an IDE config file, newest first.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Backups;

/// Puts a backup back (after backing up the current contents); `dry_run`: the diff only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Restore {
    pub id: String,
    #[serde(default)]
    pub dry_run: bool,
}

/// The switch of the IDE config watcher: wrap new stdio servers automatically, after
/// the user's approval unless `without_asking`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AutoRewrite {
    pub on: bool,
    #[serde(default)]
    pub without_asking: bool,
}

/// Keeps `server` of `file` unwrapped: auto-rewrite no longer asks about it or wraps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct KeepUnwrapped {
    pub file: PathBuf,
    pub server: String,
}

/// The switch of probing the IDE configs' servers before they are used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ProbeIde {
    pub on: bool,
}

/// Adds server `name` to the file of each of `clients` (through the bridge unless `wrap`
/// is false); `secrets` go into the OS keychain, never into a file (not in a dry run).
/// Refused, nothing written, when a file has `name` already.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ServerAdd {
    pub name: String,
    pub clients: Vec<ClientId>,
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    /// A remote server (Streamable HTTP) in place of `command` and `args`: the entry runs
    /// `warden bridge --remote URL` (always through the bridge).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// With `url`: the bridge's `--header NAME=ENVVAR`s (the variables' values among
    /// `secrets` or `env`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub secrets: BTreeMap<String, String>,
    #[serde(default = "yes")]
    pub wrap: bool,
    /// The sandbox's keys set in config.toml before the files (with `wrap`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<AddSandbox>,
    /// `tools_ask = ["@destructive"]` set before the files (with `wrap`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ask_destructive: bool,
    /// Start it once after writing, as the files run it (the first start).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub start: bool,
    #[serde(default)]
    pub dry_run: bool,
}

/// Moves `tool` of `server` to `policy` by its own entry in `tools_deny`, `tools_ask` and
/// `tools_allow`, in one write of config.toml; running bridges pick it up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SetToolPolicy {
    pub server: String,
    pub tool: String,
    pub policy: PolicyKind,
}

/// Turns `server` on or off in the files of `clients` (every client that has it when
/// empty), only in `file` and only in `scope` of it when given (a row of the Manage
/// page: `[]` is the file's own list, Claude Code's projects `["projects", "/abs/path"]`),
/// by the client's own switch, else by keeping the entry aside.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ServerSwitch {
    pub server: String,
    #[serde(default)]
    pub clients: Vec<ClientId>,
    #[serde(default)]
    pub file: Option<PathBuf>,
    #[serde(default)]
    pub scope: Option<Vec<String>>,
    pub enabled: bool,
    #[serde(default)]
    pub dry_run: bool,
}

/// Removes `server` from the files of `clients` (all that have it when empty). With
/// `plan` (what a dry run answered), only while every file reads as it did then: else
/// nothing is written and the error (`W-CLIENT-CHANGED`) asks for a new preview.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ServerRemove {
    pub server: String,
    #[serde(default)]
    pub clients: Vec<ClientId>,
    #[serde(default)]
    pub plan: Option<Vec<PlannedFile>>,
    #[serde(default)]
    pub dry_run: bool,
}

/// The sets of config.toml, where each is applied, the projects the clients list (and those
/// a set was applied in), and what each client starts in each project.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Projects;

/// Writes set `set`'s servers, bridged, into the project files in `project` of `clients`
/// (their user files without `project`). With `plan` (what a dry run answered), only while
/// every file reads as it did then: else nothing is written (`W-CLIENT-CHANGED`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SetApply {
    pub set: String,
    #[serde(default)]
    pub project: Option<PathBuf>,
    pub clients: Vec<ClientId>,
    #[serde(default)]
    pub plan: Option<Vec<PlannedFile>>,
    #[serde(default)]
    pub dry_run: bool,
}

/// Takes out exactly the entries `SetApply` added for `set` in `project` (the user files
/// without it), of `clients` (all when empty); a file it created is deleted. `plan` as for
/// `SetApply`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SetRemove {
    pub set: String,
    #[serde(default)]
    pub project: Option<PathBuf>,
    #[serde(default)]
    pub clients: Vec<ClientId>,
    #[serde(default)]
    pub plan: Option<Vec<PlannedFile>>,
    #[serde(default)]
    pub dry_run: bool,
}

/// What only the desktop app does, served by the app's host (`warden-app`), which hosts
/// the supervisor; `warden daemon` answers an `invalid` error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct App {
    pub request: AppRequest,
}

macro_rules! into_request {
    ($($unit:ident),*; $($newtype:ident),*) => {
        $(impl From<$unit> for super::Request {
            fn from(_: $unit) -> super::Request {
                super::Request::$unit
            }
        })*
        $(impl From<$newtype> for super::Request {
            fn from(r: $newtype) -> super::Request {
                super::Request::$newtype(r)
            }
        })*
    };
}
into_request!(Status, Orphans, KnownServers, Subscribe, Approvals, Clients, Backups, Projects; History, Restart, Fallback, Debug, Probe, StopOrphans, ApproveTools, ApprovalAnswer, ApprovalsForget, Limits, SetLimit, ClientEdit, Restore, AutoRewrite, KeepUnwrapped, ProbeIde, ServerAdd, SetToolPolicy, ServerSwitch, ServerRemove, SetApply, SetRemove, App);
