//! The control socket between bridges and the supervisor: where it is, who may use it, and
//! the messages (one JSON object per line, versioned).
//!
//! Bridges connect lazily and keep working without a supervisor; the supervisor never relays
//! MCP traffic. The socket is private to the user: a Unix socket with mode 0600 in a 0700
//! directory, and the peer's uid is checked on every connection; a peer in other user or pid
//! namespaces than the supervisor's (a sandboxed server) may watch but not act. On Windows it
//! is a named pipe private to the user (`pipe.rs`), behind the same API as `control::socket`.

pub mod protocol;
#[cfg(windows)]
#[path = "pipe.rs"]
pub mod socket;
#[cfg(unix)]
pub mod socket;

pub use protocol::*;
