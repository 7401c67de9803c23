//! Whose id is whose. JSON-RPC matches an answer to its request by id alone, so every id the
//! client can answer is one the bridge chose:
//!
//! - the bridge's own requests (to the server, and its questions to the client) take an
//!   unguessable id (`__warden/<128 random bits>`, `__warden/ask/<128 random bits>`);
//! - a server's request reaches the client renamed (`__warden/s/N`, a space apart from the
//!   bridge's own), and the client's answer goes back under the server's id; the server's
//!   `notifications/cancelled` for it is renamed the same way (found by the server's id, not
//!   by a scan). At most [`MAX_SERVER_REQUESTS`] wait for the client at once: each one is
//!   kept until the client answers, and while any waits the idle clocks are paused, so a
//!   server that asks and asks would grow the bridge's memory without end. One more is
//!   answered to the server itself with an error and never reaches the client;
//! - an answer from the client that matches no pending request, and a server's answer that
//!   matches no request of the client's, are dropped (`answer_dropped`): a server cannot
//!   answer a question of the bridge's, or a request the router has not seen yet;
//! - a JSON-RPC batch from the client is refused whole (batches left MCP in 2025-06-18):
//!   each request in it gets a `batch_refused` error and nothing reaches the server, so no
//!   call inside one escapes the tool policy.
//!
//! Progress tokens are not renamed: they belong to the side that sent the request and travel
//! in that request's own `_meta`.

use serde_json::Value;

use super::lifecycle::Own;
use super::*;
use warden_wire::codes::Code;
use warden_wire::protocol::{batch_elements, with_id};

/// The start of the bridge's own ids (its requests to the server).
pub(super) const OWN_PREFIX: &str = "__warden/";
/// The start of the ids a server's requests take towards the client.
pub(super) const S2C_PREFIX: &str = "__warden/s/";

/// The most server requests waiting for the client's answer at once: far more than a person
/// answers (elicitation, sampling, roots), few enough that the map stays small.
pub(super) const MAX_SERVER_REQUESTS: usize = 256;
/// The JSON-RPC code of the error a server gets for a request over [`MAX_SERVER_REQUESTS`]
/// (implementation-defined server error: Warden answers in the client's place).
const TOO_MANY_CODE: i64 = -32000;

/// A server's request relayed to the client under another id.
#[derive(Debug)]
pub(super) struct Relayed {
    /// The id the server gave it.
    pub(super) id: Id,
}

/// 128 random bits as hex: an id no one outside this process can guess.
pub(super) fn unguessable() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // The OS refused randomness (it does not on the platforms Warden runs on): std's
        // hasher keys are random per process, and SipHash under them is a keyed PRF.
        use std::hash::BuildHasher;
        let keyed = std::collections::hash_map::RandomState::new();
        let a = keyed.hash_one((std::process::id(), 1u8));
        let b = keyed.hash_one((Instant::now(), 2u8));
        bytes[..8].copy_from_slice(&a.to_le_bytes());
        bytes[8..].copy_from_slice(&b.to_le_bytes());
    }
    let mut hex = String::with_capacity(32);
    for b in bytes {
        let _ = write!(hex, "{b:02x}");
    }
    hex
}

impl Router {
    /// A request id of the bridge's own: unguessable, so no client request and no server
    /// message can take it.
    pub(super) fn own_id(&mut self, purpose: Own) -> Id {
        let id = Id::Str(format!("{OWN_PREFIX}{}", unguessable()).into());
        self.own_ids.insert(id.clone(), purpose);
        self.hold_for_own();
        id
    }

    /// The purpose of the bridge's own request `id`, which is over.
    pub(super) fn take_own(&mut self, id: &Id) -> Option<Own> {
        let own = self.own_ids.remove(id)?;
        self.hold_for_own();
        Some(own)
    }

    /// The bridge's own requests are over (their server is gone).
    pub(super) fn forget_own(&mut self) {
        self.own_ids.clear();
        self.hold_for_own();
    }

    /// The gate holds while one of the bridge's own requests awaits an answer it reads (its
    /// replayed `initialize`, its `tools/list`).
    fn hold_for_own(&self) {
        let reads = self.own_ids.values().any(|o| o.reads());
        self.gate.hold(HOLD_FOR_OWN, reads);
    }

    /// A server's request: the line the client gets, under an id of the bridge's; `None` when
    /// it is not relayed: it cannot be renamed (not an object), or [`MAX_SERVER_REQUESTS`]
    /// already wait for the client (the server gets an error for it instead).
    pub(super) fn rename_server_request(
        &mut self,
        peek: &Peek<'_>,
        line: &[u8],
        out: &mut Vec<Out>,
    ) -> Option<Bytes> {
        let id = peek.id.clone()?;
        if self.s2c.len() >= MAX_SERVER_REQUESTS {
            self.too_many_server_requests(&id, peek.method.as_deref().unwrap_or(""), out);
            return None;
        }
        self.next_s2c += 1;
        let renamed = Id::Str(format!("{S2C_PREFIX}{}", self.next_s2c).into());
        let line = with_id(line, &renamed)?;
        // A server that reuses the id of a request still waiting: its cancellation names the
        // newest (an answer goes back under the id either way).
        self.s2c_theirs.insert(id.clone(), renamed.clone());
        self.s2c.insert(renamed, Relayed { id });
        Some(line)
    }

    /// The server asked once more while [`MAX_SERVER_REQUESTS`] of its requests wait for the
    /// client: it gets an error in the client's place, and the session's log says so.
    fn too_many_server_requests(&self, id: &Id, method: &str, out: &mut Vec<Out>) {
        let msg = format!(
            "Too many requests: {MAX_SERVER_REQUESTS} requests of this server already wait for the client's answer, the most Warden relays at once. Warden did not send this {method} request to the client. Wait for the client to answer (or cancel the requests it no longer needs), then ask again."
        );
        let error = json!({
            "jsonrpc": "2.0",
            "id": id.to_value(),
            "error": {
                "code": TOO_MANY_CODE,
                "message": msg,
                "data": {"waiting": self.s2c.len(), "limit": MAX_SERVER_REQUESTS},
            },
        });
        out.push(Out::Server(Bytes::from(error.to_string())));
        out.push(Out::Event(
            Event::new("server_request_refused").detail(format!(
                "server `{}` asked {method} (id {}) while {MAX_SERVER_REQUESTS} of its requests waited for the client: answered with an error, not relayed",
                self.server,
                shown(id)
            )),
        ));
    }

    /// The server withdrew one of its requests: the client hears it under the id it knows.
    /// `None` (dropped) when the client knows no such request of the server's.
    pub(super) fn server_cancelled(&mut self, peek: &Peek<'_>, now: Instant) -> Option<Bytes> {
        let theirs = peek.request_id.as_ref()?;
        let ours = self.s2c_theirs.get(theirs)?.clone();
        self.s2c_done(&ours, now);
        let mut params: Value = peek
            .params
            .and_then(|p| serde_json::from_str(p.get()).ok())
            .unwrap_or_else(|| json!({}));
        params["requestId"] = ours.to_value();
        Some(notification("notifications/cancelled", params))
    }

    /// An answer from the client: to one of the bridge's questions, or to a server's request
    /// (sent on under the server's id); anything else is dropped.
    pub(super) fn client_answer(
        &mut self,
        peek: &Peek<'_>,
        line: &Bytes,
        now: Instant,
        out: &mut Vec<Out>,
    ) {
        if self.elicit_answered(peek, now, out) || self.adapt_answered(peek, now, out) {
            return;
        }
        let Some(id) = &peek.id else {
            return self.dropped("the client sent an answer without an id", out);
        };
        let Some(relayed) = self.s2c_done(id, now) else {
            return self.dropped(
                &format!(
                    "the client answered id {}, which no request waits for",
                    shown(id)
                ),
                out,
            );
        };
        // The server that asked is gone when the session is not ready (its requests were
        // withdrawn from the client then).
        if self.life.ready()
            && let Some(line) = with_id(line, &relayed.id)
        {
            out.push(Out::Server(line));
        }
    }

    /// A JSON-RPC batch from the client: none of it reaches the server. Each request in it
    /// gets an error (in one array, as JSON-RPC answers a batch); an empty batch gets one.
    pub(super) fn client_batch(&mut self, line: &[u8], out: &mut Vec<Out>) {
        let elements = batch_elements(line).unwrap_or_default();
        let msg = format!(
            "Batch refused: the client sent a JSON-RPC batch of {} messages. MCP dropped batches in protocol version 2025-06-18, and Warden judges each message on its own (tools_deny, tools_ask), so it sent none of them to server `{}`. Send each message on its own line.",
            elements.len(),
            self.server
        );
        let data = || json!({"messages": elements.len()});
        let mut answers: Vec<Bytes> = Vec::new();
        for element in &elements {
            let Ok(peek) = Peek::parse(element.get().as_bytes()) else {
                continue;
            };
            if peek.kind() == Kind::Request {
                answers.push(error_response(
                    peek.id.as_ref(),
                    ErrorKind::BatchRefused,
                    &self.server,
                    &msg,
                    data(),
                ));
            }
        }
        if elements.is_empty() {
            out.push(Out::Client(error_response(
                None,
                ErrorKind::BatchRefused,
                &self.server,
                &msg,
                data(),
            )));
        } else if !answers.is_empty() {
            let mut array =
                Vec::with_capacity(answers.iter().map(|a| a.len() + 1).sum::<usize>() + 1);
            array.push(b'[');
            for (i, a) in answers.iter().enumerate() {
                if i > 0 {
                    array.push(b',');
                }
                array.extend_from_slice(a);
            }
            array.push(b']');
            out.push(Out::Client(Bytes::from(array)));
        }
        out.push(Out::Event(
            Event::new("batch_refused")
                .code(Code::BatchRefused)
                .detail(format!(
                    "a batch of {} messages ({} requests answered with an error)",
                    elements.len(),
                    answers.len()
                )),
        ));
    }

    /// A message that answers nothing waiting is dropped, and logged.
    pub(super) fn dropped(&self, why: &str, out: &mut Vec<Out>) {
        out.push(Out::Event(Event::new("answer_dropped").detail(why)));
    }
}

/// An id as an event shows it: the other side chose it, so it is cut short.
pub(super) fn shown(id: &Id) -> String {
    let text = id.to_json();
    match text.char_indices().nth(64) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}
