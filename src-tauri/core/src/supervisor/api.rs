//! The supervisor's one typed API: requests, responses and the event stream, declared once.
//!
//! The tray process (`warden-tray`) calls [`Supervisor::handle`](super::Supervisor::handle)
//! in-process and subscribes to [`ApiEvent`]s; it and `warden daemon` serve the same enums on the control socket
//! as [`ApiMessage`] lines next to the bridges' [`Message`](crate::control::Message)s (each
//! side ignores the `type`s it does not know, so the two share one socket and one framing).
//! `warden status --json` is [`StatusReport`], in the shape of CONTRACT.md.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::clients::{Backup, ClientId, Notice, ServerEntry};
use crate::events::Event;

/// What the UI and the command line may ask of the supervisor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// Servers' health and live sessions.
    Status,
    /// Events of the history, oldest first: of one server or all, newer than `since_ms`
    /// (wall clock), at most `limit` (the newest ones).
    History {
        #[serde(default)]
        server: Option<String>,
        #[serde(default)]
        since_ms: Option<u64>,
        #[serde(default)]
        limit: Option<usize>,
    },
    /// Restart the server process of every live session of `server` (acknowledged by each).
    Restart { server: String },
    /// `force_fallback` of `server` in config.toml; running bridges pick it up.
    Fallback { server: String, on: bool },
    /// `debug` of `server` in config.toml; running bridges pick it up.
    Debug { server: String, on: bool },
    /// Probe a server: by name (its command is known from a session's hello), or a command.
    Probe {
        #[serde(default)]
        server: Option<String>,
        #[serde(default)]
        command: Option<Vec<String>>,
        /// Time the server has to answer each step (default 60 s).
        #[serde(default)]
        timeout_ms: Option<u64>,
    },
    /// Server processes whose bridge is gone.
    Orphans,
    /// Stop these orphans (pids from [`Request::Orphans`]; others are refused).
    StopOrphans { pids: Vec<u32> },
    /// Servers the supervisor knows, with their commands (for probes and the UI).
    KnownServers,
    /// On the socket: the connection becomes an event stream ([`ApiMessage::ApiEvent`]).
    Subscribe,
    /// Approves the tool definitions `server` shows now (all when `tools` is empty), as
    /// `warden tools approve` does; running bridges release held-back tools.
    ApproveTools {
        server: String,
        #[serde(default)]
        tools: Vec<String>,
    },
    /// Every config key for `server`: its effective value, where it comes from, its default.
    Limits { server: String },
    /// Sets `key` in `[servers.NAME]` of config.toml (or removes it: `value: null`) after
    /// checking it like the bridges do; running bridges pick it up.
    SetLimit {
        server: String,
        key: String,
        #[serde(default)]
        value: Option<Value>,
    },
    /// The detected IDE and agent config files and their stdio servers, wrapped or not.
    Clients,
    /// Wraps (or unwraps) the stdio servers of one file (all active files when `file` is
    /// null), one server or all; `dry_run` computes the diff only.
    ClientEdit {
        wrap: bool,
        #[serde(default)]
        file: Option<PathBuf>,
        #[serde(default)]
        server: Option<String>,
        #[serde(default)]
        dry_run: bool,
        /// Wrap only: also move `env` values whose names look secret into the OS keychain.
        #[serde(default)]
        move_secrets: bool,
    },
    /// The backups taken before each write of an IDE config file, newest first.
    Backups,
    /// Puts a backup back (after backing up the current contents); `dry_run`: the diff only.
    Restore {
        id: String,
        #[serde(default)]
        dry_run: bool,
    },
    /// The switch of the IDE config watcher: wrap new stdio servers automatically, after
    /// the user's approval unless `without_asking`.
    AutoRewrite {
        on: bool,
        #[serde(default)]
        without_asking: bool,
    },
    /// Keeps `server` of `file` unwrapped: auto-rewrite no longer asks about it or wraps it.
    KeepUnwrapped { file: PathBuf, server: String },
    /// The switch of probing the IDE configs' servers before they are used.
    ProbeIde { on: bool },
    /// What only the desktop app does, served by the tray process (`warden-tray`) that hosts
    /// the supervisor; `warden daemon` answers an `invalid` error.
    App { request: crate::desktop::AppRequest },
}

/// The answer to a [`Request`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Response {
    Status(StatusReport),
    History {
        entries: Vec<HistoryEntry>,
    },
    Command(CommandOutcome),
    Probe(ProbeReport),
    Orphans {
        orphans: Vec<Orphan>,
    },
    Stopped {
        stopped: Vec<StopResult>,
    },
    KnownServers {
        servers: Vec<KnownServer>,
    },
    Subscribed,
    Limits(LimitsReport),
    Clients(ClientsReport),
    ClientEdit {
        changes: Vec<FileChangeView>,
    },
    Backups {
        backups: Vec<Backup>,
    },
    Restore(RestoreView),
    AutoRewrite {
        on: bool,
        without_asking: bool,
    },
    App {
        response: crate::desktop::AppResponse,
    },
    KeptUnwrapped {
        servers: Vec<String>,
    },
    ProbeIde {
        on: bool,
    },
    Error(ApiError),
}

/// Errors at the UI boundary: a small code enum and a message for a person.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// No such server or session.
    NotFound,
    /// The request cannot be carried out as asked (e.g. a probe without a command).
    Invalid,
    /// config.toml could not be read, parsed or written.
    Config,
    /// Something failed on the way (I/O, a process).
    Io,
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ApiError {
        ApiError {
            code,
            message: message.into(),
        }
    }
}

/// `warden status --json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct StatusReport {
    pub servers: Vec<ServerStatus>,
    pub sessions: Vec<SessionStatus>,
    #[serde(default)]
    pub supervisor: SupervisorInfo,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SupervisorInfo {
    pub pid: u32,
    pub socket: PathBuf,
    pub config: Option<PathBuf>,
    pub history: Option<PathBuf>,
    pub started_ms: u64,
    /// Events kept in memory (loaded from the persisted history, then live).
    pub history_events: usize,
}

/// Health of a server; [`Health::rank`] orders them by the attention they need.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Health {
    Starting,
    Healthy,
    Degraded,
    Down,
    Fallback,
    Idle,
}

impl Health {
    /// How much attention the health needs, from 0 (idle) to 3 (down): a set of servers is
    /// as bad as its highest rank.
    pub fn rank(self) -> u8 {
        match self {
            Health::Idle => 0,
            Health::Healthy => 1,
            Health::Starting | Health::Degraded | Health::Fallback => 2,
            Health::Down => 3,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Health::Starting => "starting",
            Health::Healthy => "healthy",
            Health::Degraded => "degraded",
            Health::Down => "down",
            Health::Fallback => "fallback",
            Health::Idle => "idle",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ServerStatus {
    pub name: String,
    pub health: Health,
    /// Why the health is what it is, for a person.
    pub reason: String,
    /// Live sessions (unresponsive ones included).
    pub sessions: usize,
    pub unresponsive: usize,
    pub inflight: usize,
    pub p50_ms: u64,
    pub p95_ms: u64,
    pub p99_ms: u64,
    pub requests: u64,
    pub errors: u64,
    pub timeouts: u64,
    pub retries: u64,
    pub restarts: u64,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub last_error: Option<String>,
    /// The stable failure code of `last_error` (`W-SPAWN-NOT-FOUND` …), when it has one.
    #[serde(default)]
    pub code: Option<String>,
    /// Wall-clock ms of the last event or heartbeat of this server.
    pub last_seen_ms: Option<u64>,
    /// The server command, from a session's hello.
    pub command: Option<Vec<String>>,
    pub circuit_open: bool,
    pub fallback: bool,
    pub debug: bool,
    pub last_probe: Option<ProbeReport>,
    /// Figures per tool (of `tools/call`), by name.
    #[serde(default)]
    pub tools: Vec<ToolStatus>,
    /// Per minute of the last hour with requests, oldest first: the server page's chart.
    #[serde(default)]
    pub latency: Vec<LatencyPoint>,
}

/// One tool of a server, as `warden status` and the server page show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ToolStatus {
    pub name: String,
    pub calls: u64,
    pub errors: u64,
    pub timeouts: u64,
    /// Of its recent answered calls.
    pub p50_ms: u64,
    pub p95_ms: u64,
    pub bytes_out: u64,
    pub pin: PinState,
    /// For a changed or new tool: what changed since it was pinned, word by word
    /// (`[-old-]{+new+}`), as `warden tools diff` shows it.
    pub diff: Option<String>,
}

/// Whether a tool's definition matches the one pinned on first sight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum PinState {
    Approved,
    Changed,
    New,
    /// Not pinned (`pin_tools = "off"`, or pinning not known to this supervisor).
    Off,
}

/// One minute of a server's requests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LatencyPoint {
    /// Wall-clock ms when the minute began.
    pub t_ms: u64,
    pub requests: u64,
    pub errors: u64,
    pub timeouts: u64,
    /// Of the minute's answered requests (null when none was answered).
    pub p50_ms: Option<u64>,
    pub p95_ms: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum SessionState {
    /// Heartbeats arrive.
    Live,
    /// Three heartbeats missed (a stopped or stuck bridge).
    Unresponsive,
    /// The connection dropped without `session_end`; kept until the pid is gone or it comes
    /// back.
    Disconnected,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SessionStatus {
    pub id: String,
    pub server: String,
    /// The bridge's pid.
    pub pid: u32,
    /// `name version` of the MCP client, once it said so.
    pub client: Option<String>,
    /// Milliseconds since the last heartbeat (or the hello).
    pub last_heartbeat_ms: u64,
    pub state: SessionState,
    pub server_pid: Option<u32>,
    pub generation: u64,
    pub circuit_open: bool,
    pub fallback: bool,
    pub debug: bool,
    pub config_hash: String,
    pub started_ms: u64,
    pub command: Vec<String>,
    pub inflight: Vec<InflightStatus>,
    /// The end of the server's stderr (redacted by the bridge).
    #[serde(default)]
    pub stderr_tail: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct InflightStatus {
    pub id: Value,
    pub method: String,
    pub tool: Option<String>,
    /// Age now: the age reported in the last heartbeat plus the time since.
    pub age_ms: u64,
    pub idle_ms: u64,
    pub progress: Option<String>,
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
    /// Spawn to the answer to `initialize`.
    pub cold_start_ms: Option<u64>,
    /// Spawn to the end of shutdown.
    pub total_ms: u64,
    pub tools: Option<usize>,
    pub tool_names: Vec<String>,
    /// `serverInfo` from the answer to `initialize`.
    pub server_info: Option<Value>,
    pub protocol_version: Option<String>,
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

/// The event stream: what the UI redraws from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ApiEvent {
    SessionOpened {
        session: SessionStatus,
    },
    /// A heartbeat (or a change of state) of a session.
    SessionUpdated {
        session: SessionStatus,
    },
    SessionClosed {
        session: String,
        server: String,
        reason: String,
    },
    /// Every event of the history as it happens.
    Event {
        entry: HistoryEntry,
    },
    /// A server's row of the status changed (sent at most once per supervisor tick).
    Server {
        server: Box<ServerStatus>,
    },
    /// A server's health changed.
    Health {
        server: String,
        health: Health,
        reason: String,
    },
    Probe {
        report: ProbeReport,
    },
    Orphans {
        orphans: Vec<Orphan>,
    },
    /// The IDE config watcher saw or did something to a client's file.
    Client {
        change: ClientChangeKind,
        client: ClientId,
        path: PathBuf,
        servers: Vec<String>,
        message: String,
    },
    /// `SetLimit`, `Fallback` or `Debug` changed config.toml.
    ConfigChanged {
        server: String,
    },
    /// The desktop app's state changed (published by the tray process).
    App {
        event: crate::desktop::AppEvent,
    },
}

/// The typed API on the control socket, one JSON object per line like
/// [`Message`](crate::control::Message).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ApiMessage {
    ApiRequest { id: u64, request: Request },
    ApiResponse { id: u64, response: Response },
    ApiEvent { event: ApiEvent },
}

impl ApiMessage {
    pub fn to_line(&self) -> Vec<u8> {
        let mut line = serde_json::to_vec(self).unwrap_or_default();
        line.push(b'\n');
        line
    }
}

/// The TypeScript declarations of the API for the web UI (`ui/src/bindings/api.ts`).
/// Integers are `number`: every count and millisecond value stays far below 2^53.
#[cfg(feature = "ts")]
pub fn typescript() -> String {
    use ts_rs::TS;
    let cfg = ts_rs::Config::new().with_large_int("number");
    let decls = [
        Request::decl(&cfg),
        Response::decl(&cfg),
        ApiError::decl(&cfg),
        ErrorCode::decl(&cfg),
        StatusReport::decl(&cfg),
        SupervisorInfo::decl(&cfg),
        Health::decl(&cfg),
        ServerStatus::decl(&cfg),
        ToolStatus::decl(&cfg),
        PinState::decl(&cfg),
        LatencyPoint::decl(&cfg),
        SessionState::decl(&cfg),
        SessionStatus::decl(&cfg),
        InflightStatus::decl(&cfg),
        HistoryEntry::decl(&cfg),
        Event::decl(&cfg),
        CommandOutcome::decl(&cfg),
        SessionAck::decl(&cfg),
        ProbeReport::decl(&cfg),
        Orphan::decl(&cfg),
        StopResult::decl(&cfg),
        KnownServer::decl(&cfg),
        LimitsReport::decl(&cfg),
        LimitValue::decl(&cfg),
        LimitSource::decl(&cfg),
        ClientsReport::decl(&cfg),
        ClientFile::decl(&cfg),
        AwaitingServer::decl(&cfg),
        FileChangeView::decl(&cfg),
        SkippedEntry::decl(&cfg),
        RestoreView::decl(&cfg),
        ClientChangeKind::decl(&cfg),
        ClientId::decl(&cfg),
        ServerEntry::decl(&cfg),
        crate::clients::EntryState::decl(&cfg),
        crate::clients::Risk::decl(&cfg),
        crate::clients::RiskKind::decl(&cfg),
        Notice::decl(&cfg),
        crate::clients::NoticeKind::decl(&cfg),
        Backup::decl(&cfg),
        ApiEvent::decl(&cfg),
        <Value as TS>::decl(&cfg),
    ];
    bindings_file(
        "// Generated from src-tauri/core/src/supervisor/api.rs by\n\
         // `UPDATE_BINDINGS=1 cargo test -p warden-core --features ts bindings`; do not edit.\n\n\
         import type { AppEvent, AppRequest, AppResponse } from \"./app\";\n",
        &decls,
    )
}

/// A bindings file: `header`, then each declaration `export`ed.
#[cfg(feature = "ts")]
pub fn bindings_file(header: &str, decls: &[String]) -> String {
    let mut out = header.to_owned();
    for d in decls {
        out.push_str("\nexport ");
        out.push_str(d);
        out.push('\n');
    }
    out
}

/// Whether the committed bindings at `path` are `want`; with `UPDATE_BINDINGS` set, writes
/// them first. The error says which command regenerates them.
#[cfg(feature = "ts")]
pub fn check_bindings(path: &std::path::Path, want: &str, regenerate: &str) -> Result<(), String> {
    if std::env::var_os("UPDATE_BINDINGS").is_some() {
        std::fs::write(path, want).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    match std::fs::read_to_string(path) {
        Ok(have) if have == want => Ok(()),
        _ => Err(format!(
            "{} is out of date: run `UPDATE_BINDINGS=1 {regenerate}` and commit it",
            path.display()
        )),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn api_lines_round_trip_and_do_not_collide_with_control_messages() {
        let m = ApiMessage::ApiRequest {
            id: 4,
            request: Request::Fallback {
                server: "rg".into(),
                on: true,
            },
        };
        let line = m.to_line();
        assert_eq!(
            String::from_utf8_lossy(&line),
            "{\"type\":\"api_request\",\"id\":4,\"request\":{\"op\":\"fallback\",\"server\":\"rg\",\"on\":true}}\n"
        );
        assert_eq!(serde_json::from_slice::<ApiMessage>(&line).unwrap(), m);
        // A bridge (or an older supervisor) sees a type it does not know, and ignores it.
        assert_eq!(crate::control::Message::from_line(&line).unwrap(), None);
        let status = serde_json::to_value(StatusReport::default()).unwrap();
        assert!(status["servers"].is_array() && status["sessions"].is_array());
    }

    /// The committed bindings match the Rust declarations (CI fails on drift).
    #[cfg(feature = "ts")]
    #[test]
    fn bindings() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui/src/bindings/api.ts");
        let regenerate = "cargo test -p warden-core --features ts bindings";
        check_bindings(&path, &typescript(), regenerate).unwrap();
    }
}
