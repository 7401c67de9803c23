//! Messages the bridge writes itself: JSON-RPC errors with `data.kind` (docs/behaviour.md) and
//! notifications.

use bytes::Bytes;
use serde_json::{Map, Value, json};

use super::Id;
use crate::codes::Code;

/// Why the bridge answered a request itself. `as_str` is the `data.kind` of the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    Timeout,
    MaxTimeout,
    StartupTimeout,
    ServerExited,
    CircuitOpen,
    /// A response over `max_message_bytes` (the request's answer was lost).
    ResponseTooLarge,
    /// A request over `max_message_bytes` (never sent to the server).
    RequestTooLarge,
    ParseError,
    /// The server answered with a line that is not valid JSON (e.g. invalid UTF-8).
    InvalidResponse,
    /// The server could not be started, or ended before answering the client's `initialize`.
    SpawnFailed,
    /// A `tools/call` of a tool hidden by `tools_allow` / `tools_deny`.
    ToolDenied,
    /// A `tools/call` of a tool held back by `pin_tools = "block"`.
    ToolQuarantined,
    /// A `tools/call` of a `tools_ask` tool that was answered no.
    ToolDeclined,
    /// A `tools/call` of a `tools_ask` tool that had no answer in time, or no one to ask.
    ToolNotApproved,
    /// An answer Warden must check (`tools/list` and the like) over `max_list_bytes`.
    ListTooLarge,
    /// A request inside a JSON-RPC batch from the client (never sent to the server).
    BatchRefused,
    /// A 2026-07-28 server needs input (`input_required`) that a legacy client behind the era
    /// adapter cannot give.
    InputUnavailable,
}

impl ErrorKind {
    /// Every kind (each one's `data.code` is in docs/errors.md; a test checks it).
    pub const ALL: &[ErrorKind] = &[
        ErrorKind::Timeout,
        ErrorKind::MaxTimeout,
        ErrorKind::StartupTimeout,
        ErrorKind::ServerExited,
        ErrorKind::CircuitOpen,
        ErrorKind::ResponseTooLarge,
        ErrorKind::RequestTooLarge,
        ErrorKind::ParseError,
        ErrorKind::InvalidResponse,
        ErrorKind::SpawnFailed,
        ErrorKind::ToolDenied,
        ErrorKind::ToolQuarantined,
        ErrorKind::ToolDeclined,
        ErrorKind::ToolNotApproved,
        ErrorKind::ListTooLarge,
        ErrorKind::BatchRefused,
        ErrorKind::InputUnavailable,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Timeout => "timeout",
            ErrorKind::MaxTimeout => "max_timeout",
            ErrorKind::StartupTimeout => "startup_timeout",
            ErrorKind::ServerExited => "server_exited",
            ErrorKind::CircuitOpen => "circuit_open",
            ErrorKind::ResponseTooLarge | ErrorKind::RequestTooLarge => "message_too_large",
            ErrorKind::ParseError => "parse_error",
            ErrorKind::InvalidResponse => "invalid_response",
            ErrorKind::SpawnFailed => "spawn_failed",
            ErrorKind::ToolDenied => "tool_denied",
            ErrorKind::ToolQuarantined => "tool_quarantined",
            ErrorKind::ToolDeclined => "tool_declined",
            ErrorKind::ToolNotApproved => "tool_not_approved",
            ErrorKind::ListTooLarge => "list_too_large",
            ErrorKind::BatchRefused => "batch_refused",
            ErrorKind::InputUnavailable => "input_unavailable",
        }
    }

    /// The stable code of this kind (`data.code`), unless the error carries a more precise one
    /// (a spawn failure says which).
    pub fn stable_code(self) -> Code {
        match self {
            ErrorKind::Timeout => Code::Timeout,
            ErrorKind::MaxTimeout => Code::MaxTimeout,
            ErrorKind::StartupTimeout => Code::StartupTimeout,
            ErrorKind::ServerExited => Code::ServerExited,
            ErrorKind::CircuitOpen => Code::CircuitOpen,
            ErrorKind::ResponseTooLarge => Code::ResponseTooLarge,
            ErrorKind::RequestTooLarge => Code::RequestTooLarge,
            ErrorKind::ParseError => Code::ParseError,
            ErrorKind::InvalidResponse => Code::InvalidResponse,
            ErrorKind::SpawnFailed => Code::SpawnError,
            ErrorKind::ToolDenied => Code::ToolDenied,
            ErrorKind::ToolQuarantined => Code::ToolQuarantined,
            ErrorKind::ToolDeclined => Code::ToolDeclined,
            ErrorKind::ToolNotApproved => Code::ToolNotApproved,
            ErrorKind::ListTooLarge => Code::ListTooLarge,
            ErrorKind::BatchRefused => Code::BatchRefused,
            ErrorKind::InputUnavailable => Code::InputUnavailable,
        }
    }

    pub fn code(self) -> i64 {
        match self {
            ErrorKind::Timeout | ErrorKind::MaxTimeout | ErrorKind::StartupTimeout => -32001,
            ErrorKind::ServerExited | ErrorKind::CircuitOpen | ErrorKind::SpawnFailed => -32000,
            ErrorKind::ResponseTooLarge | ErrorKind::InvalidResponse | ErrorKind::ListTooLarge => {
                -32603
            }
            ErrorKind::RequestTooLarge | ErrorKind::BatchRefused => -32600,
            ErrorKind::ParseError => -32700,
            ErrorKind::ToolDenied | ErrorKind::ToolQuarantined | ErrorKind::ToolDeclined => -32602,
            ErrorKind::ToolNotApproved => -32001,
            ErrorKind::InputUnavailable => -32603,
        }
    }
}

/// A JSON-RPC error response line (no terminator). `data` gets `kind`, `server` and `code`
/// (the kind's stable code, unless `data` has one) added.
pub fn error_response(
    id: Option<&Id>,
    kind: ErrorKind,
    server: &str,
    message: &str,
    data: Value,
) -> Bytes {
    let mut data = match data {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    data.insert("kind".into(), kind.as_str().into());
    data.insert("server".into(), server.into());
    data.entry("code")
        .or_insert_with(|| kind.stable_code().as_str().into());
    let msg = json!({
        "jsonrpc": "2.0",
        "id": id.map_or(Value::Null, Id::to_value),
        "error": { "code": kind.code(), "message": message, "data": data },
    });
    Bytes::from(msg.to_string())
}

/// A notification line (no terminator).
pub fn notification(method: &str, params: Value) -> Bytes {
    Bytes::from(json!({ "jsonrpc": "2.0", "method": method, "params": params }).to_string())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn error_shape_follows_the_contract() {
        let line = error_response(
            Some(&Id::Num(0)),
            ErrorKind::Timeout,
            "rg",
            "Request timed out",
            json!({"limit_ms": 5}),
        );
        let v: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(v["id"], 0);
        assert_eq!(v["error"]["code"], -32001);
        assert_eq!(v["error"]["data"]["kind"], "timeout");
        assert_eq!(v["error"]["data"]["server"], "rg");
        assert_eq!(v["error"]["data"]["limit_ms"], 5);
        assert_eq!(v["error"]["data"]["code"], "W-TIMEOUT");
        let line = error_response(None, ErrorKind::ParseError, "rg", "x", Value::Null);
        let v: Value = serde_json::from_slice(&line).unwrap();
        assert!(v["id"].is_null());
        assert_eq!(v["error"]["code"], -32700);
        assert_eq!(v["error"]["data"]["code"], "W-PARSE-ERROR");
        let line = error_response(
            None,
            ErrorKind::SpawnFailed,
            "rg",
            "x",
            json!({"code": Code::SpawnNotFound.as_str()}),
        );
        let v: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(v["error"]["data"]["code"], "W-SPAWN-NOT-FOUND");
    }

    /// Every `data.kind` the bridge can send has a code listed in docs/errors.md (the kind →
    /// code mapping is an exhaustive match, `ALL` lists the kinds).
    #[test]
    fn every_kind_has_a_documented_code() {
        let docs = crate::codes::reference_markdown();
        for kind in ErrorKind::ALL {
            let code = kind.stable_code();
            assert!(Code::ALL.contains(&code), "{kind:?}");
            assert!(docs.contains(&format!("`{}`", code.as_str())), "{kind:?}");
        }
        // `ALL` misses no kind: each `as_str` of the match appears in it.
        let listed: std::collections::HashSet<_> =
            ErrorKind::ALL.iter().map(|k| k.as_str()).collect();
        for kind in [
            "timeout",
            "max_timeout",
            "startup_timeout",
            "server_exited",
            "circuit_open",
            "message_too_large",
            "parse_error",
            "invalid_response",
            "spawn_failed",
            "list_too_large",
            "batch_refused",
        ] {
            assert!(listed.contains(kind), "{kind}");
        }
    }
}
