//! The MCP wire: newline-delimited JSON-RPC framing, a borrowed envelope peek, ids, the
//! bridge's own error responses, and the two protocol eras' names and `_meta` keys ([`Era`]).
//! Nothing here re-serialises a relayed message, except [`with_id`]: the bridge renames the
//! ids of a server's requests (and of their answers); and [`blank_carriage_returns`] makes each
//! raw `\r` of a server's line a space, so no client that also ends lines at a lone `\r` reads
//! a message inside one.

mod envelope;
mod era;
mod errors;
mod framing;

pub use envelope::{Id, Kind, Peek, batch_elements, find_id_in_fragments, with_id};
pub use era::{
    Era, LEGACY_VERSION, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION,
    META_SERVER_INFO, MODERN_VERSION, UNSUPPORTED_PROTOCOL_VERSION,
};
pub use errors::{ErrorKind, error_response, notification};
pub use framing::{Frame, FrameReader, HEAD_KEEP, StreamGate, TAIL_KEEP, blank_carriage_returns};
