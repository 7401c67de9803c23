//! The bridge: one process between an MCP client and one stdio server.

pub mod router;
