//! `warden status --json` ([`StatusReport`]): a row per server, its health, and the live
//! sessions.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::reports::ProbeReport;

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
    /// The sandbox its sessions run the server in: `off`, `bwrap` or `landlock` (`sandbox = "on"`).
    #[serde(default = "warden_control::sandbox_off")]
    pub sandbox: String,
    pub last_probe: Option<ProbeReport>,
    /// Figures per tool (of `tools/call`), by name.
    #[serde(default)]
    pub tools: Vec<ToolStatus>,
    /// Per minute of the last hour with requests, oldest first: the server page's chart.
    #[serde(default)]
    pub latency: Vec<LatencyPoint>,
    /// The destinations its sandbox's proxy refused lately (`network_denied`: not in its
    /// `sandbox_network` list), each once, the latest first, the last few.
    #[serde(default)]
    pub network_denied: Vec<NetworkDenial>,
}

/// A destination a server's `sandbox_network` proxy refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct NetworkDenial {
    /// As the server asked for it (a name, or an address).
    pub host: String,
    pub port: u16,
    /// Wall-clock ms of its last `network_denied` (logged once per destination per session).
    pub ts_ms: u64,
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
    /// The client's protocol era (`modern`: 2026-07-28), once its first request said it.
    #[serde(default)]
    pub era: Option<warden_wire::protocol::Era>,
    /// The bridge adapts between a legacy client and a server that speaks only 2026-07-28.
    #[serde(default)]
    pub adapted: bool,
    /// Milliseconds since the last heartbeat (or the hello).
    pub last_heartbeat_ms: u64,
    pub state: SessionState,
    pub server_pid: Option<u32>,
    pub generation: u64,
    pub circuit_open: bool,
    pub fallback: bool,
    pub debug: bool,
    /// The current server process's sandbox: `off`, `bwrap` or `landlock`.
    #[serde(default = "warden_control::sandbox_off")]
    pub sandbox: String,
    pub config_hash: String,
    pub started_ms: u64,
    pub command: Vec<String>,
    pub inflight: Vec<InflightStatus>,
    /// The ids of the calls it holds for an answer (`warden approvals`): the window re-reads
    /// that list when these change.
    #[serde(default)]
    pub approvals: Vec<String>,
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
