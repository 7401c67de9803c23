//! The control socket between bridges and the supervisor: where it is, who may use it, and
//! the messages (one JSON object per line, versioned).
//!
//! Bridges connect lazily and keep working without a supervisor; the supervisor never relays
//! MCP traffic. The socket is private to the user: a Unix socket with mode 0600 in a 0700
//! directory, and the peer's uid is checked on every connection; a peer in other user or pid
//! namespaces than the supervisor's (a sandboxed server) may watch but not act.

pub mod protocol;
pub mod socket;

pub use protocol::*;
