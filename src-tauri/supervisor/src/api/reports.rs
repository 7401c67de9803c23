//! The answers to the requests on history, commands, probes, orphans, known servers and
//! limits.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use warden_wire::events::Event;
use warden_wire::protocol::Era;

/// One event of the history: a bridge's event, or one the supervisor made (`session_open`,
/// `session_unresponsive`, `session_reaped`, `probe`, `command`, `orphan` …).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct HistoryEntry {
    pub server: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub session: Option<String>,
    pub event: Event,
    /// On `session_open`: the server command, so it can be probed later.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub command: Option<Vec<String>>,
}

/// A call of a `tools_ask` tool held by a bridge until it is allowed (`warden approvals`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PendingApproval {
    /// What [`super::Request::ApprovalAnswer`] names.
    pub id: String,
    pub server: String,
    pub session: String,
    pub tool: String,
    /// The call's arguments as JSON text, secrets redacted and long values cut.
    pub args: String,
    pub age_ms: u64,
    /// Time left before the call fails with `tool_not_approved`.
    pub left_ms: u64,
    /// The client was asked as well (elicitation); the first answer wins.
    pub client_asked: bool,
}

/// What a restart, fallback or debug command did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CommandOutcome {
    pub ok: bool,
    pub message: String,
    /// The config.toml that was edited (fallback, debug).
    pub config: Option<PathBuf>,
    /// Each live session of the server, and whether it acknowledged or picked up the change.
    pub sessions: Vec<SessionAck>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SessionAck {
    pub session: String,
    pub pid: u32,
    pub ok: bool,
    pub message: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ProbeReport {
    pub server: Option<String>,
    pub command: Vec<String>,
    pub ok: bool,
    /// Wall-clock ms when the probe started.
    pub ts_ms: u64,
    /// Spawn to the server's first answer (to `server/discover`, else to `initialize`).
    pub cold_start_ms: Option<u64>,
    /// Spawn to the end of shutdown.
    pub total_ms: u64,
    pub tools: Option<usize>,
    pub tool_names: Vec<String>,
    /// `serverInfo` from the answer to `server/discover` or `initialize`.
    pub server_info: Option<Value>,
    pub protocol_version: Option<String>,
    /// The era the probe spoke with the server: `modern` when it answered `server/discover`,
    /// `legacy` when it answered `initialize` instead (`modern` too when it refused `initialize`
    /// naming only versions Warden does not speak); absent when it answered neither.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub era: Option<Era>,
    pub error: Option<String>,
    /// The stable code of `error` (`W-SPAWN-NOT-FOUND` …; docs/errors.md).
    pub code: Option<String>,
    /// How the process ended ("exited with status 0" …).
    pub shutdown: String,
    pub stderr_tail: String,
}

/// A server process whose bridge is gone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Orphan {
    pub pid: u32,
    pub ppid: u32,
    pub pgid: u32,
    /// `WARDEN_SESSION` of its environment, when it has one.
    pub session: Option<String>,
    pub bridge_pid: Option<u32>,
    pub server: Option<String>,
    pub command: Vec<String>,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct StopResult {
    pub pid: u32,
    pub ok: bool,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct KnownServer {
    pub name: String,
    pub command: Option<Vec<String>>,
    /// Where it is known from: `session` (live), `history`, `config`, `ide` (a detected
    /// client config file).
    pub source: String,
}

/// `Request::Limits`: the form of a server's limits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LimitsReport {
    pub server: String,
    /// The config.toml read (and edited by `SetLimit`).
    pub config: Option<PathBuf>,
    pub keys: Vec<LimitValue>,
    /// Unknown keys and tables of the file.
    pub warnings: Vec<String>,
    /// Why the file could not be used (the values shown are then the defaults).
    pub error: Option<String>,
    /// The home folder of the supervisor's user, the `~` of the sandbox's paths.
    #[serde(default)]
    pub home: Option<PathBuf>,
    /// What a sandboxed run of this server may not read: `/run`, the home's keys (~/.ssh, …),
    /// Warden's config, state, socket and runtime folders, and its `sandbox_deny`; whether
    /// they exist or not. The window grants no folder that holds one or lies in one.
    #[serde(default)]
    pub sandbox_hidden: Vec<PathBuf>,
    /// The names that stay read-only inside every folder a sandboxed server may write
    /// (`.git/config`, `.vscode`, `.mcp.json`, ...: what other programs run later).
    #[serde(default)]
    pub sandbox_read_only_names: Vec<String>,
    /// Each folder of this server's `sandbox_write` that exists, with what of those names
    /// it holds.
    #[serde(default)]
    pub sandbox_grants: Vec<GrantReadOnly>,
    /// Each tool Warden knows of this server (pinned, seen since, or called) and its policy,
    /// as the bridges decide it ([`warden_config::policy`]) from these lists and its pinned definition.
    #[serde(default)]
    pub tools: Vec<ToolPolicy>,
}

/// A folder a sandboxed server may write, and what stays read-only in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct GrantReadOnly {
    pub grant: PathBuf,
    /// The read-only names it holds, resolved.
    pub read_only: Vec<PathBuf>,
    /// Whether it is a git work tree (its `.git` config and hooks stay read-only).
    pub git: bool,
}

/// What happens to a call of a tool ([`warden_config::policy::Policy`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum PolicyKind {
    Allow,
    Ask,
    Deny,
}

/// One tool's policy on the server page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ToolPolicy {
    pub tool: String,
    pub policy: PolicyKind,
    /// The list that decided (`tools_deny`, `tools_ask`, `tools_allow`); `None` for a tool
    /// allowed because no list names it.
    pub key: Option<String>,
    /// The entry of that list that matched: a name glob, or a selector (`@destructive` …);
    /// `None` for a tool denied because a non-empty `tools_allow` does not list it.
    pub entry: Option<String>,
    /// The list entry that names this tool and no other ([`warden_config::policy::name_entry`]):
    /// what the page adds to or removes from a list to move it by name.
    pub name_entry: String,
    /// `tools_allow` lets it through: it is empty, or an entry matches.
    pub allow_listed: bool,
    /// The annotation selectors its newest definition matches.
    pub selectors: Vec<String>,
    /// Its definition is pinned; else the spec's defaults are assumed (a destructive,
    /// open-world write), as the bridge does for a tool it has not seen listed.
    pub known: bool,
    /// An "always" answer is kept for it (`warden approvals forget` undoes it).
    pub always: bool,
    /// That answer matches its definitions now (else the next call is asked about again).
    pub always_current: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LimitValue {
    pub key: String,
    /// The effective value.
    pub value: Value,
    pub default: Value,
    pub source: LimitSource,
    /// The line of config.toml the value is on.
    pub line: Option<usize>,
    /// What it means and why the default is what it is.
    pub doc: String,
    /// What a good value looks like.
    pub fix: String,
    /// The strings it takes when it takes one of a few (the window offers them as a choice;
    /// `config::CHOICES`); absent for the others.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub choices: Vec<String>,
}

/// Where an effective value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum LimitSource {
    /// Built in.
    Default,
    /// `[defaults]` of config.toml.
    Defaults,
    /// `[servers.NAME]` of config.toml.
    Server,
}
