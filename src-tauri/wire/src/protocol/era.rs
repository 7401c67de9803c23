//! MCP's two protocol eras (docs/ARCHITECTURE.md, "Protocol eras"): **legacy** (2025-11-25 and
//! earlier: an `initialize` handshake) and **modern** (2026-07-28: stateless, `server/discover`,
//! each request's `params._meta` carries the protocol version, the client's info and
//! capabilities; each result has `resultType`). The names and `_meta` keys both sides share.

use serde::{Deserialize, Serialize};

/// The protocol era a peer speaks (or that the probe spoke with a server).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum Era {
    /// 2026-07-28 and later: no handshake, `_meta` on every request.
    Modern,
    /// 2025-11-25 and earlier: `initialize` first.
    Legacy,
}

impl Era {
    /// `"modern"` or `"legacy"`, as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            Era::Modern => "modern",
            Era::Legacy => "legacy",
        }
    }
}

impl std::fmt::Display for Era {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The modern protocol version Warden speaks.
pub const MODERN_VERSION: &str = "2026-07-28";
/// The newest legacy protocol version (the one Warden's own `initialize` asks for).
pub const LEGACY_VERSION: &str = "2025-11-25";
/// `params._meta` key of a modern request: its protocol version (required).
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `params._meta` key of a modern request: the client's `{name, version}`.
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `params._meta` key of a modern request: the client's capabilities.
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `result._meta` key of a modern answer: the server's `{name, version}`.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// The error a modern-only server answers `initialize` (or an unknown version) with; its
/// `data.supported` names the versions it speaks.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serializes_lowercase_as_as_str() {
        for era in [Era::Modern, Era::Legacy] {
            assert_eq!(
                serde_json::to_value(era).unwrap_or_default(),
                serde_json::Value::from(era.as_str())
            );
        }
    }
}
