//! The MCP wire: newline-delimited JSON-RPC framing, a borrowed envelope peek, ids and the
//! bridge's own error responses. Nothing here re-serialises a relayed message, except
//! [`with_id`]: the bridge renames the ids of a server's requests (and of their answers); and
//! [`blank_carriage_returns`] makes each raw `\r` of a server's line a space, so no client
//! that also ends lines at a lone `\r` reads a message inside one.

mod envelope;
mod errors;
mod framing;

pub use envelope::{Id, Kind, Peek, batch_elements, find_id_in_fragments, with_id};
pub use errors::{ErrorKind, error_response, notification};
pub use framing::{Frame, FrameReader, HEAD_KEEP, StreamGate, TAIL_KEEP, blank_carriage_returns};
