//! The MCP wire: newline-delimited JSON-RPC framing, a borrowed envelope peek, ids and the
//! bridge's own error responses. Nothing here re-serialises a relayed message.

mod envelope;
mod errors;
mod framing;

pub use envelope::{Id, Kind, Peek, find_id_in_fragments};
pub use errors::{ErrorKind, error_response, notification};
pub use framing::{Frame, FrameReader, HEAD_KEEP, TAIL_KEEP};
