//! Messages the bridge writes itself: JSON-RPC errors with `data.kind` (CONTRACT.md) and
//! notifications.

use bytes::Bytes;
use serde_json::{Map, Value, json};

use super::Id;

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
}

impl ErrorKind {
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
        }
    }

    pub fn code(self) -> i64 {
        match self {
            ErrorKind::Timeout | ErrorKind::MaxTimeout | ErrorKind::StartupTimeout => -32001,
            ErrorKind::ServerExited | ErrorKind::CircuitOpen => -32000,
            ErrorKind::ResponseTooLarge | ErrorKind::InvalidResponse => -32603,
            ErrorKind::RequestTooLarge => -32600,
            ErrorKind::ParseError => -32700,
        }
    }
}

/// A JSON-RPC error response line (no terminator). `data` gets `kind` and `server` added.
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
        let line = error_response(None, ErrorKind::ParseError, "rg", "x", Value::Null);
        let v: Value = serde_json::from_slice(&line).unwrap();
        assert!(v["id"].is_null());
        assert_eq!(v["error"]["code"], -32700);
    }
}
