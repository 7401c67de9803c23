//! Control messages between a bridge and the supervisor. Every line is one [`Message`];
//! unknown `type`s are ignored by both sides, so either can be newer. The command line and the
//! window speak the typed API on the same socket (`api_request`, `supervisor/api`).
//!
//! Retired: before the typed API, the command line sent `status` and `command` here. A
//! supervisor answers such a line from a peer that is not a bridge with an error that says to
//! update `warden` (`supervisor/serve.rs`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use warden_wire::events::Event;

/// Protocol version; a peer with another major version is refused with a clear error.
pub const VERSION: u32 = 1;

/// How often a bridge reports; a session that misses three reports is unresponsive.
pub const HEARTBEAT_MS: u64 = 2000;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Message {
    /// Bridge → supervisor, first: who this session is.
    Hello(Hello),
    /// Bridge → supervisor, about every [`HEARTBEAT_MS`].
    Heartbeat(Heartbeat),
    /// Bridge → supervisor: one event, as it is written to the event log.
    Event { session: String, event: Event },
    /// Supervisor → bridge: do something.
    Command(Command),
    /// Bridge → supervisor: the answer to a [`Command`].
    Ack { id: u64, ok: bool, message: String },
    /// Either side: the other side is refused, and why.
    Error { message: String },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hello {
    pub v: u32,
    /// Unique per bridge process: `<pid>-<start ms>`.
    pub session: String,
    pub server: String,
    /// The bridge's pid.
    pub pid: u32,
    /// The server command line as configured (program and arguments).
    pub command: Vec<String>,
    /// A hash of the limits in force, so the UI can tell sessions running older settings.
    pub config_hash: String,
    pub started_ms: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Heartbeat {
    pub session: String,
    pub ts_ms: u64,
    /// `name version` from the client's `initialize` (or a 2026-07-28 request's `_meta`).
    pub client: Option<String>,
    /// The client's protocol era, once its first request said it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub era: Option<warden_wire::protocol::Era>,
    /// The bridge adapts: a legacy client, a server that speaks only 2026-07-28.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub adapted: bool,
    /// The current server process, if one runs.
    pub server_pid: Option<u32>,
    /// Which server process this is (1 for the first; more after restarts).
    pub generation: u64,
    pub circuit_open: bool,
    pub fallback: bool,
    pub debug: bool,
    /// The current server process's sandbox: `off`, `bwrap` or `landlock`.
    #[serde(default = "sandbox_off")]
    pub sandbox: String,
    pub inflight: Vec<Inflight>,
    pub stats: SessionStats,
    /// The end of the server's stderr (redacted), when it changed since the last heartbeat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr_tail: Option<String>,
    /// Calls of `tools_ask` tools waiting for an answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approvals: Vec<Approval>,
}

/// A call held until it is allowed (`tools_ask`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Approval {
    /// What `warden approvals allow ID` names.
    pub id: String,
    pub tool: String,
    /// Its arguments as JSON text, secrets redacted and long values cut.
    pub args: String,
    pub age_ms: u64,
    /// Time left before it fails with `tool_not_approved`.
    pub left_ms: u64,
    /// The client was asked too (elicitation).
    pub client_asked: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Inflight {
    /// The JSON-RPC id as the client sent it.
    pub id: Value,
    pub method: String,
    pub tool: Option<String>,
    pub age_ms: u64,
    pub idle_ms: u64,
    /// The last progress message, if the request reported any.
    pub progress: Option<String>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionStats {
    pub requests: u64,
    pub errors: u64,
    pub timeouts: u64,
    pub cancelled: u64,
    pub restarts: u64,
    pub retries: u64,
    pub bytes_from_client: u64,
    pub bytes_from_server: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Command {
    pub id: u64,
    #[serde(flatten)]
    pub action: Action,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    /// Restart the server process of a session (planned: not counted as a failure).
    Restart { server: String },
    /// Serve from local ripgrep now (or stop). The supervisor also writes `force_fallback`.
    Fallback { server: String, on: bool },
    /// Full message logging on or off. The supervisor also writes `debug`.
    Debug { server: String, on: bool },
    /// An answer to a held call (`tools_ask`).
    Answer {
        approval: String,
        allow: bool,
        #[serde(default)]
        always: bool,
    },
}

impl Message {
    /// One line of the protocol, with its newline.
    pub fn to_line(&self) -> Vec<u8> {
        let mut line = serde_json::to_vec(self).unwrap_or_default();
        line.push(b'\n');
        line
    }

    /// Parses one line; `Ok(None)` for a message of a type this version does not know.
    pub fn from_line(line: &[u8]) -> Result<Option<Message>, serde_json::Error> {
        let value: Value = serde_json::from_slice(line)?;
        match serde_json::from_value(value) {
            Ok(message) => Ok(Some(message)),
            Err(_) => Ok(None),
        }
    }
}

/// What a session without the field (an older bridge) runs: no sandbox.
pub fn sandbox_off() -> String {
    "off".to_owned()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn round_trip_and_unknown_types() {
        let m = Message::Command(Command {
            id: 3,
            action: Action::Fallback {
                server: "rg".into(),
                on: true,
            },
        });
        let line = m.to_line();
        assert_eq!(
            String::from_utf8_lossy(&line),
            "{\"type\":\"command\",\"id\":3,\"action\":\"fallback\",\"server\":\"rg\",\"on\":true}\n"
        );
        assert_eq!(Message::from_line(&line).unwrap(), Some(m));
        assert_eq!(
            Message::from_line(br#"{"type":"from_the_future","x":1}"#).unwrap(),
            None
        );
        assert!(Message::from_line(b"garbage").is_err());
    }
}
