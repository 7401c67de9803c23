//! The supervisor's one typed API: requests, responses and the event stream, declared once.
//!
//! The tray app calls [`Supervisor::handle`](super::Supervisor::handle) in-process and
//! subscribes to [`ApiEvent`]s; `warden daemon` serves the same enums on the control socket
//! as [`ApiMessage`] lines next to the bridges' [`Message`](crate::control::Message)s (each
//! side ignores the `type`s it does not know, so the two share one socket and one framing).
//! `warden status --json` is [`StatusReport`], in the shape of CONTRACT.md.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::events::Event;

/// What the UI and the command line may ask of the supervisor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
}

/// The answer to a [`Request`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Response {
    Status(StatusReport),
    History { entries: Vec<HistoryEntry> },
    Command(CommandOutcome),
    Probe(ProbeReport),
    Orphans { orphans: Vec<Orphan> },
    Stopped { stopped: Vec<StopResult> },
    KnownServers { servers: Vec<KnownServer> },
    Subscribed,
    Error(ApiError),
}

/// Errors at the UI boundary: a small code enum and a message for a person.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
pub struct StatusReport {
    pub servers: Vec<ServerStatus>,
    pub sessions: Vec<SessionStatus>,
    #[serde(default)]
    pub supervisor: SupervisorInfo,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SupervisorInfo {
    pub pid: u32,
    pub socket: PathBuf,
    pub config: Option<PathBuf>,
    pub history: Option<PathBuf>,
    pub started_ms: u64,
    /// Events kept in memory (loaded from the persisted history, then live).
    pub history_events: usize,
}

/// Health of a server, worst first in [`Health::rank`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
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
    /// Wall-clock ms of the last event or heartbeat of this server.
    pub last_seen_ms: Option<u64>,
    /// The server command, from a session's hello.
    pub command: Option<Vec<String>>,
    pub circuit_open: bool,
    pub fallback: bool,
    pub debug: bool,
    pub last_probe: Option<ProbeReport>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InflightStatus {
    pub id: Value,
    pub method: String,
    pub tool: Option<String>,
    /// Age now: the age reported in the last heartbeat plus the time since.
    pub age_ms: u64,
    pub idle_ms: u64,
    pub progress: Option<String>,
}

/// One event of the history: a bridge's event, or one the supervisor made (`session_open`,
/// `session_unresponsive`, `session_reaped`, `probe`, `command`, `orphan` …).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryEntry {
    pub server: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    pub event: Event,
    /// On `session_open`: the server command, so it can be probed later.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
}

/// What a restart, fallback or debug command did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommandOutcome {
    pub ok: bool,
    pub message: String,
    /// The config.toml that was edited (fallback, debug).
    pub config: Option<PathBuf>,
    /// Each live session of the server, and whether it acknowledged or picked up the change.
    pub sessions: Vec<SessionAck>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionAck {
    pub session: String,
    pub pid: u32,
    pub ok: bool,
    pub message: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
    /// How the process ended ("exited with status 0" …).
    pub shutdown: String,
    pub stderr_tail: String,
}

/// A server process whose bridge is gone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
pub struct StopResult {
    pub pid: u32,
    pub ok: bool,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KnownServer {
    pub name: String,
    pub command: Option<Vec<String>>,
    /// Where it is known from: `session` (live), `history`, `config`, `ide` (a detected
    /// client config file).
    pub source: String,
}

/// The event stream: what the UI redraws from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
}

/// The typed API on the control socket, one JSON object per line like
/// [`Message`](crate::control::Message).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
}
